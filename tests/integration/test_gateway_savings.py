"""The gateway's savings figures (issue 36 item 5): calls whose answer carried usage are
"reported", priced from that usage (checked here by hand against the public price list);
calls whose upstream reported none stay "estimated" - the control, through the same gateway
with the same bodies. Either way `lore-sidecar savings` totals exactly its per-call rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from tests.integration.test_gateway import BODY, post, start
from tests.support.fake_models import FakeModels, Raw

# claude-sonnet-4-5, USD per token
IN, OUT = 3e-6, 15e-6


def savings(store, ws, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "lore_sidecar", "savings", "--json", "--store-dir", str(store),
                          "--workspace", str(ws), *args], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "LORE_DISTILLER": "off"})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def no_usage(api: str, body: dict) -> Raw:
    """An answer in the Messages shape with no `usage` at all (a proxy that strips it)."""
    answer = {"id": "msg_plain", "type": "message", "role": "assistant", "model": body.get("model"),
              "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn", "stop_sequence": None}
    return Raw(200, [("content-type", "application/json")], [json.dumps(answer).encode()])


def conversation(n: int) -> list[dict]:
    msgs = []
    for k in range(n):
        msgs += [{"role": "user", "content": [{"type": "text", "text": f"question {k} about the invoices module"}]},
                 {"role": "assistant", "content": [{"type": "text", "text": f"answer {k}"}]}]
    return [*msgs, {"role": "user", "content": [{"type": "text", "text": "and now?"}]}]


def through(url: str, session: str, calls: int, stream: bool = False) -> None:
    for n in range(calls):
        post(url + "/v1/messages", {**BODY, "stream": stream, "messages": conversation(n)}, **{"x-lore-session": session})


def settled(store, ws, session: str, reported: int) -> list[dict]:
    """The session's per-call rows once the gateway fed back what it will (it does so after
    each answer, off the reply's path); a bounded wait for the figures, not a timing check."""
    deadline = time.monotonic() + 60
    while True:
        calls = savings(store, ws, "--calls", "--session", session)["calls"]
        if sum(f["source"] == "reported" for f in calls) >= reported or time.monotonic() > deadline:
            return calls
        time.sleep(0.2)


def test_usage_the_upstream_reported_makes_reported_figures_and_none_leaves_them_estimated(tmp_path, workspace):
    store = tmp_path / "store"
    with FakeModels(lambda api, body: "hi there") as reporting, FakeModels(no_usage) as silent:
        proc, url = start(store, workspace, reporting.url)
        try:
            through(url, "gw-reported", 3)
            through(url, "gw-streamed", 3, stream=True)  # usage from message_start and message_delta
            for n in range(2):  # OpenAI's Responses API (Codex), priced as gpt-5
                post(url + "/v1/responses", {"model": "gpt-5", "stream": True, "input": [
                    {"role": "user", "content": [{"type": "input_text", "text": f"question {k}"}]} for k in range(n + 1)]},
                     **{"x-lore-session": "gw-responses"})
        finally:
            proc.terminate()
            proc.wait(10)
        proc, url = start(store, workspace, silent.url)
        try:
            through(url, "gw-silent", 3)
        finally:
            proc.terminate()
            proc.wait(10)
        assert len(reporting.requests) == 8 and len(silent.requests) == 3

    rep = settled(store, workspace, "gw-reported", 3)
    streamed = settled(store, workspace, "gw-streamed", 3)
    assert [f["source"] for f in rep] == [f["source"] for f in streamed] == ["reported"] * 3
    # The fake answers input_tokens 10 and output_tokens len("hi there") // 4 = 2, no cache fields
    for f in rep + streamed:
        assert (f["inputTokens"], f["cacheReadTokens"], f["cacheWriteTokens"], f["outputTokens"]) == (10, 0, 0, 2)
        assert abs(f["usd"] - (10 * IN + 2 * OUT)) < 1e-9
        assert f["layer"] == 0 and f["l0Usd"] == f["usd"] and f["savedUsd"] == 0  # at L0 the call is L0
        assert f["harness"] == "gateway"

    responses = settled(store, workspace, "gw-responses", 2)
    assert [f["source"] for f in responses] == ["reported"] * 2
    for f in responses:  # input_tokens 10 (none cached), output 2, at $1.25 / $10 per MTok
        assert (f["inputTokens"], f["cacheReadTokens"], f["outputTokens"], f["model"]) == (10, 0, 2, "gpt-5")
        assert abs(f["usd"] - (10 * 1.25e-6 + 2 * 10e-6)) <= 5.1e-7  # rounded to the micro-dollar

    silent_calls = settled(store, workspace, "gw-silent", 0)
    assert len(silent_calls) == 3 and {f["source"] for f in silent_calls} == {"estimated"}
    assert all(f["outputTokens"] == 0 and f["usd"] > 0 for f in silent_calls)  # the assembler's estimate, priced

    report = savings(store, workspace, "--sessions")
    sessions = {s["sessionId"]: s for s in report["sessions"]}
    assert sessions["gw-reported"]["source"] == "reported" and sessions["gw-silent"]["source"] == "estimated"
    for name, calls in (("gw-reported", rep), ("gw-silent", silent_calls)):
        s = sessions[name]
        assert s["calls"] == 3
        assert abs(s["usd"] - sum(f["usd"] for f in calls)) < 1e-9
        assert abs(s["l0Usd"] - sum(f["l0Usd"] for f in calls)) < 1e-9
        assert s["sentTokens"] == sum(f["sentTokens"] for f in calls)
    assert report["total"]["source"] == "mixed" and report["total"]["reportedCalls"] == 8


def cached(api: str, body: dict) -> Raw:
    """A whole Messages answer whose usage tells cache reads and cache writes apart (300 read,
    50 written): the two must reach the store as what they are."""
    answer = {"id": "msg_cached", "type": "message", "role": "assistant", "model": body.get("model"),
              "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn", "stop_sequence": None,
              "usage": {"input_tokens": 10, "cache_read_input_tokens": 300, "cache_creation_input_tokens": 50,
                        "output_tokens": 2}}
    return Raw(200, [("content-type", "application/json")], [json.dumps(answer).encode()])


def test_cache_reads_and_cache_writes_the_upstream_reported_are_recorded_as_such(tmp_path, workspace):
    """The gateway's feedback names each usage field as the provider did: 300 tokens read from
    the cache are cache reads, 50 written are cache writes (swapped, a warm cache reads as a
    cold one and every figure built on it is wrong). Priced by hand from the price list:
    input $3, cache read $0.30, cache write $3.75 per MTok (claude-sonnet-4-5)."""
    store = tmp_path / "store"
    with FakeModels(cached) as fake:
        proc, url = start(store, workspace, fake.url)
        try:
            through(url, "gw-cached", 2)
        finally:
            proc.terminate()
            proc.wait(10)
        assert len(fake.requests) == 2
    calls = settled(store, workspace, "gw-cached", 2)
    assert [f["source"] for f in calls] == ["reported"] * 2
    for f in calls:
        assert (f["inputTokens"], f["cacheReadTokens"], f["cacheWriteTokens"], f["outputTokens"]) == (10, 300, 50, 2)
        assert abs(f["usd"] - (10 * IN + 300 * 0.3e-6 + 50 * 3.75e-6 + 2 * OUT)) <= 5.1e-7
