"""`lore-sidecar run copilot` (all three of Copilot CLI's bring-your-own-key dialects) and
`lore-sidecar run hermes`, the real programs, through the gateway to the fake model server:
each run completes, its model call reached the fake server in that dialect, and the
conversation is in the store — which only the gateway writes here (no hooks, no MCP: nothing
is installed in these homes)."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from tests.support import harness
from tests.support.fake_models import FakeModels

pytestmark = pytest.mark.slow

# (COPILOT_PROVIDER_TYPE, COPILOT_PROVIDER_WIRE_API) -> the API the fake server must see.
DIALECTS = ((None, None, "chat"), (None, "responses", "responses"), ("anthropic", None, "anthropic"))


def stored_texts(store: Path) -> list[str]:
    with sqlite3.connect(store / "lore.db") as db:
        return [t for (t,) in db.execute("SELECT text FROM messages")]


def wait_stored(store: Path, needle: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not ((store / "lore.db").exists() and any(needle in t for t in stored_texts(store))):
        assert time.monotonic() < deadline, f"{needle!r} never reached the store"
        time.sleep(0.3)


def lore_run(name: str, store: Path, args: list[str], cwd: Path, env: dict[str, str]):
    return harness.run([sys.executable, "-m", "lore_sidecar", "run", name, "--store-dir", str(store), "--", *args],
                       cwd=cwd, env=env, timeout=300)


def stop_gateway(store: Path) -> None:
    try:
        os.kill(json.loads((store / "gateway.json").read_text())["pid"], 15)
    except (OSError, ValueError, KeyError):
        pass


def reached(fake: FakeModels, api: str, prompt: str) -> bool:
    return any(a == api and prompt in json.dumps(body) for a, _, body in fake.requests)


def test_run_copilot_in_each_dialect_goes_through_the_gateway_into_the_store(lab):
    ws, store, tmp = lab
    copilot = harness.install("copilot")
    try:
        with FakeModels(lambda api, body: "Noted.") as fake:
            for kind, wire, api in DIALECTS:
                extra = {k: v for k, v in (("COPILOT_PROVIDER_TYPE", kind), ("COPILOT_PROVIDER_WIRE_API", wire)) if v}
                env = harness.copilot_env(tmp, fake.url, **extra)
                if kind == "anthropic":  # its base URL has no /v1
                    env["COPILOT_PROVIDER_BASE_URL"] = fake.url
                env["PATH"] = f"{copilot.parent}{os.pathsep}{env['PATH']}"
                prompt = f"Dialect check {api}: the quartz lamp is amber."
                done = lore_run("copilot", store, ["-p", prompt, "--allow-all-tools"], ws, env)
                assert done.returncode == 0, (api, done.stderr[-2000:])
                assert "through the gateway at http://127.0.0.1:" in done.stderr
                assert reached(fake, api, prompt), (api, [(a, p) for a, p, _ in fake.requests])
                wait_stored(store, prompt)
    finally:
        stop_gateway(store)


def test_run_hermes_goes_through_the_gateway_into_the_store(lab):
    ws, store, tmp = lab
    hermes = harness.install_hermes()
    try:
        with FakeModels(lambda api, body: "Noted.") as fake:
            home = tmp / "home"
            home.mkdir()
            hermes_home = harness.hermes_config(tmp / "hermes-home", fake.url)
            env = {**os.environ, **harness.lore_path_env(), "HOME": str(home), "HERMES_HOME": str(hermes_home)}
            env["PATH"] = f"{hermes.parent}{os.pathsep}{env['PATH']}"
            prompt = "Gateway check: the quartz lamp is amber."
            done = lore_run("hermes", store, ["-z", prompt], ws, env)
            assert done.returncode == 0, done.stderr[-2000:]
            assert "through the gateway at http://127.0.0.1:" in done.stderr
            assert reached(fake, "chat", prompt), [(a, p) for a, p, _ in fake.requests]
            wait_stored(store, prompt)
    finally:
        stop_gateway(store)
