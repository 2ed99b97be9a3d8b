"""Authors' sweep (issue 35) of "store-faces-2": dream and decay (engine/maintenance/),
redaction (engine/capture/redact.py and its callers in engine/facts/requests.py and others),
recall and fact paging (engine/recall/recaller.py's page, engine/facts/queries.py) and the
team record (shared/record.py, shared/replica.py). Not a fresh round: the authors chose the
mutants, by a throwaway generator (flip a comparison, drop a `not`, swap and/or, a constant
or quantifier ±1, `if` forced True/False, min/max swapped, a name dropped from a tuple) sampled
with fixed seeds, plus hand-picked ones for the record, its replica and redaction's callers.
Each ran in a scratch tree of commit 607df4a (PYTHONPATH set to it, so the stdio sidecars ran
the mutant too) against the test files a reviewer would pick by name and `grep -l`, fastest
first, `-x`: redaction tests/unit/test_redact.py + test_redact_formats.py (callers: every
unit and integration file that mentions redact, bar test_shared.py); decay and dream
tests/unit/test_decay.py or test_dream_rules.py + tests/integration/test_maintenance.py;
maintenance/requests.py test_maintenance.py; facts/queries.py test_paging.py + test_facts.py;
the recall page test_paging.py + test_dense_leg.py; shared/record.py the four tests of
test_shared.py that drive SharedRecord directly (the six-machine ones were too slow to sample).

Totals (first run, 2026-12-04 02:48-03:35 UTC, 2-3 mutants at a time on 2 cores at load 9-23):
96 mutants tried (redaction 30, its callers 3, decay 12, dream 10, maintenance/requests.py 12,
facts/queries.py 6, the recall page 4, shared/record.py 15, shared/replica.py 2; 9 of them
hand-picked as likely survivors), 47 caught the first time (49%), 49 survived. Equivalent
(13, no test added): redaction's gitlab part {1,65}, needle search from i+2 (no needle repeats
at offset 1), BEGIN{1,40} (the space is always there), `low` computed for every rule, `={0,3}`
padding, the marker check at `s < 1` and with `and` (the output is the same: a marker is
replaced by itself); decay's Fit unfrozen and a no-op `0.0 * 2`; dream's unused default of
Change.protected; usage_series' default (its one caller passes 30); review's nextOffset as
offset + limit (only said after a full page); aggregate's default limit (the wire always
passes one). One survivor has no test: evidence() reading `node.get("project") and
root(None)` differs only for a node of another project than the default one. One first-run
catch was not counted: facts-predicate-unredacted failed only a load-sensitive test of
test_trust_boundaries.py (every request answered within its timeouts), not for the bug.

The other 35 are real promises and each now has a test, named under its entry; each test was
seen failing with its mutant planted (scratch tree, PYTHONPATH set) and passing without it.
Among them, two mutants that no existing test caught in a whole file a reviewer would pick:
a workspace file read through lore/getNode unredacted (every test file mentioning
redaction), and a fact's invalidation never sent to the team (all of test_shared.py).
No product bug was found.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "authors: sweep (issue 35)"
RED = "lore_sidecar/engine/capture/redact.py"
DECAY = "lore_sidecar/engine/maintenance/decay.py"
DREAM = "lore_sidecar/engine/maintenance/dream.py"
REQ = "lore_sidecar/engine/maintenance/requests.py"
FQ = "lore_sidecar/engine/facts/queries.py"
FREQ = "lore_sidecar/engine/facts/requests.py"
REC = "lore_sidecar/shared/record.py"
REP = "lore_sidecar/shared/replica.py"
NR = "lore_sidecar/engine/recall/node_reader.py"

REDACT_T = ("tests/unit/test_redact.py", "tests/unit/test_redact_formats.py", "tests/unit/test_redact_boundaries.py")
DECAY_T = ("tests/unit/test_decay.py", "tests/integration/test_maintenance.py")
DREAM_T = ("tests/unit/test_dream_rules.py", "tests/integration/test_maintenance.py")
MNT_T = ("tests/integration/test_maintenance.py",)
FACTS_T = ("tests/integration/test_fact_queries.py", "tests/integration/test_facts.py", "tests/integration/test_paging.py")
SHARED_T = ("tests/integration/test_shared_record.py",)
REPLICA_T = ("tests/unit/test_shared_replica.py",)
NR_T = ("tests/integration/test_get_node_redaction.py", "tests/integration/test_trust_boundaries.py")

ROUND = [
    # A value `../config/creds/` (a relative path, not a credential) is redacted.
    Mutation('sw2-redact-relative-path-redacted', RED, 'if not value or re.match(r"(?:~|\\.{1,2})?/[\\w.\\-]+/", value):',
             'if not value or re.match(r"(?:~|\\.{1,1})?/[\\w.\\-]+/", value):', REDACT_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_redact_boundaries.py::test_a_named_secret_needs_six_characters_and_a_relative_path_is_not_one
    # A 128-character mysql password leaves its last character behind.
    Mutation('sw2-redact-mysql-password-127', RED, '[^\\s\\-][^\\s]{2,127}+',
             '[^\\s\\-][^\\s]{2,126}+', REDACT_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_redact_boundaries.py::test_a_mysql_password_of_three_to_128_characters_is_redacted_whole
    # A Stripe-looking `sk_live_` + 15 characters (shorter than the format) is redacted.
    Mutation('sw2-redact-stripe-15', RED, '(?:live|test)_[A-Za-z0-9]{{16,}}+',
             '(?:live|test)_[A-Za-z0-9]{{15,}}+', REDACT_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_redact_boundaries.py::test_a_token_body_at_its_formats_length_is_redacted_and_one_off_it_is_not[stripe-key:sk_live_]
    # A GitLab token body one character short of the format is redacted.
    Mutation('sw2-redact-gitlab-19', RED, '(?:pat|dt|rt|ptt|cbt|imt|soat|oas|ffct|agent)-[{_TOK}]{{20,}}+',
             '(?:pat|dt|rt|ptt|cbt|imt|soat|oas|ffct|agent)-[{_TOK}]{{19,}}+', REDACT_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_redact_boundaries.py::test_a_token_body_at_its_formats_length_is_redacted_and_one_off_it_is_not[gitlab-token:glpat-]
    # A classic GitHub token of exactly 30 characters after `ghp_` is stored as it is.
    Mutation('sw2-redact-github-31', RED, '"[pousr]_[A-Za-z0-9]{30,}+"',
             '"[pousr]_[A-Za-z0-9]{31,}+"', REDACT_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_redact_boundaries.py::test_a_token_body_at_its_formats_length_is_redacted_and_one_off_it_is_not[github-token:ghp_]
    # A JWT whose signature part is 8 characters is stored as it is.
    Mutation('sw2-redact-jwt-signature-9', RED, '\\\\.eyJ[{_TOK}]{{8,}}+\\\\.[{_TOK}]{{8,}}+',
             '\\\\.eyJ[{_TOK}]{{8,}}+\\\\.[{_TOK}]{{9,}}+', REDACT_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_redact_boundaries.py::test_a_jwt_needs_eight_characters_in_each_of_its_three_parts
    # A 40-character run of lower case and digits (no upper case) is taken for an AWS secret key.
    Mutation('sw2-redact-two-classes-random', RED, 'return classes >= 3 and _entropy(s) >= 4.0',
             'return classes >= 2 and _entropy(s) >= 4.0', REDACT_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_redact_boundaries.py::test_a_long_run_with_one_or_two_letter_classes_is_no_aws_secret_and_with_three_it_is
    # A placeholder (`********`, `<paste-key-2>`, `%CLIENT_SECRET_2%`) is redacted as if it were a secret.
    Mutation('sw2-redact-placeholder-and', RED, 'if _PLACEHOLDER.match(value) or value.startswith(("[REDACTED", "[TRUNCATED")):',
             'if _PLACEHOLDER.match(value) and value.startswith(("[REDACTED", "[TRUNCATED")):', REDACT_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_redact_boundaries.py::test_a_placeholder_that_is_not_a_word_is_kept_and_a_value_beside_it_is_not
    # The per-rule candidate limit is one lower: the 4096th secret of a text becomes opaque.
    Mutation('sw2-redact-findings-4095', RED, 'MAX_FINDINGS = 4096',
             'MAX_FINDINGS = 4095', REDACT_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_redact_boundaries.py::test_the_candidate_limit_is_exactly_4096_per_rule (first
    # written with the module's constant, which moved with the mutant: rewritten with the number, then
    # caught)
    # The lowest stability doubles (docs/maintenance.md quotes 0.25 days).
    Mutation('sw2-decay-min-stability', DECAY, 'S_MIN = 0.25',
             'S_MIN = 0.5', DECAY_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_decay.py::test_stability_stays_between_a_quarter_day_and_ten_years
    # The stability cap doubles to twenty years.
    Mutation('sw2-decay-max-stability', DECAY, 'S_MAX = 3650.0',
             'S_MAX = 7300.0', DECAY_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_decay.py::test_stability_stays_between_a_quarter_day_and_ten_years
    # The review's reason says `never opened` for a node opened once, and `last opened` for one never opened.
    Mutation('sw2-decay-reason-never-opened', DECAY, '    if f.used == 0:\n',
             '    if f.used == 1:\n', DECAY_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_decay.py::test_stability_stays_between_a_quarter_day_and_ten_years,
    # test_the_reason_says_how_long_ago_the_last_open_was
    # Every node is aged one extra day, as if missed once before its first recall.
    Mutation('sw2-decay-first-miss-counted', DECAY, 's, anchor, ignored, since, last = S0, created, 0, 0, None',
             's, anchor, ignored, since, last = S0, created, 0, 1, None', DECAY_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_decay.py::test_a_node_never_recalled_has_stability_30_days_and_falls_to_1_over_e_in_30_days
    # A word may no longer start with the digits 2-9: two notes that differ only in their limits (5 vs 9 retries) become duplicates and one is deleted.
    Mutation('sw2-dream-digits-start-no-word', DREAM, 'WORD = re.compile(r"[a-z0-9][a-z0-9_.-]*")',
             'WORD = re.compile(r"[a-z0-10][a-z0-9_.-]*")', DREAM_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_dream_rules.py::test_numbers_are_words_so_two_limits_that_differ_in_them_are_not_duplicates
    # A logRecall for a URI the record does not hold is refused (notFound) instead of logged.
    Mutation('sw2-record-usage-logrecall-arbitrated', REC, 'op.get("method") not in ("countUse", "logRecall")',
             'op.get("method") not in ("countUse",)', SHARED_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_shared_record.py::test_usage_operations_are_appended_without_arbitration_and_node_edits_of_unknown_uris_are_refused
    # `retain` on a URI the team does not hold yet is refused (notFound) instead of creating it.
    Mutation('sw2-record-retain-new-uri-refused', REC, 'if method in ("createNode", "retain") and row is None:',
             'if method == "createNode" and row is None:', SHARED_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_shared_record.py::test_retain_creates_a_node_the_record_lacks_and_updates_one_it_holds
    # `retain` on a held URI neither bumps the version nor records its new priority.
    Mutation('sw2-record-retain-held-uri-ignored', REC, 'if method in ("updateNode", "retain"):',
             'if method == "updateNode":', SHARED_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_shared_record.py::test_retain_creates_a_node_the_record_lacks_and_updates_one_it_holds
    # A pull returns the operation at its cursor again.
    Mutation('sw2-record-pull-repeats-last', REC, 'AND project=%s AND seq>%s ORDER BY seq',
             'AND project=%s AND seq>=%s ORDER BY seq', SHARED_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_shared_record.py::test_a_pull_returns_one_projects_operations_after_a_sequence_in_order_and_at_most_limit
    # An empty project's head says its age is 0 s, not unknown.
    Mutation('sw2-record-empty-head-age', REC, 'if row else (0, None)',
             'if row else (0, 0.0)', SHARED_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_shared_record.py::test_a_pull_returns_one_projects_operations_after_a_sequence_in_order_and_at_most_limit
    # The head is the oldest operation, not the latest (lagMs then measures the wrong one).
    Mutation('sw2-record-head-oldest', REC, '" ORDER BY seq DESC LIMIT 1"',
             '" ORDER BY seq LIMIT 1"', SHARED_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_shared_record.py::test_a_pull_returns_one_projects_operations_after_a_sequence_in_order_and_at_most_limit
    # A create without a priority is budgeted and recorded at 3, not the default 2.
    Mutation('sw2-record-default-priority-3', REC, 'priority = rules.DEFAULT_PRIORITY if',
             'priority = 3 if', SHARED_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_shared_record.py::test_retain_creates_a_node_the_record_lacks_and_updates_one_it_holds
    # An update that raises a node to priority 0 in a full budget is let through.
    Mutation('sw2-record-priority-raise-unbudgeted', REC, 'if (new_priority, new_scope) != (priority, scope):',
             'if new_scope != scope:', SHARED_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_shared_record.py::test_an_update_that_raises_a_priority_into_a_full_budget_is_refused_and_a_lower_one_is_recorded
    # A moved node keeps its version: an expectedVersion taken before the move still passes after it.
    Mutation('sw2-record-move-keeps-version', REC, '"UPDATE lore_nodes SET uri=%s, version=version+1 WHERE',
             '"UPDATE lore_nodes SET uri=%s WHERE', SHARED_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_shared_record.py::test_delete_takes_the_node_out_of_the_record_and_a_move_carries_it_with_a_new_version
    # A deleteNode leaves the node live in the record: its URI stays taken and its budget slot full.
    Mutation('sw2-record-delete-kept-live', REC, 'elif method in ("deleteNode", "forget"):',
             'elif method == "forget":', SHARED_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_shared_record.py::test_delete_takes_the_node_out_of_the_record_and_a_move_carries_it_with_a_new_version
    # A secret in a fact's predicate is stored, indexed and journaled as it is.
    Mutation('sw2-facts-predicate-unredacted', FREQ, 's, p, o = redact(subject), redact(predicate), redact(object)',
             's, p, o = redact(subject), predicate, redact(object)', FACTS_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_fact_queries.py::test_a_secret_in_any_part_of_a_fact_is_redacted_and_the_same_words_still_close_it
    # invalidateFact with the words a fact was asserted with no longer finds it when they held a secret.
    Mutation('sw2-facts-invalidate-unredacted', FREQ, 's, p = redact(subject), redact(predicate)',
             's, p = subject, predicate', FACTS_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_fact_queries.py::test_a_secret_in_any_part_of_a_fact_is_redacted_and_the_same_words_still_close_it
    # A stale or faded priority-4 node is demoted to a priority 5 that does not exist, instead of suppressed.
    Mutation('sw2-dream-stale-priority-4-becomes-5', DREAM, 'if n["priority"] < 4 else {"suppressed": True}',
             'if n["priority"] <= 4 else {"suppressed": True}', DREAM_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_dream_rules.py::test_a_node_citing_a_missing_file_or_flagged_stale_is_demoted_one_priority_and_at_4_suppressed
    # (hand-picked) The model is sent every proposal, past its budget of 40.
    Mutation('sw2-dream-judge-unbounded', REQ, 'for c in changes[:JUDGED]]',
             'for c in changes]', MNT_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_maintenance.py::test_the_model_judges_forty_proposals_and_the_rest_keep_the_rules_verdict
    # (hand-picked) lore/review leaves out faded priority-4 nodes (it lists priority 2-4).
    Mutation('sw2-review-skips-priority-4', REQ, 'min_priority=4)',
             'min_priority=3)', MNT_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_maintenance.py::test_review_pages_most_faded_first_from_priority_2_to_4_and_says_where_the_next_page_starts
    # (hand-picked) lore/review without a threshold uses 0.5, not the documented 0.3.
    Mutation('sw2-review-default-threshold', REQ, 'threshold = decay.THRESHOLD if threshold is None else threshold',
             'threshold = 0.5 if threshold is None else threshold', MNT_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_maintenance.py::test_review_pages_most_faded_first_from_priority_2_to_4_and_says_where_the_next_page_starts
    # (hand-picked) A fact's invalidation is never sent to the team: the colleagues keep a closed fact open. It survived the whole of tests/integration/test_shared.py.
    Mutation('sw2-replica-invalidations-stay-home', REP, 'SHARED_KINDS = ("nodeOp", "assertFact", "invalidateFact", "distillation")',
             'SHARED_KINDS = ("nodeOp", "assertFact", "distillation")', REPLICA_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_shared_replica.py::test_nodes_and_facts_travel_usage_goes_its_own_way_and_conversations_only_where_named
    # A workspace file range read through lore/getNode reaches the agent unredacted. It survived every unit and integration file that mentions redaction.
    Mutation('sw2-get-node-file-unredacted', NR, 'content=redact("\\n".join(lines)),',
             'content="\\n".join(lines),', NR_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_get_node_redaction.py::test_a_file_range_read_through_get_node_is_redacted
    # The dashboard's evidence calls a changed source current and an untouched one changed.
    Mutation('sw2-evidence-current-inverted', REQ, '"current": now is not None and now == s.get("sha256")})',
             '"current": now is not None and now != s.get("sha256")})', MNT_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_maintenance.py::test_the_evidence_of_a_node_tells_a_current_source_from_a_changed_and_a_missing_one
    # A fact said again (a restatement, or one merged into another) is a second `asserted` event on the timeline.
    Mutation('sw2-timeline-shows-restatements', FQ, '        if r["merged_into"] is not None or r["shadowed"]:\n            continue\n        events.append',
             '        if False:\n            continue\n        events.append', FACTS_T, by=BY),
    # Survived the first run; now caught by
    # tests/integration/test_fact_queries.py::test_a_restated_fact_is_one_event_on_its_subjects_timeline
    # The review's reason says `last opened 0 days ago` for a node never opened.
    Mutation('sw2-decay-reason-always-last-opened', DECAY, '    if f.used == 0:\n        since',
             '    if False:\n        since', DECAY_T, by=BY),
    # Survived the first run; now caught by
    # tests/unit/test_decay.py::test_stability_stays_between_a_quarter_day_and_ten_years
]
