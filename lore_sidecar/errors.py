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


class ScanStopped(Exception):
    """Raised from a scan's progress report when the process is exiting: the scan ends there
    (the batches it wrote are committed, the one it was filling is dropped; the next start
    scans the rest)."""


# This instance may not write (any more): a write is spooled for the writer instead, a
# writer-only loop stops. `staleEpoch` is the fence: a paused ex-writer woke up.
FENCED = frozenset({"notWriter", "staleEpoch"})


def fenced(exc: BaseException) -> bool:
    return isinstance(exc, LoreError) and exc.kind in FENCED


def not_writer(writer_pid: int | None) -> LoreError:
    return LoreError(
        "notWriter",
        "this instance is a follower and cannot apply writes yet",
        retryable=True,
        writerPid=writer_pid,
    )


def outside_workspace(path: str) -> LoreError:
    return LoreError("outsideWorkspace", f"path resolves outside the workspace: {path!r}", path=path)


def not_found(uri: str) -> LoreError:
    return LoreError("notFound", f"no such node: {uri!r}", uri=uri)
