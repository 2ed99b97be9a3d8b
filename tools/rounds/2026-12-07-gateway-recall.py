"""Independent review round on the code changed for issues 35 and 39 (`git diff 240658d HEAD`):
the gateway's use of the user's proxy (gateway/upstream.py), the leases that let a gateway
`run` started stop by itself (gateway/leases.py, `--leased` in gateway/run.py and serve.py),
the ChatGPT route for Codex (proxy.upstream_of, run.codex_login), the dashboard guard's
same-site refusal (ui/guard.py), numbered secret keys in redact_value (capture/redact.py),
the `now` of lore/recall and the "N days/weeks/months ago" windows (engine/recall/), and the
restore's sample walked through the recall's pages (backups.py).

Method: the bugs were chosen from that diff, with the docstrings there and docs/context.md,
docs/security.md, docs/protocol.md and docs/configuration.md for what is promised, before any
test was opened; tools/mutations.py and the earlier rounds under tools/rounds/ were read only
for the format and to leave out a bug already planted (recall-now-ignored, recall-now-filters,
ago-without-ago, reply-for-long-questions, f2b-ui-cross-site-navigation-let-through,
f2b-redact-keys-kept, f5-restore-sample-any-hit and run-codex-secret-on-command-line are
not repeated). Each bug breaks a documented or docstring promise and is a small, plausible
slip. The guarding test files were chosen by file name (`ls tests/*/`) and
`grep -rlF <name> tests/` only.

First run: (recorded below once it has run).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: gateway/recall round"
UP, LEASES = "lore_sidecar/gateway/upstream.py", "lore_sidecar/gateway/leases.py"
RUN, PROXY = "lore_sidecar/gateway/run.py", "lore_sidecar/gateway/proxy.py"
GUARD, RED = "lore_sidecar/ui/guard.py", "lore_sidecar/engine/capture/redact.py"
WHEN, RECALLER = "lore_sidecar/engine/recall/when.py", "lore_sidecar/engine/recall/recaller.py"
BACKUPS = "lore_sidecar/backups.py"
GW, GW_CODEX = "tests/integration/test_gateway.py", "tests/integration/test_gateway_codex.py"
CODEX_LOGIN = "tests/unit/test_codex_login.py"
UI = "tests/integration/test_dashboard_access.py"
REDACT = ("tests/unit/test_redact.py", "tests/unit/test_redact_boundaries.py")
WHEN_U, NOW = "tests/unit/test_when.py", "tests/integration/test_recall_now.py"
DATES = "tests/integration/test_recall_dates.py"
RESTORE = ("tests/integration/test_restore_edges.py", "tests/integration/test_backup.py")

ROUND = [
    # --- the user's proxy (gateway/upstream.py) ---------------------------------------------------
    # "A loopback upstream is never proxied": only the three names are; an upstream on
    # 127.0.0.2 (any of 127/8) goes to the proxy, which cannot reach this machine's loopback.
    Mutation("gr-proxy-loopback-net-proxied", UP, 'if host in LOOPBACK or host.startswith("127."):',
             "if host in LOOPBACK:", (GW, GW_CODEX), by=BY),
    # `no_proxy` ignored: a provider the user lists there still goes through the proxy.
    Mutation("gr-no-proxy-ignored", UP,
             'if self.proxies.get("no") and urllib.request.proxy_bypass_environment(host, self.proxies):',
             "if False:", (GW, GW_CODEX), by=BY),
    # --- leases: a gateway `run` started stops by itself ---------------------------------------------
    # `run` starts its gateway without --leased: it serves forever (gatewayLingerMs never applies).
    Mutation("gr-run-gateway-not-leased", RUN, '"--store-dir", str(store), "--leased")',
             '"--store-dir", str(store))', (GW, "tests/integration/test_run_gateway_upstream.py"), by=BY),
    # A dead run's lease is removed but still counted: the gateway never leaves once a run died.
    Mutation("gr-lease-of-a-dead-run-counted", LEASES,
             "            (store / LEASES / name).unlink(missing_ok=True)\n            continue\n",
             "            (store / LEASES / name).unlink(missing_ok=True)\n", (GW,), by=BY),
    # The quiet clock is never renewed by an answer: a gateway exits as soon as the leases are
    # gone once it has lived gatewayLingerMs, though it answered a moment ago.
    Mutation("gr-quiet-not-renewed-by-answers", LEASES,
             "        self.inflight -= 1\n        self.last = time.monotonic()\n",
             "        self.inflight -= 1\n", (GW,), by=BY),
    # --- Codex signed in with ChatGPT --------------------------------------------------------------
    # "An explicit upstream takes every path as it came": `/v1/codex/...` loses its `/v1` (and,
    # with no upstream, still goes to ChatGPT) even when the user named an upstream.
    Mutation("gr-codex-path-rewritten-for-an-explicit-upstream", PROXY,
             '    if upstream:\n        return upstream, path\n    prefix, chatgpt = CHATGPT_CODEX\n'
             '    if path == prefix or path.startswith(prefix + "/"):\n        return chatgpt, path[len("/v1"):]\n',
             '    prefix, chatgpt = CHATGPT_CODEX\n'
             '    if path == prefix or path.startswith(prefix + "/"):\n        return upstream or chatgpt, path[len("/v1"):]\n'
             '    if upstream:\n        return upstream, path\n',
             (GW_CODEX, CODEX_LOGIN), by=BY),
    # An `auth_mode` naming an API key no longer decides: auth.json with auth_mode "apikey" and
    # ChatGPT tokens left from an earlier login (no key field) is taken for a ChatGPT login.
    Mutation("gr-codex-apikey-mode-ignored", RUN, 'if mode == "apikey" or auth.get("OPENAI_API_KEY")',
             'if auth.get("OPENAI_API_KEY")', (CODEX_LOGIN,), by=BY),
    # --- the dashboard guard -------------------------------------------------------------------------
    # Sec-Fetch-Site: same-site (a page on another loopback port) let through without an Origin.
    Mutation("gr-ui-same-site-let-through", GUARD, 'if fetch_site in ("cross-site", "same-site"):',
             'if fetch_site == "cross-site":', (UI,), by=BY),
    # --- redaction of keys ---------------------------------------------------------------------------
    # The numbered key is found but the value is stored under the base key: the earlier value lost.
    Mutation("gr-redact-numbered-key-overwrites", RED, "out[key] = redact_value(v, budget)",
             "out[base] = redact_value(v, budget)", REDACT, by=BY),
    # --- recall: "N units ago" and `now` -------------------------------------------------------------
    # "two from a week on": a week ago (7 days) gets one day of slack, not two.
    Mutation("gr-ago-week-slack-from-eight-days", WHEN, "(1 if back >= 7 else 0)", "(1 if back > 7 else 0)",
             (WHEN_U, NOW, DATES), by=BY),
    # The quick pre-check without "ago": "five days ago" / "a few days ago" (no digit, no week or
    # month word) is taken for a query naming no time.
    Mutation("gr-ago-spelled-days-skipped-by-precheck", WHEN, '|year|ago", re.I)', '|year", re.I)',
             (WHEN_U, NOW, DATES), by=BY),
    # Messages age from the clock, not from `now` (the recency bonus ignores the asked time).
    Mutation("gr-recency-from-the-clock-not-now", RECALLER,
             "asked = asked_at.timestamp() if asked_at is not None else now", "asked = now",
             (NOW, DATES), by=BY),
    # With both given, relative words count from `asOf` instead of `now`.
    Mutation("gr-asof-before-now", RECALLER, "asked_at = dates.parse_time(now) or dates.parse_time(as_of)",
             "asked_at = dates.parse_time(as_of) or dates.parse_time(now)", (NOW, DATES), by=BY),
    # --- restore's proof by use ----------------------------------------------------------------------
    # The pages are walked without their offset: only the first page is ever looked at, and a
    # healthy backup whose sampled session ranks past it is refused.
    Mutation("gr-restore-sample-first-page-only", BACKUPS, "limit=50, offset=offset)", "limit=50)",
             RESTORE, by=BY),
]
