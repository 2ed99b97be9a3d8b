"""Keep-warm (opt-in, `askKeepWarmMs`): a cheap request that keeps a recently active
workspace's prompt cache alive between questions.

Trigger: a workspace asked within `askKeepWarmIdleMs`, and nothing sent to the model for
`askKeepWarmMs` (set it below the provider's cache TTL, 5 minutes for Anthropic).
Why: a question after a quiet spell otherwise pays a full cache write of the whole window
(≈1.25x input price) instead of a read (≈0.1x); a ping costs a read of the prefix and one
output token. Outcome: the ping is the window's own prefix plus a one-word question, never
added to the history, and its cost is counted in the workspace's figures. Idle past the
limit: no more pings until the next question.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from lore_sidecar.engine.ask import toolspec, window
from lore_sidecar.errors import LoreError

log = logging.getLogger(__name__)
PING = "(keep-warm: reply with one word)"


class KeepWarm:
    def __init__(self, asks: Any, interval_s: float, idle_s: float):
        self.asks = asks  # AskRequests: warm_targets(), model, cost()
        self.interval_s = interval_s
        self.idle_s = idle_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lore-ask-keepwarm", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        tick = max(0.02, self.interval_s / 10)
        while not self._stop.wait(tick):
            now = time.monotonic()
            for slot in self.asks.warm_targets():
                w = slot.w
                if now - w.last_active > self.idle_s or now - w.last_request < self.interval_s:
                    continue
                if not slot.lock.acquire(blocking=False):
                    continue  # a question is committing: it is warm anyway
                try:
                    system, history = window.system_blocks(w.frozen), list(w.history)
                    w.last_request = now
                finally:
                    slot.lock.release()
                self._ping(slot, system, history)

    def _ping(self, slot: Any, system: list[dict[str, Any]], history: list[dict[str, Any]]) -> None:
        messages = window.marked([*history, {"role": "user", "content": [{"type": "text", "text": PING}]}], len(history))
        try:
            turn = self.asks.model.converse(system=system, tools=toolspec.SPECS, messages=messages, max_tokens=1,
                                            timeout_s=min(30.0, self.interval_s))
        except LoreError as exc:
            log.info("keep-warm request failed: %s", exc)
            return
        u = window.usage_of(turn.usage)
        with slot.lock:
            slot.w.totals["keepWarm"] += 1
            window.add_usage(slot.w.totals, u, self.asks.cost(u))
