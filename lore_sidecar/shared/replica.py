"""This machine's side of the shared record: push its writes, replay everyone's.

- `submit(op)` (the writer, for a write it accepted — its own or a follower's): append it to
  the shared record (arbitrated there), then replay the project's log up to it, so the local
  store applies every operation in log order and answers with this one's result. When the
  record cannot be reached the operation goes to `<store>/shared-outbox/` (fsynced) and the
  write is acknowledged as durable but not yet applied; it is pushed, exactly once (operation
  ids), when the record is back — a refusal then is logged and set aside with its reason.
- a thread on the writer pulls each open project's log (woken by NOTIFY, and every second)
  and applies what others wrote; the cursor per project is `<store>/shared.json`.
Knowledge-node and fact operations travel; messages only for the projects named in
`shareMessages` (conversations are personal: the default is none).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lore_sidecar.engine.memory.curator import project_name
from lore_sidecar.errors import LoreError
from lore_sidecar.shared.record import SharedRecord, driver_problem

log = logging.getLogger(__name__)
SHARED_KINDS = ("nodeOp", "assertFact", "invalidateFact", "distillation")
USAGE_METHODS = ("countUse", "logRecall")
USAGE = "*usage"  # the team's stream of usage events (recalled, opened): not one project's
WAIT_S = 1.0


class Replica:
    def __init__(self, record: SharedRecord, *, store: Path, outbox: Any, op_result: Callable[[str], dict | None],
                 settle: Callable[[str, str, dict], None], roots: Callable[[], list[str]],
                 share_messages: tuple[str, ...] = ()):
        self.record = record
        self.share_messages = set(share_messages)
        self.cursor_path = store / "shared.json"
        self.outbox = outbox  # a Spool: writes acknowledged while the record was unreachable
        self.op_result = op_result
        self.settle = settle
        self.roots = roots  # the projects open here (canonical roots)
        self.apply: Callable[[dict], None] | None = None  # set by the engine: apply one op locally
        self.wrote: Callable[[], None] = lambda: None
        self.active: Callable[[], bool] = lambda: True  # set by the engine: is this instance the writer
        self.connected = False
        self.last_error: str | None = driver_problem()  # said at once: no psycopg is no passing fault
        self._cursor = self._load()
        self._sync = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- what the write path asks -------------------------------------------------------------------------
    def shares(self, op: dict[str, Any]) -> bool:
        if not op.get("project"):
            return False
        if op.get("kind") == "recordMessages":
            return project_name(op["project"]) in self.share_messages
        return op.get("kind") in SHARED_KINDS and op.get("method") not in USAGE_METHODS

    def submit(self, op: dict[str, Any]) -> dict[str, Any] | None:
        """Append then replay; the local result, or None when only the outbox holds it."""
        name = project_name(op["project"])
        try:
            seq = self.record.append(op, name)
        except LoreError as exc:
            if exc.kind != "sharedUnreachable":
                raise  # a refusal: nothing was appended anywhere
            self._offline(exc)
            self.outbox.put(op)
            return None
        self.connected = True
        self.sync(name, op["project"], until=seq)
        return self.op_result(op["opId"])

    def usage(self, op: dict[str, Any]) -> None:
        """A usage event (leads shown, a lead opened): applied here at once and marked, then
        pushed by the thread — a recall never waits on the network for its bookkeeping."""
        assert self.apply is not None
        self.apply(op)
        self.outbox.put(op, durable=False)

    def publish(self, root: str, payload: dict[str, Any]) -> None:
        """A distillation this machine made (with the entities it taught): already in the
        local store, so it is only marked applied here, then appended for the others (kept
        in the outbox when the record is away)."""
        op = {"opId": f"dist:{payload['dist']['dist_id']}", "kind": "distillation", "project": root, "args": payload}
        self.settle(op["opId"], "distillation", {"distId": payload["dist"]["dist_id"]})
        try:
            self.record.append(op, project_name(root))
        except LoreError as exc:
            if exc.kind != "sharedUnreachable":
                log.warning("a distillation was not shared: %s", exc)
                return
            self._offline(exc)
            self.outbox.put(op)

    # -- replay ---------------------------------------------------------------------------------------
    def sync(self, name: str, root: str, until: int | None = None) -> int:
        """Apply the project's log past the cursor (at least up to `until`); returns how many."""
        applied = 0
        with self._sync:
            while True:
                after = self._cursor.get(name, 0)
                if until is not None and after >= until:
                    break
                batch = self.record.pull(name, after)
                if not batch:
                    break
                for seq, op in batch:
                    self._apply(op, root)
                    self._cursor[name] = seq
                    applied += 1
                self._save()
                if until is None and len(batch) < 2000:
                    break
        if applied:
            self.wrote()
        return applied

    def _apply(self, op: dict[str, Any], root: str) -> None:
        if self.op_result(op["opId"]) is not None:
            return  # applied here already (this machine wrote it, or a replay repeats)
        local = {**op, "project": root}
        try:
            assert self.apply is not None
            self.apply(local)
        except LoreError as exc:
            # Arbitrated in the record, so it can only fail here if this store diverged (it
            # had local changes before it joined): say so, keep its result, go on in order.
            log.warning("shared operation %s did not apply here: %s", op["opId"], exc)
            self.settle(op["opId"], op.get("kind", "?"), {"error": {"message": str(exc), **exc.data()}})

    # -- the writer's thread -----------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="lore-shared", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        listener = None
        while not self._stop.is_set() and self.active():
            try:
                if listener is None:
                    listener = self.record.listener()
                self.push_outbox()
                for root in self.roots():
                    self.sync(project_name(root), root)
                self.sync(USAGE, "")
                self.connected, self.last_error = True, None
                for _ in listener.notifies(timeout=WAIT_S, stop_after=1):
                    pass
            except LoreError as exc:
                self._offline(exc)
                listener = _closed(listener)
                self._stop.wait(WAIT_S)
            except Exception as exc:  # noqa: BLE001 (a broken connection of the listener)
                self._offline(exc)
                listener = _closed(listener)
                self._stop.wait(WAIT_S)
        _closed(listener)

    def push_outbox(self) -> int:
        pushed = 0
        for path in self.outbox.pending(256):
            op = self.outbox.read(path)
            if op is None:
                continue
            try:
                self.submit_pending(op)
            except LoreError as exc:
                if exc.kind == "sharedUnreachable":
                    raise
                log.warning("a write made while the shared record was away was refused: %s", exc)
                self.settle(op["opId"], op.get("kind", "?"), {"error": {"message": str(exc), **exc.data()}})
            self.outbox.remove(path)
            pushed += 1
        return pushed

    def submit_pending(self, op: dict[str, Any]) -> None:
        name = USAGE if op.get("method") in USAGE_METHODS else project_name(op["project"])
        seq = self.record.append(op, name)
        self.sync(name, op["project"], until=seq)

    def _offline(self, exc: Exception) -> None:
        if self.connected or self.last_error is None:
            log.warning("shared record unreachable: %s", exc)
        self.connected, self.last_error = False, str(exc)
        self.record.close()

    # -- status and the cursor ----------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        lag = None
        if self.connected:
            try:
                lags = []
                for root in self.roots():
                    head, age = self.record.head(project_name(root))
                    if head > self._cursor.get(project_name(root), 0):
                        lags.append(round((age or 0.0) * 1000))
                lag = max(lags, default=0)
            except LoreError:
                lag = None
        return {"backend": "postgresql", "team": self.record.team, "connected": self.connected, "lagMs": lag,
                "pending": self.outbox.count(), "cursor": dict(self._cursor), "lastError": self.last_error}

    def _load(self) -> dict[str, int]:
        try:
            data = json.loads(self.cursor_path.read_text())
            return {str(k): int(v) for k, v in data.get("cursor", {}).items()} if data.get("team") == self.record.team else {}
        except (OSError, ValueError):
            return {}

    def _save(self) -> None:
        tmp = self.cursor_path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"team": self.record.team, "cursor": self._cursor, "at": time.time()}))
        os.replace(tmp, self.cursor_path)


def _closed(conn: Any) -> None:
    if conn is not None:
        try:
            conn.close()
        except Exception:  # noqa: BLE001
            pass
    return None
