"""Retrievability of a memory, fitted from its own history of being recalled and then used.

Each item has a stability S (days): how long until its retrievability falls to 1/e without
being used. It starts at `S0` when the item is created and is replayed from the events:

- a *success* — the item was shown by a recall and then opened from that same recall (the
  same query id), or opened from a recall that did not log what it showed — doubles S and
  restarts the clock;
- a *miss* — shown and not opened from that recall — shrinks S by `SHRINK` and ages the item
  by `MISS_DAYS` (being passed over is evidence, like time going by).

Retrievability now is exp(-(days since the last success, or creation, + MISS_DAYS per miss
since then) / S). So a memory shown 30 times and never opened has faded at once; one opened
last week stays; and one use relabels only its own recall as a success, never the week of
ignored recalls before it (each recall is judged by what happened to *it*; those misses
keep S small). Pure: times are epoch seconds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

DAY = 86_400.0
S0 = 30.0
GROW = 2.0
SHRINK = 0.85
S_MIN = 0.25
S_MAX = 3650.0
MISS_DAYS = 1.0
THRESHOLD = 0.3
WEIGHT = 0.1  # how much retrievability may move a knowledge hit's score in recall


@dataclass(frozen=True)
class Fit:
    retrievability: float
    stability_days: float
    shown: int
    used: int
    ignored: int
    last_used: float | None


def fit(created: float, shown: Iterable[tuple[float, str]], used: Iterable[tuple[float, str]], now: float) -> Fit:
    """`shown`: (time, query id) of each recall that listed the item; `used`: (time, query
    id) of each time it was opened from a recall."""
    shown = sorted(shown)
    used = sorted(used)
    opened = {q: t for t, q in used}
    seen = {q for _, q in shown}
    events = [(t, q in opened, opened.get(q, t)) for t, q in shown]
    events += [(t, True, t) for t, q in used if q not in seen]  # opened from an unlogged recall
    s, anchor, ignored, since, last = S0, created, 0, 0, None
    for _t, success, when in sorted(events):
        if success:
            s = min(S_MAX, s * GROW)
            anchor = max(anchor, when)
            last = when if last is None else max(last, when)
            since = 0
        else:
            s = max(S_MIN, s * SHRINK)
            ignored += 1
            since += 1
    days = max(0.0, now - anchor) / DAY + since * MISS_DAYS
    return Fit(retrievability=round(math.exp(-days / s), 4), stability_days=round(s, 2), shown=len(shown),
               used=len(used), ignored=ignored, last_used=last)


def reason(f: Fit, now: float) -> str:
    if f.used == 0:
        since = "never opened"
    else:
        since = f"last opened {max(0.0, (now - (f.last_used or now)) / DAY):.0f} days ago"
    return (f"recalled {f.shown} times, opened {f.used} ({f.ignored} recalls ignored); {since}; "
            f"stability {f.stability_days:g} days")


def factor(retrievability: float, priority: int | None) -> float:
    """A knowledge hit's score multiplier in recall: small, and never for priority 0-1."""
    if priority is not None and priority <= 1:
        return 1.0
    return 1.0 - WEIGHT + WEIGHT * retrievability
