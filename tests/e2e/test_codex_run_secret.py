"""`lore-sidecar run codex` with the real Codex, offline against the fake model server: the
gateway secret is in none of Codex's arguments (any local account reads /proc/<pid>/cmdline),
yet the call reaches the upstream through the gateway with the user's own key, because Codex
sends the secret from its environment as the `x-lore-token` header. The same Codex command
without that variable is refused by the gateway and nothing reaches the upstream. Signed in
with ChatGPT instead, Codex is pointed at `<gateway>/v1/codex` and calls `/v1/codex/responses`
with its ChatGPT access token and account header (issue 36 item 4)."""

from __future__ import annotations

import base64
import json
import os
import shlex
import signal
import sys
import time
import urllib.request

import pytest

from tests.support import harness
from tests.support.fake_models import FakeModels

pytestmark = pytest.mark.slow
ANSWER = "hello through the gateway"


def test_run_codex_keeps_the_secret_out_of_its_arguments_and_still_reaches_the_upstream(tmp_path):
    codex = harness.install("codex")
    bindir, ws, store = tmp_path / "bin", tmp_path / "ws", tmp_path / "store"
    for d in (bindir, ws):
        d.mkdir()
    argv_file = tmp_path / "codex-argv.json"
    # The real Codex behind a shim that writes down the arguments it was given.
    shim = bindir / "codex"
    shim.write_text(f'#!/bin/sh\n{shlex.quote(sys.executable)} -c "import json, sys; '
                    f'json.dump(sys.argv[1:], open({str(argv_file)!r}, \'w\'))" "$@"\n'
                    f'exec {shlex.quote(str(codex))} "$@"\n')
    shim.chmod(0o755)
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text('model = "fake-model"\napproval_policy = "never"\nsandbox_mode = "read-only"\n')
    (home / "auth.json").write_text(json.dumps({"OPENAI_API_KEY": "sk-user-own"}))  # the user's own login
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path),
           "CODEX_HOME": str(home), "LORE_DISTILLER": "off"}
    codex_args = ["exec", "--skip-git-repo-check", "--disable", "plugins", "-c", "analytics.enabled=false", "say hi"]
    with FakeModels(lambda api, body: ANSWER) as fake:
        try:
            r = harness.run([sys.executable, "-m", "lore_sidecar", "run", "codex", "--store-dir", str(store),
                             "--upstream", fake.url, "--", *codex_args], cwd=ws, env=env, timeout=300)
            assert r.returncode == 0 and ANSWER in r.stdout, r.stderr[-2000:]
            secret = (store / "gateway.secret").read_text().strip()
            argv = json.loads(argv_file.read_text())
            assert not any(secret in a for a in argv), argv
            assert any("127.0.0.1" in a for a in argv), argv  # pointed at the gateway
            calls = [(path, {k.lower(): v for k, v in headers}) for method, path, headers, _ in fake.seen
                     if method == "POST"]
            assert calls and all(path == "/v1/responses" for path, _ in calls), calls
            for _path, headers in calls:
                assert headers.get("authorization") == "Bearer sk-user-own"  # the user's key, as before
                assert "x-lore-token" not in headers and secret not in json.dumps(headers)  # not forwarded
            # Control: the very same Codex command, without the variable it sends as the header.
            before = len(fake.seen)
            bare = {k: v for k, v in env.items() if k != "LORE_GATEWAY_TOKEN"}
            refused = harness.run([str(codex), *argv], cwd=ws, env=bare, timeout=300)
            assert ANSWER not in refused.stdout
            assert "401" in refused.stderr + refused.stdout, refused.stderr[-2000:]
            assert len(fake.seen) == before  # the gateway forwarded nothing
        finally:
            try:
                os.kill(json.loads((store / "gateway.json").read_text())["pid"], signal.SIGTERM)
            except (OSError, ValueError, KeyError):
                pass


def fake_chatgpt_login(home, access_token: str, account: str) -> None:
    """What `codex login` (ChatGPT) writes, as far as Codex 0.171 reads it offline: an id_token
    (unsigned: Codex only decodes it) whose OpenAI claims name the account and plan, and a
    `last_refresh` of now, so Codex does not try to refresh the tokens at auth.openai.com."""
    def part(d: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()

    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": account, "chatgpt_plan_type": "pro"}}
    id_token = f"{part({'alg': 'none'})}.{part({'email': 'u@example.com', 'exp': 4102444800, **claims})}.sig"
    (home / "auth.json").write_text(json.dumps({
        "OPENAI_API_KEY": None, "last_refresh": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tokens": {"id_token": id_token, "access_token": access_token, "refresh_token": "rt-fake", "account_id": account}}))


def test_run_codex_signed_in_with_chatgpt_calls_the_codex_path_with_its_own_token(tmp_path):
    """The access token and account header go upstream as Codex sent them; the gateway secret
    does not; the body went through lore's assembly. (Control: the API-key test above, whose
    calls go to /v1/responses.)"""
    codex = harness.install("codex")
    ws, store, home = tmp_path / "ws", tmp_path / "store", tmp_path / "codex-home"
    for d in (ws, home):
        d.mkdir()
    (home / "config.toml").write_text('model = "fake-model"\napproval_policy = "never"\nsandbox_mode = "read-only"\n')
    fake_chatgpt_login(home, "chatgpt-access-fake", "acct-fake")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "CODEX_API_KEY")}
    env.update({"PATH": f"{codex.parent}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path),
                "CODEX_HOME": str(home), "LORE_DISTILLER": "off"})
    codex_args = ["exec", "--skip-git-repo-check", "--disable", "plugins", "--disable", "apps",
                  "-c", "analytics.enabled=false", "say hi"]
    with FakeModels(lambda api, body: ANSWER) as fake:
        try:
            r = harness.run([sys.executable, "-m", "lore_sidecar", "run", "codex", "--store-dir", str(store),
                             "--upstream", fake.url, "--no-tools", "--", *codex_args], cwd=ws, env=env, timeout=300)
            assert r.returncode == 0 and ANSWER in r.stdout, r.stderr[-2000:]
            secret = (store / "gateway.secret").read_text().strip()
            calls = [(path, {k.lower(): v for k, v in headers}) for method, path, headers, _ in fake.seen
                     if method == "POST"]
            assert calls and all(path == "/v1/codex/responses" for path, _ in calls), calls
            for _path, headers in calls:
                assert headers.get("authorization") == "Bearer chatgpt-access-fake"
                assert headers.get("chatgpt-account-id") == "acct-fake"
                assert "x-lore-token" not in headers and secret not in json.dumps(headers)  # not forwarded
            gateway = json.loads((store / "gateway.json").read_text())["url"]
            direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with direct.open(f"{gateway}/{secret}/lore/health", timeout=10) as h:
                assert json.loads(h.read())["assembled"] >= len(calls)  # lore's assembly, not a passthrough
        finally:
            try:
                os.kill(json.loads((store / "gateway.json").read_text())["pid"], signal.SIGTERM)
            except (OSError, ValueError, KeyError):
                pass
