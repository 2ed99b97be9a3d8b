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


def test_pending_writes_alone_hold_the_following_legs_only_for_the_bound(monkeypatch):
    monkeypatch.setattr(words_first, "WORDS_FIRST_MAX_S", 0.02)
    stream = Busy(WRITES_PENDING, 3600)  # a stream of writes that never pauses
    wait_for_words(stream, threading.Event())
    assert stream.last == WRITES_PENDING  # control: the bound ends this wait


def test_a_stop_ends_the_wait_on_a_scan(monkeypatch):
    stop = threading.Event()
    stop.set()
    scan = Busy(SCAN_WRITING, 3600)
    wait_for_words(scan, stop)
    assert scan.last == SCAN_WRITING  # returned on the stop, the scan still writing
