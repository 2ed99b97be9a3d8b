"""The savings rules (engine/context/savings.py), pure: which call a usage belongs to, why a
cache was lost, and what a total says about where its figures came from."""

from __future__ import annotations

from types import SimpleNamespace as NS

from lore_sidecar.engine.context.prices import price_of
from lore_sidecar.engine.context.savings import Savings, bust_of, figures, totals

SONNET = price_of("claude-sonnet-4-5")


class Ledger:
    """In memory, as the port is: append(day, row), rows(days), days()."""

    def __init__(self):
        self.by_day: dict[str, list[dict]] = {}

    def append(self, day, row):
        self.by_day.setdefault(day, []).append(row)

    def rows(self, days):
        return [r for d in days for r in self.by_day.get(d, [])]

    def days(self):
        return sorted(self.by_day)


def call(cid: str, session: str, **extra) -> dict:
    return {"k": "call", "id": cid, "session": session, "at": "2026-12-04T10:00:00Z", "layer": 0, "sentTokens": 1000,
            "read": 800, "write": 200, "usd": 0.001, "l0Tokens": 1000, "l0Usd": 0.001, "bust": "", **extra}


def usage(cid: str | None, session: str, read: int = 900) -> dict:
    return {"k": "usage", "call": cid, "session": session, "input": 5, "read": read, "write": 100, "output": 20,
            "usd": 0.002, "outputUsd": 0.0003, "bust": ""}


def test_a_usage_without_its_call_belongs_to_the_sessions_latest_call_still_without_one():
    rows = [call("a1", "A"), call("b1", "B"), call("a2", "A"), usage(None, "A"), usage(None, "A"), usage(None, "B")]
    got = {f["id"]: f["source"] for f in figures(rows)}
    assert got == {"a1": "reported", "a2": "reported", "b1": "reported"}  # a2 first, then a1; B's own for b1
    # The control: with only one usage for A, it is the latest call's, and the earlier one stays estimated
    got = {f["id"]: f["source"] for f in figures(rows[:4])}
    assert got == {"a1": "estimated", "a2": "reported", "b1": "estimated"}


def test_a_usage_naming_a_call_that_is_not_there_is_dropped_one_naming_it_is_kept():
    assert [f["source"] for f in figures([call("a1", "A"), usage("zz", "A")])] == ["estimated"]
    assert [f["source"] for f in figures([call("a1", "A"), usage("a1", "A")])] == ["reported"]


def test_at_layer_0_a_reported_call_is_its_own_l0_and_above_it_l0_is_the_estimate_plus_the_output():
    at0, at1 = figures([call("a", "A"), usage("a", "A"), call("b", "A", layer=1, l0Usd=0.01), usage("b", "A")])
    assert at0["l0Usd"] == at0["usd"] == 0.002 and at0["savedUsd"] == 0
    assert at1["l0Usd"] == 0.0103 and at1["savedUsd"] == 0.0083


def test_the_provider_reading_less_than_half_of_what_was_expected_is_a_missed_cache():
    s = Savings(Ledger())
    prior = NS(calls=3, caching=True, expect_read=10_000, layer=0, ratio=1.0, captured=5, window_start=0)
    plan = NS(layer=0, rebuild=False, window_start=0)
    sent = {"inputTokens": 12_000, "cacheReadTokens": 10_000, "cacheWriteTokens": 2000, "usd": 0.01}
    for read, bust in ((100, "missed"), (9000, "")):  # the control: read as expected, no bust
        s.called("A", at=1.8e9, model="claude-sonnet-4-5", harness="t", price=SONNET, plan=plan, prior=prior, known=4,
                 l0_raw=12_000, cached_raw=11_000, sent=sent, warm=True)
        s.used("A", usage={"input_tokens": 10, "cache_read_input_tokens": read, "cache_creation_input_tokens": 50},
               at=1.8e9)
        assert s.calls(None)[-1]["bust"] == bust


def test_why_a_cache_was_lost():
    prior = NS(calls=3, caching=True, expect_read=10_000, layer=1, captured=8, window_start=4)
    same = NS(layer=1, rebuild=False, window_start=4)
    assert bust_of(SONNET, same, prior, 7, True, 9000) == ""  # read what was cached
    assert bust_of(SONNET, same, prior, 7, False, 0) == "ttl"
    assert bust_of(SONNET, NS(layer=2, rebuild=False, window_start=4), prior, 7, True, 0) == "layer"
    assert bust_of(SONNET, same, prior, 0, True, 0) == "rewritten"
    assert bust_of(SONNET, NS(layer=1, rebuild=True, window_start=6), prior, 7, True, 500) == "moved"
    assert bust_of(SONNET, same, NS(**{**vars(prior), "calls": 0}), 0, False, 0) == ""  # a first call loses nothing
    assert bust_of(price_of("gpt-4o"), same, NS(**{**vars(prior), "caching": False}), 7, False, 0) == ""


def test_a_total_says_where_its_figures_came_from():
    assert totals([])["source"] == "none"
    est = figures([call("a", "A")])
    rep = figures([call("b", "A"), usage("b", "A")])
    assert totals(est)["source"] == "estimated" and totals(rep)["source"] == "reported"
    both = totals(est + rep)
    assert (both["source"], both["reportedCalls"], both["estimatedCalls"]) == ("mixed", 1, 1)
    assert both["usd"] == 0.003 and both["sentTokens"] == 1000 + 1005
