"""Dream's pure rules (engine/maintenance/dream.py) on hand-made nodes and facts: which node a
newer fact contradicts, and which it does not."""

from __future__ import annotations

from lore_sidecar.engine.maintenance import dream


def node(uri: str, content: str, priority: int = 2, category: str = "architecture") -> dict:
    return {"uri": uri, "content": content, "category": category, "priority": priority, "uses": 0,
            "createdAt": "2026-01-01T00:00:00Z", "sources": [], "stale": None, "suppressed": False, "project": "/p"}


FACTS = [
    {"factId": "f1", "subject": "payments service", "predicate": "uses", "object": "Stripe", "supersededBy": "f2",
     "validFrom": "2024-01-01T00:00:00Z"},
    {"factId": "f2", "subject": "payments service", "predicate": "uses", "object": "Adyen", "supersededBy": None,
     "validFrom": "2025-01-01T00:00:00Z"},
]


def planned(nodes: list[dict]) -> dict[str, str]:
    return {c.uri: c.action for c in dream.plan(nodes, FACTS, {}, lambda project, path: True)}


def test_a_node_stating_the_replaced_value_is_a_contradiction_and_one_that_names_the_new_value_is_not():
    old_only = node("project://p/architecture/charges", "The payments service uses Stripe for card charges")
    migrated = node("project://p/architecture/migration",
                    "The payments service moved its card charges from Stripe to Adyen in January")
    # the control: the node still saying Stripe alone is suppressed, citing the newer fact
    changes = {c.uri: c for c in dream.plan([old_only, migrated], FACTS, {}, lambda project, path: True)}
    assert changes[old_only["uri"]].action == "contradiction" and changes[old_only["uri"]].related == "fact://f2"
    assert changes[old_only["uri"]].changes == {"suppressed": True}
    # one that already tells the new value (and the old one, as history) is current: untouched
    assert migrated["uri"] not in changes
    assert planned([migrated]) == {}
