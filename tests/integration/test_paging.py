"""Capped lists say what they left out (DESIGN.md invariant 8, docs/protocol.md): every
paged method walked page by page with `nextOffset`, against the same list asked for in one
call. The reference is the unpaged listing: the pages concatenated equal it (no duplicate,
no gap, same order), `total` is the same on every page, each page but the last says
`truncated` and where to go on, the last says neither — a client following `nextOffset`
always reaches the end and never pages forever."""

from __future__ import annotations

import pytest

from lore_sidecar.client import StdioClient, sidecar_command

WORDS = ["amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper"]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("paging")
    ws = tmp / "shop"
    (ws / ".git").mkdir(parents=True)
    c = StdioClient(sidecar_command("--store-dir", str(tmp / "store")))
    c.initialize(ws, options={"watch": False, "indexWorkspace": False, "distiller": "off"})
    c.request("lore/recordMessages", {"sessionId": "s-page", "messages": [
        {"id": f"m{i}", "role": "user" if i % 2 == 0 else "assistant",
         "content": f"cobalt note {i}: the {WORDS[i % 10]} service {'retries cobalt jobs' if i % 3 else 'logs'}"}
        for i in range(23)]})
    for i in range(14):
        c.request("lore/createNode", {"uri": f"project://shop/pattern/p{i:02d}", "category": "pattern",
                                      "content": f"Cobalt pattern {i} for the {WORDS[i % 10]} path",
                                      "priority": 2 + i % 3})
    for i in range(12):
        c.request("lore/assertFact", {"subject": f"svc-{i:02d}", "predicate": "runs_on", "object": f"cobalt-{i % 4}",
                                      "validFrom": f"2026-0{1 + i % 9}-01"})
    for k in range(9):  # one subject with a long history: asserted, superseded, closed
        c.request("lore/assertFact", {"subject": "gateway", "predicate": f"port_{k % 3}", "object": str(8000 + k),
                                      "validFrom": f"2025-{1 + k:02d}-01"})
    c.request("lore/invalidateFact", {"subject": "gateway", "predicate": "port_0", "validUntil": "2025-12-01"})
    for _ in range(30):  # shown and never opened: the nodes fade, so review has a list to page
        c.request("lore/recall", {"query": "cobalt pattern path", "sources": ["knowledge"], "limit": 20, "sessionId": "s"})
    yield c
    c.close()


def walk(c: StdioClient, method: str, params: dict, key: str, limit: int) -> tuple[list, list[dict]]:
    """Follow nextOffset from 0 to the end; fails rather than loop when a page does not advance."""
    items, pages, offset = [], [], 0
    for _ in range(200):
        r = c.request(method, {**params, "limit": limit, "offset": offset})
        pages.append(r)
        items.extend(r[key])
        if not r["truncated"]:
            assert r.get("nextOffset") is None, (method, offset, r.get("nextOffset"))
            return items, pages
        nxt = r.get("nextOffset")
        assert nxt == offset + len(r[key]) and nxt > offset, (method, offset, nxt)  # always forward, no gap
        offset = nxt
    raise AssertionError(f"{method}: still truncated after 200 pages at offset {offset}")


def same(items: list, full: list, ident) -> None:
    ids = [ident(x) for x in items]
    assert len(ids) == len(set(ids)), "a page repeated an item"
    assert ids == [ident(x) for x in full], "the pages together are not the full listing"


CASES = {
    "recall": ("lore/recall", {"query": "cobalt", "sources": ["messages", "knowledge", "facts"], "lexicalOnly": True},
               "hits", lambda h: h["uri"], 200),
    "recall-dense": ("lore/recall", {"query": "cobalt service retries", "sources": ["messages", "knowledge"]},
                     "hits", lambda h: h["uri"], 200),
    "queryFacts": ("lore/queryFacts", {"text": "cobalt"}, "facts", lambda f: f["factId"], 200),
    "queryFacts-history": ("lore/queryFacts", {"subject": "gateway", "history": True}, "facts", lambda f: f["factId"], 200),
    "queryFacts-asKnownAt": ("lore/queryFacts", {"asKnownAt": "2999-01-01T00:00:00Z", "history": True}, "facts",
                             lambda f: f["factId"], 200),
    "timeline": ("lore/timeline", {"subject": "gateway"}, "events",
                 lambda e: (e["event"], e.get("factId"), e["predicate"], e["at"]), 200),
    "listNodes": ("lore/listNodes", {}, "nodes", lambda n: n["uri"], 10_000),
    "review": ("lore/review", {"threshold": 1.0}, "items", lambda i: i["uri"], 200),
}


@pytest.mark.parametrize("case", list(CASES))
def test_walking_every_page_with_next_offset_gives_the_full_listing_once(seeded, case):
    method, params, key, ident, cap = CASES[case]
    full = seeded.request(method, {**params, "limit": cap})
    assert not full["truncated"] and full["total"] == len(full[key]) >= 8  # the reference: everything, in one call
    for limit in (1, 3, 7):
        items, pages = walk(seeded, method, params, key, limit)
        same(items, full[key], ident)
        assert {p["total"] for p in pages} == {full["total"]}  # every page says how many there are
        assert len(pages) == -(-full["total"] // limit)  # and no empty page at the end
    end = seeded.request(method, {**params, "limit": 3, "offset": full["total"]})
    assert end[key] == [] and end["truncated"] is False and end.get("nextOffset") is None  # past the end: done


def test_a_truncated_aggregate_says_how_many_groups_it_left_out(seeded):
    full = seeded.request("lore/aggregateFacts", {"by": "object", "limit": 200})
    cut = seeded.request("lore/aggregateFacts", {"by": "object", "limit": 2})
    assert not full["truncated"] and full["groupsTotal"] == len(full["groups"]) > 2  # the reference
    assert cut["truncated"] is True and cut["groupsTotal"] == full["groupsTotal"] and cut["total"] == full["total"]
    assert cut["groups"] == full["groups"][:2]


@pytest.mark.parametrize("bad", [{"offset": -1}, {"limit": 0}, {"limit": -5}, {"offset": "2"}])
def test_a_bad_page_request_is_refused_with_a_clear_error(seeded, bad):
    good = seeded.request_full("lore/listNodes", {"limit": 2, "offset": 1})
    refused = seeded.request_full("lore/listNodes", bad)
    assert "result" in good and len(good["result"]["nodes"]) == 2  # the control
    assert refused["error"]["code"] == -32602, refused


def test_a_recall_page_that_ends_the_candidate_pool_is_not_the_end_when_more_match(tmp_path):
    """Recall ranks a pool of `recallCandidates` hits (grown to reach the page asked for). A
    page that ends the pool while the word leg had more must still say `truncated` and where
    to go on; the walk then reaches every match the one-call listing has, in its order
    (twelve messages whose word counts fall strictly, so the order does not depend on the pool).
    The control: a walk inside one pool is the same."""
    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    c = StdioClient(sidecar_command("--store-dir", str(tmp_path / "store")))
    c.initialize(ws, options={"watch": False, "indexWorkspace": False, "distiller": "off", "recallCandidates": 5})
    try:
        c.request("lore/recordMessages", {"sessionId": "s", "messages": [
            {"id": f"m{i:02d}", "role": "user", "content": " ".join(["zircon"] * (13 - i) + ["filler"] * i)}
            for i in range(12)]})
        q = {"query": "zircon", "sources": ["messages"], "lexicalOnly": True}
        full = c.request("lore/recall", {**q, "limit": 200})
        uris = []
        offset = 0
        for _ in range(50):
            r = c.request("lore/recall", {**q, "limit": 2, "offset": offset})
            uris += [h["uri"] for h in r["hits"]]
            if not r["truncated"]:
                break
            assert r["nextOffset"] == offset + len(r["hits"]) > offset
            offset = r["nextOffset"]
        inside = c.request("lore/recall", {**q, "limit": 2, "offset": 2})
    finally:
        c.close()
    assert [h["uri"] for h in full["hits"]] == [f"session://s/m{i:02d}" for i in range(12)]  # the reference
    assert uris == [h["uri"] for h in full["hits"]]  # every match, once, in order: nothing hidden past the pool
    assert inside["truncated"] is True and [h["uri"] for h in inside["hits"]] == uris[2:4]  # the control


PAGED = {
    "recall": ("lore/recall", {"query": "cobalt"}),
    "queryFacts": ("lore/queryFacts", {"text": "cobalt"}),
    "timeline": ("lore/timeline", {"subject": "gateway"}),
    "review": ("lore/review", {"threshold": 1.0}),
    "listNodes": ("lore/listNodes", {}),
}


@pytest.mark.parametrize("case", list(PAGED))
def test_every_paged_method_refuses_a_negative_offset(seeded, case):
    """docs/protocol.md: a bad page is -32602, on every capped list (a negative offset would
    otherwise be a slice from the end). The control: the same call at offset 1."""
    method, params = PAGED[case]
    good = seeded.request_full(method, {**params, "limit": 2, "offset": 1})
    refused = seeded.request_full(method, {**params, "limit": 2, "offset": -1})
    assert "result" in good, good  # the control
    assert refused.get("error", {}).get("code") == -32602, refused


# -- independent review, fresh round 5 (tools/rounds/2026-12-07-fresh5.py) --------------------------

def test_a_recall_walk_ends_when_asof_leaves_fewer_hits_than_the_word_leg_found(tmp_path):
    """A page past the last hit is the end, even when the word leg was cut at its pool: with
    `asOf`, the pool's later messages are dropped after the word leg ranked them, so a page
    can hold nothing while the leg was cut. It must not say `truncated` with a `nextOffset`
    that does not advance (a client would page forever). The reference: the same question in
    one call lists the same two messages."""
    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    c = StdioClient(sidecar_command("--store-dir", str(tmp_path / "store")))
    c.initialize(ws, options={"watch": False, "indexWorkspace": False, "distiller": "off", "recallCandidates": 5})
    try:
        c.request("lore/recordMessages", {"sessionId": "s", "messages": [
            {"id": f"m{i:02d}", "role": "user", "content": " ".join(["zircon"] * (13 - i) + ["filler"] * i),
             "createdAt": "2024-03-01T10:00:00Z" if i < 2 else "2026-03-01T10:00:00Z"} for i in range(12)]})
        q = {"query": "zircon", "sources": ["messages"], "lexicalOnly": True, "asOf": "2025-01-01T00:00:00Z"}
        full = c.request("lore/recall", {**q, "limit": 200})
        uris, offset, pages = [], 0, 0
        while pages < 20:
            pages += 1
            r = c.request("lore/recall", {**q, "limit": 2, "offset": offset})
            uris += [h["uri"] for h in r["hits"]]
            if not r["truncated"]:
                break
            assert r["nextOffset"] == offset + len(r["hits"]) > offset, (offset, r)  # never the same page again
            offset = r["nextOffset"]
    finally:
        c.close()
    assert [h["uri"] for h in full["hits"]] == ["session://s/m00", "session://s/m01"]  # the reference
    assert uris == ["session://s/m00", "session://s/m01"] and pages <= 2


# -- independent review, hunt round 6 (tools/rounds/2026-12-07-hunt6.py) ----------------------------

def test_a_short_page_that_goes_on_resumes_right_after_its_last_hit(tmp_path):
    """docs/protocol.md: a truncated page says where to go on, and following `nextOffset`
    reaches every match once. A page can be short and still go on: `asOf` dropped some of the
    pool the word leg ranked, and a larger pool holds more. The next page must begin right
    after the short page's last hit (its offset plus its hits, not plus the limit asked), or
    the matches between are never shown. The reference: the same question in one call."""
    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    c = StdioClient(sidecar_command("--store-dir", str(tmp_path / "store")))
    c.initialize(ws, options={"watch": False, "indexWorkspace": False, "distiller": "off", "recallCandidates": 5})
    try:
        c.request("lore/recordMessages", {"sessionId": "s", "messages": [
            {"id": f"m{i:02d}", "role": "user", "content": " ".join(["zircon"] * (13 - i) + ["filler"] * i),
             "createdAt": "2026-03-01T10:00:00Z" if i in (2, 3, 4) else "2024-03-01T10:00:00Z"} for i in range(12)]})
        q = {"query": "zircon", "sources": ["messages"], "lexicalOnly": True, "asOf": "2025-01-01T00:00:00Z"}
        full = c.request("lore/recall", {**q, "limit": 200})
        uris, offset, short = [], 0, 0
        for _ in range(30):
            r = c.request("lore/recall", {**q, "limit": 4, "offset": offset})
            uris += [h["uri"] for h in r["hits"]]
            if not r["truncated"]:
                break
            short += len(r["hits"]) < 4
            offset = r["nextOffset"]
    finally:
        c.close()
    want = [f"session://s/m{i:02d}" for i in range(12) if i not in (2, 3, 4)]
    assert [h["uri"] for h in full["hits"]] == want  # the reference
    assert short >= 1  # the control: a short page went on
    assert uris == want, uris
