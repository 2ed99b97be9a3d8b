"""The gateway with the real Claude Code and the real Codex, offline against the fake model
server: a 40-turn scripted session reading large files goes through; the model server sees
fewer input tokens than the same session sent directly; every request it gets is a valid
body with its tool calls paired; the streamed answers reach the harness (it finishes); the
conversation is in the store afterwards; and when the engine goes away mid-session, or never
opens, the harness keeps working (fail open)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from tests.support import harness
from tests.support.fake_models import FakeModels

pytestmark = pytest.mark.slow
TURNS = 40
FILE = re.compile(r"FILE (\d+) BEGINS")


def files(ws: Path) -> None:
    (ws / "data").mkdir()
    for k in range(TURNS):
        rows = "\n".join(f"row {i:03d} of file {k}: the quick brown fox jumps over lazy dog {k * 1000 + i}"
                         for i in range(330))
        (ws / "data" / f"file_{k:02d}.txt").write_text(f"FILE {k} BEGINS (marker fq{k}z)\n{rows}\n")


def latest_file(last: str) -> int:
    found = FILE.findall(last)
    return int(found[-1]) if found else -1


def claude_reply(ws: Path):
    def reply(api: str, body: dict):
        if api != "anthropic" or not body.get("tools"):
            return "Noted."
        # The newest tool result (the harness may append reminders after it).
        last = next((json.dumps(m) for m in reversed(body["messages"]) if "tool_result" in json.dumps(m)), "")
        k = latest_file(last) + 1 if last else 0
        if k >= TURNS:
            return f"All {TURNS} files read."
        return {"tool_call": {"name": "Read", "arguments": {"file_path": str(ws / "data" / f"file_{k:02d}.txt")}}}
    return reply


def codex_reply(api: str, body: dict):
    if api != "responses":
        return "Noted."
    items = [i for i in body.get("input", []) if isinstance(i, dict)]
    last = next((json.dumps(i) for i in reversed(items) if i.get("type") == "function_call_output"), "")
    k = latest_file(last) + 1 if last else 0
    if k >= TURNS:
        return f"All {TURNS} files read."
    return {"tool_call": {"name": "exec_command", "arguments": {"cmd": f"cat data/file_{k:02d}.txt"}}}


def valid_messages(body: dict) -> None:
    msgs = [m for m in body["messages"] if m["role"] != "system"]  # Claude Code sends one in messages
    assert msgs[0]["role"] == "user"
    for a, b in zip(msgs, msgs[1:], strict=False):
        assert a["role"] != b["role"], "roles must alternate"
    for i, m in enumerate(msgs):
        blocks = m["content"] if isinstance(m["content"], list) else []
        results = {b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"}
        if results:
            prev = msgs[i - 1]["content"]
            assert results <= {b.get("id") for b in prev if isinstance(b, dict) and b.get("type") == "tool_use"}
        uses = {b["id"] for b in blocks if b.get("type") == "tool_use"}
        if uses and i + 1 < len(msgs):
            after = msgs[i + 1]["content"]
            assert uses <= {b.get("tool_use_id") for b in after if isinstance(b, dict)}


def valid_responses(body: dict) -> None:
    calls = set()
    for item in body["input"]:
        if item.get("type") == "function_call":
            calls.add(item["call_id"])
        if item.get("type") == "function_call_output":
            assert item["call_id"] in calls


class Gateway:
    def __init__(self, store: Path, ws: Path, upstream: str):
        env = {**os.environ, "LORE_DISTILLER": "off"}
        self.proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "gateway", "--store-dir", str(store),
                                      "--workspace", str(ws), "--upstream", upstream], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=env)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.url

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def claude_env(tmp: Path, base_url: str, store: Path) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return {**os.environ, "HOME": str(home), "LORE_STORE_DIR": str(store), "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "sk-ant-fake", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1"}


def sent_tokens(fake: FakeModels, api: str) -> int:
    return sum(len(b) for b in fake.bodies(api)) // 4


@pytest.fixture
def reading_lab(tmp_path):
    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    files(ws)
    return ws, tmp_path


def test_claude_code_through_the_gateway_sends_less_and_keeps_every_body_valid(reading_lab):
    """Forty files of ~7k tokens: sent directly the history passes the 200k window; through
    the gateway it is compressed (and never over the window)."""
    ws, tmp = reading_lab
    claude = harness.install("claude")
    prompt = f"Read the {TURNS} files under data/ one by one."
    with FakeModels(claude_reply(ws)) as direct:
        run = harness.run([str(claude), "-p", prompt], cwd=ws, env=claude_env(tmp, direct.url, tmp / "unused"), timeout=400)
        assert run.returncode == 0 and f"All {TURNS} files read." in run.stdout, run.stderr[-2000:]
        baseline = sent_tokens(direct, "anthropic")
    store = tmp / "store"
    writer = StdioClient(sidecar_command("--store-dir", str(store)))  # the store's writer; the gateway follows
    writer.initialize(ws, options={"watch": False, "indexWorkspace": False, "distiller": "off"})
    with FakeModels(claude_reply(ws)) as fake:
        gw = Gateway(store, ws, fake.url)
        try:
            run = harness.run([str(claude), "-p", prompt], cwd=ws, env=claude_env(tmp, gw.url, store), timeout=400)
        finally:
            gw.close()
        assert run.returncode == 0 and f"All {TURNS} files read." in run.stdout, run.stderr[-2000:]
        bodies = [json.loads(b) for b in fake.bodies("anthropic")]
        through = sent_tokens(fake, "anthropic")
    for body in bodies:
        if body.get("tools"):
            valid_messages(body)
            assert len(json.dumps(body)) // 4 < 200_000
    assert any("<lore-context" in json.dumps(b) for b in bodies)  # it did compress
    assert through < baseline, (through, baseline)
    deadline = time.monotonic() + 30
    while not writer.request("lore/recall", {"query": "fq3z", "sources": ["messages"]})["hits"]:
        assert time.monotonic() < deadline, "the session never reached the store"
        time.sleep(0.3)
    writer.close()


def test_the_harness_keeps_working_when_the_engine_dies_mid_session_or_never_opens(reading_lab):
    ws, tmp = reading_lab
    claude = harness.install("claude")
    store = tmp / "store"
    writer = StdioClient(sidecar_command("--store-dir", str(store)))  # the store's writer
    writer.initialize(ws, options={"watch": False, "indexWorkspace": False, "distiller": "off"})
    with FakeModels(claude_reply(ws)) as fake:
        gw = Gateway(store, ws, fake.url)  # a follower of that writer
        try:
            def killer() -> None:  # the engine the store relies on dies while the session runs
                while len(fake.bodies("anthropic")) < 10:
                    time.sleep(0.05)
                writer.proc.kill()

            import threading

            t = threading.Thread(target=killer, daemon=True)
            t.start()
            run = harness.run([str(claude), "-p", f"Read the {TURNS} files under data/ one by one."], cwd=ws,
                              env=claude_env(tmp, gw.url, store), timeout=400)
            t.join(5)
        finally:
            gw.close()
            writer.close()
        assert run.returncode == 0 and f"All {TURNS} files read." in run.stdout, run.stderr[-2000:]
        assert writer.proc.poll() is not None  # control: it really died mid-session
    broken = tmp / "not-a-store"
    broken.write_text("x")  # the engine cannot open at all: every body goes through untouched
    with FakeModels(claude_reply(ws)) as fake:
        gw = Gateway(broken, ws, fake.url)
        try:
            run = harness.run([str(claude), "-p", "Read the files under data/ one by one."], cwd=ws,
                              env=claude_env(tmp, gw.url, tmp / "unused"), timeout=400)
        finally:
            gw.close()
        assert run.returncode == 0 and f"All {TURNS} files read." in run.stdout, run.stderr[-2000:]
        assert not any("<lore-context" in b for b in fake.bodies("anthropic"))  # nothing assembled: passed through


def test_codex_through_the_gateway_sends_less_and_keeps_tool_calls_paired(reading_lab):
    ws, tmp = reading_lab
    codex = harness.install("codex")

    def codex_home(url: str) -> Path:
        return harness.codex_config(tmp / f"codex-{abs(hash(url))}", url, trusted=ws)

    cmd = [str(codex), "exec", "--skip-git-repo-check", "--disable", "plugins", "-c", "analytics.enabled=false",
           f"Read the {TURNS} files under data/ one by one."]
    base = {**os.environ, "HOME": str(tmp), "FAKE_API_KEY": "fake"}
    with FakeModels(codex_reply) as direct:
        run = harness.run(cmd, cwd=ws, env={**base, "CODEX_HOME": str(codex_home(direct.url))}, timeout=400)
        assert run.returncode == 0, run.stderr[-2000:]
        baseline = sent_tokens(direct, "responses")
    store = tmp / "store"
    with FakeModels(codex_reply) as fake:
        gw = Gateway(store, ws, fake.url)
        try:
            run = harness.run(cmd, cwd=ws, env={**base, "CODEX_HOME": str(codex_home(gw.url)), "LORE_STORE_DIR": str(store)},
                              timeout=400)
        finally:
            gw.close()
        assert run.returncode == 0 and f"All {TURNS} files read." in run.stdout, run.stderr[-2000:]
        bodies = [json.loads(b) for b in fake.bodies("responses")]
        through = sent_tokens(fake, "responses")
    for body in bodies:
        valid_responses(body)
    assert any("<lore-context" in json.dumps(b) for b in bodies)
    assert through < baseline, (through, baseline)
    reader = StdioClient(sidecar_command("--store-dir", str(store)))
    try:
        reader.initialize(ws, options={"watch": False, "indexWorkspace": False, "distiller": "off"})
        assert reader.request("lore/recall", {"query": "fq3z", "sources": ["messages"]})["hits"]  # in the store
    finally:
        reader.close()
