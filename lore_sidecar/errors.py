"""Domain errors.

An expected failure is a `LoreError` with a stable `kind`; the rpc layer turns it into a
JSON-RPC error -32803 with `data = {kind, retryable, ...}`. Anything else is a bug (-32603).
"""

from __future__ import annotations

from typing import Any


class LoreError(Exception):
    """An expected failure the client can act on."""

    def __init__(self, kind: str, message: str, *, retryable: bool = False, **details: Any):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.details = details

    def data(self) -> dict[str, Any]:
        return {"kind": self.kind, "retryable": self.retryable, **self.details}


class BadParams(Exception):
    """Parameters that do not fit the method's shape (JSON-RPC -32602)."""

    def __init__(self, message: str, errors: list[str]):
        super().__init__(message)
        self.message = message
        self.errors = errors


def not_writer(writer_pid: int | None) -> LoreError:
    return LoreError(
        "notWriter",
        "this instance is a follower and cannot apply writes yet",
        retryable=True,
        writerPid=writer_pid,
    )


def index_not_ready() -> LoreError:
    return LoreError("indexNotReady", "the store is still opening", retryable=True)


def invalid_key(what: str, value: str) -> LoreError:
    return LoreError("invalidKey", f"invalid {what}: {value!r}", value=value)


def outside_workspace(path: str) -> LoreError:
    return LoreError("outsideWorkspace", f"path resolves outside the workspace: {path!r}", path=path)


def not_found(uri: str) -> LoreError:
    return LoreError("notFound", f"no such node: {uri!r}", uri=uri)
