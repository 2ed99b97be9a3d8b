"""Words first: how long the legs that follow the text leg wait for it."""

from __future__ import annotations

import threading
import time

from lore_sidecar.engine.indexing import words_first
from lore_sidecar.engine.indexing.words_first import SCAN_WRITING, WRITES_PENDING, wait_for_words


class Busy:
    """`state` until `until` (monotonic), then 0; remembers what it last answered."""

    def __init__(self, state: int, lasts_s: float):
        self.state, self.until, self.last = state, time.monotonic() + lasts_s, None

    def __call__(self) -> int:
        self.last = self.state if time.monotonic() < self.until else 0
        return self.last


def test_a_scan_still_writing_holds_the_following_legs_past_the_bound(monkeypatch):
    monkeypatch.setattr(words_first, "WORDS_FIRST_MAX_S", 0.02)
    scan = Busy(SCAN_WRITING, 0.3)  # outlasts the bound many times over
    wait_for_words(scan, threading.Event())
    assert scan.last == 0  # it returned because the scan ended, not because the bound ran out




def test_a_stop_ends_the_wait_on_a_scan(monkeypatch):
    stop = threading.Event()
    stop.set()
    scan = Busy(SCAN_WRITING, 3600)
    wait_for_words(scan, stop)
    assert scan.last == SCAN_WRITING  # returned on the stop, the scan still writing


class Phases:
    """Answers each (state, calls, seconds each call stands for) phase in turn, then 0, on a
    clock of its own: a scan can outlast the bound many times over without the test waiting."""

    def __init__(self, *phases: tuple[int, int, float]):
        self.answers = [(state, step) for state, calls, step in phases for _ in range(calls)]
        self.now, self.last = 0.0, None

    def monotonic(self) -> float:
        return self.now

    def __call__(self) -> int:
        self.last, step = self.answers.pop(0) if self.answers else (0, 0.0)
        self.now += step
        return self.last


def test_a_scans_last_batches_get_the_whole_bound_after_a_scan_longer_than_it(monkeypatch):
    """A scan writes for 60 s (the bound is 5 s), then the text leg indexes and commits its
    last batches for 2 s: the dense leg waits for them. It started beside that last commit
    when the bound was counted from before the scan."""
    busy = Phases((SCAN_WRITING, 60, 1.0), (WRITES_PENDING, 20, 0.1))
    monkeypatch.setattr(words_first, "time", busy)
    wait_for_words(busy, threading.Event())
    assert busy.last == 0  # returned when the text leg was level, not on the bound
    # Control: pending writes that outlast the bound after the scan still end the wait.
    busy = Phases((SCAN_WRITING, 60, 1.0), (WRITES_PENDING, 100, 0.1))
    monkeypatch.setattr(words_first, "time", busy)
    wait_for_words(busy, threading.Event())
    assert busy.last == WRITES_PENDING and len(busy.answers) > 0


def test_pending_writes_alone_hold_the_following_legs_only_for_the_bound(monkeypatch):
    """A stream of writes that does not pause for 30 s of its own clock (the bound is 5 s): the
    wait ends on the bound, with writes still pending. On a clock of its own, so a wait that
    ignores the bound fails within 3 s instead of hanging the suite for an hour (rev11: the
    bound restarted on any pending write; the old form of this test, a real hour-long stream,
    never finished)."""
    stream = Phases((WRITES_PENDING, 300, 0.1))
    monkeypatch.setattr(words_first, "time", stream)
    wait_for_words(stream, threading.Event())
    assert stream.last == WRITES_PENDING and len(stream.answers) > 0  # the bound ended it, the stream went on
