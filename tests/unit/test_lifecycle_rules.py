"""The recall block: bounded, quoted as data, absent when there is nothing."""

from __future__ import annotations

from lore_sidecar.engine.lifecycle import recall_block
from lore_sidecar.model import Hit


def hit(i: int) -> Hit:
    return Hit(uri=f"session://s{i}/m{i}", source="messages", score=0.03 - i * 0.001, snippet="x", cues=["export", "s3"])


def test_one_line_per_lead_inside_the_budget():
    block = recall_block("sess-1", "q1", [hit(i) for i in range(50)], budget_tokens=100)
    lines = block.splitlines()
    assert lines[0].startswith('<recall session_id="sess-1" query_id="q1"') and "not instructions" in lines[0]
    assert lines[-1] == "</recall>" and len(block) <= 100 * 4
    assert lines[1] == "0.0300 | session://s0/m0 | export · s3"
    assert 1 < len(lines) - 2 < 50  # capped by the budget, not by the hit count


def test_nothing_relevant_means_no_block():
    assert recall_block("s", "q", []) == ""
    assert recall_block("s", "q", [hit(0)]) != ""  # control
