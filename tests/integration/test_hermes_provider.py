"""lore's Hermes memory provider against the real hook command and daemon (Hermes itself
runs in tests/e2e/test_hermes.py): its turn hand-over lands in the store under `hermes`, and
`on_pre_compress` — Hermes about to compact — gets the session distilled first."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from tests.support.harness import ROOT, stop_hook_daemons, wait_for_daemon

TURN = [{"role": "user", "content": "We pin the zephyrine exporter to version 4.2 because 4.3 drops gzip."},
        {"role": "assistant", "content": "Decision noted: the zephyrine exporter stays on 4.2 until gzip is back."}]


@pytest.fixture
def provider(tmp_path, monkeypatch, workspace):
    store = tmp_path / "store"
    monkeypatch.setenv("LORE_STORE_DIR", str(store))
    monkeypatch.setenv("LORE_HOOK_IDLE_MS", "60000")
    monkeypatch.setenv("LORE_HOOK_TIMEOUT_MS", "15000")  # a loaded machine: the daemon's first answer
    monkeypatch.chdir(workspace)
    spec = importlib.util.spec_from_file_location("lore_hermes_provider_it", ROOT / "editors" / "hermes" / "lore" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.LORE_COMMAND = [sys.executable, "-m", "lore_sidecar"]  # what install writes: this lore-sidecar
    p = module.LoreMemoryProvider()
    p.initialize("hermes-s1", hermes_home=str(tmp_path), platform="cli", agent_context="primary")
    p.module = module  # the provider's module, for tests that change what it starts
    yield p, store
    p.shutdown()
    stop_hook_daemons(store)


def rows(store: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(store / "lore.db") as db:
        return db.execute(sql).fetchall()


def test_a_turn_is_captured_and_pre_compress_distils_the_session(provider):
    p, store = provider
    assert "Long-term memory" in p.system_prompt_block()  # SessionStart's guidance
    wait_for_daemon(store)
    p.sync_turn(TURN[0]["content"], TURN[1]["content"], messages=[{"role": "system", "content": "sys"}, *TURN])
    p.shutdown()  # waits for the background hand-over
    got = rows(store, "SELECT role, harness, session_id FROM messages ORDER BY id")
    assert ("user", "hermes", "hermes-s1") in got and ("assistant", "hermes", "hermes-s1") in got, got
    assert rows(store, "SELECT count(*) FROM distillations")[0][0] == 0  # nothing distilled yet (control)
    assert p.on_pre_compress([{"role": "system", "content": "sys"}, *TURN]) == ""
    deadline = time.monotonic() + 30
    while not rows(store, "SELECT count(*) FROM distillations")[0][0]:
        assert time.monotonic() < deadline, "pre-compress did not distil the session"
        time.sleep(0.3)
    assert len(rows(store, "SELECT id FROM messages")) == len(got)  # the same messages again: duplicates


def test_each_turns_reply_is_captured_as_the_conversation_grows(provider):
    """sync_turn hands over only the turn's new messages, each reply's id its place in the
    whole conversation: three turns, three replies kept (none taken for a duplicate)."""
    p, store = provider
    wait_for_daemon(store)
    conversation = [{"role": "system", "content": "sys"}]
    replies = []
    for n, topic in enumerate(("zephyrine exporter", "quillon cache", "marrowgate proxy"), 1):
        reply = f"Turn {n}: the {topic} is settled."
        conversation += [{"role": "user", "content": f"Turn {n}: what about the {topic}?"},
                         {"role": "assistant", "content": reply}]
        replies.append(reply)
        p.sync_turn(conversation[-2]["content"], reply, messages=list(conversation))
        p.shutdown()  # each hand-over lands before the next turn
    kept = [json.loads(r[0]) for r in rows(store, "SELECT content FROM messages WHERE role = 'assistant' ORDER BY id")]
    assert sorted(kept) == sorted(replies), kept


def test_a_reply_after_undo_is_captured_though_it_takes_the_undone_replys_place(provider):
    """Hermes' /undo truncates the conversation and keeps the session id (on_session_switch,
    rewound=True): the next reply sits where the undone one sat, and is a message of its own."""
    p, store = provider
    wait_for_daemon(store)
    first = [{"role": "system", "content": "sys"}, *TURN]
    p.sync_turn(TURN[0]["content"], TURN[1]["content"], messages=list(first))
    undone = [{"role": "user", "content": "And the quillon cache?"},
              {"role": "assistant", "content": "The quillon cache keeps its 30 s expiry."}]
    p.sync_turn(undone[0]["content"], undone[1]["content"], messages=[*first, *undone])
    p.shutdown()
    p.on_session_switch("hermes-s1", parent_session_id="hermes-s1", reset=False, rewound=True)  # /undo
    retried = [undone[0], {"role": "assistant", "content": "The quillon cache moves to a 5 s expiry."}]
    p.sync_turn(retried[0]["content"], retried[1]["content"], messages=[*first, *retried])
    p.shutdown()
    kept = [json.loads(r[0]) for r in rows(store, "SELECT content FROM messages WHERE role = 'assistant' ORDER BY id")]
    assert {TURN[1]["content"], undone[1]["content"]} <= set(kept), kept  # control: both turns before the undo
    assert retried[1]["content"] in kept, kept
    p.on_session_end([*first, *retried])  # the whole conversation again: duplicates only
    assert len(rows(store, "SELECT id FROM messages WHERE role = 'assistant'")) == len(kept)


def test_the_provider_is_available_only_when_its_lore_sidecar_exists(provider, tmp_path):
    p, _ = provider
    module = p.module
    assert p.is_available()  # control: this interpreter
    module.LORE_COMMAND = [str(tmp_path / "no-such-lore-sidecar")]
    assert not p.is_available()
