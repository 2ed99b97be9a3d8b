"""rev17: independent review of carryHarnessSummary (90eb4dc), the gateway's proxy
credentials as a Proxy-Authorization header (7695695), Thai/Lao/Khmer/Myanmar bigrams and
text schema lore-text-10 (45d29f6), 'a couple days ago' (53e65fb) and hashlib.file_digest
(f0cdf01).

Bugs chosen from the code and docs before any file under tests/ was opened; guarding tests
chosen by file name and `grep -rl` only.

First run (19:35-19:54 UTC, once, `python tools/mutations.py <the 25 names>`, load 11-12 on
2 cores): 14 of 25 caught.
  caught:   rev17-ctx-default-on, rev17-ctx-option-key, rev17-ctx-no-pi, rev17-ctx-summary-last,
            rev17-ctx-digest-keeps-summary, rev17-gw-scheme-inverted, rev17-gw-http-no-extend,
            rev17-gw-url-keeps-user, rev17-w-no-khmer, rev17-ti-schema-tag-kept,
            rev17-when-ago-needs-of, rev17-when-howlong-needs-of, rev17-when-couple-three,
            rev17-hash-backup-sha1
  survived: rev17-ctx-no-lstrip, rev17-ctx-no-system-skip, rev17-ctx-summary-anywhere,
            rev17-ctx-budget-on-top, rev17-ctx-budget-no-floor, rev17-ctx-first-prefix-no-summary,
            rev17-gw-http-keeps-proxy-headers, rev17-gw-raw-user, rev17-gw-user-needs-password,
            rev17-w-thai-not-lao, rev17-w-no-myanmar
  error:    none

Survivors, after reading the tests: ten real gaps, one equivalent.
  rev17-gw-http-keeps-proxy-headers is equivalent: for a plain-HTTP request aiohttp 3.14 puts
  `proxy_headers` only on the CONNECT request it builds (connector.py
  `_update_proxy_auth_header_and_build_proxy_req`), which is never sent without TLS; the
  header the proxy reads is the one `_forward` added to the request. The only difference is
  the pooled connection's key.
  The one carryHarnessSummary test drives an Anthropic body whose first message is the
  summary, unindented, and a summary smaller than the raw window; nothing asserted where
  `leading_summary` does not look, the window's size, or when the session leaves L0. The
  proxy tests use alice:s3cret only (no %-escape, always a password); the Thai/Khmer
  fixture has no Lao (U+0E80-U+0EFF) and no Myanmar text. New tests (each fails with its bug
  planted, passes without; second run, the 10 real survivors, 19:55-19:58 UTC: 10 of 10 caught):
  rev17-ctx-no-lstrip, rev17-ctx-no-system-skip, rev17-ctx-summary-anywhere:
    tests/integration/test_context_shapes.py::test_the_harness_summary_is_found_only_where_the_harness_puts_it
  rev17-ctx-budget-on-top, rev17-ctx-budget-no-floor:
    ::test_a_carried_summary_takes_its_room_from_the_raw_window_but_never_more_than_half
  rev17-ctx-first-prefix-no-summary:
    ::test_leaving_l0_prices_the_first_prefix_with_the_carried_summary_in_it
  rev17-gw-raw-user, rev17-gw-user-needs-password:
    tests/unit/test_gateway_route_and_leases.py::test_the_proxys_credentials_are_sent_as_the_user_wrote_them_in_its_url
  rev17-w-thai-not-lao, rev17-w-no-myanmar: two texts and two queries in
    tests/integration/test_text_any_language.py::test_more_words_of_any_language_find_their_message

Note on method: after the first run was under way (mutations fixed), the new tests were
drafted in a scratch copy outside the worktree; a draft appended to the worktree for ~30 s
at 19:39 was removed before any later mutant tree was copied (the one copy in flight was
taken at 19:37:58), so the first run's figure is the untouched tests'.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: rev17"
T = "tests/"
BOD = "lore_sidecar/engine/context/bodies.py"
REQ = "lore_sidecar/engine/context/requests.py"
SET = "lore_sidecar/settings.py"
UP = "lore_sidecar/gateway/upstream.py"
PX = "lore_sidecar/gateway/proxy.py"
W = "lore_sidecar/words.py"
TI = "lore_sidecar/store/text_index.py"
WHEN = "lore_sidecar/engine/recall/when.py"
BAK = "lore_sidecar/store/backup.py"
CTX = (T + "integration/test_context_shapes.py", T + "e2e/test_context_assembly.py")
GW = (T + "unit/test_gateway_route_and_leases.py", T + "integration/test_gateway.py",
      T + "integration/test_run_gateway_upstream.py")
LANG = (T + "unit/test_words_first.py", T + "unit/test_index_text.py",
        T + "integration/test_text_any_language.py", T + "e2e/test_recall_any_language.py")
DATES = (T + "unit/test_when.py", T + "integration/test_recall_dates.py")
BACKUP = (T + "integration/test_backup.py", T + "integration/test_backup_files.py",
          T + "integration/test_backup_roundtrip.py")

ROUND = [
    # carryHarnessSummary
    Mutation("rev17-ctx-default-on", SET,
             "carry_harness_summary: bool = False", "carry_harness_summary: bool = True", CTX, by=BY),
    Mutation("rev17-ctx-option-key", SET,
             '"carryHarnessSummary": (conv.boolean,', '"carryHarnessSummaries": (conv.boolean,', CTX, by=BY),
    Mutation("rev17-ctx-no-lstrip", BOD,
             # (re-expressed after the lead made any text block of the message count)
             "str(t).lstrip().startswith(SUMMARY_OPENINGS)",
             "str(t).startswith(SUMMARY_OPENINGS)", CTX, by=BY),
    Mutation("rev17-ctx-no-system-skip", BOD,
             '        if role == "system":\n            continue\n        # Any of its text blocks',
             '        # Any of its text blocks', CTX, by=BY),
    Mutation("rev17-ctx-summary-anywhere", BOD,
             "            return i\n        return None\n    return None",
             "            return i\n    return None", CTX, by=BY),
    Mutation("rev17-ctx-no-pi", BOD,
             ',\n                    "The conversation history before this point was compacted into the following summary")',
             ",)", CTX, by=BY),
    Mutation("rev17-ctx-summary-last", REQ,
             "b.prefix_message(api, [summary, *parts] if summary else list(parts))",
             "b.prefix_message(api, [*parts, summary] if summary else list(parts))", CTX, by=BY),
    Mutation("rev17-ctx-digest-keeps-summary", REQ,
             "return [x for i, x in enumerate(conv[first:start], first) if i != lead]",
             "return list(conv[first:start])", CTX, by=BY),
    Mutation("rev17-ctx-budget-on-top", REQ,
             "budget = replace(budget, min_raw=max(budget.min_raw // 2, budget.min_raw - sizes[lead]))",
             "budget = replace(budget, min_raw=budget.min_raw)", CTX, by=BY),
    Mutation("rev17-ctx-budget-no-floor", REQ,
             "min_raw=max(budget.min_raw // 2, budget.min_raw - sizes[lead])",
             "min_raw=max(0, budget.min_raw - sizes[lead])", CTX, by=BY),
    Mutation("rev17-ctx-first-prefix-no-summary", REQ,
             "PART_OVERHEAD + (len(summary) + 1 if summary else 0)", "PART_OVERHEAD", CTX, by=BY),
    # the gateway's proxy credentials
    Mutation("rev17-gw-scheme-inverted", PX,
             'if proxy_headers and target.scheme != "https":', 'if proxy_headers and target.scheme == "https":',
             GW, by=BY),
    Mutation("rev17-gw-http-no-extend", PX,
             "            headers.extend(proxy_headers)\n", "", GW, by=BY),
    # Inverted after the round: the lead now keeps `proxy_headers` for plain HTTP on purpose (a
    # redirect to https opens a CONNECT, which needs them; rev17 noticed the regression). The
    # bug is now dropping them, caught by test_gateway.py's http-redirected-to-https case.
    Mutation("rev17-gw-http-keeps-proxy-headers", PX,
             "            headers.extend(proxy_headers)\n",
             "            headers.extend(proxy_headers)\n            proxy_headers = None\n", GW, by=BY),
    Mutation("rev17-gw-raw-user", UP,
             'pair = f"{proxy.user}:{proxy.password or \'\'}".encode()',
             'pair = f"{proxy.raw_user}:{proxy.raw_password or \'\'}".encode()', GW, by=BY),
    Mutation("rev17-gw-url-keeps-user", UP,
             "return proxy.with_user(None), {", "return proxy, {", GW, by=BY),
    Mutation("rev17-gw-user-needs-password", UP,
             "        if not proxy.user:\n            return proxy, None",
             "        if not proxy.password:\n            return proxy.with_user(None), None", GW, by=BY),
    # words: scripts without spaces
    Mutation("rev17-w-no-khmer", W, "\\u1100-\\u11ff\\u1780-\\u17ff", "\\u1100-\\u11ff", LANG, by=BY),
    Mutation("rev17-w-thai-not-lao", W, '"\\u0e00-\\u0eff', '"\\u0e00-\\u0e7f', LANG, by=BY),
    Mutation("rev17-w-no-myanmar", W, "\\u0e00-\\u0eff\\u1000-\\u109f", "\\u0e00-\\u0eff", LANG, by=BY),
    Mutation("rev17-ti-schema-tag-kept", TI, 'SCHEMA_TAG = "lore-text-10"', 'SCHEMA_TAG = "lore-text-9"',
             LANG + (T + "integration/test_model_rename_trimmed.py",), by=BY),
    # when: a couple (of)
    Mutation("rev17-when-ago-needs-of", WHEN,
             "|(?:a\\s+)?couple(?:\\s+of)?|(?:a\\s+)?few)", "|(?:a\\s+)?couple\\s+of|(?:a\\s+)?few)", DATES, by=BY),
    Mutation("rev17-when-howlong-needs-of", WHEN,
             "|few|couple(?:\\s+of)?|several", "|few|couple\\s+of|several", DATES, by=BY),
    Mutation("rev17-when-couple-three", WHEN, '"couple": 2,', '"couple": 3,', DATES, by=BY),
    # one file hash
    Mutation("rev17-hash-backup-sha1", BAK, 'return hashlib.file_digest(f, "sha256").hexdigest()',
             'return hashlib.file_digest(f, "sha1").hexdigest()', BACKUP, by=BY),
]
