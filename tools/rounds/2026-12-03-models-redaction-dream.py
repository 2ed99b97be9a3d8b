"""Independent review round: models that misbehave, redaction, dream rollback (issue 35: bugs 2
and 3, the `file_path` KeyError, item 4, redaction against documented token formats).

Product code: engine/ask/toolspec.py (the tool-call check), engine/ask/loop.py,
engine/ask/requests.py, llm/anthropic_client.py, engine/memory/distiller.py, prompts.py,
engine/capture/redact.py, engine/maintenance/requests.py (rollback, the judge),
engine/memory/knowledge.py, engine/maintenance/dream.py (the priority guard). The bugs were
chosen from that code and from docs/ask.md ("Models that misbehave"), docs/protocol.md,
docs/configuration.md (distiller retry/fallback), docs/security.md (token formats) and
docs/maintenance.md (rollback, priority 0-1) before any test was read; the tests of each
entry were picked by file name and grep."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: independent, models-redaction-dream round"
SPEC = "lore_sidecar/engine/ask/toolspec.py"
LOOP = "lore_sidecar/engine/ask/loop.py"
ASKREQ = "lore_sidecar/engine/ask/requests.py"
CLIENT = "lore_sidecar/llm/anthropic_client.py"
DIST = "lore_sidecar/engine/memory/distiller.py"
PROMPTS = "lore_sidecar/engine/memory/prompts.py"
RED = "lore_sidecar/engine/capture/redact.py"
MREQ = "lore_sidecar/engine/maintenance/requests.py"
KNOW = "lore_sidecar/engine/memory/knowledge.py"
DREAM = "lore_sidecar/engine/maintenance/dream.py"

TOOLSPEC_T = "tests/unit/test_toolspec.py"
MALFORMED = "tests/e2e/test_malformed_models.py"
ASK = "tests/e2e/test_ask.py"
MNT = "tests/integration/test_maintenance.py"
DISTILL = "tests/unit/test_distill_rules.py"
MEMRULES = "tests/unit/test_memory_rules.py"
REDACT = ("tests/unit/test_redact.py", "tests/unit/test_redact_formats.py")
ASK_TESTS = (TOOLSPEC_T, MALFORMED, ASK)
DIST_TESTS = (DISTILL, MALFORMED)

ROUND = [
    # --- the tool-call check (toolspec.check) ----------------------------------------------
    # Both `path` and `file_path` given: the "given twice" test looks up the alias's own name,
    # which is never in `out`, so the later one silently wins (docs: refused, given twice).
    Mutation("spec-alias-overrides-path", SPEC, "        if target in out:\n", "        if key in out:\n",
             ASK_TESTS, by=BY),
    # `filePath` (named in docs/ask.md) no longer an alias: a refusal instead of a read.
    Mutation("spec-alias-filePath-dropped", SPEC, '"filePath": "path", ', "", ASK_TESTS, by=BY),
    # Reported caught (twice), but no test sent an alias to a tool without `path` (the unit lists
    # pass with it planted): read as a load-induced failure of the e2e files; test_toolspec.py BAD
    # now has Grep file_path / Glob file.
    # An alias taken on a tool that has no `path` (Grep with `file`): silently ignored instead
    # of refused, so the model thinks it searched one file and got the whole project.
    Mutation("spec-alias-where-tool-has-no-target", SPEC,
             "        if target not in props:\n",
             "        if target not in props and key not in ALIASES:\n", ASK_TESTS, by=BY),
    # `true` for an integer accepted as 1 (docs: refused).
    Mutation("spec-integer-accepts-bool", SPEC,
             "        if isinstance(value, bool):\n            return _WRONG\n        if isinstance(value, int):",
             "        if isinstance(value, int):", ASK_TESTS, by=BY),
    # 5.5 for an integer read as 5 (docs: `'limit' must be an integer, not float 5.5`).
    Mutation("spec-integer-truncates-float", SPEC, "if isinstance(value, float) and value.is_integer():",
             "if isinstance(value, float):", ASK_TESTS, by=BY),
    # A list of numbers/objects accepted for `paths` (the schema says strings).
    Mutation("spec-array-items-unchecked", SPEC,
             "return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else _WRONG",
             "return value if isinstance(value, list) else _WRONG", ASK_TESTS, by=BY),

    # --- the loop ----------------------------------------------------------------------------
    # The per-turn cap off by one: 11 calls run (docs: the first 10).
    Mutation("loop-eleven-calls-per-turn", LOOP, "    if i >= CALLS_PER_TURN:", "    if i > CALLS_PER_TURN:",
             ASK_TESTS, by=BY),
    # A call cut by max_tokens is run with half its arguments (docs: answered "cut off").
    Mutation("loop-max-tokens-cut-call-runs", LOOP, 'if stop == "max_tokens" and i == n - 1:',
             'if stop == "max_tokens" and i == n:', ASK_TESTS, by=BY),
    # Repeated tool-use ids kept: two results share one id (the API refuses the next request).
    Mutation("loop-repeated-ids-kept", LOOP, "        seen.add(cid)\n", "", ASK_TESTS, by=BY),
    # A whitespace-only answer accepted as the answer (docs: emptyAnswer).
    Mutation("loop-whitespace-answer-accepted", LOOP, 'if turn.stop == "refusal" or not text.strip():',
             'if turn.stop == "refusal" or not text:', ASK_TESTS, by=BY),

    # --- lore/ask's reply ----------------------------------------------------------------------
    # A refusal no longer answered from retrieval (docs: "the same" as emptyAnswer).
    Mutation("ask-refusal-not-from-retrieval", ASKREQ, 'out.finished in ("error", "refused") and not out.read',
             'out.finished == "error" and not out.read', (MALFORMED, ASK), by=BY),

    # --- the Anthropic client --------------------------------------------------------------------
    # SURVIVED first (the corpus plants only \ud800); test added: test_llm_client.py::
    # test_a_lone_surrogate_of_either_half_becomes_U_FFFD_and_a_real_pair_stays.
    # Only high surrogates replaced: a lone low surrogate ("\udc00") still poisons the window.
    Mutation("client-low-surrogate-kept", CLIENT, r'_LONE_SURROGATE = re.compile("[\ud800-\udfff]")',
             r'_LONE_SURROGATE = re.compile("[\ud800-\udbff]")', (MALFORMED, "tests/integration/test_llm_client.py"),
             by=BY),
    # An unreadable answer said not retryable: the distiller falls back at once instead of
    # deferring (configuration.md: "an answer that is not a message" may pass).
    Mutation("client-bad-response-not-retryable", CLIENT,
             'f"{type(exc).__name__}: {str(exc)[:200]}", retryable=True)',
             'f"{type(exc).__name__}: {str(exc)[:200]}", retryable=False)',
             (MALFORMED, "tests/integration/test_llm_client.py"), by=BY),

    # --- the distiller ---------------------------------------------------------------------------
    # A whitespace reply used: the segment is marked distilled with nothing.
    Mutation("distill-whitespace-reply-used", DIST, "if not isinstance(done.text, str) or not done.text.strip():",
             "if not isinstance(done.text, str) or not done.text:", DIST_TESTS, by=BY),
    # The retry count: the fourth failure falls back, not the third.
    Mutation("distill-fourth-failure-falls-back", DIST, "defer=state.attempts < DEFER_ATTEMPTS - 1)",
             "defer=state.attempts < DEFER_ATTEMPTS)", DIST_TESTS, by=BY),
    # A refusal deferred (asked again and again) instead of distilled extractively at once.
    Mutation("distill-refusal-deferred", DIST, 'return "refusal: the model declined", False',
             'return "refusal: the model declined", True', DIST_TESTS, by=BY),
    # A refused key deferred like an outage (docs: falls back at once).
    Mutation("distill-auth-failure-deferred", DIST, "self._retryable = bool(exc.retryable)",
             "self._retryable = True", DIST_TESTS, by=BY),
    # Reported caught, but no test had a second segment after a success in one session (read as a
    # load-induced failure); test added: test_malformed_models.py::
    # test_a_success_gives_the_sessions_next_segment_its_own_three_tries.
    # The attempt count not reset after a success: the next segment's first failure already
    # counts the last one's, and it falls back early.
    Mutation("distill-attempts-carry-over", DIST, "        state.attempts = 0\n", "", DIST_TESTS, by=BY),
    # Reported caught, but no curator reply in the tests gave sources as a string (read as a
    # load-induced failure); test added: test_memory_rules.py::
    # test_curator_sources_given_as_one_string_are_not_a_list_of_paths.
    # The curator's sources given as a string taken letter by letter.
    Mutation("curation-sources-string-split", PROMPTS,
             'listed = item.get("sources") if isinstance(item.get("sources"), list) else []',
             'listed = item.get("sources") or []', (MALFORMED, MEMRULES), by=BY),

    # --- redaction against documented token shapes -----------------------------------------------
    # github_pat_ bodies hold "_" (22 chars, "_", 59 chars): without it the rule never matches.
    Mutation("redact-github-pat-no-underscore", RED, '_token("github_pat_", "[A-Za-z0-9_]{40,}+")',
             '_token("github_pat_", "[A-Za-z0-9]{40,}+")', REDACT, by=BY),
    # Entra ID client secrets are 40 characters (3 + digit + "Q~" + 34): 33 at most misses them.
    Mutation("redact-entra-secret-34-missed", RED, r"[0-9]Q~[A-Za-z0-9_~.\-]{31,34}+",
             r"[0-9]Q~[A-Za-z0-9_~.\-]{31,33}+", REDACT, by=BY),
    # A URL password with no user (redis://:pw@host) passes again.
    Mutation("redact-url-password-needs-user", RED, r"://(?P<user>[^\s:/@]{0,256}+):",
             r"://(?P<user>[^\s:/@]{1,256}+):", REDACT, by=BY),
    # xapp- tokens are "xapp-1-A0…-123…-abc…": without "-" only the first part is redacted.
    Mutation("redact-xapp-stops-at-hyphen", RED, r'_token("xapp-", "[0-9]-[A-Za-z0-9\\-]{10,}+")',
             r'_token("xapp-", "[0-9]-[A-Za-z0-9]{10,}+")', REDACT, by=BY),
    # Stripe restricted keys (rk_live_) missed; only sk_ redacted.
    Mutation("redact-stripe-restricted-missed", RED, r"[rs]k_(?<![{_TOK}][rs]k_)(?:live|test)_",
             r"sk_(?<![{_TOK}]sk_)(?:live|test)_", REDACT, by=BY),
    # Routable GitLab tokens: the dot-separated tail left in the clear.
    Mutation("redact-gitlab-routable-tail-kept", RED, r'f"(?:\\.[{_TOK}]{{1,64}}+)*+"', 'f""', REDACT, by=BY),
    # Databricks tokens with their "-N" suffix not matched at all (the look-ahead refuses "-").
    Mutation("redact-databricks-suffix-missed", RED, r'"[a-f0-9]{32}(?:-[0-9]{1,2})?"', r'"[a-f0-9]{32}"',
             REDACT, by=BY),

    # --- dream: the judge, the priority guard, rollback --------------------------------------------
    # A verdict's merged text of the wrong type applied as its repr (docs: dropped).
    Mutation("judge-field-type-unchecked", MREQ,
             '**{k: v[k].strip() for k in ("reason", "content")\n'
             '                                    if isinstance(v.get(k), str) and v[k].strip()}}',
             '**{k: str(v[k]).strip() for k in ("reason", "content")\n'
             '                                    if v.get(k)}}', (MNT, MALFORMED), by=BY),
    # Priority 1 no longer protected (docs: 0-1 never changed).
    Mutation("dream-priority-1-changed", DREAM, 'protected=n["priority"] <= 1))', 'protected=n["priority"] < 1))',
             (MNT,), by=BY),
    # A re-created node comes back immortal (issue 35 bug 2 back).
    Mutation("rollback-recreated-immortal", MREQ, 'expires_at=before.get("expiresAt"), sources=', "sources=",
             (MNT,), by=BY),
    # A re-created node's recorded hashes replaced by the file's current ones.
    Mutation("rollback-recreated-hashes-rehashed", MREQ, 'sources=before.get("sources") or None, review=mark)',
             'sources=[{"path": s["path"]} for s in before.get("sources") or []] or None, review=mark)',
             (MNT,), by=BY),
    # SURVIVED first (no rollback test had a stale node); test added: test_maintenance.py::
    # test_dream_rollback_gives_back_the_stale_flag_of_a_demoted_and_of_a_re_created_node.
    # A re-created stale node comes back unflagged.
    Mutation("rollback-recreated-stale-dropped", MREQ, 'for k in ("suppressed", "stale") if before.get(k)}',
             'for k in ("suppressed",) if before.get(k)}', (MNT,), by=BY),
    # Reported caught first, though no test node was stale before the stale-flag test was added
    # (not explained by reading); that test catches it too.
    # A demoted node comes back without its stale flag.
    Mutation("rollback-updated-stale-dropped", MREQ,
             "changes={name: before.get(k) for k, name in RESTORED.items()}, review=mark)",
             'changes={name: before.get(k) for k, name in RESTORED.items() if k != "stale"}, review=mark)',
             (MNT,), by=BY),
    # SURVIVED first; test added: test_maintenance.py::
    # test_dream_rollback_gives_back_the_stale_flag_of_a_demoted_and_of_a_re_created_node (its last step).
    # An update of a stale node that brings new sources gets the old paths back instead.
    Mutation("knowledge-stale-update-overwrites-sources", KNOW, '            if row["stale"] and "sources" not in changes:',
             '            if row["stale"]:', (MNT, MEMRULES, "tests/integration/test_invariants.py"), by=BY),
]
