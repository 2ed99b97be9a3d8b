"""Applying what followers spooled, on the writer: oldest first, each operation exactly once.

Consecutive message writes share one transaction; a fact or node operation is its own (a
fact appends to the journal first). A refusal is settled as the sender's error; an
unexpected failure is retried, then set aside in spool/bad so one bad operation cannot stall
every follower's writes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from lore_sidecar.errors import LoreError
from lore_sidecar.model import NewMessage

log = logging.getLogger(__name__)
FACT_OPS = ("assertFact", "invalidateFact")
ONE_BY_ONE = (*FACT_OPS, "nodeOp")


class SpoolApplier:
    def __init__(self, engine):
        self.e = engine

    def drain(self, limit: int = 128) -> int:
        """Writer: apply spooled operations, oldest first, each exactly once. Returns how
        many files were consumed. Consecutive message writes share one transaction; a fact
        operation is its own (it appends to the journal first)."""
        if not self.e.role.writer or self.e.spool is None:
            return 0
        paths = self.e.spool.pending(limit)
        if not paths:
            return 0
        batch: list = []
        for path in paths:
            op = self.e.spool.read(path)
            if op is None:
                continue
            if op.get("kind") in ONE_BY_ONE:
                self._apply_batch(batch)
                batch = []
                self._apply_single(path, op)
                continue
            try:
                batch.append((path, op["opId"], op["kind"], self._op_applier(op)))
            except (KeyError, TypeError, ValueError) as exc:
                self.e.spool.quarantine(path, f"malformed operation: {exc}")
        self._apply_batch(batch)
        self.e._last_write_seq = max(self.e._last_write_seq, self.e.records.outbox_head())
        if self.e.indexer:
            self.e.indexer.notify()
        return len(paths)

    def _apply_batch(self, batch: list) -> None:
        if not batch:
            return
        try:
            self.e.records.apply_ops([(op_id, kind, fn) for _, op_id, kind, fn in batch])
        except LoreError as exc:
            if exc.kind == "notWriter":
                raise
            batch = self._apply_one_by_one(batch)
        except Exception:
            batch = self._apply_one_by_one(batch)
        for path, *_ in batch:
            self.e.spool.remove(path)

    def _apply_single(self, path: Any, op: dict) -> None:
        """A fact or node operation: its own transaction, refusals settled as the sender's
        error, unexpected failures retried then set aside."""
        op_id, kind = op.get("opId"), op.get("kind")
        if self.e.records.op_result(op_id) is not None:  # applied before a crash ate the file
            self.e.spool.remove(path)
            return
        if self.e.facts is None:
            raise LoreError("notReady", "facts are not available yet", retryable=True)
        try:
            args = dict(op["args"])
            root = str(op["project"])

            def mark(c, result: dict) -> None:
                self.e.records.mark_applied(c, op_id, kind, result)

            done = self.e.facts.already_journaled(kind, root, args) if kind in FACT_OPS else None
            if kind == "nodeOp":
                self.e.memory.apply(op["method"], root, args, op.get("runtime") or "follower", also=mark)
            elif done is not None:
                # Its journal line was written by a writer that died before committing, and
                # a replay has already turned it into rows: only remember it as applied.
                self.e.records.settle_op(op_id, kind, done)
            elif kind == "assertFact":
                self.e.facts.assert_fact(root, args.pop("subject"), args.pop("predicate"), args.pop("object"), also=mark, **args)
            else:
                self.e.facts.invalidate_fact(root, args.pop("subject"), args.pop("predicate"), also=mark, **args)
        except LoreError as exc:
            if exc.kind == "notWriter":
                raise
            # The store changed between the follower's checks and ours: tell the sender.
            self.e.records.settle_op(op_id, kind, {"error": {"message": str(exc), **exc.data()}})
        except (KeyError, TypeError, ValueError) as exc:
            self.e.spool.quarantine(path, f"malformed operation: {exc}")
            return
        except Exception as exc:
            # Unexpected: retry a few times, then set it aside (kept in spool/bad, never
            # deleted) so one bad operation cannot stall every follower's writes.
            tries = self.e._op_failures[op_id] = self.e._op_failures.get(op_id, 0) + 1
            log.exception("applying %s failed (attempt %d)", op_id, tries)
            if tries >= 3:
                self.e.spool.quarantine(path, f"{type(exc).__name__}: {exc}")
            return
        self.e.spool.remove(path)

    def _apply_one_by_one(self, batch: list) -> list:
        """One bad operation must not hold back the others: isolate and quarantine it."""
        done = []
        for item in batch:
            path, op_id, kind, fn = item
            try:
                self.e.records.apply_ops([(op_id, kind, fn)])
                done.append(item)
            except LoreError as exc:
                if exc.kind == "notWriter":
                    raise
                self.e.spool.quarantine(path, str(exc))
            except Exception as exc:
                self.e.spool.quarantine(path, f"{type(exc).__name__}: {exc}")
        return done

    def _op_applier(self, op: dict) -> Callable:
        if op["kind"] in ONE_BY_ONE:
            raise ValueError("fact and node operations are applied one by one")
        if op["kind"] == "recordMessages":
            messages = [NewMessage(**m) for m in op["messages"]]
            return self.e.records.record_messages_op(str(op["project"]), messages)
        raise ValueError(f"unknown operation kind {op['kind']!r}")

