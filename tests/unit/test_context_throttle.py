"""The budget throttle (engine/context/throttle.py), pure: no delay while the last hour's
spend stays under the limit (or the throttle is off); past it, a delay until the oldest
spending ages out, never past the cache TTL since the session's last call."""

from __future__ import annotations

from lore_sidecar.engine.context.throttle import HOUR_S, MARGIN_S, delay_s

SPENT = [(1_000.0, 0.40), (2_000.0, 0.40), (3_000.0, 0.15)]  # $0.95 within the hour before 3,010


def test_a_call_past_the_hourly_limit_waits_for_the_oldest_spending_to_age_out():
    wait = delay_s(SPENT, 3_300.0, cost=0.10, usd_per_hour=1.0, last_at=3_290.0, ttl_s=3_600.0)
    assert wait == 1_000.0 + HOUR_S - 3_300.0  # $1.05 in the hour; without the 3,000-s-old $0.40: $0.65
    assert delay_s(SPENT, 3_300.0, cost=0.04, usd_per_hour=1.0, last_at=3_290.0, ttl_s=3_600.0) == 0.0  # control


def test_the_delay_never_lets_the_cache_expire_and_the_throttle_is_off_by_default():
    wait = delay_s(SPENT, 3_300.0, cost=0.10, usd_per_hour=1.0, last_at=3_290.0, ttl_s=300.0)
    assert wait == 300.0 - MARGIN_S - 10.0  # the 5-minute cache, 10 s after the last call
    assert delay_s(SPENT, 3_300.0, cost=0.10, usd_per_hour=0.0, last_at=3_290.0, ttl_s=300.0) == 0.0
