"""Fact reads (lore_sidecar/engine/facts/queries.py) on the real engine: every field of a
fact as the wire shows it after a supersession, a subject's timeline (its own closes only,
an assertion before a close at the same time), counts by group and where their page ends,
the page size's bounds, and paging of facts as known at a past time."""

from __future__ import annotations

import json

import pytest

from lore_sidecar.engine.facts import queries
from lore_sidecar.errors import LoreError
from tests.integration.test_facts import Clock, open_facts_engine


@pytest.fixture
def env(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    clock = Clock("2024-01-10")
    engine = open_facts_engine(tmp_path / "store", ws, clock)
    yield engine, clock
    engine.close()


def test_a_superseded_fact_shows_when_and_by_what_it_was_replaced_on_the_wire(env):
    e, clock = env
    old = e.facts.assert_fact(project=None, subject="payments", predicate="uses", object="Stripe",
                              valid_from="2024-01-01", source="inferred", confidence=0.6)["factId"]
    clock.set("2025-03-02")
    new = e.facts.assert_fact(project=None, subject="payments", predicate="uses", object="Adyen",
                              valid_from="2025-03-01")["factId"]
    rows = {f["factId"]: f for f in e.facts.query(subject="payments", history=True)["facts"]}
    was, now = rows[old], rows[new]
    assert (was["subject"], was["predicate"], was["object"]) == ("payments", "uses", "Stripe")
    assert (was["validFrom"], was["validUntil"]) == ("2024-01-01T00:00:00Z", "2025-03-01T00:00:00Z")
    assert (was["recordedAt"], was["supersededAt"], was["supersededBy"]) == (
        "2024-01-10T00:00:00Z", "2025-03-02T00:00:00Z", new)
    assert (was["source"], was["confidence"]) == ("inferred", 0.6)
    assert was["origin"]["kind"] and was["origin"]["path"] and isinstance(was["origin"]["line"], int)
    # the current one: open-ended, replaced by nothing
    assert (now["validUntil"], now["supersededAt"], now["supersededBy"]) == (None, None, None)
    assert now["recordedAt"] == "2025-03-02T00:00:00Z"


def test_a_timeline_holds_its_subjects_closes_only_and_an_assertion_comes_before_a_close_at_the_same_time(env):
    e, clock = env
    e.facts.assert_fact(project=None, subject="gateway", predicate="port", object="8080", valid_from="2024-01-01")
    e.facts.assert_fact(project=None, subject="billing", predicate="port", object="9090", valid_from="2024-01-01")
    clock.set("2024-03-01")
    e.facts.invalidate_fact(project=None, subject="billing", predicate="port", valid_until="2024-02-01")
    e.facts.invalidate_fact(project=None, subject="gateway", predicate="port", valid_until="2024-02-01")
    e.facts.assert_fact(project=None, subject="gateway", predicate="host", object="edge-1", valid_from="2024-02-01")
    events = e.facts.timeline(subject="gateway")["events"]
    assert [(ev["event"], ev["predicate"], ev["at"]) for ev in events] == [
        ("asserted", "port", "2024-01-01T00:00:00Z"),
        ("asserted", "host", "2024-02-01T00:00:00Z"),
        ("closed", "port", "2024-02-01T00:00:00Z")]
    assert all(ev["subject"] == "gateway" for ev in events)
    closed = events[-1]
    assert closed["recordedAt"] == "2024-03-01T00:00:00Z" and closed["origin"]["kind"] == "journal"
    # the control: billing's own timeline has its close
    assert [ev["event"] for ev in e.facts.timeline(subject="billing")["events"]] == ["asserted", "closed"]


def test_counts_by_group_are_largest_first_and_a_page_of_exactly_every_group_is_not_truncated(env):
    e, _ = env
    for i, obj in enumerate(["pg", "pg", "pg", "redis", "redis", "sqs"]):
        e.facts.assert_fact(project=None, subject=f"svc-{i}", predicate="stores_in", object=obj)
    full = e.facts.aggregate(by="object")
    assert full["by"] == "object" and full["groups"] == [
        {"key": "pg", "count": 3}, {"key": "redis", "count": 2}, {"key": "sqs", "count": 1}]
    assert (full["total"], full["groupsTotal"], full["truncated"]) == (6, 3, False)
    assert e.facts.aggregate(by="object", limit=3)["truncated"] is False
    two = e.facts.aggregate(by="object", limit=2)
    assert two["truncated"] is True and len(two["groups"]) == 2 and two["groupsTotal"] == 3
    assert e.facts.aggregate(by="subject")["groupsTotal"] == 6
    assert e.facts.aggregate(by="predicate")["groups"] == [{"key": "stores_in", "count": 6}]
    with pytest.raises(LoreError) as bad:
        e.facts.aggregate(by="confidence")
    assert bad.value.kind == "invalidGroup"


def test_a_page_is_at_least_one_fact_and_at_most_200(env):
    e, _ = env
    for i in range(203):
        e.facts.assert_fact(project=None, subject=f"host-{i:03d}", predicate="runs", object="linux")
    big = e.facts.query(predicate="runs", limit=500)
    assert len(big["facts"]) == queries.MAX_LIMIT == 200 and big["total"] == 203
    assert big["truncated"] is True and big["nextOffset"] == 200
    assert len(e.facts.query(predicate="runs", limit=0)["facts"]) == 1
    rest = e.facts.query(predicate="runs", offset=200)
    assert len(rest["facts"]) == 3 and rest["truncated"] is False and "nextOffset" not in rest


def test_facts_as_known_at_a_past_time_page_in_subject_order_with_next_offset(env):
    e, clock = env
    for i in range(5):
        e.facts.assert_fact(project=None, subject=f"svc-{i}", predicate="lang", object="go")
    clock.set("2024-06-01")
    e.facts.assert_fact(project=None, subject="svc-9", predicate="lang", object="rust")  # recorded later
    known = dict(as_known_at="2024-03-01", predicate="lang")
    first = e.facts.query(**known, limit=2)
    last = e.facts.query(**known, limit=2, offset=4)
    assert [f["subject"] for f in first["facts"]] == ["svc-0", "svc-1"] and first["total"] == 5
    assert first["truncated"] is True and first["nextOffset"] == 2
    assert [f["subject"] for f in last["facts"]] == ["svc-4"] and last["truncated"] is False
    assert "nextOffset" not in last
    assert e.facts.query(predicate="lang")["total"] == 6  # the control: known now, the later one too


def test_a_secret_in_any_part_of_a_fact_is_redacted_and_the_same_words_still_close_it(env, tmp_path):
    """docs/security.md: redaction before anything is stored. Subject, predicate and object
    each go through it (journal, rows, the wire); invalidating with the same words as they
    were given still finds the fact (both sides are redacted alike). The control: the words
    around the secret are kept."""
    e, clock = env
    key = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    subject, predicate = f"deploy bot {key}", f"signs with {key}"
    e.facts.assert_fact(project=None, subject=subject, predicate=predicate, object=f"vault {key}")
    stored = e.facts.query(text="deploy")["facts"]
    assert len(stored) == 1
    shown = json.dumps(stored)
    assert key not in shown and "[REDACTED:github-token]" in shown
    assert stored[0]["subject"].startswith("deploy bot") and stored[0]["predicate"].startswith("signs with")
    clock.set("2024-02-01")
    assert len(e.facts.invalidate_fact(project=None, subject=subject, predicate=predicate)["closed"]) == 1
    assert e.facts.query(text="deploy")["facts"] == []
    journal = "".join(p.read_text() for p in (tmp_path / "store" / "journal").rglob("*.md"))
    assert "deploy bot" in journal and key not in journal


def test_a_restated_fact_is_one_event_on_its_subjects_timeline(env):
    e, clock = env
    e.facts.assert_fact(project=None, subject="gateway", predicate="port", object="8080", valid_from="2024-01-01")
    clock.set("2024-05-01")
    e.facts.assert_fact(project=None, subject="gateway", predicate="port", object="8080")  # said again: no news
    clock.set("2024-06-01")
    e.facts.assert_fact(project=None, subject="gateway", predicate="port", object="9090", valid_from="2024-06-01")
    events = e.facts.timeline(subject="gateway")["events"]
    assert [(ev["event"], ev["object"]) for ev in events] == [("asserted", "8080"), ("asserted", "9090")]
    assert e.facts.timeline(subject="gateway")["total"] == 2
