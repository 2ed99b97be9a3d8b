"""The one write path: the writer applies, a follower makes the operation durable in its
spool and waits (bounded) for the writer to apply it. Every write request goes through
`Writes.submit`; none chooses for itself.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from collections.abc import Callable
from typing import Any, TypeVar

from lore_sidecar.engine.roles import Role, WriteMark
from lore_sidecar.errors import FENCED, LoreError, not_writer

log = logging.getLogger(__name__)
T = TypeVar("T")


def new_op_id() -> str:
    """Unique across processes and sortable by creation time (the spool applies in order)."""
    return f"{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}"


class Writes:
    def __init__(self, *, records: Any, spool: Any, role: Callable[[], Role], mark: WriteMark,
                 wrote: Callable[[], None], apply_wait_s: float, shared: Any = None):
        self.records = records
        self.shared = shared  # a team's shared record (shared/replica.py), or None
        self.spool = spool
        self.role = role  # the current Role (read once per write)
        self.mark = mark
        self.wrote = wrote  # after a direct write: raise the mark, wake the indexer
        self.apply_wait_s = apply_wait_s

    def submit(self, *, check: Callable[[], T], apply: Callable[[T], dict], op: Callable[[T], dict],
               unapplied: Callable[[T], dict]) -> dict[str, Any]:
        """`check` refuses bad input before anything is written or spooled (on every role);
        the writer runs `apply`; a follower — or a writer fenced mid-way — spools `op` and
        answers with the writer's result, or `unapplied` when the writer has not applied it
        within the wait. Either answer means durable."""
        checked = check()
        if self.role().writer and self.shared is not None and self.shared.shares(op(checked)):
            return self._shared(checked, op, unapplied)
        if self.role().writer:
            try:
                out = apply(checked)
                self.wrote()
                return {**out, "durable": True, "applied": True}
            except LoreError as exc:
                if exc.kind not in FENCED:
                    raise
                log.info("fenced while writing (%s); spooling for the new writer", exc)
        op_id, result = self.spool_and_wait(op(checked))
        if result is None:
            return {**unapplied(checked), "durable": True, "applied": False, "opId": op_id}
        return {**result, "durable": True, "applied": True, "opId": op_id}

    def _shared(self, checked: Any, op: Callable, unapplied: Callable) -> dict[str, Any]:
        """A team's write: arbitrated and appended in the shared record, then applied here in
        the record's order (or, the record away, durable in the shared outbox)."""
        op_id = new_op_id()
        result = self.shared.submit({"opId": op_id, **op(checked)})
        if result is None:
            return {**unapplied(checked), "durable": True, "applied": False, "opId": op_id}
        if "error" in result:
            err = result["error"]
            raise LoreError(err.get("kind", "refused"), err.get("message", "refused"), retryable=bool(err.get("retryable")))
        self.wrote()
        return {**result, "durable": True, "applied": True, "opId": op_id}

    def spool_and_wait(self, op: dict[str, Any]) -> tuple[str, dict | None]:
        if self.spool is None:
            raise not_writer(self.role().writer_pid)
        op_id = self.spool.put({"opId": new_op_id(), **op})
        result = self.wait_applied(op_id, self.apply_wait_s)
        if result is not None and "error" in result:
            err = result["error"]
            raise LoreError(err.get("kind", "refused"), err.get("message", "refused by the writer"),
                            retryable=bool(err.get("retryable")))
        if result is not None:
            self.mark.raise_to(int(result.get("seq", 0)))
        return op_id, result

    def wait_applied(self, op_id: str, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            result = self.records.op_result(op_id)
            if result is not None or time.monotonic() >= deadline:
                return result
            time.sleep(delay)
            delay = min(delay * 1.5, 0.02)

    def best_effort(self, apply: Callable[[], Any], op: dict[str, Any]) -> None:
        """Bookkeeping (usage counts): applied on the writer, dropped into the spool without
        waiting on a follower; a failure is logged, never raised into the read behind it."""
        try:
            if self.role().writer and self.shared is not None:
                self.shared.usage({"opId": new_op_id(), **op})  # here now, the team's record soon
            elif self.role().writer:
                apply()
            elif self.spool is not None:
                self.spool.put({"opId": new_op_id(), **op}, durable=False)
        except LoreError as exc:
            log.info("%s not recorded: %s", op.get("method", op.get("kind")), exc)
