"""The budget throttle: an advisory delay before a model call when a session spends faster
than the user allows (setting `throttleUsdPerHour`; 0, the default, is off). Pure.

Trigger / Why / Outcome:
- Trigger: the last hour's spend of the session, this call's estimate included, passes the
  hourly limit. Why: a user who caps spend would rather the agent slow down than stop, and
  a pause long enough to let the cache expire would make the next call dearer (the whole
  prompt written again), defeating the purpose. Outcome: wait until enough of the hour's
  oldest spending has aged out, but never so long that the call arrives after the cache TTL
  (less a margin for the request's own trip); the harness or the gateway applies it.
"""

from __future__ import annotations

from collections.abc import Sequence

HOUR_S = 3600.0
MARGIN_S = 15.0  # the call must still reach the provider inside the TTL


def recent(spent: Sequence[tuple[float, float]], now: float) -> list[tuple[float, float]]:
    """(time, USD) of the calls within the last hour (what a session keeps)."""
    return [(t, usd) for t, usd in spent if t > now - HOUR_S]


def delay_s(spent: Sequence[tuple[float, float]], now: float, cost: float, usd_per_hour: float, last_at: float,
            ttl_s: float) -> float:
    """Seconds to wait before sending a call costing `cost`, given the session's spending
    (`spent`: (time, USD) per call) and when its last call was (`last_at`, 0: none)."""
    if usd_per_hour <= 0:
        return 0.0
    calls = sorted(recent(spent, now))
    total = sum(usd for _, usd in calls) + cost
    if total <= usd_per_hour:
        return 0.0
    wait = HOUR_S  # even with the whole hour aged out this call alone is over: the cap decides
    for t, usd in calls:
        total -= usd
        if total <= usd_per_hour:
            wait = t + HOUR_S - now
            break
    warm_for = ttl_s - MARGIN_S - (now - last_at if last_at > 0 else 0.0)
    return max(0.0, min(wait, warm_for))
