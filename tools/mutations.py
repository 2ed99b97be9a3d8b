"""Plant each guarded bug in a scratch copy of the tree and run the tests that guard it.

    python tools/mutations.py            # every mutation
    python tools/mutations.py fence      # one, by name

A mutation is *caught* when its guarding tests fail. The list is the one in
docs/architecture.md ("Invariants, proven"); a mutation whose text no longer occurs in the
source is reported as stale, so the list cannot silently rot.

`by` says who chose the bug: "authors" (the people who wrote the tests) or "reviewer: ..."
(someone who had not read the tests when they planted it). Each independent review round is
a file of its own under tools/rounds/ defining `ROUND = [Mutation(...), ...]`; they are
appended to MUTATIONS here, so `python tools/mutations.py` runs every round.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]
    by: str = "authors"


INV = "tests/integration/test_invariants.py"
MCP = "tests/integration/test_mcp.py"
CTX = "tests/e2e/test_context_assembly.py"
ASK = "tests/e2e/test_ask.py"
MNT = "tests/integration/test_maintenance.py"
SHR = "tests/integration/test_shared.py"
DATES = "tests/integration/test_recall_dates.py"
REPLIES = "tests/integration/test_recall_replies.py"
LATE = "tests/integration/test_late_interaction.py"
RENAME = "tests/integration/test_model_rename_trimmed.py"
REINDEX = "tests/integration/test_dense_leg.py::test_a_reindex_counts_every_record_still_to_embed_until_its_vectors_are_back"
HOOKS = "tests/e2e/test_harness_hooks.py"
SCOPE = "tests/integration/test_store_and_index.py::test_text_search_keeps_to_the_asked_kinds_and_projects_and_the_scope_never_scores"
MUTATIONS = [
    Mutation("fence", "lore_sidecar/store/db.py", "if current != epoch:", "if False:",
             (f"{INV}::test_a_writer_whose_epoch_was_superseded_cannot_commit_and_is_told_staleEpoch",)),
    Mutation("fsync-file", "lore_sidecar/store/spool.py", "            if durable:\n                os.fsync(fd)\n",
             "            pass\n",
             (f"{INV}::test_an_acknowledged_follower_write_survives_a_power_cut_at_the_moment_of_the_reply",)),
    Mutation("fsync-dir", "lore_sidecar/store/spool.py", "        if durable:\n            fsync_path(self.directory)\n",
             "        pass\n",
             (f"{INV}::test_an_acknowledged_follower_write_survives_a_power_cut_at_the_moment_of_the_reply",)),
    Mutation("export-suppressed", "lore_sidecar/engine/memory/lore_md.py", '"sources", "suppressed")', '"sources")',
             (f"{INV}::test_every_node_field_survives_the_lore_md_round_trip_into_another_store",
              "tests/unit/test_memory_rules.py")),
    Mutation("render-expiresAt", "lore_sidecar/engine/memory/lore_md.py", "meta = {k: n.get(k) for k in FIELDS if",
             'meta = {k: n.get(k) for k in FIELDS if k != "expiresAt" and',
             (f"{INV}::test_every_node_field_survives_the_lore_md_round_trip_into_another_store",
              "tests/unit/test_memory_rules.py")),
    Mutation("budget-on-update", "lore_sidecar/engine/memory/knowledge.py",
             "            self._check_budget(c, scope, row[\"project_id\"]", "            0 and self._check_budget(c, scope, row[\"project_id\"]",
             (f"{INV}::test_the_priority_budget_holds_when_an_update_raises_a_priority",)),
    Mutation("asOf-on-messages", "lore_sidecar/engine/recall/recaller.py",
             'if as_of is not None and row["created_at"] > as_of:', "if False:",
             (f"{INV}::test_recall_as_of_a_time_hides_messages_recorded_after_it",)),
    Mutation("close-inclusive", "lore_sidecar/store/fact_rows.py", "? < f.eff_until", "? <= f.eff_until",
             ("tests/integration/test_facts.py::test_an_invalidated_fact_is_gone_now_but_there_as_of_a_date_inside_its_window",
              "tests/integration/test_facts_oracle.py")),
    Mutation("close-skips-restatements", "lore_sidecar/engine/facts/rules.py",
             "            if eff.shadowed:\n                continue", "            if not eff.visible:\n                continue",
             ("tests/integration/test_facts.py::test_a_close_also_ends_a_restatement_of_the_same_value",
              "tests/integration/test_facts_oracle.py")),
    Mutation("ties-by-address", "lore_sidecar/store/text_index.py",
             "return sorted(found, key=lambda h: (-h[2], h[0], h[1]))[:limit]", "return found[:limit]",
             (f"{INV}::test_a_rebuilt_index_ranks_a_thousand_tied_messages_exactly_like_the_live_one",)),
    Mutation("busy-store-quarantined", "lore_sidecar/engine/writes/retry.py",
             "            return Verdict(RETRY, backoff(attempt), why)\n        return Verdict(SETTLE",
             "            return Verdict(QUARANTINE, why=why)\n        return Verdict(SETTLE",
             ("tests/unit/test_write_path.py",)),
    Mutation("write-mark-unlocked-reset", "lore_sidecar/engine/roles.py", "            if self._seq <= seq:\n", "            if True:\n",
             ("tests/unit/test_write_path.py",)),
    Mutation("outbox-trimmed-past-the-dense-leg", "lore_sidecar/engine/indexing/indexer.py",
             "                if self.dense is None:\n                    self._trim()\n",
             "                self.records.outbox_trim(self.applied_seq)\n",
             ("tests/integration/test_dense_leg.py::test_recall_is_lexical_while_vectors_lag_and_hybrid_once_they_catch_up",)),
    Mutation("view-closed-under-readers", "lore_sidecar/election.py", "    view.text.close()\n",
             "    view.text.close()\n    view.text.index = None\n",
             (f"{INV}::test_recalls_on_four_threads_never_fail_while_the_instance_is_promoted_and_demoted_twenty_times",)),
    Mutation("mcp-call-unbounded", "lore_sidecar/engine_host.py",
             "async with asyncio.timeout(timeout_s or self.timeout_s):", "if True:",
             (f"{MCP}::test_a_hung_store_gives_a_tool_error_within_5_s_and_the_agent_goes_on",)),
    Mutation("mcp-use-not-attributed", "lore_sidecar/mcp_face/tools.py",
             '"queryId": query_id,\n                                                       "harness": who(ctx)}',
             '"queryId": query_id,\n                                                       "harness": None}',
             (f"{MCP}::test_the_clients_own_name_names_the_runtime",)),
    Mutation("node-source-outside-root", "lore_sidecar/engine/memory/nodes.py",
             "            raise outside_workspace(path) from None", "            return path",
             (f"{MCP}::test_refusals_come_back_as_tool_errors_beside_the_same_call_succeeding",)),
    Mutation("window-moves-every-turn", "lore_sidecar/engine/context/gradient.py",
             "    cap = pinned + slack\n", "    cap = pinned\n",  # the window's slack (was HYSTERESIS before 2a03b71)
             (f"{CTX}::test_a_150_turn_session_never_exceeds_the_window_and_the_prefix_is_stable_between_compactions",)),
    Mutation("window-cut-inside-a-tool-call", "lore_sidecar/engine/context/bodies.py",
             "    out = set(turn_starts(api, conv))\n", "    out = set(range(1, len(conv)))\n",
             (f"{CTX}::test_an_in_flight_tool_call_and_its_result_are_never_split_or_stubbed",
              f"{CTX}::test_openai_chat_and_responses_bodies_keep_tool_call_pairing")),
    Mutation("too-long-ignored", "lore_sidecar/engine/context/requests.py",
             "state.force_min_layer = min(4, max(state.layer, state.force_min_layer) + 1)", "pass",
             (f"{CTX}::test_prompt_too_long_raises_the_next_calls_layer_and_survives_a_restart",)),
    Mutation("ask-walk-follows-links", "lore_sidecar/engine/ask/tools.py",
             "                if e.is_symlink():\n                    continue", "                if False:\n                    continue",
             ("tests/integration/test_ask_tools.py::test_the_same_tools_answer_inside_the_project",)),
    Mutation("ask-frozen-block-rebuilt-per-question", "lore_sidecar/engine/ask/window.py",
             "        deltas, self.pending = tuple(self.pending), []", "        self.refreeze()\n        deltas, self.pending = tuple(self.pending), []",
             (f"{ASK}::test_twenty_questions_extend_the_same_prefix_and_read_it_from_the_cache",
              f"{ASK}::test_an_edited_source_makes_its_fact_stale_as_a_delta_while_the_frozen_block_stays")),
    Mutation("ask-commit-last-writer-wins", "lore_sidecar/engine/ask/requests.py",
             "        w.history.extend(out.turns)", "        w.history[:] = [*fork.history, *out.turns]",
             (f"{ASK}::test_three_questions_at_once_each_run_on_the_fork_and_all_their_facts_are_kept",)),
    Mutation("ask-no-soft-deadline", "lore_sidecar/engine/ask/requests.py",
             "soft = t0 + budget_s - max(0.25, 0.15 * budget_s)", "soft = t0 + 3600",
             (f"{ASK}::test_a_model_slower_than_the_deadline_still_gets_an_answer_before_it",)),
    Mutation("ask-ledger-never-revalidated", "lore_sidecar/engine/ask/requests.py",
             "        w.ledger, went, back = lg.revalidate(w.ledger, sha)", "        went, back = [], []",
             (f"{ASK}::test_an_edited_source_makes_its_fact_stale_as_a_delta_while_the_frozen_block_stays",)),
    Mutation("ask-compaction-without-hysteresis", "lore_sidecar/engine/ask/compaction.py",
             "    budget = int(LOW * window_tokens)", "    budget = int(HIGH * window_tokens)",
             (f"{ASK}::test_compaction_fires_above_085_ends_at_060_or_less_and_keeps_every_question",)),
    Mutation("ask-cold-answer-accepted", "lore_sidecar/engine/ask/loop.py",
             "        if fork.cold and out.tool_calls == 0 and not sent_back:", "        if False:",
             (f"{ASK}::test_a_cold_start_answer_without_looking_is_sent_back_once",)),
    Mutation("dream-changes-priority-0", "lore_sidecar/engine/maintenance/dream.py",
             'protected=n["priority"] <= 1))', "protected=False))",
             (f"{MNT}::test_dream_handles_each_case_with_a_review_mark_and_rolls_back_exactly",)),
    Mutation("rollback-keeps-the-dreamed-content", "lore_sidecar/engine/maintenance/requests.py",
             'RESTORED = {"content": "content", "category"', 'RESTORED = {"category"',
             (f"{MNT}::test_dream_in_model_mode_follows_the_models_verdicts",
              f"{MNT}::test_dream_handles_each_case_with_a_review_mark_and_rolls_back_exactly")),
    Mutation("one-use-relabels-every-recall", "lore_sidecar/engine/maintenance/decay.py",
             "events = [(t, q in opened, opened.get(q, t)) for t, q in shown]",
             "events = [(t, bool(opened), opened.get(q, t)) for t, q in shown]",
             ("tests/unit/test_decay.py",)),
    # Since b38abd7 the bytes restored are the staged copies, hashed as they are copied
    # (store/backup_intake.py copy_listed); verify()'s hash check of the backup's own files is
    # a pre-check a flipped byte never needs (staging refuses it alike). The verification that
    # guards what is restored is the copy's: a file rewritten after the pre-check gets through
    # without it. (Re-pointed by the independent backups round, 2026-12-03.)
    Mutation("restore-without-verifying", "lore_sidecar/store/backup_intake.py",
             "            if h.hexdigest() != want:\n                raise corrupt(",
             "            if False:\n                raise corrupt(",
             ("tests/integration/test_restore_untrusted.py::test_a_file_rewritten_after_the_check_is_refused_by_the_hash_of_its_copy",
              "tests/integration/test_backup.py::test_keep_rotates_and_a_corrupted_backup_is_refused_before_anything_is_replaced")),
    Mutation("recall-ignores-retrievability", "lore_sidecar/engine/maintenance/decay.py",
             "    return 1.0 - WEIGHT + WEIGHT * retrievability", "    return 1.0",
             (f"{MNT}::test_recall_ranks_a_node_that_is_never_opened_below_one_that_is_and_never_touches_priority_0_1",)),
    Mutation("shared-budget-unchecked", "lore_sidecar/shared/record.py",
             "        budget(conn, team, project, scope, priority, None)\n", "        pass\n",
             (f"{SHR}::test_six_concurrent_creates_for_the_last_priority_0_slot_one_succeeds",)),
    Mutation("shared-version-unchecked", "lore_sidecar/shared/record.py",
             "        if expected is not None and expected != version:", "        if False:",
             (f"{SHR}::test_six_machines_see_every_node_and_one_version_wins",)),
    Mutation("shared-offline-write-dropped", "lore_sidecar/shared/replica.py",
             "            self._offline(exc)\n            self.outbox.put(op)\n            return None\n",
             "            self._offline(exc)\n            return None\n",
             (f"{SHR}::test_a_10_s_outage_loses_no_acknowledged_write_and_recall_keeps_answering",)),
    Mutation("files-fused-by-rank", "lore_sidecar/engine/recall/fusion.py",
             "        out += combine(group(lexical, name), group(vector, name), lexical_weight=lexical_weight,\n"
             "                       vector_weight=weight, k=k)",
             "        out += fuse(group(lexical, name), group(vector, name), lexical_weight=lexical_weight,\n"
             "                    vector_weight=weight, k=k)",
             ("tests/unit/test_rules.py::test_auto_fusion_of_files_lets_a_near_tie_of_the_dense_leg_keep_bm25s_order",)),
    Mutation("files-by-the-default-model", "lore_sidecar/llm/embedders.py",
             "        return self.files if kind == \"files\" else self.default", "        return self.default",
             ("tests/integration/test_dense_leg.py::test_workspace_code_is_found_by_meaning_through_its_own_model_and_conversation_keeps_the_static_one",)),
    Mutation("query-embedded-for-empty-kinds", "lore_sidecar/engine/recall/recaller.py",
             "model = self.embedder.for_kind(kind) if kind in held else None", "model = self.embedder.for_kind(kind)",
             ("tests/integration/test_dense_leg.py::test_a_conversation_only_store_never_loads_the_files_model_to_recall",)),
    Mutation("scope-exclusion-dropped", "lore_sidecar/store/text_index.py",
             "        return [(Occur.MustNot, Q.term_query(schema, field, v)) for v, _ in others]", "        return []",
             (SCOPE,)),
    Mutation("scope-scores", "lore_sidecar/store/text_index.py",
             "for v in sorted(asked)]), 0.0))]", "for v in sorted(asked)]), 1.0))]",
             (SCOPE,)),
    Mutation("deferred-dense-never-runs", "lore_sidecar/engine/recall/recaller.py",
             "if deferred and held and (last is None or", "if False and (last is None or",
             ("tests/integration/test_dense_leg.py::test_a_page_full_of_word_matches_skips_the_vector_leg_and_is_the_page_it_would_have_given",)),
    Mutation("dense-never-deferred", "lore_sidecar/engine/recall/recaller.py",
             "            deferred = dense and s.vector_weight <= s.lexical_weight and (",
             "            deferred = False and (",
             ("tests/integration/test_dense_leg.py::test_a_page_full_of_word_matches_skips_the_vector_leg_and_is_the_page_it_would_have_given",)),
    Mutation("distilling-ignores-the-text-leg", "lore_sidecar/engine/memory/distiller.py",
             "        distiller.between = self._words_first\n", "",
             ("tests/integration/test_dense_leg.py::test_distilling_waits_while_the_text_leg_has_writes_to_index_and_then_catches_up",)),
    Mutation("embed-batches-misplaced", "lore_sidecar/llm/embedders.py",
             "for i, enc in enumerate(encs, start):", "for i, enc in enumerate(encs):",
             ("tests/unit/test_embedders.py::test_a_batch_larger_than_one_tokeniser_call_embeds_each_text_as_it_would_alone",)),
    Mutation("aws-gate-off-by-one", "lore_sidecar/engine/capture/redact.py",
             "default=0) >= 40),", "default=0) > 40),",
             ("tests/unit/test_redact.py::test_redaction_is_idempotent_and_never_lets_a_planted_secret_through",)),
    Mutation("assigned-secret-lead-short", "lore_sidecar/engine/capture/redact.py",
             "_SECRET_WORD_LEAD = 11", "_SECRET_WORD_LEAD = 10",
             ("tests/unit/test_redact.py::test_the_assigned_secret_rule_is_tried_wherever_a_match_can_start",)),
    Mutation("assigned-secret-overlaps", "lore_sidecar/engine/capture/redact.py",
             "            if at >= end and (m := pattern.match(subject, at)) is not None:",
             "            if (m := pattern.match(subject, at)) is not None:",
             ("tests/unit/test_redact.py::test_the_assigned_secret_rule_is_tried_wherever_a_match_can_start",
              "tests/unit/test_redact.py::test_redaction_is_idempotent_and_never_lets_a_planted_secret_through")),
    Mutation("early-handshake-answered-twice", "lore_sidecar/mcp_face/handshake.py",
             "            self.answered.discard(rid)\n            return \"\"", "            self.answered.discard(rid)",
             (MCP + "::test_a_kept_handshake_answers_the_next_start_at_once_and_the_session_still_works",)),
    Mutation("collector-kept-at-start-up", "lore_sidecar/collector.py", "        gc.set_threshold(*saved)\n", "",
             ("tests/unit/test_startup.py",)),
    Mutation("collector-no-fallback", "lore_sidecar/rpc/server.py",
             "        loop.call_later(START_UP_COLLECTOR_S, collector.started)\n", "",
             ("tests/unit/test_startup.py::test_a_client_that_never_initializes_does_not_keep_the_start_up_setting",)),
    Mutation("snippet-gap-dropped", "lore_sidecar/engine/recall/query.py",
             'gap = " " if before and after and head[-1:].isspace() else ""', 'gap = ""',
             ("tests/unit/test_snippets.py",)),
    Mutation("snippet-piece-too-short", "lore_sidecar/engine/recall/query.py",
             "before = _flat_end(head, width + 1, from_end=True)", "before = _flat_end(head, width // 3, from_end=True)",
             ("tests/unit/test_snippets.py",)),
    Mutation("stems-wrong-initial", "lore_sidecar/engine/recall/query.py", "        initial = stem[:1]\n",
             "        initial = stem[-1:]\n", ("tests/unit/test_snippets.py",)),
    Mutation("stems-mid-word", "lore_sidecar/engine/recall/query.py", 'f"(?<![{WORD_CHARS}])" + re.escape(initial)',
             "re.escape(initial)", ("tests/unit/test_snippets.py",)),
    Mutation("embed-whole-part", "lore_sidecar/engine/indexing/dense.py", 'step = getattr(model, "batch", None)',
             "step = None", ("tests/integration/test_dense_leg.py::test_a_stop_in_the_middle_of_embedding_waits_for_one_call_and_the_next_start_finishes_the_batch",)),
    Mutation("embed-no-stop-check", "lore_sidecar/engine/indexing/dense.py",
             "        for start in range(0, len(order), max(1, step)):\n            if self._stop.is_set():",
             "        for start in range(0, len(order), max(1, step)):\n            if False:",
             ("tests/integration/test_dense_leg.py::test_a_stop_in_the_middle_of_embedding_waits_for_one_call_and_the_next_start_finishes_the_batch",)),
    Mutation("rebuild-stop-is-a-failure", "lore_sidecar/engine/indexing/indexer.py",
             "            except (LoreError, Interrupted):\n                raise\n            except Exception as exc:  # keep serving",
             "            except LoreError:\n                raise\n            except Exception as exc:  # keep serving",
             ("tests/integration/test_dense_leg.py::test_a_stop_in_the_middle_of_a_rebuild_leaves_a_store_the_next_start_rebuilds_whole",)),
    Mutation("stop-leaves-loads-in-any-process", "lore_sidecar/engine/indexing/dense.py",
             "                if self._loading and loads.leave:\n", "                if self._loading:\n",
             ("tests/integration/test_dense_leg.py::test_a_stop_while_the_files_model_loads_does_not_wait_for_the_load_and_loses_nothing",)),
    Mutation("parts-ascii-runs-in-unicode", "lore_sidecar/compound.py", '_RUN = re.compile(f"[^\\\\W{CJK}]+")',
             '_RUN = re.compile(r"[A-Za-z0-9_]+")', ("tests/unit/test_index_text.py",)),
    Mutation("cjk-query-asks-characters", "lore_sidecar/words.py", "return bigrams if query else [*run, *bigrams]",
             "return [*run, *bigrams]", ("tests/e2e/test_recall_any_language.py",)),
    Mutation("cjk-runs-not-split", "lore_sidecar/words.py", "out += _grams(piece, query) if _HAS_CJK.match(piece) else [piece]",
             "out.append(piece)", ("tests/integration/test_text_any_language.py",)),
    Mutation("casefold-is-lower", "lore_sidecar/words.py", "unicodedata.normalize(\"NFKC\", text).casefold()",
             "unicodedata.normalize(\"NFKC\", text).lower()", ("tests/integration/test_text_any_language.py",)),
    Mutation("accents-kept", "lore_sidecar/words.py", "out = _latin_base(ch)", "out = ch",
             ("tests/integration/test_text_any_language.py",)),
    Mutation("scope-words-ascii-only", "lore_sidecar/engine/lifecycle/blocks.py",
             "return {w.lower() for w in words(text, query=True) if len(w) >= 3 or (len(w) == 2 and is_cjk(w))}",
             "return set(re.findall(r\"[a-z0-9_]{3,}\", text.lower()))", ("tests/unit/test_lifecycle_rules.py",)),
    Mutation("words-only-drops-underscore", "lore_sidecar/words.py", "(chr(b).isalnum() or b == 95) else 32",
             "chr(b).isalnum() else 32", ("tests/unit/test_index_text.py",)),
    Mutation("workers-prepare-unchanged-too", "lore_sidecar/engine/workspace/index.py",
             "                                   for e, c in zip(entries, changed, strict=True) if c])",
             "                                   for e, c in zip(entries, changed, strict=True)])",
             ("tests/integration/test_scan_workers.py",)),
    Mutation("workers-no-fallback", "lore_sidecar/engine/workspace/index.py",
             "                    log.warning(\"%s; preparing the rest here\", exc)\n                    results = None\n",
             "                    log.warning(\"%s; preparing the rest here\", exc)\n",
             ("tests/integration/test_scan_workers.py",)),
    Mutation("scan-does-not-hold", "lore_sidecar/engine/workspace/index.py",
             "            with self.writing():\n                return self._scan(", "            if True:\n                return self._scan(",
             ("tests/integration/test_dense_leg.py::test_a_scan_holds_the_legs_that_follow_the_text_leg_until_it_has_written_its_last_batch",)),
    Mutation("date-window-search", "lore_sidecar/engine/recall/recaller.py",
             "lex = self._within(lex, when, words, project_ids, pool)", "lex = lex",
             (f"{DATES}::test_a_query_naming_a_day_finds_that_days_message_beyond_the_candidate_pool",)),
    Mutation("date-bonus", "lore_sidecar/engine/recall/recaller.py",
             "                    score += self._date_bonus()\n", "                    pass\n",
             (f"{DATES}::test_a_query_naming_a_day_finds_that_days_message_beyond_the_candidate_pool",)),
    Mutation("date-field-unindexed", "lore_sidecar/store/text_index.py",
             '                doc.add_unsigned("day", d.day)\n', "                pass\n",
             (f"{DATES}::test_a_query_naming_a_day_finds_that_days_message_beyond_the_candidate_pool",)),
    Mutation("date-slack", "lore_sidecar/engine/recall/when.py", "DAY_SLACK = 1 ", "DAY_SLACK = 0 ",
             ("tests/unit/test_when.py",)),
    Mutation("date-modal-may", "lore_sidecar/engine/recall/when.py", 'r"\\b(?P<m>January|February|March|April|June|',
             'r"\\b(?P<m>January|February|March|April|May|June|', ("tests/unit/test_when.py",)),
    Mutation("parts-null-not-cut", "lore_sidecar/store/text_index.py",
             "d.parts if d.parts is not None else self._parts.of(d.title, d.body)", 'd.parts or ""',
             ("tests/integration/test_store_and_index.py::test_a_chunk_recorded_without_its_parts_is_still_found_by_them",)),
    Mutation("parts-prepared-without-the-title", "lore_sidecar/engine/workspace/prep.py",
             "_parts(c.title, c.text))", '_parts("", c.text))',
             ("tests/integration/test_scan_workers.py::test_a_scan_prepared_by_workers_records_what_one_prepared_in_process_records",)),
    Mutation("workers-closed-while-blocked", "lore_sidecar/engine/workspace/workers.py",
             "        if not self._finished:", "        if False:",
             ("tests/integration/test_scan_workers.py::test_a_scan_that_stops_reading_its_workers_half_way_still_closes_them",)),
    Mutation("spawn-from-the-current-folder", "lore_sidecar/spawn.py",
             'return [sys.executable, "-P", "-m", module, *args]', 'return [sys.executable, "-m", module, *args]',
             ("tests/integration/test_spawn_safety.py",)),
    Mutation("reply-not-brought", "lore_sidecar/engine/recall/neighbours.py",
             "        if place.reply is not None and place.chars <= REPLY_MAX_CHARS:", "        if False:",
             (f"{REPLIES}::test_a_question_hit_brings_its_reply_in_just_ahead_of_it",)),
    Mutation("reply-for-long-questions", "lore_sidecar/engine/recall/neighbours.py",
             "        if place.reply is not None and place.chars <= REPLY_MAX_CHARS:", "        if place.reply is not None:",
             (f"{REPLIES}::test_a_long_turn_that_ends_asking_keeps_its_place_ahead_of_its_reply",)),
    Mutation("recall-now-ignored", "lore_sidecar/engine/recall/recaller.py",
             "asked_at = dates.parse_time(now) or dates.parse_time(as_of)", "asked_at = dates.parse_time(as_of)",
             ("tests/integration/test_recall_now.py::test_relative_words_count_from_now",)),
    Mutation("recall-now-filters", "lore_sidecar/engine/service.py",
             "            as_of=iso_utc(as_of) if as_of else None,", "            as_of=iso_utc(as_of or now) if as_of or now else None,",
             ("tests/integration/test_recall_now.py::test_now_hides_nothing_written_after_it",)),
    Mutation("recall-now-unchecked", "lore_sidecar/wire/converter.py",
             "value.now is not None and not _is_time(value.now)", "False",
             ("tests/integration/test_recall_now.py::test_a_now_that_is_no_time_is_refused",)),
    Mutation("ago-without-ago", "lore_sidecar/engine/recall/when.py",
             r'r"\s+(?P<u>day|week|month)s?\s+ago\b"', r'r"\s+(?P<u>day|week|month)s?\b"',
             ("tests/unit/test_when.py",)),
    Mutation("reply-below-question", "lore_sidecar/engine/recall/neighbours.py", "REPLY_LEAD = 1e-9", "REPLY_LEAD = -1e-9",
             (f"{REPLIES}::test_a_question_hit_brings_its_reply_in_just_ahead_of_it",)),
    Mutation("reply-for-statements", "lore_sidecar/store/turns.py",
             "if asks and after is not None else None", "if after is not None else None",
             (f"{REPLIES}::test_a_statement_hit_keeps_its_next_turn_below_it",)),
    Mutation("asks-anywhere", "lore_sidecar/model.py",
             '    if text.endswith("?"):\n        return True', '    if "?" in text:\n        return True',
             (f"{REPLIES}::test_asking_is_read_from_the_end_of_the_text", "tests/unit/test_turns.py")),
    Mutation("asks-not-past-a-pasted-block", "lore_sidecar/model.py",
             "    if not text.endswith(FENCES):\n        return False", "    if True:\n        return False",
             (f"{REPLIES}::test_a_question_before_a_pasted_log_still_asks", "tests/unit/test_turns.py")),
    Mutation("asks-read-from-the-tail-only", "lore_sidecar/store/turns.py",
             "            if not asks and tail.rstrip().endswith(FENCES):", "            if False:",
             (f"{REPLIES}::test_a_question_before_a_pasted_log_still_asks",)),
    Mutation("reply-is-the-tool-call", "lore_sidecar/store/turns.py",
             "        if not says_nothing(head):", "        if True:",
             (f"{REPLIES}::test_in_an_agent_session_the_reply_is_the_answer_past_the_tool_calls",)),
    Mutation("reply-after-the-asker-moved-on", "lore_sidecar/store/turns.py",
             "        if rrole == role:\n            return None", "        if False:\n            return None",
             (f"{REPLIES}::test_an_unanswered_question_in_an_agent_session_brings_nothing_ahead",)),
    Mutation("tool-output-asks", "lore_sidecar/store/turns.py",
             "        if role in SIDES:", "        if True:",
             (f"{REPLIES}::test_a_tools_output_ending_in_a_question_mark_asks_no_one",)),
    Mutation("reply-across-sessions", "lore_sidecar/store/turns.py",
             "FROM messages WHERE session_id=? AND id>? ORDER BY id LIMIT ?",
             "FROM messages WHERE (session_id=? OR 1) AND id>? ORDER BY id LIMIT ?",
             (f"{REPLIES}::test_a_reply_is_the_next_turn_of_the_same_session_only",)),
    Mutation("date-alone-as-words", "lore_sidecar/engine/recall/recaller.py",
             "alone = not q.asks_for_words(when.rest)", "alone = False",
             (f"{DATES}::test_a_query_about_a_day_alone_returns_that_days_messages_latest_first",)),
    Mutation("date-alone-oldest-first", "lore_sidecar/store/text_index.py",
             "            return sorted(found, key=lambda h: (h[0], -h[1]))[:limit]",
             "            return sorted(found, key=lambda h: (h[0], h[1]))[:limit]",
             (f"{DATES}::test_a_query_about_a_day_alone_returns_that_days_messages_latest_first",)),
    Mutation("date-alone-empty-window", "lore_sidecar/engine/recall/recaller.py", "            return inside or lex",
             "            return inside",
             (f"{DATES}::test_a_query_about_a_day_alone_returns_that_days_messages_latest_first",)),
    Mutation("date-ranges-uncapped", "lore_sidecar/engine/recall/when.py", "                if len(ranges) < MAX_RANGES:",
             "                if True:", ("tests/unit/test_when.py",)),
    Mutation("stale-batch-reads-its-first-file-only", "lore_sidecar/engine/memory/knowledge.py",
             "        shas = dict(changes)", "        shas = dict(list(changes)[:1])",
             ("tests/e2e/test_conversation_memory.py::test_one_rescan_that_changes_several_cited_files_marks_each_citing_node_stale",)),
    Mutation("when-question-ignored", "lore_sidecar/engine/recall/recaller.py",
             "        timed = self._tell_when(msg_rows, told) if told is not None else set()", "        timed = set()",
             (f"{DATES}::test_a_question_asking_when_prefers_the_message_that_tells_a_time",)),
    Mutation("when-told-by-a-tool", "lore_sidecar/engine/recall/recaller.py",
             'if row["role"] in SIDES]', "]",
             (f"{DATES}::test_a_tools_output_that_tells_a_time_is_no_answer_to_when",)),
    Mutation("when-asked-anywhere", "lore_sidecar/engine/recall/when.py",
             'r"^\\W*(?:since', 'r"\\b(?:since',
             (f"{DATES}::test_a_question_asking_when_prefers_the_message_that_tells_a_time", "tests/unit/test_when.py")),
    Mutation("dense-deferred-past-the-when-bonus", "lore_sidecar/engine/recall/recaller.py",
             "(self._when_bonus() if asks_time else 0.0)\n        message +=", "0.0\n        message +=",
             (f"{DATES}::test_the_dense_leg_is_skipped_only_when_no_vector_hit_could_reach_the_page",)),
    Mutation("how-long-asks-nothing", "lore_sidecar/engine/recall/when.py",
             "    if _ASKS_HOW_LONG.search(query):\n        return says_how_long", "    if False:\n        return says_how_long",
             (f"{DATES}::test_a_question_asking_how_long_prefers_the_message_that_tells_a_duration", "tests/unit/test_when.py")),
    Mutation("neighbour-a-bare-tool-call", "lore_sidecar/store/turns.py",
             "f\"SELECT m.id, {nearest_sql('x.id', before=True)}, {nearest_sql('x.id', before=False)},\"",
             "\"SELECT m.id, (SELECT MAX(p.id) FROM messages p WHERE p.session_id=m.session_id AND p.id<m.id),\""
             " \" (SELECT MIN(n.id) FROM messages n WHERE n.session_id=m.session_id AND n.id>m.id),\"",
             (f"{REPLIES}::test_a_hits_neighbours_in_an_agent_session_are_messages_that_say_something",)),
    Mutation("nearest-turn-any-turn", "lore_sidecar/store/turns.py",
             "            f\" AND {says_something_sql('x.text')} ORDER BY", "            f\" ORDER BY",
             (f"{REPLIES}::test_a_hits_neighbours_in_an_agent_session_are_messages_that_say_something",
              f"{REPLIES}::test_an_agent_sessions_context_passes_over_bare_tool_calls_live_and_rebuilt")),
    Mutation("context-for-a-bare-tool-call", "lore_sidecar/store/records.py",
             '        says = says_something_sql("m.text")', '        says = "1"',
             (f"{REPLIES}::test_an_agent_sessions_context_passes_over_bare_tool_calls_live_and_rebuilt",)),
    Mutation("context-requeued-past-a-tool-call", "lore_sidecar/store/records.py",
             "                    last_in_session[m.session_id] = cur.lastrowid\n                c.execute(",
             "                    pass\n                last_in_session[m.session_id] = cur.lastrowid\n                c.execute(",
             (f"{REPLIES}::test_an_agent_sessions_context_passes_over_bare_tool_calls_live_and_rebuilt",)),
    Mutation("context-requeue-starts-at-a-tool-call", "lore_sidecar/store/records.py",
             'c.execute(f"SELECT id FROM messages WHERE session_id=? AND {says_something_sql(\'text\')}"',
             'c.execute(f"SELECT id FROM messages WHERE session_id=? AND 1"',
             (f"{REPLIES}::test_an_agent_sessions_context_passes_over_bare_tool_calls_live_and_rebuilt",)),
    Mutation("workers-never-started", "lore_sidecar/engine/workspace/index.py",
             "if changed[-1] and to_read == PARALLEL_MIN_FILES and", "if changed[-1] and to_read == -1 and",
             ("tests/integration/test_scan_workers.py::test_a_scan_prepared_by_workers_records_what_one_prepared_in_process_records",)),
    Mutation("late-step-skipped", "lore_sidecar/engine/recall/recaller.py",
             "                cands = late_order.reorder(cands, pieces, chunk_rows, self.settings, self.vectors.late_of)\n",
             "                pass\n",
             (f"{LATE}::test_the_pieces_a_chunk_matches_by_reorder_the_head_of_a_files_recall",)),
    Mutation("late-rows-outlive-their-file", "lore_sidecar/store/vector_index.py",
             "        self.late.remove(kind, keys)\n", "",
             (f"{LATE}::test_each_embedded_chunk_keeps_its_pieces_and_loses_them_with_its_file",)),
    Mutation("late-format-unchecked", "lore_sidecar/store/vector_index.py",
             '        if meta.get("late") not in late:\n', "        if False:\n",
             (f"{LATE}::test_vectors_written_without_pieces_are_rebuilt_with_them_on_the_next_start",)),
    Mutation("model-rename-drops-every-kind", "lore_sidecar/store/vector_index.py",
             "if kind not in self.spaces or kind in stale:", "if kind not in self.spaces or stale:",
             (f"{RENAME}::test_a_files_model_rename_on_a_trimmed_store_reembeds_files_only",)),
    Mutation("reembedding-backlog-unreported", "lore_sidecar/engine/status.py",
             " + view.indexer.dense_backlog\n", "\n",
             (f"{RENAME}::test_a_files_model_rename_on_a_trimmed_store_reembeds_files_only", REINDEX)),
    Mutation("lost-vectors-rebuild-both-indexes", "lore_sidecar/engine/indexing/indexer.py",
             "        if text_seq < trimmed:\n", "        if text_seq < trimmed or vec_seq < trimmed:\n",
             (f"{RENAME}::test_vectors_lost_on_a_trimmed_store_are_embedded_again_without_a_text_rebuild",)),
    Mutation("text-rebuild-reembeds-everything", "lore_sidecar/engine/indexing/indexer.py",
             "            self._rebuild(vectors=self.dense is None)\n", "            self._rebuild(vectors=True)\n",
             (f"{RENAME}::test_a_text_index_rebuilt_on_a_trimmed_store_keeps_the_vectors",)),
    Mutation("reindex-words-read-level", "lore_sidecar/engine/status.py",
             " and not (indexer and indexer.rebuilding)", "", (REINDEX,)),
    Mutation("reindex-blanks-the-words", "lore_sidecar/store/text_index.py",
             "        self._require_writer().delete_all_documents()\n",
             "        self._require_writer().delete_all_documents()\n        self._require_writer().commit()\n"
             "        self.index.reload()\n", (REINDEX,)),
    Mutation("reader-counts-stale-kinds", "lore_sidecar/engine/status.py",
             "left = sum(counts.get(COUNTED_AS.get(kind, kind), 1) for kind in stale)", "left = len(stale)",
             (f"{RENAME}::test_a_reader_counts_the_records_of_a_kind_still_to_embed_again_not_the_kind",)),
    # (A lstat of a file gone since its folder was listed, left unguarded alone, survived one
    # run: the test's churn provokes the folder case reliably, a single file's rarely.)
    Mutation("health-walk-fails-on-a-gone-file", "lore_sidecar/ui/pages.py",
             "    for folder, _, names in os.walk(store):  # a folder gone before it is listed is skipped\n",
             "    names, folder = [str(p) for p in store.rglob('*') if p.is_file()], ''\n    if True:\n",
             ("tests/integration/test_dashboard_pages.py::test_the_health_page_answers_while_files_and_folders_of_the_store_come_and_go",)),
    Mutation("pi-first-call-waits-3-s", "editors/shared/lore-client.ts",
             "    if (!this.answered) wait = Math.max(wait, this.readyBy - Date.now());\n", "",
             (f"{HOOKS}::test_pi_extension_waits_for_a_sidecar_slow_to_open_and_its_first_prompt_gets_the_recall",)),
    Mutation("pi-ready-wait-unbounded", "editors/shared/lore-client.ts",
             "wait = Math.max(wait, this.readyBy - Date.now())", "wait = 1e9",
             (f"{HOOKS}::test_pi_extension_carries_on_without_memory_when_the_sidecar_never_opens",)),
    Mutation("follower-misses-a-finished-reembedding", "lore_sidecar/store/vector_index.py",
             ' and meta.get("spaces") == self._loaded_spaces):', "):",
             ("tests/integration/test_store_and_index.py::test_vector_snapshots_are_replaced_atomically",)),
    Mutation("reembedding-saved-as-done-half-way", "lore_sidecar/store/vector_index.py",
             "f\"{PENDING if pending and kind in self.stale else ''}{model}/{dim}\"", "f\"{model}/{dim}\"",
             (f"{RENAME}::test_a_reembedding_stopped_half_way_is_taken_up_on_the_next_start",)),
    Mutation("late-deferred-with-the-dense-leg", "lore_sidecar/engine/recall/recaller.py",
             " and not pieced\n", " and True\n",
             (f"{LATE}::test_conversation_gets_late_interaction_only_from_a_model_with_pieces",)),
    Mutation("follower-vectors-wait-for-a-write", "lore_sidecar/election.py",
             "                        engine.follow_vectors()\n", "                        pass\n",
             (f"{LATE}::test_a_follower_reads_the_writers_pieces_and_ranks_a_files_recall_as_it_does",)),
    Mutation("store-made-with-the-umask", "lore_sidecar/store/filesystem.py",
             "        store.mkdir(mode=0o700)\n", "        store.mkdir()\n        return store\n",
             ("tests/integration/test_store_privacy.py",)),
    Mutation("doctor-quiet-on-an-open-store", "lore_sidecar/setup/doctor.py", "    if mode & 0o077:\n", "    if False:\n",
             ("tests/integration/test_store_privacy.py",)),
    Mutation("restore-aside-name-reused", "lore_sidecar/backups.py", "    while name.exists():\n", "    while False:\n",
             ("tests/integration/test_restore_edges.py",)),
    Mutation("restore-counts-from-the-manifest", "lore_sidecar/backups.py", '"counts": restored,',
             '"counts": manifest["counts"],', ("tests/integration/test_restore_edges.py",)),
    Mutation("restored-store-with-the-umask", "lore_sidecar/store/backup.py", "target.mkdir(parents=True, mode=0o700)",
             "target.mkdir(parents=True)", ("tests/integration/test_restore_edges.py",)),
    Mutation("git-homes-never-swept", "lore_sidecar/engine/gitsafe.py",
             "            _sweep_dead_homes()\n", "",
             ("tests/integration/test_hostile_git.py::test_private_homes_of_processes_that_died_are_swept_and_a_live_ones_kept",)),
    Mutation("git-homes-swept-alive-or-dead", "lore_sidecar/engine/gitsafe.py",
             "            os.kill(int(pid), 0)  # alive", "            raise ProcessLookupError  # alive",
             ("tests/integration/test_hostile_git.py::test_private_homes_of_processes_that_died_are_swept_and_a_live_ones_kept",)),
    Mutation("late-pieces-unfiltered", "lore_sidecar/engine/late.py",
             "if t not in SPECIAL and t not in STOPWORDS and", "if",
             ("tests/unit/test_late.py",)),
    # A writer's lock heartbeat only once its open is done (as before 24d2315).
    Mutation("heartbeat-not-while-opening", "lore_sidecar/app.py",
             "        with heartbeat_while_opening(self.lock) if writer else nullcontext():\n",
             "        with nullcontext():\n",
             ("tests/integration/test_slow_writer_open.py",)),
    # The writer's read-your-writes mark raised only after the drain, not inside the commit.
    Mutation("applied-mark-after-drain", "lore_sidecar/engine/service.py",
             "                                    applying=self.mark.raise_to)",
             "                                    applying=lambda seq: None)",
             ("tests/integration/test_read_your_writes.py::test_the_writer_asked_the_moment_a_followers_write_is_applied_waits_for_it",)),
]


def _rounds() -> list[Mutation]:
    """Every independent review round under tools/rounds/, in file-name order."""
    import importlib.util

    found: list[Mutation] = []
    for path in sorted((ROOT / "tools" / "rounds").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"_round_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found.extend(module.ROUND)
    return found


def run(m: Mutation) -> str:
    src = (ROOT / m.file).read_text()
    if m.old not in src:
        return "stale"
    with tempfile.TemporaryDirectory(prefix=f"mutant-{m.name}-") as tmp:
        tree = Path(tmp) / "tree"
        shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(".git", ".cache", "node_modules", "__pycache__",
                                                                  "*.egg-info", ".hypothesis", "results"))
        if (ROOT / ".cache").is_dir():  # the harnesses the e2e tests installed: shared, not copied (GBs)
            (tree / ".cache").symlink_to(ROOT / ".cache")
        (tree / m.file).write_text(src.replace(m.old, m.new, 1))
        env = {**os.environ, "PYTHONPATH": str(tree)}
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *m.tests],
                              cwd=tree, env=env, capture_output=True, text=True)
        return "caught" if proc.returncode == 1 else ("survived" if proc.returncode == 0 else f"error {proc.returncode}")


def main(names: list[str]) -> int:
    chosen = [m for m in [*MUTATIONS, *_rounds()] if not names or m.name in names]
    bad = 0
    for m in chosen:
        outcome = run(m)
        bad += outcome != "caught"
        print(f"{m.name:28} {outcome:9} {', '.join(t.rsplit('::', 1)[-1] for t in m.tests)}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
