"""readWaitMs bounds read-your-writes: a read waits at most that long for the index to hold
a write this instance made (writer) or saw the writer apply (follower), then answers from
what is searchable now. Nothing here is timed: the writer's bound is what it hands its
indexer, the follower's is counted on a clock the test owns."""

from __future__ import annotations

import threading
import time

from lore_sidecar.engine import service
from lore_sidecar.store.lock import WriterLock
from tests.integration.test_store_and_index import engine_for

NEVER = 10**12  # an outbox position no writer reaches: the wait can only end at its bound


class Clock:
    """time.monotonic/time.sleep for engine/service.py: a sleep moves this clock, not the
    machine's (every other attribute is the real `time`'s)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s
        self.slept += s

    def __getattr__(self, name):
        return getattr(time, name)


def test_a_read_on_the_writer_waits_for_its_own_write_as_long_as_readwaitms_says(tmp_path, monkeypatch):
    for ms in (3500, 120):  # longer than the old fixed 2 s, and shorter
        engine = engine_for(tmp_path / f"store{ms}", [], indexWorkspace=False, watch=False, readWaitMs=ms)
        try:
            assert engine.role.writer and engine.view.indexer is not None
            asked: list[tuple[int, float]] = []
            monkeypatch.setattr(engine.view.indexer, "wait_for", lambda seq, timeout, asked=asked: asked.append((seq, timeout)) or False)
            engine.mark.raise_to(NEVER)
            engine.recall("anything")
            assert asked == [(NEVER, ms / 1000)]
            # Control: with nothing owed a read does not wait at all.
            engine.mark.settle(NEVER)
            engine.recall("anything")
            assert len(asked) == 1
        finally:
            engine.close()


def test_a_read_on_a_follower_polls_for_the_applied_write_until_readwaitms_then_answers(tmp_path, monkeypatch):
    store = tmp_path / "store"
    engine_for(store, [], indexWorkspace=False, watch=False).close()  # the store exists; now nobody writes
    holder = WriterLock(store / "writer.lock")
    assert holder.try_acquire()  # a writer alive but busy: it never indexes what we wait for
    beat = threading.Event()
    threading.Thread(target=lambda: [holder.heartbeat() for _ in iter(lambda: beat.wait(0.1), True)], daemon=True).start()
    try:
        for ms in (3500, 120):
            follower = engine_for(store, [], indexWorkspace=False, watch=False, readWaitMs=ms)
            try:
                assert not follower.role.writer and follower.view.indexer is None
                clock = Clock()
                monkeypatch.setattr(service, "time", clock)
                follower.mark.raise_to(NEVER)
                follower.recall("anything")
                # It polled (5 ms a step) until the bound passed, and no further.
                assert ms / 1000 <= clock.slept <= ms / 1000 + 0.02
                assert follower.mark.seq == NEVER  # still owed: the next read waits again
                monkeypatch.undo()
            finally:
                follower.close()
    finally:
        beat.set()
        holder.release()
