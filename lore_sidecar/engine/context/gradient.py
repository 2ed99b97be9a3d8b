"""The gradient's rules: which layer a call gets and where the raw window starts. Pure.

Trigger / Why / Outcome, for the rules that are easy to get wrong:
- Leaving L0. Why: at L0 every call re-reads the whole history (0.1x input once cached);
  compressing costs one write of the smaller prompt (1.25x) and then cheaper reads. Outcome:
  compress only when that pays over the turns still to come (estimated from the turns so
  far), or when the history no longer fits the window, or when the cache went cold anyway.
- Moving the window. Why: a prefix that changes every turn is a cache write every turn.
  Outcome: the raw window grows past its pinned size by half before it moves, and then it
  moves in one batch back to the pinned size; between moves the prefix is byte-identical.
- Layers are sticky (never back down within a session), and a forced floor (a "prompt is
  too long" from the provider) only rises.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from lore_sidecar.engine.context.prices import Price

HYSTERESIS = 0.5
MIN_HORIZON, MAX_HORIZON = 4, 50
TTL_S = 300.0


@dataclass
class State:
    """What a session's assembler remembers between calls (persisted)."""
    layer: int = 0
    window_start: int = 0
    prefix: str = ""
    prefix_upto: int = 0
    force_min_layer: int = 0
    busts: int = 0
    frozen: bool = False
    caching: bool = True
    uncached_calls: int = 0
    last_at: float = 0.0
    ratio: float = 1.0
    ratios: tuple[float, ...] = ()
    calls: int = 0
    compactions: int = 0
    last_raw_estimate: int = 0
    expect_read: int = 0
    last_expected_read: int = 0
    anchor: str = ""  # the capture id of the window's first message
    captured: int = 0  # items of the history captured so far
    captured_id: str = ""  # the capture id of the last of them
    sizes: tuple[int, ...] = ()  # raw token estimates of those items (the history is append-only)

    @classmethod
    def load(cls, data: dict[str, Any] | None) -> State:
        known = {f.name for f in fields(cls)}
        kept = {k: (tuple(v) if k in ("ratios", "sizes") else v) for k, v in (data or {}).items() if k in known}
        return cls(**kept)

    def dump(self) -> dict[str, Any]:
        out = asdict(self)
        out["ratios"] = list(self.ratios)
        out["sizes"] = list(self.sizes)
        return out


@dataclass(frozen=True)
class Plan:
    layer: int
    window_start: int
    rebuild: bool  # the prefix changes on this call (a planned cache write)
    reason: str


def usable(price: Price, max_output: int) -> int:
    return price.window - max(4096, min(max_output, 64_000))


def worth_compressing(total: int, compressed: int, calls: int, price: Price, cold: bool) -> bool:
    """Whether one write of the compressed prompt plus cheaper reads beats reading it all."""
    horizon = max(MIN_HORIZON, min(MAX_HORIZON, calls))
    read = price.read if price.caching else 1.0
    write = price.write if price.caching else 1.0
    first = write if cold else read
    keep = total * (first + (horizon - 1) * read)
    squeeze = compressed * (write + (horizon - 1) * read)
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
         pinned: int, prefix_budget: int, at: float) -> Plan:
    """The layer for this call, where its raw window starts, and whether the prefix is rebuilt."""
    n = len(sizes)
    room = usable(price, max_output)
    total = fixed + sum(sizes)
    layer = max(state.layer, state.force_min_layer)
    cold = state.last_at > 0 and at - state.last_at > TTL_S
    if layer == 0:
        compressed = fixed + prefix_budget + min(sum(sizes), pinned)
        if total > room:
            layer, reason = 1, "over the window"
        elif state.frozen:
            return Plan(0, 0, False, "passthrough (stopped compressing after 2 busts)")
        elif starts and worth_compressing(total, compressed, state.calls, price, cold):
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
    if over or (raw > pinned * (1 + HYSTERESIS) and not state.frozen):
        moved = window_for(sizes, starts, pinned, at_least=start)
        if moved != start:
            return Plan(layer, moved, True, "window moved" + (" (over the window)" if over else ""))
        return Plan(layer, start, False, "window at the current turn")
    if cold and start < n and not state.frozen:
        moved = window_for(sizes, starts, pinned, at_least=start)
        if moved != start:
            return Plan(layer, moved, True, "window moved (cache cold anyway)")
    return Plan(layer, start, False, "stable prefix")
