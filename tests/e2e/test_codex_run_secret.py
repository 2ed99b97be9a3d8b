"""`lore-sidecar run codex` with the real Codex, offline against the fake model server: the
gateway secret is in none of Codex's arguments (any local account reads /proc/<pid>/cmdline),
yet the call reaches the upstream through the gateway with the user's own key, because Codex
sends the secret from its environment as the `x-lore-token` header. The same Codex command
without that variable is refused by the gateway and nothing reaches the upstream."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys

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
