"""Pure rules of conversation memory: node URIs and budget, curator replies, entities,
`.lore.md` round trips."""

from __future__ import annotations

import pytest

from lore_sidecar.engine.memory import entities, lore_md, nodes, prompts
from lore_sidecar.engine.memory.curator import own_project, relative_source
from lore_sidecar.engine.memory.distiller import dist_id
from lore_sidecar.errors import LoreError


@pytest.mark.parametrize("uri, domain", [
    ("project://shop/decisions/db", "project://shop"),
    ("preferences://user", "preferences://user"),
    ("team://backend/oncall", "team://backend"),
])
def test_node_uris_name_their_domain(uri, domain):
    assert nodes.parse_uri(uri)[1] == domain


@pytest.mark.parametrize("uri", [
    "", "shop/decisions", "project://shop", "project://shop/", "session://s/m", "fact://f1",
    "project://shop/../etc", "PROJECT://x/y", "project://shop/a b",
])
def test_malformed_or_reserved_node_uris_are_refused(uri):
    with pytest.raises(LoreError) as exc:
        nodes.parse_uri(uri)
    assert exc.value.kind == "invalidUri"


def test_the_budget_refuses_only_at_the_cap():
    assert nodes.budget_refusal(0, 4, "project x") is None  # control: the fifth fits
    refusal = nodes.budget_refusal(0, 5, "project x")
    assert refusal is not None and refusal.kind == "priorityBudget" and refusal.details["budget"] == 5
    assert nodes.budget_refusal(1, 14, "p") is None and nodes.budget_refusal(1, 15, "p") is not None
    assert nodes.budget_refusal(2, 10_000, "p") is None  # no cap below priority 1


def test_a_disclosure_with_two_situations_warns_and_one_does_not():
    assert nodes.disclosure_warnings("when editing the storage layer") == []
    assert nodes.disclosure_warnings("when editing storage and when deploying") != []
    assert nodes.disclosure_warnings("before a release; also on hotfixes") != []


def test_sources_are_checked_and_sorted():
    assert nodes.normalise_sources([{"path": "b.py"}, {"path": "a.py", "sha256": "0" * 64}]) == [
        {"path": "a.py", "sha256": "0" * 64}, {"path": "b.py", "sha256": None}]
    with pytest.raises(LoreError):
        nodes.normalise_sources([{"path": "a.py", "sha256": "abc"}])
    with pytest.raises(LoreError):
        nodes.normalise_sources([{"sha256": None}])


def test_curator_replies_are_parsed_strictly():
    reply = 'Sure! {"nodes": [{"op": "create", "uri": "project://x/a", "content": "c", "priority": 1, "sources": ["a.py", 3]},' \
            ' {"op": "drop", "uri": "project://x/b", "content": "c"}, {"op": "update", "uri": 5, "content": "c"},' \
            ' {"op": "update", "uri": "project://x/c", "content": "d", "priority": true}]}'
    got = prompts.parse_curation(reply)
    assert [(p["op"], p["uri"], p["priority"], p["sources"]) for p in got] == [
        ("create", "project://x/a", 1, ["a.py"]), ("update", "project://x/c", None, [])]
    assert prompts.parse_curation("no json here") == [] and prompts.parse_curation("{broken") == []


def test_the_distiller_reply_splits_observations_from_entities():
    obs, named = prompts.split_entities("- a\n- b\nENTITIES:\nsrc/db.py | file | db.py, the db\nbad line\nRedis | library")
    assert obs == "- a\n- b"
    assert named == [("src/db.py", "file", ["db.py", "the db"]), ("Redis", "library", [])]
    assert prompts.split_entities("- only observations") == ("- only observations", [])


def test_prompts_keep_their_stable_part_separate_from_the_material():
    stable_a, prompt_a = prompts.distill("s1", "user: hi")
    stable_b, prompt_b = prompts.distill("s2", "user: other")
    assert stable_a == stable_b and prompt_a != prompt_b and "user: hi" not in stable_a[0]


def test_entities_by_rule_with_aliases_and_relations():
    text = "- WriterLock in lore_sidecar/store/lock.py:42 calls acquire_lock() and the billing-service uses Redis"
    found = entities.extract(text)
    assert found["lore_sidecar/store/lock.py"].kind == "file"
    assert {"lock.py", "lore_sidecar.store.lock"} <= found["lore_sidecar/store/lock.py"].aliases
    assert "writer_lock" in found["WriterLock"].aliases
    assert "acquireLock" in found["acquire_lock"].aliases
    assert found["billing-service"].kind == "service"
    rel = entities.relations("- WriterLock uses lore_sidecar/store/lock.py", found)
    assert rel == [("WriterLock", "uses", "lore_sidecar/store/lock.py")]
    assert entities.relations("- nothing related here", found) == []  # control


def test_lore_md_round_trips_and_is_stable():
    ns = [
        {"uri": "project://s/b", "content": "two\n## looks like a heading\n<!-- lore {} -->", "category": "gotcha",
         "priority": 1, "scope": "project", "disclosure": None, "expiresAt": None, "sources": []},
        {"uri": "project://s/a", "content": "one", "category": None, "priority": 2, "scope": "project",
         "disclosure": "when x", "expiresAt": None, "sources": [{"path": "a.py", "sha256": "f" * 64}]},
    ]
    text = lore_md.render(ns)
    assert text == lore_md.render(list(reversed(ns)))  # order of input does not matter
    assert text.index("project://s/a") < text.index("project://s/b")
    parsed, problems = lore_md.parse(text)
    assert problems == []
    by_uri = {n["uri"]: n for n in parsed}
    assert by_uri["project://s/b"]["content"] == ns[0]["content"]
    assert by_uri["project://s/a"]["sources"] == ns[1]["sources"] and by_uri["project://s/a"]["disclosure"] == "when x"
    broken = text.replace('<!-- lore {"category"', '<!-- lore {"category" oops', 1)
    assert lore_md.parse(broken)[1] != []


def test_curator_proposals_stay_inside_their_project():
    assert own_project("project://other/decision/x", "/src/shop") == "project://shop/decision/x"
    assert own_project("preferences://user/tabs", "/src/shop") == "preferences://user/tabs"
    assert relative_source("/src/shop/a/b.py", "/src/shop") == "a/b.py"
    assert relative_source("/etc/passwd", "/src/shop") is None
    assert relative_source("../x.py", "/src/shop") is None and relative_source("https://x/y", "/r") is None


def test_distillation_ids_are_deterministic():
    assert dist_id("/r", "s", "m1", "m5", 0) == dist_id("/r", "s", "m1", "m5", 0) != dist_id("/r", "s", "m1", "m6", 0)


def test_curator_sources_given_as_one_string_are_not_a_list_of_paths():
    """A model that writes `"sources": "src/a.py"` names no list: nothing is taken (not one
    path per letter); the same path in a list is the control."""
    one = prompts.parse_curation('{"nodes": [{"op": "create", "uri": "project://x/a", "content": "c", '
                                 '"sources": "src/a.py"}]}')
    listed = prompts.parse_curation('{"nodes": [{"op": "create", "uri": "project://x/a", "content": "c", '
                                    '"sources": ["src/a.py"]}]}')
    assert [p["sources"] for p in one] == [[]] and [p["sources"] for p in listed] == [["src/a.py"]]
