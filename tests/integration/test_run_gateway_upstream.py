"""Where `lore-sidecar run`'s gateway forwards: Copilot's and Hermes' own endpoints become its
upstream without their `/v1` (the gateway appends `/v1/...` itself), and the gateway recorded
in `<store>/gateway.json` is reused only when it forwards where this run's harness would send
its calls (docs/context.md: `run` "records the gateway ... and reuses it"). Independent
round 4 (tools/rounds/2026-12-04-fresh4-context-gateway-ask.py)."""

from __future__ import annotations

import json
import os
import urllib.request

from lore_sidecar.gateway.run import ensure_gateway, own_upstream


def pid_of(url: str) -> int:
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with direct.open(url + "/lore/health", timeout=5) as r:
        return int(json.loads(r.read())["pid"])  # told only with the secret


def test_a_gateway_forwarding_elsewhere_is_not_reused_one_forwarding_here_is(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LORE_DISTILLER", "off")
    store = tmp_path / "store"
    pids: list[int] = []
    try:
        first = ensure_gateway(store, "http://127.0.0.1:9")
        pids.append(pid_of(first))
        again = ensure_gateway(store, "http://127.0.0.1:9")
        assert again == first  # the control: the same upstream reuses the running gateway
        other = ensure_gateway(store, "http://127.0.0.1:8")
        pids.append(pid_of(other))
        assert pids[1] != pids[0] and other != first
        assert json.loads((store / "gateway.json").read_text())["upstream"] == "http://127.0.0.1:8"
    finally:
        for pid in set(pids):
            os.kill(pid, 15)


def test_the_harness_own_endpoint_is_the_upstream_without_its_v1(tmp_path):
    """The fake model servers route by the path's end, so /v1/v1/chat/completions reached them
    too: the upstream handed to the gateway is checked here, as `run` computes it."""
    assert own_upstream("copilot", {"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:7/v1/"}) == "http://127.0.0.1:7"
    assert own_upstream("hermes", {"CUSTOM_BASE_URL": "https://llm.example/api/v1"}) == "https://llm.example/api"
    hermes_home = tmp_path / "hermes"
    hermes_home.mkdir()
    (hermes_home / "config.yaml").write_text("model:\n  base_url: http://127.0.0.1:5/v1\n")
    assert own_upstream("hermes", {"HERMES_HOME": str(hermes_home)}) == "http://127.0.0.1:5"
    # The controls: a base URL without /v1 (Copilot's Anthropic dialect) is kept as it is; no endpoint, none.
    assert own_upstream("copilot", {"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:7"}) == "http://127.0.0.1:7"
    assert own_upstream("claude", {"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:7/v1"}) is None
