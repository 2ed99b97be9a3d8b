"""The gradient's rules: which layer a call gets and where the raw window starts. Pure.

Trigger / Why / Outcome, for the rules that are easy to get wrong:
- Leaving L0. Why: at L0 every call re-reads the whole history (0.1x input once cached);
  compressing costs one write of the smaller prompt (1.25x) and then cheaper reads. Outcome:
  compress when that pays over the rest of the session (as many calls again as it has had,
  its growth per call, its share of gaps past the TTL), or when the history passes the raw
  window cap (`maxLayer0Tokens`) or no longer fits the model's window.
- Moving the window. Why: a prefix that changes every turn is a cache write every turn.
  Outcome: the raw window grows past its pinned size by a slack chosen from the session's
  growth and the prices (`window_size`) before it moves, and then it moves in one batch back
  to the pinned size; between moves the prefix is byte-identical.
- The bust budget. Why: a move, leaving L0 and the harness's own compaction each rewrite
  everything after the prefix (a content bust); a fast-growing session would otherwise move
  whenever its slack is used up. Outcome: after the first, a voluntary bust waits until the
  session has had CALLS_PER_MOVE calls per bust (`may_bust`); a cold cache (nothing to
  lose), the user's cap (`maxLayer0Tokens`) and the model's window move at once.
- Layers are sticky (never back down within a session), and a forced floor (a "prompt is
  too long" from the provider) only rises.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from lore_sidecar.engine.context.prices import Price

TTL_S = 300.0
TTL_1H_S = 3600.0
MIN_REMAINING = 10  # a session is expected to run at least this many more calls
MOVE_DELTA = 500  # tokens a window move adds to the prefix (rewritten with the window)
CALLS_PER_MOVE = 25  # a move busts what follows the prefix: at most one per this many calls


@dataclass
class State:
    """What a session's assembler remembers between calls (persisted)."""
    layer: int = 0
    window_start: int = 0
    prefix: str = ""
    parts: tuple[str, ...] = ()  # the prefix as sent: digest parts, each appended by a window move
    prefix_upto: int = 0
    force_min_layer: int = 0
    busts: int = 0
    frozen: bool = False
    caching: bool = True
    uncached_calls: int = 0
    last_at: float = 0.0
    ratio: float = 1.0
    ratios: tuple[float, ...] = ()
    conv_ratio: float = 0.0  # tokens per estimated token of the conversation alone (0: not measured yet)
    share: float = 0.0  # the system prompt's and tools' tokens, measured on the call with the smallest conversation
    share_fixed_raw: int = 0  # their estimate then (another system prompt measures again)
    share_conv_raw: int = 0  # that call's conversation estimate
    last_fixed_raw: int = 0  # the estimate of the last body's system prompt and tools (uncalibrated)
    calls: int = 0
    compactions: int = 0
    last_raw_estimate: int = 0
    expect_read: int = 0
    last_expected_read: int = 0
    anchor: str = ""  # the capture id of the window's first message
    captured: int = 0  # items of the history captured so far
    captured_id: str = ""  # the capture id of the last of them
    sizes: tuple[int, ...] = ()  # raw token estimates of those items (the history is append-only)
    growth: float = 0.0  # tokens the history grows by per call (moving average)
    last_total: int = 0  # the history's size at the last call
    gaps: int = 0  # gaps between calls seen
    cold_gaps: int = 0  # of them, longer than the cache's TTL
    content_busts: int = 0  # warm calls whose conversation before the newest messages changed
    long_gaps: int = 0  # gaps longer than an hour (past even the 1-hour TTL)
    ttl_1h: bool = False  # our system-prompt breakpoint is written for an hour
    spent: tuple[tuple[float, float], ...] = ()  # (time, estimated USD) of the last hour's calls (the throttle)

    @classmethod
    def load(cls, data: dict[str, Any] | None) -> State:
        known = {f.name for f in fields(cls)}
        kept = {k: (tuple(v) if k in ("ratios", "sizes", "parts") else v) for k, v in (data or {}).items() if k in known}
        if "spent" in kept:
            kept["spent"] = tuple((float(t), float(u)) for t, u in kept["spent"])
        return cls(**kept)

    def dump(self) -> dict[str, Any]:
        out = asdict(self)
        out["ratios"] = list(self.ratios)
        out["sizes"] = list(self.sizes)
        out["parts"] = list(self.parts)
        out["spent"] = [list(x) for x in self.spent]
        return out


@dataclass(frozen=True)
class Plan:
    layer: int
    window_start: int
    rebuild: bool  # the prefix changes on this call (a planned cache write)
    reason: str


def usable(price: Price, max_output: int) -> int:
    return price.window - max(4096, min(max_output, 64_000))


@dataclass(frozen=True)
class Budget:
    """The user's limits on the raw window (settings `minLayer0Tokens`, `maxLayer0Tokens`,
    `targetCacheReadCostPerTurn`)."""
    min_raw: int = 4_000
    max_raw: int = 60_000
    read_usd_per_turn: float = 0.0  # 0: no target


@dataclass(frozen=True)
class Rhythm:
    """What the session so far says about the rest of it."""
    growth: float  # tokens appended per call
    cold: float  # chance that the next gap outlives the cache TTL
    remaining: int  # calls still expected
    cold_1h: float = 0.0  # chance that it outlives even a 1-hour TTL


def rhythm(state: State) -> Rhythm:
    """Why: the cost of a window depends on how often it must move (growth), how often the
    cache dies anyway (gaps past the TTL), and how long the session will last. Outcome: a
    session that has run n calls is expected to run about n more (the median of a
    heavy-tailed length, at least MIN_REMAINING); the cold share has a small prior."""
    cold = (state.cold_gaps + 0.5) / (state.gaps + 10)
    cold_1h = min(cold, (state.long_gaps + 0.1) / (state.gaps + 10))
    return Rhythm(growth=max(100.0, state.growth), cold=cold, remaining=max(MIN_REMAINING, state.calls), cold_1h=cold_1h)


def observe(state: State, total: int, at: float) -> None:
    """Fold this call's history size and gap into the session's rhythm (a shrink is the
    harness's own compaction: no growth)."""
    if state.last_at > 0:
        state.gaps += 1
        state.cold_gaps += at - state.last_at > TTL_S
        state.long_gaps += at - state.last_at > TTL_1H_S
    if state.last_total and total >= state.last_total:
        step = total - state.last_total
        state.growth = step if state.growth == 0 else 0.8 * state.growth + 0.2 * step
    state.last_total = total


def hour_pays(price: Price, rh: Rhythm) -> bool:
    """Whether the system prompt's breakpoint should be written for an hour.

    Why: a gap past 5 minutes but within the hour rewrites the system prompt (write instead
    of read) unless it was cached for an hour, which costs `write_1h - write` more each time
    it is written (once, and again after every gap past the hour). Outcome: an hour when, over
    the calls still to come, the expected rewrites it saves cost more than the surcharge."""
    if not (price.caching and price.ttl_1h):
        return False
    n = rh.remaining
    saved = n * (rh.cold - rh.cold_1h) * (price.write - price.read)
    surcharge = (price.write_1h - price.write) * (1 + n * rh.cold_1h)
    return saved > surcharge


def may_bust(state: State) -> bool:
    """Whether one more content bust keeps the session within one per CALLS_PER_MOVE calls
    (counting this call); the first is always allowed (a session must leave L0 once)."""
    return state.content_busts == 0 or (state.content_busts + 1) * CALLS_PER_MOVE <= state.calls + 1


def resend_price(price: Price, cold: float) -> float:
    """The expected price (x input) of re-sending an unchanged token next call."""
    if not price.caching:
        return 1.0
    return (1 - cold) * price.read + cold * price.write


def raw_cap(price: Price, budget: Budget, fixed: int, prefix: int) -> int:
    """The largest raw window the budget allows; a read-cost target per turn makes it
    per model (a pricier model gets a smaller window). Never below the minimum."""
    cap = budget.max_raw
    if budget.read_usd_per_turn > 0:
        per_token = price.input * (price.read if price.caching else 1.0) / 1e6
        cap = min(cap, int(budget.read_usd_per_turn / per_token) - fixed - prefix)
    return max(budget.min_raw, cap)


def window_size(price: Price, budget: Budget, fixed: int, prefix: int, rh: Rhythm) -> tuple[int, int]:
    """(pinned, slack): the window moves back to `pinned` when it outgrows `pinned + slack`.

    Why: per call, a window of average size pinned + slack/2 is re-read, and every
    slack/growth calls a move rewrites pinned + a prefix delta. The slack minimising
    read x (pinned + slack/2) + growth/slack x (write - read) x (pinned + delta) is
    sqrt(2 x growth x (write - read) x (pinned + delta) / read); the smallest pinned is the
    cheapest, so pinned is the user's minimum. Outcome: bounded by the cap; how often a move
    may bust the cache is the bust budget's to say (`may_bust`), not the slack's."""
    cap = raw_cap(price, budget, fixed, prefix)
    pinned = min(budget.min_raw, cap)
    r = resend_price(price, rh.cold)
    rewrite = max(0.05, (price.write if price.caching else 1.0) - r)
    slack = math.sqrt(2 * rh.growth * rewrite * (pinned + MOVE_DELTA) / r)
    return pinned, int(max(rh.growth, min(slack, cap - pinned)))


def worth_compressing(total: int, fixed: int, prefix: int, pinned: int, slack: int, price: Price, rh: Rhythm,
                      cold: bool) -> bool:
    """Whether compressing now costs less than staying at L0 over the rest of the session.

    keep: the whole history re-sent each call, growing by `growth`;
    squeeze: one write of prefix + window (system and tools stay cached), then the average
    compressed prompt re-sent each call and a window move every slack/growth calls.
    What each call appends is written alike on both sides, so it is left out."""
    n, g = rh.remaining, rh.growth
    r = resend_price(price, rh.cold)
    write = price.write if price.caching else 1.0
    first_read = write if cold else (price.read if price.caching else 1.0)
    keep = total * first_read + (n - 1) * r * (total + g * n / 2)
    rewrite = max(0.05, write - r)
    squeeze = (fixed * first_read + (prefix + pinned) * write + (n - 1) * r * (fixed + prefix + pinned + slack / 2)
               + (n - 1) * g / max(1, slack) * rewrite * (pinned + MOVE_DELTA))
    return squeeze < 0.9 * keep


def window_for(sizes: list[int], starts: list[int], pinned: int, at_least: int = 0) -> int:
    """The earliest turn start (not before `at_least`) whose raw window fits `pinned`;
    the last turn start when even the current turn alone is larger."""
    suffix = 0
    best = None
    total_after: dict[int, int] = {}
    for i in range(len(sizes) - 1, -1, -1):
        suffix += sizes[i]
        total_after[i] = suffix
    for s in starts:
        if s >= at_least and total_after.get(s, 0) <= pinned:
            best = s
            break
    if best is None:
        later = [s for s in starts if s >= at_least]
        best = later[-1] if later else at_least
    return best


def plan(state: State, *, sizes: list[int], fixed: int, starts: list[int], price: Price, max_output: int,
         budget: Budget, prefix_budget: int, at: float) -> Plan:
    """The layer for this call, where its raw window starts, and whether the prefix is rebuilt."""
    n = len(sizes)
    room = usable(price, max_output)
    history = sum(sizes)
    total = fixed + history
    layer = max(state.layer, state.force_min_layer)
    cold = state.last_at > 0 and at - state.last_at > TTL_S
    prefix = len(state.prefix) // 4 if state.prefix else prefix_budget
    rh = rhythm(state)
    pinned, slack = window_size(price, budget, fixed, prefix, rh)
    cap = pinned + slack
    if layer == 0:
        if total > room:
            layer, reason = 1, "over the window"
        elif history > raw_cap(price, budget, fixed, prefix) and starts:
            layer, reason = 1, "over the raw window cap"
        elif not (cold or may_bust(state)):
            return Plan(0, 0, False, "passthrough (bust budget)")
        elif state.frozen:
            return Plan(0, 0, False, "passthrough (stopped compressing after 2 busts)")
        elif starts and history > pinned and worth_compressing(total, fixed, prefix_budget, pinned, slack, price, rh, cold):
            layer, reason = 1, "cheaper compressed" + (" (cache cold)" if cold else "")
        else:
            return Plan(0, 0, False, "passthrough")
        start = window_for(sizes, starts, pinned)
        return Plan(layer, start, start > 0, reason)
    start = state.window_start if 0 <= state.window_start <= n else 0
    if state.force_min_layer > state.layer and starts:
        # The provider said the prompt was too long: our estimate was low by an unknown
        # factor, so the raw window is at least halved now, whatever the estimate says.
        target = min(pinned, sum(sizes[start:]) // 2)
        return Plan(layer, window_for(sizes, starts, target, at_least=start), True, "forced floor (prompt too long)")
    raw = sum(sizes[start:])
    over = fixed + len(state.prefix) // 4 + raw > room
    due = raw > cap and not state.frozen
    if over or raw > raw_cap(price, budget, fixed, prefix) or (due and (cold or may_bust(state))):
        moved = window_for(sizes, starts, pinned, at_least=start)
        if moved != start:
            return Plan(layer, moved, True, "window moved" + (" (over the window)" if over else ""))
        return Plan(layer, start, False, "window at the current turn")
    if cold and start < n and not state.frozen:
        moved = window_for(sizes, starts, pinned, at_least=start)
        if moved != start:
            return Plan(layer, moved, True, "window moved (cache cold anyway)")
    return Plan(layer, start, False, "stable prefix")
