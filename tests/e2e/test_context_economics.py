"""Context assembly's budget and stubs over stdio (issue 36): the raw window never passes
`maxLayer0Tokens`; the prefix names every evicted file path, error line, command (with its
exit status) and user request; the prefix grows only by appended parts between compactions;
a short session stays at L0, so it never costs more than L0."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from lore_sidecar.client import StdioClient
from lore_sidecar.engine.context.bodies import strip_marks


def turn(k: int) -> list[dict]:
    """The user asks, the model runs a failing test, the tool answers with an error, the model replies."""
    output = "\n".join([*(f"collected line {i} of run {k}" for i in range(60)),
                        f"E   ModuleNotFoundError: No module named 'helper_{k}'", "Exit code 2"])
    return [
        {"role": "user", "content": [{"type": "text", "text": f"please fix case {k} in pkg/mod_{k}.py"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"tu{k}", "name": "Bash",
                                           "input": {"command": f"pytest tests/test_case_{k}.py -q"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"tu{k}", "content": output, "is_error": True}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"Case {k} needs helper_{k}; moving on."}]},
    ]


def body(messages: list[dict]) -> dict:
    return {"model": "claude-sonnet-4-5", "max_tokens": 8000,
            "system": [{"type": "text", "text": "You are a coding agent. " * 200}], "messages": messages}


def run(c: StdioClient, session: str, turns: int):
    """Each call of a growing session: (the history sent in, the answer)."""
    msgs: list[dict] = []
    for k in range(turns):
        msgs += turn(k)
        msgs.append({"role": "user", "content": [{"type": "text", "text": f"continue {k}"}]})
        r = c.request("lore/assembleContext", {"sessionId": session, "body": body(msgs)}, timeout=60)
        yield list(msgs), r
        msgs.pop()


def raw_window(history: list[dict], sent: dict) -> list[dict]:
    """The messages sent verbatim from the history (the raw window)."""
    plain = strip_marks(sent["messages"])
    return [m for m in plain if m in history]


def tokens(obj) -> int:
    return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":"))) // 4


def test_the_raw_window_never_passes_max_layer0_tokens(sidecar):
    cap = 8000
    biggest_capped = biggest_default = 0
    for history, r in run(sidecar(maxLayer0Tokens=cap, minLayer0Tokens=3000), "s-cap", 60):
        raw = raw_window(history, r["body"])
        assert tokens(raw) <= cap + tokens(turn(0)), (len(history), tokens(raw))
        biggest_capped = max(biggest_capped, tokens(raw))
    for history, r in run(sidecar(), "s-default", 60):  # the control: by default it grows past that
        biggest_default = max(biggest_default, tokens(raw_window(history, r["body"])))
    assert biggest_default > cap + tokens(turn(0)) > biggest_capped


def test_the_prefix_names_every_evicted_path_error_command_and_request(sidecar):
    last = None
    for history, r in run(sidecar(maxLayer0Tokens=6000, minLayer0Tokens=2000), "s-stubs", 40):
        last = history, r
    history, r = last
    assert r["layer"] == 1
    sent = strip_marks(r["body"]["messages"])
    prefix = "\n".join(b["text"] for b in sent[0]["content"])
    raw = json.dumps(raw_window(history, r["body"]))
    evicted = [k for k in range(40) if f"tests/test_case_{k}.py" not in raw]
    assert len(evicted) > 20  # the control: most turns left the window
    for k in evicted:
        assert f"pkg/mod_{k}.py" in prefix, k
        assert f"error: E   ModuleNotFoundError: No module named 'helper_{k}'" in prefix, k
        assert f"$ pytest tests/test_case_{k}.py -q (exit 2)" in prefix, k
        assert f"user asked: please fix case {k} in pkg/mod_{k}.py" in prefix, k


def test_the_prefix_grows_only_by_appended_parts_between_compactions(sidecar):
    previous: list[dict] | None = None
    appended = 0
    for _, r in run(sidecar(maxLayer0Tokens=6000, minLayer0Tokens=2000), "s-append", 60):
        if r["layer"] == 0:
            continue
        parts = strip_marks(r["body"]["messages"][0]["content"])
        assert parts[0]["text"].startswith("<lore-context")
        if previous is not None and len(parts) > 1:
            # Not a compaction of the prefix: everything sent before is sent again, byte for byte.
            assert parts[: len(previous)] == previous, r["reason"]
            appended += len(parts) > len(previous)
        previous = parts
    assert appended >= 2  # the control: window moves did append parts


def test_a_short_session_stays_at_l0_and_a_capped_one_does_not(sidecar):
    """Never worse than L0 on a short session: ten calls of a growing history are passed
    through (the cost of L0, exactly). The control: the same calls under a small cap leave L0."""
    # A small pinned window, so there is something to evict: only the economics keep it at L0.
    layers = [r["layer"] for _, r in run(sidecar(minLayer0Tokens=2000), "s-short", 10)]
    assert layers == [0] * 10
    capped = [r["layer"] for _, r in run(sidecar(maxLayer0Tokens=4000, minLayer0Tokens=2000), "s-short-cap", 10)]
    assert max(capped) == 1


def test_the_budget_throttle_advises_a_delay_inside_the_cache_ttl_only_when_set(sidecar):
    """docs/context.md: with `throttleUsdPerHour` a session spending faster than that gets
    `delayMs`, capped so the call still reaches the provider inside the 5-minute TTL since
    its last call. The control: the same calls without the setting get no delay."""
    at = [f"2026-12-01T10:00:{2 * k:02d}Z" for k in range(12)]

    def delays(c: StdioClient, session: str) -> list[int]:
        msgs: list[dict] = []
        out = []
        for k in range(12):
            msgs += turn(k)
            out.append(c.request("lore/assembleContext", {"sessionId": session, "body": body(msgs), "at": at[k]},
                                 timeout=60)["delayMs"])
        return out

    throttled = delays(sidecar(throttleUsdPerHour=0.01), "s-throttled")
    assert throttled[0] == 0 and max(throttled) > 0, throttled  # the first calls stay under $0.01
    assert all(d <= (300 - 15 - 2) * 1000 for d in throttled), throttled
    assert delays(sidecar(), "s-free") == [0] * 12


def test_after_a_gap_within_the_hour_the_system_prompt_is_cached_for_an_hour(sidecar):
    """docs/context.md: once a session shows gaps past the 5-minute TTL but within the hour,
    the system prompt's breakpoint (ours: the harness set none) is written with a 1-hour TTL,
    chosen on a call that rewrites it anyway. The control: the same calls with a 1-minute gap
    keep the 5-minute breakpoint."""
    def system_mark(session: str, gap_s: int, c: StdioClient) -> dict:
        msgs: list[dict] = []
        t = 1_764_583_200  # 2025-12-01T10:00:00Z
        r = None
        for k in range(14):
            t += gap_s if k == 12 else 5
            msgs += turn(k)
            at = f"{datetime.fromtimestamp(t, UTC).isoformat().replace('+00:00', 'Z')}"
            r = c.request("lore/assembleContext", {"sessionId": session, "body": body(msgs), "at": at}, timeout=60)
        return r["body"]["system"][-1]["cache_control"]

    c = sidecar(minLayer0Tokens=2000)
    assert system_mark("s-gap", 20 * 60, c) == {"type": "ephemeral", "ttl": "1h"}
    assert system_mark("s-steady", 60, c) == {"type": "ephemeral"}


def test_delay_ms_is_in_milliseconds_capped_at_the_ttl_less_the_margin_and_the_gap(sidecar):
    """protocol.md: `delayMs` is milliseconds. Calls 2 s apart spending far past
    `throttleUsdPerHour` are each told to wait until the cache would die less the 15 s
    margin: exactly (300 - 15 - 2) x 1000 ms. The control: the first call (nothing spent
    yet, no last call) gets 0."""
    c = sidecar(throttleUsdPerHour=0.01)
    msgs: list[dict] = []
    got = []
    for k in range(8):
        msgs += turn(k)
        got.append(c.request("lore/assembleContext", {"sessionId": "s-ms", "body": body(msgs),
                                                      "at": f"2026-12-01T10:00:{2 * k:02d}Z"}, timeout=60)["delayMs"])
    assert got[0] == 0, got
    assert (300 - 15 - 2) * 1000 in got, got


def test_a_session_still_at_l0_gets_the_hour_long_system_breakpoint_after_a_gap(sidecar):
    """context.md: the 1-hour system breakpoint is chosen at L0 too (the harness set none):
    five calls of a short session, the last after a 20-minute gap, stay at L0 and the
    system prompt is marked for an hour. The control: the same calls with a 1-minute gap
    keep the 5-minute mark."""
    def last(session: str, gap_s: int, c: StdioClient) -> dict:
        msgs: list[dict] = []
        t = 1_764_583_200
        r = None
        for k in range(5):
            t += gap_s if k == 4 else 5
            msgs += turn(k)
            at = datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")
            r = c.request("lore/assembleContext", {"sessionId": session, "body": body(msgs), "at": at}, timeout=60)
        return r

    c = sidecar()
    gap, steady = last("s-l0-gap", 20 * 60, c), last("s-l0-steady", 60, c)
    assert gap["layer"] == steady["layer"] == 0
    assert gap["body"]["system"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert steady["body"]["system"][-1]["cache_control"] == {"type": "ephemeral"}


def test_the_system_prompts_ttl_changes_only_on_a_call_that_rewrites_it(sidecar):
    """context.md: the 1-hour TTL is chosen only on a call that writes the system prompt
    anyway (the first, or one after the cache died), so switching never costs an extra
    write. A session whose early gaps (two past the hour, two of 20 minutes) make the hour
    not pay when last chosen (call 8) goes on with 5-second gaps until its rhythm would pay
    (call 30): a warm call keeps the 5-minute mark. The control: the same session whose
    30th call comes after a 20-minute gap (the cache died) takes the hour there."""
    def last_mark(session: str, final_gap: int, c: StdioClient) -> dict:
        gaps = {1: 7_200, 2: 7_200, 3: 1_200, 7: 1_200, 29: final_gap}
        msgs: list[dict] = []
        t = 1_764_583_200
        r = None
        for k in range(30):
            t += gaps.get(k, 5)
            msgs += turn(k)
            at = datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")
            r = c.request("lore/assembleContext", {"sessionId": session, "body": body(msgs), "at": at}, timeout=60)
        return r["body"]["system"][-1]["cache_control"]

    c = sidecar()
    assert last_mark("s-warm-end", 5, c) == {"type": "ephemeral"}
    assert last_mark("s-cold-end", 1_200, c) == {"type": "ephemeral", "ttl": "1h"}  # control
