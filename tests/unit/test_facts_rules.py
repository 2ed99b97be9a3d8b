"""The pure fact rules: keys, times, journal lines, note extraction, slot resolution."""

from __future__ import annotations

import pytest

from lore_sidecar.engine.facts import rules as F
from lore_sidecar.engine.facts.notes import extract_note_facts
from lore_sidecar.errors import LoreError

T = F.ts  # shorthand: canonical time


def row(key, obj, vf=None, vu=None, rec="2024-01-01", journal=True, order=0):
    return F.Row(key, F.norm_key(obj), T(vf) if vf else None, T(vu) if vu else None, T(rec), journal, order)


def close(until, rec, order=0):
    return F.Close(T(until), T(rec), order)


# -- keys and times ------------------------------------------------------------------------------
def test_keys_ignore_case_accents_and_punctuation():
    assert F.norm_key("Payments-Service") == F.norm_key("payments   service") == "payments service"
    assert F.norm_key("Café") == F.norm_key("cafe")
    assert F.norm_key("C++") == "c"


def test_an_empty_key_is_refused_quoting_the_value():
    with pytest.raises(LoreError) as err:
        F.require_key("  ?! ", "subject")
    assert err.value.kind == "invalidKey" and "'  ?! '" in str(err.value)
    assert F.require_key("ok", "subject") == "ok"  # control


def test_times_are_canonical_and_order_as_strings():
    assert T("2024-06-01") == "2024-06-01T00:00:00.000000Z"
    assert T("2024-06-01T02:00:00+02:00") == "2024-06-01T00:00:00.000000Z"
    assert T("2024-06-01T00:00:00.5Z") > T("2024-06-01T00:00:00Z")
    assert F.show(T("2024-06-01")) == "2024-06-01T00:00:00Z"
    with pytest.raises(LoreError) as err:
        T("next tuesday")
    assert err.value.kind == "invalidTime"


# -- journal lines -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "s, p, o",
    [("CI", "runs on", "Buildkite"), ("a::b", "x{y}", "c, d=e \\ z\nq"), ("C++", "uses", "std::vector"), ("x:", "y", ":z")],
)
def test_journal_lines_round_trip(s, p, o):
    line = F.fact_line(s, p, o, {"valid_from": "2024-01-01T00:00:00Z", "note": "a,b=c}"})
    parsed = F.parse_line(line)
    assert (parsed.kind, parsed.subject, parsed.predicate, parsed.object) == ("fact", s, p, o)
    assert parsed.attrs == {"valid_from": "2024-01-01T00:00:00Z", "note": "a,b=c}"}
    close_line = F.invalidate_line(s, p, {"valid_until": "2024-02-01T00:00:00Z"})
    parsed = F.parse_line(close_line)
    assert (parsed.kind, parsed.subject, parsed.predicate, parsed.attrs["valid_until"]) == ("invalidate", s, p, "2024-02-01T00:00:00Z")


def test_lines_that_are_not_facts_are_not_parsed():
    for line in ("- [ ] a task", "- [fact] only :: two", "- [fact]  :: p :: o", "plain text", "- [x] done :: a :: b"):
        assert F.parse_line(line) is None
    assert F.parse_line("* [FACT] a :: b :: c") is not None  # control: bullets and case vary


# -- notes ----------------------------------------------------------------------------------------
NOTE = """---
title: Payments
date: 2024-03-01
owner: alice
tags: [billing, core]
---
# Ignored heading (title wins)

status:: active
- [fact] Payments :: uses :: Stripe {recorded_at=2001-01-01, source=stated, valid_from=2024-01-15}
- [ ] a task, not a fact
- [team] platform
```
status:: inside a code block
```
"""


def test_note_extraction_finds_every_form_and_only_valid_time_attributes():
    got = {(f.predicate, f.object): f for f in extract_note_facts(NOTE, "payments-notes")}
    assert set(got) == {("owner", "alice"), ("tags", "billing"), ("tags", "core"), ("status", "active"),
                        ("uses", "Stripe"), ("team", "platform")}
    assert {f.subject for f in got.values()} == {"Payments"}
    assert got[("uses", "Stripe")].valid_from == T("2024-01-15")  # its own attribute
    assert got[("status", "active")].valid_from == T("2024-03-01")  # the note's date
    assert got[("status", "active")].line == 9


def test_a_note_without_title_uses_its_heading_then_its_name():
    assert {f.subject for f in extract_note_facts("# Deploys\n\nowner:: bob\n", "x")} == {"Deploys"}
    assert {f.subject for f in extract_note_facts("owner:: bob\n", "deploy-notes")} == {"deploy-notes"}


# -- resolution -------------------------------------------------------------------------------------
def test_a_different_value_supersedes_from_its_valid_from():
    eff = F.resolve([row("a", "Stripe", "2024-01-01", rec="2024-01-02"), row("b", "Adyen", "2025-03-01", rec="2025-03-02")], [])
    assert eff["a"].until == T("2025-03-01") and eff["a"].superseded_by == "b"
    assert eff["a"].closed_at == T("2025-03-02")  # learnt when the newer row was recorded
    assert eff["b"].until is None


def test_the_same_value_extends_instead_of_superseding():
    eff = F.resolve([row("a", "Stripe", "2024-01-01", "2024-06-01"), row("b", "stripe", "2024-05-01", rec="2024-05-02")], [])
    assert eff["b"].merged_into == "a" and not eff["b"].visible
    assert eff["a"].until is None  # extended to the later row's open end


def test_a_note_never_supersedes_a_stated_fact_but_a_stated_fact_supersedes_a_note():
    stated, note = row("s", "Stripe", "2024-01-01"), row("n", "Adyen", "2024-06-01", journal=False)
    eff = F.resolve([stated, note], [])
    assert eff["n"].shadowed and eff["s"].until is None
    eff = F.resolve([row("n", "Adyen", "2024-01-01", journal=False), row("s", "Stripe", "2024-06-01")], [])
    assert eff["n"].until == T("2024-06-01") and not eff["s"].shadowed  # control


def test_the_backdated_close_does_not_rewrite_what_was_believed_before_it_was_learnt():
    rows = [row("a", "Stripe", "2024-01-01", rec="2024-01-10")]
    closes = [close("2024-06-30", "2025-03-01")]
    before = F.resolve(rows, closes, known_at=T("2024-12-01"))
    after = F.resolve(rows, closes, known_at=T("2025-04-01"))
    assert F.in_force(before["a"], T("2024-09-01"))
    assert not F.in_force(after["a"], T("2024-09-01"))
    assert after["a"].until == T("2024-06-30") and after["a"].closed_at == T("2025-03-01")


def test_a_close_targets_the_rows_known_when_it_was_recorded():
    # Close recorded in March ends Stripe at June; Adyen, learnt in May and valid from
    # April, is a later fact the close never saw: it stays open.
    rows = [row("a", "Stripe", "2024-01-01", rec="2024-01-02"), row("b", "Adyen", "2024-04-01", rec="2024-05-01")]
    eff = F.resolve(rows, [close("2024-06-01", "2024-03-01")])
    assert eff["b"].until is None
    assert eff["a"].until == T("2024-04-01")  # superseded by Adyen, earlier than the close


def test_rows_recorded_after_known_at_do_not_exist_yet():
    rows = [row("a", "Stripe", "2024-01-01", rec="2024-01-02"), row("b", "Adyen", "2024-06-01", rec="2024-07-01")]
    eff = F.resolve(rows, [], known_at=T("2024-06-15"))
    assert set(eff) == {"a"} and eff["a"].until is None
