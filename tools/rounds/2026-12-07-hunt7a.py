"""Independent review round (issue 35), hunt round 7a: bugs over the gateway, context
assembly, the ask agent and the dashboard guard, planted pre-emptively before the outside
review plants its own.

Method: the bugs were chosen from the product code (lore_sidecar/) and its docstrings only,
with README.md and docs/ for what is promised, before any test was opened; tools/mutations.py
and the earlier rounds under tools/rounds/ were read only for the format and to leave out a
bug already planted (same text or same idea). The guarding test files were chosen by file
name and `grep -l <module or function name> tests/` only. Each bug aims at a non-default
shape where the earlier rounds' survivors clustered: a header never read, an error path, a
second call in one turn, a multi-block system prompt, a per-request option, a second page.

First run (`python tools/mutations.py <names>`, once per bug, 12:31-13:19 UTC, on 2 cores at
load average 15-37 with other engineers' suites). The bugs were run against a copy of the
tree as it was before any test of this round was written (`git archive` of the round's first
commit), since the tests added meanwhile live in the same files. 38 bugs in two batches (33,
then 5 more chosen the same way): 29 caught (76%), 9 survived. No stale or error outcome.
- gateway 8/10: survived h7a-gw-host-header-forwarded, h7a-gw-upstream-trailing-slash-kept.
- context assembly 6/9: survived h7a-ctx-l0-system-mark-on-its-first-block,
  h7a-ctx-later-system-entries-pulled-to-the-head, h7a-ctx-rewritten-history-unnoticed.
- ask agent 9/13: survived h7a-ask-changed-files-skip-new-files, h7a-ask-glob-by-path-only,
  h7a-ask-grep-context-ignored, h7a-ask-grep-walks-git-and-node-modules.
- dashboard 6/6.

The survivors share the pattern of the earlier rounds: a default shape in every test (a
one-block system prompt, a glob that matches as a path anyway, a changed file that git
already tracks, no option passed), or a fake that hides the bug (http.server folds a leading
"//" of a path; the fake upstream answers any Host). Each survivor is commented at its entry
with the test that now catches it, listed first among its tests; each new test was run
against the planted bug and fails, and passes on the unplanted tree.

Rerun with the tests added (`python tools/mutations.py <the 9 survivors>`, from the worktree,
13:17-13:27 UTC, load average 14-37): 9 of 9 caught. Round after the rerun: 38 of 38 caught.
On the unplanted tree the touched files pass whole (`pytest tests/unit
tests/integration/test_ask_tools.py tests/integration/test_gateway_peers.py
tests/integration/test_context_shapes.py tests/e2e/test_malformed_models.py`: 828 passed).
Three more tests guard bugs the first run caught already, on shapes no test drove: a string
"false" (tests/unit/test_toolspec.py GOOD), the span a Read records and a remembered fact's
redaction (test_ask_tools.py), the latest draft at the turn cap (test_malformed_models.py).

A real bug found on the way (not planted): the gateway read a streamed answer's usage only
when its lines ended in LF; a server or proxy that writes CRLF (the SSE format allows CRLF,
LF and CR) had no complete event, so no usage was recorded for it. Fixed in
gateway/sessions.py `sse_events`; tests/unit/test_gateway_sse.py failed before the fix (8 of
8) and passes after.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "hunt7a (pre-emptive hunt, own tests)"

PROXY, SESS = "lore_sidecar/gateway/proxy.py", "lore_sidecar/gateway/sessions.py"
CTX_REQ, BODIES = "lore_sidecar/engine/context/requests.py", "lore_sidecar/engine/context/bodies.py"
PRICES = "lore_sidecar/engine/context/prices.py"
SPEC, TOOLS, LOOP = "lore_sidecar/engine/ask/toolspec.py", "lore_sidecar/engine/ask/tools.py", "lore_sidecar/engine/ask/loop.py"
ASK_REQ = "lore_sidecar/engine/ask/requests.py"
UI_GUARD = "lore_sidecar/ui/guard.py"
ASK_WINDOW = "lore_sidecar/engine/ask/window.py"

GW = ("tests/integration/test_gateway.py", "tests/integration/test_gateway_peers.py",
      "tests/integration/test_gateway_callers.py")
GW_CODEX = "tests/integration/test_gateway_codex.py"
CTX_UNIT = ("tests/unit/test_context_window_economics.py", "tests/unit/test_context_prices.py")
CTX_INT = ("tests/integration/test_context_breakpoints.py", "tests/integration/test_context_calibration.py")
CTX_E2E = ("tests/e2e/test_context_assembly.py", "tests/e2e/test_context_layers.py")
ASK_UNIT = ("tests/unit/test_toolspec.py", "tests/unit/test_ask_rules.py")
ASK_TOOLS, MALFORMED, ASK_E2E = "tests/integration/test_ask_tools.py", "tests/e2e/test_malformed_models.py", "tests/e2e/test_ask.py"
HOSTILE = "tests/integration/test_hostile_git.py"
# The tests this round added for its survivors (each listed first at the entries it guards).
UPSTREAM_SEES = "tests/integration/test_gateway_peers.py::test_the_upstream_sees_the_request_a_direct_call_makes_host_and_headers_alike"
SLASH = "tests/integration/test_gateway_peers.py::test_an_upstream_given_with_a_trailing_slash_gets_the_same_paths"
SHAPES = "tests/integration/test_context_shapes.py"
OPTIONS = "tests/integration/test_ask_tools.py::test_each_tool_option_the_schema_offers_changes_the_answer_as_documented"
DASH = ("tests/integration/test_dashboard_access.py", "tests/integration/test_dashboard_pages.py")

ROUND = [
    # --- gateway (9) -----------------------------------------------------------------------------
    # docs/protocol.md: `x-lore-session` names the session, whatever else the harness sends.
    Mutation("h7a-gw-x-lore-session-after-the-harness-id", SESS,
             'explicit = headers.get("x-lore-session") or headers.get("session_id")',
             'explicit = headers.get("session_id") or headers.get("x-lore-session")', GW, by=BY),
    # Every method passes: GET /v1/models, DELETE ... go upstream as they came.
    Mutation("h7a-gw-every-call-forwarded-as-post", PROXY,
             "self.client.request(request.method, target,", 'self.client.request("POST", target,', GW, by=BY),
    # The gateway's own Host must not reach the provider (its virtual host / TLS name).
    # SURVIVED the first run (the fake upstream answered whatever Host it got). Now caught by
    # tests/integration/test_gateway_peers.py::test_the_upstream_sees_the_request_a_direct_call_makes_host_and_headers_alike.
    Mutation("h7a-gw-host-header-forwarded", PROXY,
             'HOP = {"host", "content-length",', 'HOP = {"content-length",', (UPSTREAM_SEES, *GW), by=BY),
    # An upstream given with a trailing slash ("http://proxy/") must not make "//v1/messages".
    # SURVIVED the first run: http.server folds a leading "//" of a path into "/", so the fake
    # upstream never showed it. The fake now keeps each request line (tests/support/fake_models.py
    # `request_lines`); caught by tests/integration/test_gateway_peers.py::test_an_upstream_given_with_a_trailing_slash_gets_the_same_paths.
    Mutation("h7a-gw-upstream-trailing-slash-kept", PROXY,
             'self.upstream = upstream.rstrip("/") if upstream else None',
             "self.upstream = upstream if upstream else None", (SLASH, *GW), by=BY),
    # An unreachable provider is an error the harness retries, never a 200.
    Mutation("h7a-gw-unreachable-upstream-answers-200", PROXY,
             "                                     status=502)", "                                     status=200)",
             GW, by=BY),
    # A stream's usage spans chunks (message_start in one, message_delta in a later one).
    Mutation("h7a-gw-usage-events-of-the-last-chunk-only", PROXY,
             "events += [e for e in found if _usage_event(e)]", "events = [e for e in found if _usage_event(e)]",
             GW, by=BY),
    # SSE allows "data:{...}" without the space.
    Mutation("h7a-gw-sse-data-without-space-unread", SESS,
             "payload = line[5:].strip()", "payload = line[6:].strip()", GW, by=BY),
    # The Responses stream's usage arrives in response.completed (inside "response").
    Mutation("h7a-gw-responses-stream-usage-unread", PROXY,
             '("message_start", "message_delta", "response.completed")', '("message_start", "message_delta")',
             (GW_CODEX, *GW), by=BY),
    # The provider's rate-limit and retry headers reach the harness (it backs off by them).
    Mutation("h7a-gw-retry-after-dropped", PROXY,
             'REPLY_HOP = {"transfer-encoding",', 'REPLY_HOP = {"retry-after", "transfer-encoding",', GW, by=BY),
    # --- context assembly (8) -----------------------------------------------------------------------
    # A system prompt of several blocks: the breakpoint closes the whole of it (the last block).
    # SURVIVED the first run (every test's system prompt was one block). Now caught by
    # tests/integration/test_context_shapes.py::test_anthropic_breakpoints_close_the_last_block_are_the_ones_reported_and_roles_alternate.
    Mutation("h7a-ctx-l0-system-mark-on-its-first-block", CTX_REQ,
             'out["system"] = [*system[:-1], {**system[-1], "cache_control": mark}]',
             'out["system"] = [{**system[0], "cache_control": mark}, *system[1:]]', (SHAPES, *CTX_INT, *CTX_E2E), by=BY),
    # The breakpoint reported is the breakpoint sent.
    Mutation("h7a-ctx-l0-last-call-tail-reported-not-sent", CTX_REQ,
             "                out[\"messages\"][last_tail] = b.mark_last_block(conv[last_tail])\n", "",
             (*CTX_INT, *CTX_E2E), by=BY),
    # A message of many blocks (parallel tool results): the breakpoint closes the last one.
    Mutation("h7a-ctx-mark-on-the-first-block", BODIES,
             '        blocks[-1] = {**blocks[-1], "cache_control": MARK}',
             '        blocks[0] = {**blocks[0], "cache_control": MARK}', (*CTX_INT, *CTX_E2E), by=BY),
    # Roles alternate: an acknowledgement follows the prefix only before a user-side item.
    Mutation("h7a-ctx-ack-inverted", CTX_REQ,
             "if window and b.opens_with_user(api, window[0]) else []",
             "if window and not b.opens_with_user(api, window[0]) else []", (*CTX_INT, *CTX_E2E), by=BY),
    # The harness's own system/developer messages stay first, whole, at every layer.
    Mutation("h7a-ctx-leading-system-evicted", CTX_REQ,
             # (re-expressed after carryHarnessSummary put the summary in the prefix message)
             "items = [*head, b.prefix_message(api, [summary, *parts] if summary else list(parts)), *ack, *window]",
             "items = [b.prefix_message(api, [summary, *parts] if summary else list(parts)), *ack, *window]",
             (*CTX_INT, *CTX_E2E), by=BY),
    # Only the system entries the conversation starts with are kept ahead of the prefix.
    # SURVIVED the first run (no test sent a developer entry after the first user turn). Now caught
    # by tests/integration/test_context_shapes.py::test_openai_leading_system_entries_stay_first_whole_and_once_and_a_later_one_is_not_pulled_ahead.
    Mutation("h7a-ctx-later-system-entries-pulled-to-the-head", BODIES,
             '        if role_of(api, item) != "system":\n            break\n',
             '        if role_of(api, item) != "system":\n            continue\n', (SHAPES, *CTX_INT, *CTX_E2E), by=BY),
    # A rewritten history (the harness compacted) places the window again.
    # SURVIVED the first run (no test rewrote a history longer than the window's start). Now caught
    # by tests/integration/test_context_shapes.py::test_a_history_the_harness_rewrote_reaches_the_model.
    Mutation("h7a-ctx-rewritten-history-unnoticed", CTX_REQ,
             "        return Plan(p.layer, window_for(sizes, starts, pinned), True, REWRITTEN)",
             "        return p", (SHAPES, *CTX_INT, *CTX_E2E), by=BY),
    # The longest matching model prefix wins (claude-opus-4-5 is not priced as claude-opus-4).
    Mutation("h7a-ctx-price-shortest-prefix", PRICES,
             "key=len, default=None)", "key=lambda k: -len(k), default=None)", (*CTX_UNIT, *CTX_INT), by=BY),
    # --- the ask agent (9) ----------------------------------------------------------------------------
    # A per-question deadline (`deadlineMs`) is the one the question gets.
    Mutation("h7a-ask-deadline-ms-ignored", ASK_REQ,
             "budget_s = (deadline_ms or self.s.deadline_ms) / 1000", "budget_s = self.s.deadline_ms / 1000",
             (ASK_E2E, MALFORMED), by=BY),
    # A remembered fact is redacted like everything the model reads.
    Mutation("h7a-ask-remembered-fact-unredacted", SPEC,
             'return Result("noted", fact=(redact(fact), sources))', 'return Result("noted", fact=(fact, sources))',
             (*ASK_UNIT, ASK_TOOLS, ASK_E2E), by=BY),
    # "false" as a string is false.
    Mutation("h7a-ask-string-false-is-true", SPEC,
             '{"true": True, "false": False}.get(value.lower(), _WRONG) if isinstance(value, str) else _WRONG',
             "bool(value) if isinstance(value, str) else _WRONG", (*ASK_UNIT, MALFORMED), by=BY),
    # The lines a Read covered, as recorded for the answer's sources and the ledger.
    Mutation("h7a-ask-read-span-one-past-the-end", SPEC,
             "lines = f\"{start}-{start + max(0, len(r['lines']) - 1)}\"", "lines = f\"{start}-{start + len(r['lines'])}\"",
             (*ASK_UNIT, ASK_TOOLS, ASK_E2E), by=BY),
    # git_search matches messages case-insensitively (documented: -i).
    Mutation("h7a-ask-git-search-case-sensitive", TOOLS,
             'f"--grep={query}", "-i"]', 'f"--grep={query}"]', (ASK_TOOLS, HOSTILE), by=BY),
    # get_changed_files lists new files too.
    # SURVIVED the first run (the control edited a tracked file only). Now caught by
    # tests/integration/test_ask_tools.py::test_each_tool_option_the_schema_offers_changes_the_answer_as_documented.
    Mutation("h7a-ask-changed-files-skip-new-files", TOOLS,
             '"--untracked-files=normal"', '"--untracked-files=no"', (OPTIONS, ASK_TOOLS, HOSTILE), by=BY),
    # Glob "test_*.py" finds tests/test_x.py (the name is matched as well as the path).
    # SURVIVED the first run ("*.py" matches "src/app.py" as a path too). Now caught by
    # tests/integration/test_ask_tools.py::test_each_tool_option_the_schema_offers_changes_the_answer_as_documented.
    Mutation("h7a-ask-glob-by-path-only", TOOLS,
             "if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(Path(rel).name, pattern):",
             "if fnmatch.fnmatch(rel, pattern):", (OPTIONS, ASK_TOOLS, *ASK_UNIT), by=BY),
    # Grep's context argument is honoured.
    # SURVIVED the first run (no test asked for context). Now caught by
    # tests/integration/test_ask_tools.py::test_each_tool_option_the_schema_offers_changes_the_answer_as_documented.
    Mutation("h7a-ask-grep-context-ignored", TOOLS,
             'f"-C{max(0, min(5, int(context)))}"', '"-C0"', (OPTIONS, ASK_TOOLS, *ASK_UNIT), by=BY),
    # A max_tokens stop cuts the LAST call of a turn; the earlier, complete ones run.
    Mutation("h7a-ask-max-tokens-cuts-the-first-call", LOOP,
             'if stop == "max_tokens" and i == n - 1:', 'if stop == "max_tokens" and i == 0:',
             (MALFORMED, *ASK_UNIT), by=BY),
    # The best answer so far is the LAST text the model wrote.
    Mutation("h7a-ask-best-answer-is-the-first-text", LOOP,
             "        if text.strip():\n            out.answer = text.strip()",
             "        if text.strip() and not out.answer:\n            out.answer = text.strip()",
             (MALFORMED, ASK_E2E, *ASK_UNIT), by=BY),
    # --- the dashboard (6) ------------------------------------------------------------------------------
    Mutation("h7a-ui-nosniff-dropped", UI_GUARD,
             '"X-Content-Type-Options": "nosniff", ', "", DASH, by=BY),
    Mutation("h7a-ui-frames-same-origin", UI_GUARD,
             '"X-Frame-Options": "DENY",', '"X-Frame-Options": "SAMEORIGIN",', DASH, by=BY),
    Mutation("h7a-ui-csp-default-self", UI_GUARD,
             "\"default-src 'none'; style-src", "\"default-src 'self'; style-src", DASH, by=BY),
    Mutation("h7a-ui-referrer-policy-dropped", UI_GUARD,
             '"Referrer-Policy": "no-referrer",\n', "\n", DASH, by=BY),
    # A page on another port of this machine is another origin.
    Mutation("h7a-ui-any-loopback-origin", UI_GUARD,
             'if origin is not None and origin not in {f"http://{h}" for h in hosts} and not (',
             'if origin is not None and not origin.startswith("http://127.0.0.1") and not (', DASH, by=BY),
    # The session cookie is the session's, not the printed token.
    Mutation("h7a-ui-cookie-compared-to-the-token", UI_GUARD,
             "secrets.compare_digest(cookie.encode(), access.session.encode())",
             "secrets.compare_digest(cookie.encode(), access.token.encode())", DASH, by=BY),
    # --- second batch (5), chosen the same way after the first batch ran -------------------------------
    # Codex signed in with ChatGPT posts to /v1/codex/responses: assembled like /v1/responses.
    Mutation("h7a-gw-codex-chatgpt-route-not-assembled", SESS,
             ', "/v1/codex/responses": "openai-responses"}', "}", (GW_CODEX, *GW), by=BY),
    # A prompt forced to a higher layer (prompt too long) gets a smaller prefix too.
    Mutation("h7a-ctx-prefix-budget-never-shrinks", CTX_REQ,
             "PREFIX_TOKENS = {1: 6000, 2: 6000, 3: 1000, 4: 500}", "PREFIX_TOKENS = {1: 6000, 2: 6000, 3: 6000, 4: 6000}",
             (*CTX_INT, *CTX_E2E, *CTX_UNIT), by=BY),
    # The ask window's history breakpoint closes the history (the next question reads it).
    Mutation("h7a-ask-history-breakpoint-one-early", ASK_WINDOW,
             "    for i in {history_len - 1, len(out) - 1}:", "    for i in {history_len - 2, len(out) - 1}:",
             (ASK_E2E, *ASK_UNIT), by=BY),
    # Grep skips .git, node_modules and the other tool folders.
    # SURVIVED the first run (no test project had node_modules, and no grep looked for the commit's
    # words). Now caught by tests/integration/test_ask_tools.py::test_each_tool_option_the_schema_offers_changes_the_answer_as_documented.
    Mutation("h7a-ask-grep-walks-git-and-node-modules", TOOLS,
             'args += [f"--exclude-dir={d}" for d in sorted(SKIP_DIRS)] + grep_excludes()',
             "args += grep_excludes()", (OPTIONS, ASK_TOOLS, *ASK_UNIT, MALFORMED), by=BY),
    # One tool result is cut at RESULT_CHARS (12,000), so one call cannot flood the window.
    Mutation("h7a-ask-result-cut-ten-times-later", SPEC,
             "    if len(text) > RESULT_CHARS:", "    if len(text) > 10 * RESULT_CHARS:",
             (*ASK_UNIT, ASK_TOOLS, MALFORMED, ASK_E2E), by=BY),
]
