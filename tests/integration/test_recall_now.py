"""`now` on `lore/recall`, over stdio: the time a question is asked at. Relative words
("two weeks ago") count from it; unlike `asOf` it hides nothing written later."""

from __future__ import annotations

import pytest

from lore_sidecar.client import RpcError, StdioClient, sidecar_command

PLANTED = "planted basil seedlings in the balcony box"
QUERY = "what did I plant in the balcony garden two weeks ago?"
NOW = "2024-03-29T12:00:00Z"  # two weeks after 15 March


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("now")
    ws = tmp / "home"
    (ws / ".git").mkdir(parents=True)
    c = StdioClient(sidecar_command("--store-dir", str(tmp / "store")))
    c.initialize(ws, options={"watch": False, "indexWorkspace": False, "distiller": "off", "neighbours": 0})
    # The turn of 15 March says less of the query's words than the others, on other days.
    others = [(f"o{i}", f"the balcony garden: I plant and replant the garden every week, garden note {i}",
               f"2024-0{1 + i % 2}-{10 + i:02d}T09:00:00Z") for i in range(8)]
    later = ("later", "the balcony garden: planted the garden with garden mint", "2024-04-20T09:00:00Z")
    for sid, (mid, text, when) in [("s-old", ("m15", PLANTED, "2024-03-15T18:00:00Z")),
                                   *[(f"s-{m}", (m, t, w)) for m, t, w in [*others, later]]]:
        c.request("lore/recordMessages", {"sessionId": sid, "messages": [
            {"id": mid, "role": "user", "content": text, "createdAt": when}]})
    for _ in range(200):
        if c.request("lore/status")["indexLagMs"] == 0:
            break
    yield c
    c.close()


def ids(result: dict) -> list[str]:
    return [h["uri"].rsplit("/", 1)[1] for h in result["hits"]]


def test_relative_words_count_from_now(client):
    asked = client.request("lore/recall", {"query": QUERY, "sources": ["messages"], "now": NOW})
    assert ids(asked)[0] == "m15"
    assert asked["timeWindows"] == [{"from": "2024-03-12", "until": "2024-03-19"}]
    # Control: without `now` "two weeks ago" counts from the clock, where nothing was said,
    # and the turns that say the query's words more often come first.
    plain = client.request("lore/recall", {"query": QUERY, "sources": ["messages"]})
    assert ids(plain)[0] != "m15" and "m15" in ids(plain)


def test_now_hides_nothing_written_after_it(client):
    asked = client.request("lore/recall", {"query": QUERY, "sources": ["messages"], "now": NOW, "limit": 20})
    assert "later" in ids(asked)
    # Control: `asOf` the same time hides it.
    as_of = client.request("lore/recall", {"query": QUERY, "sources": ["messages"], "asOf": NOW, "limit": 20})
    assert "later" not in ids(as_of) and "m15" in ids(as_of)


def test_a_now_that_is_no_time_is_refused(client):
    with pytest.raises(RpcError) as refused:
        client.request("lore/recall", {"query": QUERY, "now": "two weeks ago"})
    assert refused.value.code == -32602 and "now" in str(refused.value.error)


def test_relative_words_count_from_now_even_beside_an_as_of(client):
    # Reviewer round 2026-12-07-gateway-recall, gr-asof-before-now: "Default: asOf, else the
    # clock" -- given both, `now` is the time asked at; `asOf` (later here) only hides.
    both = client.request("lore/recall", {"query": QUERY, "sources": ["messages"], "now": NOW,
                                          "asOf": "2024-05-10T00:00:00Z"})
    assert both["timeWindows"] == [{"from": "2024-03-12", "until": "2024-03-19"}]
    assert ids(both)[0] == "m15"
    # The control: `asOf` alone is the time asked at, two weeks before 10 May.
    alone = client.request("lore/recall", {"query": QUERY, "sources": ["messages"], "asOf": "2024-05-10T00:00:00Z"})
    assert alone["timeWindows"] == [{"from": "2024-04-23", "until": "2024-04-30"}]


@pytest.fixture(scope="module")
def recent(tmp_path_factory):
    """Two turns saying the same words, the older (four days before NOW) recorded first, so
    first among equals; a strong recency bonus with a one-day half-life."""
    tmp = tmp_path_factory.mktemp("recent")
    ws = tmp / "home"
    (ws / ".git").mkdir(parents=True)
    c = StdioClient(sidecar_command("--store-dir", str(tmp / "store")))
    c.initialize(ws, options={"watch": False, "indexWorkspace": False, "distiller": "off", "neighbours": 0,
                              "recencyWeight": 50, "recencyHalfLifeDays": 1, "sessionWeight": 0})
    for sid, mid, when in [("s-older", "older", "2024-03-25T12:00:00Z"), ("s-newer", "newer", "2024-03-28T12:00:00Z")]:
        c.request("lore/recordMessages", {"sessionId": sid, "messages": [
            {"id": mid, "role": "user", "content": "the kestrel feeder checklist for the balcony", "createdAt": when}]})
    for _ in range(200):
        if c.request("lore/status")["indexLagMs"] == 0:
            break
    yield c
    c.close()


def test_messages_age_from_now_not_from_the_clock(recent):
    # Reviewer round 2026-12-07-gateway-recall, gr-recency-from-the-clock-not-now: "messages age
    # from it (the recency bonus)". From NOW the older turn is four days old, the newer one a
    # day: the newer one's bonus is eight times the older one's and lifts it first.
    query = {"query": "kestrel feeder checklist", "sources": ["messages"], "lexicalOnly": True}
    assert ids(recent.request("lore/recall", {**query, "now": NOW}))[:2] == ["newer", "older"]
    # The control: asked years later (as the clock is), both bonuses have vanished and the
    # first recorded of two equal turns leads.
    assert ids(recent.request("lore/recall", {**query, "now": "2030-01-01T00:00:00Z"}))[:2] == ["older", "newer"]
