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

First run (`python tools/mutations.py <the 14 names>`, once, 2026-12-07 03:04:37-03:10:57 UTC,
on 2 cores shared with a full test suite, load average 4-6): 10 of 14 reported caught, but that
run copies the working tree at each mutation, and the tests this reviewer began writing for the
first survivors (test_recall_now.py, test_codex_login.py) were already in it when six of the
later mutations ran. Those six were run again on a clean export of the committed round
(`git archive 7446824`, 03:11:53-03:12:37 UTC): gr-codex-apikey-mode-ignored,
gr-recency-from-the-clock-not-now and gr-asof-before-now survive there. The honest first-run
figure: 7 of 14 caught (50%). No stale or error outcome.
- caught: gr-no-proxy-ignored, gr-run-gateway-not-leased,
  gr-codex-path-rewritten-for-an-explicit-upstream, gr-ui-same-site-let-through,
  gr-redact-numbered-key-overwrites, gr-ago-week-slack-from-eight-days,
  gr-ago-spelled-days-skipped-by-precheck.
- survived: gr-proxy-loopback-net-proxied, gr-lease-of-a-dead-run-counted,
  gr-quiet-not-renewed-by-answers, gr-codex-apikey-mode-ignored,
  gr-recency-from-the-clock-not-now, gr-asof-before-now, gr-restore-sample-first-page-only.

Survivors (each commented at its entry): all 7 are real promises of the docs or docstrings; each
got a test that fails with the bug planted by hand in a scratch copy of the tree and passes
without, beside a control (listed first among the entry's guarding tests): three pure ones in
tests/unit/test_gateway_route_and_leases.py (ProxyRoute over 127/8, live_leases with a dead
run's pid, Quiet on a fake monotonic clock), one in tests/unit/test_codex_login.py, two over
stdio in tests/integration/test_recall_now.py and one through the real CLI in
tests/integration/test_restore_edges.py. None is equivalent.

Rerun with the tests added (`python tools/mutations.py <the 7 survivors>`, 03:13:40-03:14:16
UTC): 7 of 7 caught. Round after the rerun: 14 of 14 caught (100%). The touched and guarding
files pass as a whole on the unplanted tree (test_gateway_route_and_leases, test_codex_login,
test_recall_now, test_restore_edges, test_gateway, test_gateway_codex, test_when: 107 passed).

No product bug was found. Noted, not changed: a lease left by a run killed with SIGKILL is
harmless only while its pid is not reused (live_leases cannot tell a reused pid from the run);
`a couple days ago` (without "of") names no time, as the docs' list of forms says.
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
R = "tests/unit/test_gateway_route_and_leases.py::"

ROUND = [
    # --- the user's proxy (gateway/upstream.py) ---------------------------------------------------
    # "A loopback upstream is never proxied": only the three names are; an upstream on
    # 127.0.0.2 (any of 127/8) goes to the proxy, which cannot reach this machine's loopback.
    Mutation("gr-proxy-loopback-net-proxied", UP, 'if host in LOOPBACK or host.startswith("127."):',
             "if host in LOOPBACK:",
             (f"{R}test_no_loopback_address_is_sent_to_the_proxy_a_remote_provider_is", GW, GW_CODEX), by=BY),
    # Survived the first run (the proxy test's upstream was a .invalid name, no 127/8 address but
    # 127.0.0.1 was ever routed). Test added: test_gateway_route_and_leases.py::
    # test_no_loopback_address_is_sent_to_the_proxy_a_remote_provider_is.
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
             "        except ProcessLookupError:\n            (store / LEASES / name).unlink(missing_ok=True)\n            continue\n",
             "        except ProcessLookupError:\n            (store / LEASES / name).unlink(missing_ok=True)\n",
             (f"{R}test_a_dead_runs_lease_is_removed_and_not_counted_a_live_one_is", GW), by=BY),
    # Survived the first run (the lease test's run exits cleanly and removes its own lease; no
    # run ever died holding one). Test added: test_gateway_route_and_leases.py::
    # test_a_dead_runs_lease_is_removed_and_not_counted_a_live_one_is.
    # The quiet clock is never renewed by an answer: a gateway exits as soon as the leases are
    # gone once it has lived gatewayLingerMs, though it answered a moment ago.
    Mutation("gr-quiet-not-renewed-by-answers", LEASES,
             "        self.inflight -= 1\n        self.last = time.monotonic()\n",
             "        self.inflight -= 1\n",
             (f"{R}test_the_quiet_clock_is_zero_while_answering_and_starts_again_at_each_answer", GW), by=BY),
    # Survived the first run (the lease test's gateway answers only its health probe, at start).
    # Test added: test_gateway_route_and_leases.py::
    # test_the_quiet_clock_is_zero_while_answering_and_starts_again_at_each_answer (a fake clock).
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
             'if auth.get("OPENAI_API_KEY")',
             (f"{CODEX_LOGIN}::test_an_auth_mode_naming_a_key_wins_over_chatgpt_tokens_left_in_auth_json",
              CODEX_LOGIN), by=BY),
    # Survived the first run on the committed tests (the only auth_mode "apikey" case also held a
    # key). Test added: test_codex_login.py::
    # test_an_auth_mode_naming_a_key_wins_over_chatgpt_tokens_left_in_auth_json.
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
             (f"{NOW}::test_messages_age_from_now_not_from_the_clock", NOW, DATES), by=BY),
    # Survived the first run on the committed tests (`now` was checked for the window and for
    # hiding nothing, never for the recency bonus). Test added: test_recall_now.py::
    # test_messages_age_from_now_not_from_the_clock (a one-day half-life; control: a later now).
    # With both given, relative words count from `asOf` instead of `now`.
    Mutation("gr-asof-before-now", RECALLER, "asked_at = dates.parse_time(now) or dates.parse_time(as_of)",
             "asked_at = dates.parse_time(as_of) or dates.parse_time(now)",
             (f"{NOW}::test_relative_words_count_from_now_even_beside_an_as_of", NOW, DATES), by=BY),
    # Survived the first run on the committed tests (no recall gave both). Test added:
    # test_recall_now.py::test_relative_words_count_from_now_even_beside_an_as_of.
    # --- restore's proof by use ----------------------------------------------------------------------
    # The pages are walked without their offset: only the first page is ever looked at, and a
    # healthy backup whose sampled session ranks past it is refused.
    Mutation("gr-restore-sample-first-page-only", BACKUPS, "limit=50, offset=offset)", "limit=50)",
             ("tests/integration/test_restore_edges.py::"
              "test_a_sampled_message_past_the_first_page_of_hits_is_found_on_a_later_page", *RESTORE), by=BY),
    # Survived the first run (the 30 alike sessions of the existing test fit one page of 50).
    # Test added: test_restore_edges.py::
    # test_a_sampled_message_past_the_first_page_of_hits_is_found_on_a_later_page (120 sessions).
]
