"""Conversations in Japanese and German are recalled by their own words, over stdio: a real
sidecar, `lore/recordMessages` then `lore/recall`, an English conversation beside them as
the control that the same store and the same calls find what they hold."""

from __future__ import annotations

import time

import pytest

from lore_sidecar.client import StdioClient, sidecar_command

OPTIONS = {"watch": False, "indexWorkspace": False, "distiller": "off"}
CONVERSATIONS = {
    "ja-1": ["週末は京都の祖母の家で抹茶を点てる練習をしています。", "素敵ですね。茶道は何年続けていますか？",
             "もう三年になります。来月は茶会に招かれました。", "楽しんでください！"],
    "de-1": ["Unsere Wärmepumpe im Keller macht seit Dienstag merkwürdige Geräusche.",
             "Hast du schon den Kundendienst angerufen?", "Ja, der Techniker kommt am Freitag.",
             "Dann drücke ich die Daumen."],
    "en-1": ["I finally repotted the fiddle leaf fig on the balcony.", "Did it survive the move?",
             "Yes, and it already has two new leaves.", "Great news."],
}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    root = tmp_path_factory.mktemp("any-language")
    ws = root / "ws"
    ws.mkdir()
    c = StdioClient(sidecar_command("--store-dir", str(root / "store")))
    c.initialize(ws, options=OPTIONS)
    total = 0
    for sid, turns in CONVERSATIONS.items():
        msgs = [{"id": str(n), "role": "user" if n % 2 == 0 else "assistant", "content": t,
                 "createdAt": f"2026-12-01T10:00:{n:02d}Z"} for n, t in enumerate(turns)]
        c.request("lore/recordMessages", {"sessionId": sid, "harness": "test", "messages": msgs})
        total += len(msgs)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        s = c.request("lore/status")
        if s["counts"]["messages"] >= total and s["indexLagMs"] == 0 and s.get("vectorLag", 0) == 0:
            break
        time.sleep(0.05)
    yield c
    c.close()


def sessions_found(client: StdioClient, query: str) -> list[str]:
    hits = client.request("lore/recall", {"query": query, "sources": ["messages"], "limit": 10, "lexicalOnly": True})["hits"]
    return list(dict.fromkeys(h["uri"].split("/")[-2] for h in hits))


def test_the_english_conversation_is_recalled_by_its_words(client):
    assert sessions_found(client, "fiddle leaf fig") == ["en-1"]


@pytest.mark.parametrize(("query", "session"), [
    ("抹茶", "ja-1"),  # a two-character word inside a sentence without spaces
    ("茶会はいつ？", "ja-1"),  # a question in Japanese, its words only in that conversation
    ("京都の祖母", "ja-1"),
    ("Wärmepumpe", "de-1"),  # a German compound with an umlaut, as written
    ("warmepumpe geräusche", "de-1"),  # typed without the umlaut, and another word with one
    ("Kundendienst", "de-1"),
])
def test_a_conversation_is_recalled_by_words_only_it_holds(client, query, session):
    assert sessions_found(client, query) == [session]


def test_words_no_conversation_holds_recall_nothing(client):
    # Beside the positive cases above: same script, same store, no conversation says these.
    assert sessions_found(client, "大阪の寿司") == []
    assert sessions_found(client, "Kühlschrank") == []
