"""Independent review round (issue 35: "a fresh independent round, planted by someone who did
not write the tests: >= 90% caught"), fresh round 3: context assembly (engine/context: the
dialects, the digest parts, the breakpoints, the layers, calibration and busts), the gateway
(sessions, usage feedback), the ask agent (the ledger's re-hashing and saving) and the wire
(the usage converter of `lore/recordUsage`, recall's params check).

Method: the bugs were chosen from the product code and README.md, docs/context.md,
docs/protocol.md, docs/security.md and docs/architecture.md ("Promises, guarded", its test
names ignored) before any test was read; tools/mutations.py and the earlier rounds were read
only for the format and to leave out bugs already planted (same text or same idea). The test
files were chosen by name and by `grep -l <module or function>` only.

First run (`python3 tools/mutations.py <the 18 names>`, once, 2026-12-04 02:06-02:35 UTC, 2
cores at load 4 rising to 17 with other helpers' suites): 7 of 18 caught (39%); survived:
f3a-prefix-breakpoint-on-the-ack, f3a-l4-never-reached, f3a-busts-never-reset,
f3a-calibration-takes-the-outlier, f3a-window-opens-on-mixed-tool-results,
f3a-digest-keeps-the-oldest, f3a-responses-outputs-read-from-content, f3a-gw-stream-flag-misread,
f3a-gw-delta-zeros-overwrite-start, f3a-ask-hash-cache-by-size, f3a-wire-blank-query-accepted.
No stale or error outcome.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: independent, fresh round 3: context assembly, gateway, ask, wire (issue 35)"
CTX_REQ, CTX_BODIES = "lore_sidecar/engine/context/requests.py", "lore_sidecar/engine/context/bodies.py"
CTX_STUBS = "lore_sidecar/engine/context/stubs.py"
SESS, PROXY = "lore_sidecar/gateway/sessions.py", "lore_sidecar/gateway/proxy.py"
ASK_REQ = "lore_sidecar/engine/ask/requests.py"
CTX_RPC, CONV = "lore_sidecar/rpc/features/context.py", "lore_sidecar/wire/converter.py"

CTX = "tests/e2e/test_context_assembly.py"
ECON = "tests/e2e/test_context_economics.py"
ECON_UNIT = "tests/unit/test_context_window_economics.py"
GW, GW_PEERS = "tests/integration/test_gateway.py", "tests/integration/test_gateway_peers.py"
GW_HARNESSES = "tests/e2e/test_gateway_harnesses.py"
ASK_E2E, ASK_RULES = "tests/e2e/test_ask.py", "tests/unit/test_ask_rules.py"
WIRE, STDIO = "tests/unit/test_settings_and_wire.py", "tests/integration/test_stdio_contract.py"

ROUND = [
    # -- context assembly ------------------------------------------------------------------------
    # The digest keeps "every command with its exit status": the exit code read from the
    # output is dropped, only ok/error remains.
    Mutation("f3a-digest-exit-code-dropped", CTX_STUBS,
             '        return f"exit {m.group(1)}"', '        return "error" if flagged else "ok"',
             (CTX, ECON), by=BY),
    # "The prefix only grows by appended parts": the append branch taken only when the layer
    # changed, so every ordinary move recompacts the prefix into one new part 1.
    Mutation("f3a-prefix-recompacted-every-move", CTX_REQ,
             "0 < upto < start and state.layer == p.layer", "0 < upto < start and state.layer != p.layer",
             (CTX, ECON), by=BY),
    # "the prefix's breakpoint sits on its last part": placed one message later (on the
    # acknowledgement), so a move's new part leaves no cached entry to read the old parts from.
    Mutation("f3a-prefix-breakpoint-on-the-ack", CTX_REQ,
             "boundary=len(head) if start > 0 else None", "boundary=len(head) + 1 if start > 0 else None",
             (CTX, ECON), by=BY),
    # "The system prompt gets a breakpoint of its own when the harness set none" (at L1): only
    # a string system prompt is looked at, so a block list never gets one.
    Mutation("f3a-l1-system-gets-no-breakpoint", CTX_REQ,
             "if not kept and isinstance(system, list) and system and isinstance(system[-1], dict):",
             "if not kept and isinstance(system, str) and system and isinstance(system[-1], dict):",
             (CTX, ECON, GW), by=BY),
    # L3 stubs "every tool output before the current model call": the in-flight results of the
    # current call are stubbed too.
    Mutation("f3a-l3-stubs-the-in-flight-results", CTX_REQ,
             "else (calls[-1] if calls else 0)", "else (len(window) if calls else 0)",
             (CTX, ECON), by=BY),
    # L4 keeps "only the current model call": an off-by-one makes L4 behave as L3.
    Mutation("f3a-l4-never-reached", CTX_REQ,
             "        if p.layer >= 4 and calls:", "        if p.layer > 4 and calls:",
             (CTX, ECON), by=BY),
    # "two calls in a row read less than half": a good call in between no longer resets the
    # count, so two busts far apart stop compression.
    Mutation("f3a-busts-never-reset", CTX_REQ,
             "read < 0.5 * expected else 0", "read < 0.5 * expected else state.busts",
             (CTX, ECON), by=BY),
    # Calibration: "the latest plausible ratio, or the median of the last five when the latest
    # is an outlier": the outlier taken as it is.
    Mutation("f3a-calibration-takes-the-outlier", CTX_REQ,
             "chosen = ratio if abs(ratio - median) <= 0.25 * median else median", "chosen = ratio",
             (CTX, ECON), by=BY),
    # "A window starts at a user's own message": an Anthropic user message carrying tool
    # results beside its text counted as one, so a window can open on results whose calls
    # were evicted.
    Mutation("f3a-window-opens-on-mixed-tool-results", CTX_BODIES,
             '        if api == ANTHROPIC and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in _blocks(item)):\n'
             "            continue\n        out.append(i)",
             "        out.append(i)",
             (CTX, ECON, GW_HARNESSES), by=BY),
    # "the newest facts kept first" when the parts pass the prefix budget: the oldest kept.
    Mutation("f3a-digest-keeps-the-oldest", CTX_STUBS,
             "    for line in reversed(lines):\n        safe = inert(line)\n        if len(safe) + 1 > room_chars:\n"
             "            continue\n        kept.append(safe)\n        room_chars -= len(safe) + 1\n"
             "    return list(reversed(kept)), len(lines) - len(kept)",
             "    for line in lines:\n        safe = inert(line)\n        if len(safe) + 1 > room_chars:\n"
             "            continue\n        kept.append(safe)\n        room_chars -= len(safe) + 1\n"
             "    return kept, len(lines) - len(kept)",
             (CTX, ECON), by=BY),
    # The Responses dialect: a function_call_output's text read from `content` (as in Chat),
    # so the digest of a Codex session loses every command's output, status and error lines.
    Mutation("f3a-responses-outputs-read-from-content", CTX_STUBS,
             'return [(str(item.get("call_id", "")), render_content(item.get("output")), False)]',
             'return [(str(item.get("call_id", "")), render_content(item.get("content")), False)]',
             (CTX, ECON, GW_HARNESSES), by=BY),
    # -- the gateway ---------------------------------------------------------------------------------
    # "Claude Code's metadata.user_id.session_id": read under a camelCase key, so every Claude
    # Code session falls back to the hash of how it began.
    Mutation("f3a-gw-claude-session-id-camel-case", SESS,
             'named = json.loads(user).get("session_id") if user.startswith("{") else None',
             'named = json.loads(user).get("sessionId") if user.startswith("{") else None',
             (GW, GW_PEERS, GW_HARNESSES), by=BY),
    # A streamed call's usage is read from its events: the stream flag read under a wrong key,
    # so a stream is buffered as one JSON document that never parses (no usage fed back).
    Mutation("f3a-gw-stream-flag-misread", PROXY,
             'stream = bool(body.get("stream"))', 'stream = bool(body.get("streaming"))',
             (GW, GW_PEERS), by=BY),
    # message_delta's zero fields overwrite message_start's cache counts (the feedback then
    # reports no cache read, and a healthy session looks busted).
    Mutation("f3a-gw-delta-zeros-overwrite-start", SESS,
             'usage.update({k: v for k, v in _anthropic(e.get("usage") or {}).items() if v})',
             'usage.update(_anthropic(e.get("usage") or {}))',
             (GW, GW_PEERS), by=BY),
    # -- the ask agent ------------------------------------------------------------------------------
    # "a fact whose file changed is shown stale": the hash cache keyed on size and inode only,
    # so an edit of the same length keeps the old hash.
    Mutation("f3a-ask-hash-cache-by-size", ASK_REQ,
             "stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)", "stamp = (st.st_size, st.st_ino)",
             (ASK_E2E, ASK_RULES), by=BY),
    # "Another process's facts survive ours": the save writes this window's ledger alone.
    Mutation("f3a-ask-save-drops-other-processes-facts", ASK_REQ,
             "merged = w.ledger + tuple(f for f in map(lg.from_json, saved.get(\"ledger\") or []) if f.id not in ours)",
             "merged = w.ledger",
             (ASK_E2E, ASK_RULES), by=BY),
    # -- the wire ------------------------------------------------------------------------------------
    # `lore/recordUsage`'s usage: cache reads and cache writes swapped on the way in.
    Mutation("f3a-wire-usage-read-write-swapped", CTX_RPC,
             '"cache_creation_input_tokens": u.cache_creation_input_tokens,\n'
             '                     "cache_read_input_tokens": u.cache_read_input_tokens',
             '"cache_creation_input_tokens": u.cache_read_input_tokens,\n'
             '                     "cache_read_input_tokens": u.cache_creation_input_tokens',
             (CTX, GW, WIRE), by=BY),
    # `lore/recall` with a blank query is -32602 ("params.query: must not be empty"): only the
    # empty string refused, whitespace let through.
    Mutation("f3a-wire-blank-query-accepted", CONV,
             "if isinstance(value, t.RecallParams) and not value.query.strip():",
             "if isinstance(value, t.RecallParams) and not value.query:",
             (WIRE, STDIO), by=BY),
]
