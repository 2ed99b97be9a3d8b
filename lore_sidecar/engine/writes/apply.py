"""Applying what followers spooled, on the writer: oldest first, each operation exactly once.

Consecutive message writes share one transaction; a fact or node operation is its own (a
fact appends to the journal first). What happens when one fails is `retry.judge`'s call:
refusals go back to the sender, passing conditions are retried with backoff (and hold the
operations behind them, so order is kept), and only an operation that can never apply is
set aside in spool/bad — with a log line and a count in `lore/status`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from lore_sidecar.engine.writes import retry
from lore_sidecar.errors import LoreError, fenced
from lore_sidecar.model import NewMessage

log = logging.getLogger(__name__)
FACT_OPS = ("assertFact", "invalidateFact")
ONE_BY_ONE = (*FACT_OPS, "nodeOp")


class Held(Exception):
    """An operation is waiting out its backoff: stop here so later ones keep their order."""


class SpoolApplier:
    def __init__(self, *, records: Any, spool: Any, facts: Any, memory: Any,
                 clock: Callable[[], float] = time.monotonic, shared: Any = None,
                 applying: Callable[[int], None] = lambda seq: None):
        self.records, self.spool, self.facts, self.memory = records, spool, facts, memory
        # Told each message operation's outbox position inside its transaction, before the
        # commit shows it applied. Trigger: CI (twice): a follower saw its write applied and
        # the writer, asked at once, answered without it. Why: the writer raised its
        # read-your-writes mark only after the drain (a spool file's removal and a directory
        # fsync later), so a read in between did not wait for the index. Outcome: the mark is
        # up before anyone can know the write is applied.
        self.applying = applying
        self.shared = shared  # a team's shared record: its operations go there first
        self.clock = clock
        self._attempts: dict[str, int] = {}
        self._not_before: dict[str, float] = {}

    def drain(self, limit: int = 128) -> int:
        """Apply up to `limit` spooled operations; returns how many were settled (applied,
        refused or set aside). Raises LoreError notWriter/staleEpoch when fenced."""
        settled = 0
        batch: list[tuple[Any, dict, Callable]] = []
        try:
            for path in self.spool.pending(limit):
                op = self.spool.read(path)
                if op is None:
                    continue
                if self._not_before.get(op["opId"], 0.0) > self.clock():
                    raise Held
                if op.get("kind") in ONE_BY_ONE or (self.shared is not None and self.shared.shares(op)):
                    settled += self._apply_batch(batch)
                    batch = []
                    settled += self._apply_single(path, op)
                    continue
                try:
                    batch.append((path, op, self._op_applier(op)))
                except (KeyError, TypeError, ValueError) as exc:
                    self._quarantine(path, op, f"malformed operation: {type(exc).__name__}: {exc}")
                    settled += 1
            settled += self._apply_batch(batch)
        except Held:
            pass
        return settled

    # -- messages: one transaction per run of them ------------------------------------------------
    def _apply_batch(self, batch: list) -> int:
        if not batch:
            return 0
        try:
            self.records.apply_ops([(op["opId"], op["kind"], self._marking(fn)) for _, op, fn in batch])
        except Exception as exc:  # noqa: BLE001 (judged: one by one finds the culprit)
            if fenced(exc):
                raise
            return self._one_by_one(batch)
        for path, op, _ in batch:
            self._done(path, op)
        return len(batch)

    def _one_by_one(self, batch: list) -> int:
        settled = 0
        for path, op, fn in batch:
            try:
                self.records.apply_ops([(op["opId"], op["kind"], self._marking(fn))])
            except Exception as exc:  # noqa: BLE001
                self._failed(path, op, exc)  # raises Held when it must wait
            else:
                self._done(path, op)
            settled += 1
        return settled

    # -- facts and nodes: one transaction each ------------------------------------------------------
    def _apply_single(self, path: Any, op: dict) -> int:
        op_id, kind = op.get("opId"), op.get("kind")
        if self.records.op_result(op_id) is not None:  # applied before a crash ate the file
            self._done(path, op)
            return 1
        try:
            self._apply_one(op_id, kind, op)
        except Exception as exc:  # noqa: BLE001
            self._failed(path, op, exc)
            return 1
        self._done(path, op)
        return 1

    def _apply_one(self, op_id: str, kind: str, op: dict) -> None:
        if self.shared is not None and self.shared.shares(op):
            self.shared.submit(op)  # appended there, then applied here in the record's order
            return
        self.apply_local(op)

    def apply_local(self, op: dict) -> None:
        """Apply one fact or node operation to this store, marking its id applied."""
        op_id, kind = op["opId"], op["kind"]
        if kind == "recordMessages":  # a team's shared conversation (shareMessages)
            self.records.apply_ops([(op_id, kind, self._marking(self._op_applier(op)))])
            return
        if self.facts is None or self.memory is None:
            raise LoreError("notReady", "facts and memory are not available yet", retryable=True)
        args = dict(op["args"])
        root = str(op["project"])

        def mark(c, result: dict) -> None:
            self.records.mark_applied(c, op_id, kind, result)

        if kind == "nodeOp":
            self.memory.apply(op["method"], root, args, op.get("runtime") or "follower", also=mark)
            return
        if kind == "distillation":  # made on another machine of the team
            self.memory.apply_distillation(root, args, also=mark)
            return
        done = self.facts.already_journaled(kind, root, args)
        if done is not None:
            # Its journal line was written by a writer that died before committing, and a
            # replay has already turned it into rows: only remember it as applied.
            self.records.settle_op(op_id, kind, done)
        elif kind == "assertFact":
            self.facts.assert_fact(root, args.pop("subject"), args.pop("predicate"), args.pop("object"), also=mark, **args)
        else:
            self.facts.invalidate_fact(root, args.pop("subject"), args.pop("predicate"), also=mark, **args)

    # -- outcomes --------------------------------------------------------------------------------
    def _failed(self, path: Any, op: dict, exc: BaseException) -> None:
        op_id = op["opId"]
        attempt = self._attempts[op_id] = self._attempts.get(op_id, 0) + 1
        verdict = retry.judge(exc, attempt)
        if verdict.action == retry.STOP:
            raise exc
        if verdict.action == retry.SETTLE:
            assert isinstance(exc, LoreError)
            self.records.settle_op(op_id, op.get("kind", "?"), {"error": {"message": str(exc), **exc.data()}})
            self._done(path, op)
        elif verdict.action == retry.QUARANTINE:
            self._quarantine(path, op, verdict.why)
        else:
            self._not_before[op_id] = self.clock() + verdict.delay_s
            log.warning("applying spooled %s failed (attempt %d, retry in %.1f s): %s",
                        op_id, attempt, verdict.delay_s, verdict.why)
            raise Held

    def _quarantine(self, path: Any, op: dict, why: str) -> None:
        self.spool.quarantine(path, why)
        self._forget(op.get("opId"))

    def _marking(self, fn: Callable) -> Callable:
        def apply(c: Any) -> dict:
            result = fn(c)
            if result.get("seq"):
                self.applying(int(result["seq"]))
            return result

        return apply

    def _done(self, path: Any, op: dict) -> None:
        self.spool.remove(path)
        self._forget(op.get("opId"))

    def _forget(self, op_id: Any) -> None:
        self._attempts.pop(op_id, None)
        self._not_before.pop(op_id, None)

    def _op_applier(self, op: dict) -> Callable:
        if op["kind"] == "recordMessages":
            messages = [NewMessage(**m) for m in op["messages"]]
            return self.records.record_messages_op(str(op["project"]), messages)
        raise ValueError(f"unknown operation kind {op['kind']!r}")
