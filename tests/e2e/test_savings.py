"""Savings a person can see (issue 36 item 5), over stdio and from the CLI: `lore/status`'s
`savings` and `lore-sidecar savings` total exactly the per-call figures - the provider's
usage where it was fed back (priced here by hand from the public price list), the
assembler's own estimate (`lore/assembleContext`'s `estimate` and `l0`) where it was not -
and say "reported" only where usage came back: the same session shape with no usage fed
back is "estimated" throughout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from tests.e2e.test_context_economics import body, turn

OPTIONS = {"watch": False, "indexWorkspace": False, "distiller": "off", "maxLayer0Tokens": 6000, "minLayer0Tokens": 2000}
# claude-sonnet-4-5, USD per token: input, cache write (1.25x), cache read (0.1x), output
IN, WRITE, READ, OUT = 3e-6, 3.75e-6, 0.3e-6, 15e-6


def usage_of(k: int, estimate: dict[str, int]) -> dict[str, int]:
    """What a provider might report for the body sent: close to the estimate, never equal to it."""
    read, write = estimate["cacheReadTokens"], estimate["cacheWriteTokens"]
    return {"inputTokens": estimate["inputTokens"] - read - write + 7 + k, "cacheCreationInputTokens": write + 3,
            "cacheReadInputTokens": read + 11, "outputTokens": 60 + k}


def cost(u: dict[str, int]) -> float:
    return (u["inputTokens"] * IN + u["cacheCreationInputTokens"] * WRITE + u["cacheReadInputTokens"] * READ
            + u["outputTokens"] * OUT)


def drive(c: StdioClient, session: str, calls: int, report: bool) -> tuple[float, float, list[int]]:
    """An append-only session; with `report`, every other call's usage is fed back (the rest
    stay estimated). Returns the sums this client computes from each call's own figures."""
    msgs: list[dict] = []
    sent = l0 = 0.0
    layers = []
    for k in range(calls):
        msgs += [*turn(k), {"role": "user", "content": [{"type": "text", "text": f"continue {k}"}]}]
        r = c.request("lore/assembleContext", {"sessionId": session, "body": body(msgs)}, timeout=60)
        layers.append(r["layer"])
        if r["layer"] == 0:
            assert r["l0"] == r["estimate"]  # the body sent is the body as it came
        else:  # L0: the whole body as it came, far more than the compressed one
            assert r["l0"]["inputTokens"] > 1.5 * r["estimate"]["inputTokens"]
            if not report:  # uncalibrated: characters / 4 of the body as it came
                whole = len(json.dumps(body(msgs), ensure_ascii=False, separators=(",", ":"))) / 4
                assert abs(r["l0"]["inputTokens"] - whole) < 0.02 * whole
        if report and k % 2 == 0:
            u = usage_of(k, r["estimate"])
            c.request("lore/recordUsage", {"sessionId": session, "usage": u})
            sent += cost(u)
            # L0 is the call itself at layer 0; above it, the estimate plus the same output
            l0 += cost(u) if r["layer"] == 0 else r["l0"]["usd"] + u["outputTokens"] * OUT
        else:
            if report:  # an answer whose usage never came back: only an error, or nothing at all
                c.request("lore/recordUsage", {"sessionId": session, "error": {"status": 529, "message": "overloaded"}})
            sent += r["estimate"]["usd"]
            l0 += r["l0"]["usd"]
    return sent, l0, layers


def cli(store, ws, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "lore_sidecar", "savings", "--json", "--store-dir", str(store),
                          "--workspace", str(ws), *args], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "LORE_DISTILLER": "off"})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture
def sidecar(tmp_path, workspace):
    c = StdioClient(sidecar_command("--store-dir", str(tmp_path / "store")))
    c.initialize(workspace, options=OPTIONS)
    yield c, tmp_path / "store", workspace
    c.close()


def test_status_and_the_cli_total_the_per_call_figures_and_say_reported_only_where_usage_came_back(sidecar):
    c, store, ws = sidecar
    rep_sent, rep_l0, rep_layers = drive(c, "s-reported", 24, report=True)
    est_sent, est_l0, est_layers = drive(c, "s-estimated", 24, report=False)
    assert max(rep_layers) >= 1 and max(est_layers) >= 1  # both compressed: L0 is an estimate there

    savings = c.request("lore/status", {})["savings"]
    sessions = {s["sessionId"]: s for s in savings["sessions"]}
    rep, est = sessions["s-reported"], sessions["s-estimated"]
    assert (rep["calls"], rep["reportedCalls"], rep["estimatedCalls"], rep["source"]) == (24, 12, 12, "mixed")
    assert (est["calls"], est["reportedCalls"], est["source"]) == (24, 0, "estimated")  # the control: none came back
    assert rep["usd"] == pytest.approx(rep_sent, abs=1e-5) and rep["l0Usd"] == pytest.approx(rep_l0, abs=1e-5)
    assert est["usd"] == pytest.approx(est_sent, abs=1e-5) and est["l0Usd"] == pytest.approx(est_l0, abs=1e-5)
    assert rep["outputTokens"] == sum(60 + k for k in range(0, 24, 2)) and est["outputTokens"] == 0
    for t in (rep, est):
        assert t["savedUsd"] == pytest.approx(t["l0Usd"] - t["usd"], abs=1e-6)
        assert t["cacheHitRatio"] == pytest.approx(t["cacheReadTokens"] / t["sentTokens"], abs=1e-4)
        assert t["busts"] == sum(t["bustReasons"].values()) and set(t["bustReasons"]) <= {
            "ttl", "layer", "rewritten", "moved", "missed"}
    assert est["busts"] >= 1 and "layer" in est["bustReasons"]  # leaving L0 rewrites what was cached
    total = savings["total"]
    assert total["calls"] == 48 and total["usd"] == pytest.approx(rep["usd"] + est["usd"], abs=1e-6)
    assert [d["calls"] for d in savings["days"]] == [48] and savings["days"][0]["usd"] == total["usd"]

    # The CLI reads the same ledger: the same totals, and the per-call rows they sum
    report = cli(store, ws)
    assert report["total"] == total
    calls = cli(store, ws, "--calls", "--session", "s-reported")["calls"]
    assert len(calls) == 24 and sum(f["usd"] for f in calls) == pytest.approx(rep["usd"], abs=1e-6)
    assert [f["source"] for f in calls] == ["reported", "estimated"] * 12
    assert [f["layer"] for f in calls] == rep_layers
    assert {f["source"] for f in cli(store, ws, "--calls", "--session", "s-estimated")["calls"]} == {"estimated"}
    assert [s["sessionId"] for s in cli(store, ws, "--sessions")["sessions"]] == ["s-estimated", "s-reported"]
    status = subprocess.run([sys.executable, "-m", "lore_sidecar", "status", "--json", "--store-dir", str(store),
                             "--workspace", str(ws)], capture_output=True, text=True, timeout=120)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["savings"]["total"] == total  # `lore-sidecar status` says the same


def test_two_processes_appending_to_one_ledger_lose_no_call(tmp_path, workspace):
    """Any instance may serve a session: a writer and a follower both record their calls."""
    store = tmp_path / "store"
    first = StdioClient(sidecar_command("--store-dir", str(store)))
    first.initialize(workspace, options=OPTIONS)
    second = StdioClient(sidecar_command("--store-dir", str(store)))
    second.initialize(workspace, options=OPTIONS)
    try:
        roles = {first.request("lore/status", {})["role"], second.request("lore/status", {})["role"]}
        assert roles == {"writer", "follower"}
        a = drive(first, "s-one", 6, report=False)[0]
        b = drive(second, "s-two", 6, report=False)[0]
        for c in (first, second):  # each instance reads both processes' rows
            total = c.request("lore/status", {})["savings"]["total"]
            assert total["calls"] == 12 and total["usd"] == pytest.approx(a + b, abs=1e-6)
    finally:
        first.close()
        second.close()


def test_the_savings_table_and_the_status_line_on_a_terminal(sidecar):
    from tests.e2e.test_terminal import ENV, on_a_terminal

    c, store, ws = sidecar
    drive(c, "s-table", 4, report=True)
    total = c.request("lore/status", {})["savings"]["total"]
    wide = {**ENV, "COLUMNS": "240"}
    code, out = on_a_terminal(["savings", "--store-dir", str(store), "--workspace", str(ws)], env=wide)
    assert code == 0, out
    today = c.request("lore/status", {})["savings"]["days"][0]["day"]
    assert "lore-sidecar savings per day" in out and today in out
    assert "mixed (2 reported, 2 estimated)" in out and f"${total['usd']:,.4f} sent vs ${total['l0Usd']:,.4f} at L0" in out
    code, out = on_a_terminal(["savings", "--sessions", "--store-dir", str(store), "--workspace", str(ws)], env=wide)
    assert code == 0 and "lore-sidecar savings per session" in out and "s-table" in out
    code, out = on_a_terminal(["status", "--store-dir", str(store), "--workspace", str(ws)], env=wide)
    assert code == 0 and "savings, 7 days" in out and f"${total['usd']:,.4f} sent" in out


# -- independent review, hunt round 6 (tools/rounds/2026-12-07-hunt6.py) ----------------------------

def test_l0_reads_the_last_body_from_cache_only_while_the_cache_is_warm(sidecar):
    """docs/context.md: above layer 0, L0 is estimated as a call at L0 would be: "the last
    call's body read from cache within the TTL, the rest written". A call that comes after
    the cache expired (more than 5 minutes on) would have read nothing at L0 either: its L0
    writes the whole body. The control: a warm call's L0 reads from cache."""
    c, _, _ = sidecar
    msgs: list[dict] = []
    t0 = 1_780_000_000
    for k in range(60):
        msgs += [*turn(k), {"role": "user", "content": [{"type": "text", "text": f"continue {k}"}]}]
        at = t0 + 60 * k + (900 if k == 59 else 0)  # a minute apart; the last a quarter hour after
        r = c.request("lore/assembleContext", {"sessionId": "s-cold-l0", "body": body(msgs),
                                               "at": datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")},
                      timeout=60)
        if k == 58:
            warm = r
        msgs.pop()
    assert warm["layer"] >= 1 and warm["l0"]["cacheReadTokens"] > 0  # the control: warm, read
    assert r["layer"] >= 1 and r["l0"]["inputTokens"] > 0
    assert r["l0"]["cacheReadTokens"] == 0 and r["l0"]["cacheWriteTokens"] == r["l0"]["inputTokens"], r["l0"]
