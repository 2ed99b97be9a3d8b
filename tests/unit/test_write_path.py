"""The write path's rules: one retry policy for every spooled operation kind, quarantine
only for operations that can never apply, and a mark that only moves up."""

from __future__ import annotations

import threading

from lore_sidecar.engine.roles import WriteMark
from lore_sidecar.engine.writes import retry
from lore_sidecar.engine.writes.apply import SpoolApplier
from lore_sidecar.errors import LoreError
from lore_sidecar.store.spool import Spool


class FlakyRecords:
    """The record as the applier sees it, failing with a passing condition `fail` times."""

    def __init__(self, fail: int, error: BaseException):
        self.fail, self.error = fail, error
        self.applied: list[str] = []
        self.settled: dict[str, dict] = {}

    def apply_ops(self, ops):
        if self.fail:
            self.fail -= 1
            raise self.error
        self.applied += [op_id for op_id, _, _ in ops]

    def record_messages_op(self, root, messages):
        return lambda c: {"recorded": len(messages)}

    def op_result(self, op_id):
        return None

    def settle_op(self, op_id, kind, result):
        self.settled[op_id] = result


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def op(n: int) -> dict:
    return {"opId": f"{n:020d}-1-aaaa", "kind": "recordMessages", "project": "/p", "messages": []}


def test_a_busy_store_is_retried_with_backoff_and_never_quarantined(tmp_path):
    spool = Spool(tmp_path / "spool")
    # Each round fails twice (the batch, then the first operation alone): seven rounds.
    records = FlakyRecords(fail=14, error=LoreError("storeBusy", "the store is busy", retryable=True))
    clock = Clock()
    applier = SpoolApplier(records=records, spool=spool, facts=None, memory=None, clock=clock)
    spool.put(op(1))
    spool.put(op(2))
    delays = []
    for _ in range(7):
        assert applier.drain() == 0
        delays.append(round(applier._not_before[op(1)["opId"]] - clock.now, 3))
        assert applier.drain() == 0  # held until the backoff has passed: order kept
        clock.now += 10
    assert delays == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0]
    assert applier.drain() == 2
    assert records.applied == [op(1)["opId"], op(2)["opId"]] and spool.count() == 0 and spool.quarantined() == 0


def test_an_operation_that_can_never_apply_is_quarantined_and_counted_and_the_next_one_proceeds(tmp_path):
    spool = Spool(tmp_path / "spool")
    records = FlakyRecords(fail=0, error=RuntimeError())
    applier = SpoolApplier(records=records, spool=spool, facts=None, memory=None, clock=Clock())
    spool.put({"opId": f"{1:020d}-1-aaaa", "kind": "dropTables"})
    spool.put(op(2))
    assert applier.drain() == 2
    assert spool.quarantined() == 1 and records.applied == [op(2)["opId"]]


def test_an_unrecognised_failure_is_retried_a_few_times_before_it_is_set_aside(tmp_path):
    spool = Spool(tmp_path / "spool")
    records = FlakyRecords(fail=100, error=RuntimeError("a bug"))
    clock = Clock()
    applier = SpoolApplier(records=records, spool=spool, facts=None, memory=None, clock=clock)
    spool.put(op(1))
    for _ in range(retry.MAX_UNEXPECTED - 1):
        applier.drain()
        clock.now += 10
        assert spool.quarantined() == 0
    applier.drain()
    assert spool.quarantined() == 1 and spool.count() == 0


def test_the_policy_sorts_failures_by_what_can_be_done_about_them():
    assert retry.judge(LoreError("storeBusy", "", retryable=True), 50).action == retry.RETRY
    assert retry.judge(LoreError("diskFull", "", retryable=True), 50).action == retry.RETRY
    assert retry.judge(OSError(28, "no space"), 50).action == retry.RETRY
    assert retry.judge(LoreError("staleEpoch", "", retryable=True), 1).action == retry.STOP
    assert retry.judge(LoreError("notFound", "gone"), 1).action == retry.SETTLE
    assert retry.judge(KeyError("args"), 1).action == retry.QUARANTINE
    assert retry.judge(RuntimeError(), 1).action == retry.RETRY
    assert retry.judge(RuntimeError(), retry.MAX_UNEXPECTED).action == retry.QUARANTINE


def test_the_write_mark_only_moves_up_and_a_wait_clears_only_what_it_waited_for():
    mark = WriteMark()
    threads = [threading.Thread(target=lambda n=n: [mark.raise_to(n * 1000 + i) for i in range(1000)]) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mark.seq == 7999
    mark.settle(5000)  # a reader waited for 5000: a newer write (7999) is still owed
    assert mark.seq == 7999
    mark.settle(7999)
    assert mark.seq == 0
