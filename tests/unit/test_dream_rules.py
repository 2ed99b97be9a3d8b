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


def plan(nodes: list[dict], retrievability: dict | None = None, missing: tuple[str, ...] = (), facts=()) -> dict:
    changes = dream.plan(nodes, list(facts), retrievability or {}, lambda project, path: path not in missing)
    assert len({c.uri for c in changes}) == len(changes)  # a node is changed by at most one rule
    return {c.uri: c for c in changes}


def test_a_merge_keeps_the_lowest_priority_number_then_the_most_used_then_the_oldest():
    text = "Retry the payment webhook three times with exponential backoff before alerting"
    # priority first: the priority-2 node is kept though the other is older and used more
    a = {**node("project://p/pattern/a", text, priority=3), "uses": 9, "createdAt": "2025-01-01T00:00:00Z"}
    b = node("project://p/pattern/b", text, priority=2)
    got = plan([a, b])
    assert list(got) == [a["uri"]] and got[a["uri"]].action == "merge" and got[a["uri"]].related == b["uri"]
    assert got[a["uri"]].op == "deleteNode"
    # same priority: the most used is kept
    c = {**node("project://p/pattern/c", text), "uses": 1}
    d = {**node("project://p/pattern/d", text), "uses": 4}
    assert {u: ch.related for u, ch in plan([c, d]).items()} == {c["uri"]: d["uri"]}
    # same priority and uses: the oldest is kept
    e = {**node("project://p/pattern/e", text), "createdAt": "2026-02-01T00:00:00Z"}
    f = {**node("project://p/pattern/f", text), "createdAt": "2026-01-15T00:00:00Z"}
    assert {u: ch.related for u, ch in plan([e, f]).items()} == {e["uri"]: f["uri"]}


def test_a_word_overlap_of_exactly_0_8_is_a_duplicate_and_stop_words_do_not_count():
    five = node("project://p/pattern/five", "alpha beta gamma delta epsilon")
    four = node("project://p/pattern/four", "The alpha and the beta of gamma with delta")  # 4/5 once stop words go
    assert {u: ch.action for u, ch in plan([five, four]).items()} == {four["uri"]: "merge"}
    three = node("project://p/pattern/three", "alpha beta gamma zeta")  # 3/6: the control, not one
    assert plan([five, three]) == {}
    # a suppressed node is no longer live: nothing to merge with
    assert plan([five, {**four, "suppressed": True}]) == {}


def words(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def test_an_older_decision_on_the_same_topic_in_the_same_domain_is_superseded_from_an_overlap_of_0_35():
    shared = words(7, "w")
    old = {**node("project://p/decision/queue-old", f"{shared} {words(6, 'o')}", category="decision"),
           "createdAt": "2025-01-01T00:00:00Z"}
    new = {**node("project://p/decision/queue-new", f"{shared} {words(7, 'n')}", category="decision"),
           "createdAt": "2026-01-01T00:00:00Z"}  # 7 shared of 20: exactly 0.35
    got = plan([new, old])
    assert list(got) == [old["uri"]] and got[old["uri"]].action == "supersede"
    assert got[old["uri"]].related == new["uri"] and got[old["uri"]].changes == {"suppressed": True}
    # the controls: one word fewer in common (6 of 21) is another topic; another domain, or
    # not decisions, is no supersession
    less = {**new, "content": f"{words(6, 'w')} {words(8, 'n')}"}
    assert plan([less, old]) == {}
    assert plan([{**new, "uri": "project://p/other/queue-new"}, old]) == {}
    assert plan([{**new, "category": "pattern"}, {**old, "category": "pattern"}]) == {}


def test_a_node_citing_a_missing_file_or_flagged_stale_is_demoted_one_priority_and_at_4_suppressed():
    gone = {**node("project://p/gotcha/gone", "the old module"), "sources": [{"path": "src/old.py"}]}
    flagged = {**node("project://p/gotcha/flag", "the parser", priority=3),
               "stale": {"path": "src/parse.py", "reason": "changed"}}
    last = {**node("project://p/gotcha/last", "the legacy cron", priority=4), "sources": [{"path": "cron.py"}]}
    kept = {**node("project://p/gotcha/kept", "the live module"), "sources": [{"path": "src/live.py"}]}
    got = plan([gone, flagged, last, kept], missing=("src/old.py", "cron.py"))
    assert {u: (ch.action, ch.changes) for u, ch in got.items()} == {
        gone["uri"]: ("stale-source", {"priority": 3}), flagged["uri"]: ("stale-source", {"priority": 4}),
        last["uri"]: ("stale-source", {"suppressed": True})}
    assert "src/old.py" in got[gone["uri"]].reason and "src/parse.py" in got[flagged["uri"]].reason


def test_a_node_below_the_threshold_is_faded_only_at_priority_2_and_up_and_1_is_only_ever_proposed():
    low = node("project://p/pattern/low", "colour tokens live in theme")
    at = node("project://p/pattern/at", "spacing scale doubles")
    rule = node("project://p/pattern/rule", "never push to main", priority=1)
    r = {low["uri"]: 0.29, at["uri"]: 0.3, rule["uri"]: 0.01}
    got = plan([low, at, rule], r)
    assert {u: (ch.action, ch.changes, ch.protected) for u, ch in got.items()} == {
        low["uri"]: ("faded", {"priority": 3}, False)}
    # a priority-1 duplicate is proposed, marked protected (applied never: requests.py)
    twin = node("project://p/pattern/rule-twin", "never push to main", priority=1)
    assert [(ch.action, ch.protected) for ch in plan([rule, twin]).values()] == [("merge", True)]


def test_numbers_are_words_so_two_limits_that_differ_in_them_are_not_duplicates():
    five = node("project://p/pattern/five", "The payments API allows 5 retries per minute with 2 second backoff")
    nine = node("project://p/pattern/nine", "The payments API allows 9 retries per minute with 7 second backoff")
    assert plan([five, nine]) == {}  # 8 words of 12 in common: 0.67
    same = node("project://p/pattern/same", "the payments API allows 5 retries per minute, with 2 second backoff")
    assert {u: ch.action for u, ch in plan([five, same]).items()} == {same["uri"]: "merge"}  # the control


def test_a_node_is_changed_by_the_first_rule_that_finds_it_and_by_no_later_one():
    text = "Workers drain the billing queue before a deploy restarts them"
    kept = node("project://p/pattern/kept", text)
    dup = {**node("project://p/pattern/dup", text, priority=3), "sources": [{"path": "gone.py"}]}
    stale = {**node("project://p/pattern/stale", "The cron job rotates the audit logs"), "sources": [{"path": "gone.py"}]}
    got = plan([kept, dup, stale], {dup["uri"]: 0.01, stale["uri"]: 0.01}, missing=("gone.py",))
    # merge comes before stale-source, stale-source before faded: one change each
    assert {u: ch.action for u, ch in got.items()} == {dup["uri"]: "merge", stale["uri"]: "stale-source"}
    assert [c.uri for c in dream.plan([kept, dup, stale], [], {}, lambda p, s: s != "gone.py")] == [dup["uri"], stale["uri"]]
