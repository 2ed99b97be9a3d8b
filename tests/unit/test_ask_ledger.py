"""The ledger's staleness when a fact cites several files (docs/ask.md: "a fact whose file
changed is marked stale"): any one changed file makes it stale, whichever it is; it is
current again only when all of them hash as they did. Independent round 4
(tools/rounds/2026-12-04-fresh4-context-gateway-ask.py)."""

from __future__ import annotations

from lore_sidecar.engine.ask import ledger

SOURCES = {"src/a.py": "a" * 64, "src/b.py": "b" * 64, "src/c.py": "c" * 64}


def test_any_one_changed_file_of_several_makes_the_fact_stale():
    f = ledger.make("parsing spans a, b and c", SOURCES, origin="model", at="t")
    _, went, _ = ledger.revalidate((f,), SOURCES.get)
    assert went == []  # the control: nothing changed, nothing stale
    for changed in SOURCES:
        now = {**SOURCES, changed: "0" * 64}
        facts, went, _ = ledger.revalidate((f,), now.get)
        assert facts[0].stale and [x.id for x in went] == [f.id], changed


def test_a_stale_fact_is_current_again_only_when_every_cited_file_hashes_as_before():
    f = ledger.make("parsing spans a, b and c", SOURCES, origin="model", at="t")
    stale, _, _ = ledger.revalidate((f,), {**SOURCES, "src/a.py": "0" * 64, "src/c.py": "1" * 64}.get)
    still, _, back = ledger.revalidate(stale, {**SOURCES, "src/a.py": "0" * 64}.get)  # c restored, a not
    assert still[0].stale and back == []
    current, _, back = ledger.revalidate(still, SOURCES.get)
    assert not current[0].stale and [x.id for x in back] == [f.id]
