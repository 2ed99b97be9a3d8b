"""rev24: independent review of writesPending (49aa455: engine/service.py `fresh()` and
`recall()`, model.py `RecallResult.writes_pending`, wire/results.py, mcp_face/render.py) and
the distiller's consolidation over every generation with metaKeep honoured (55906d7:
engine/memory/distiller.py `_consolidate`).

Bugs chosen from the code, the commit messages, docs/protocol.md's recall section and
docs/architecture.md's read-your-writes and meta-pass text before any file under tests/ was
opened; guarding tests chosen by file name, `grep -rl <symbol> tests/` and `grep -n ^def test`
only.

First run (23:30-23:34 UTC, once, `python tools/mutations.py <the 16 names>` in two halves side
by side, load ~2-4 on 2 cores; the guards pass unmutated: 23 passed in 68 s): 11 of 16 caught.
  caught:   rev24-writer-wait-answer-dropped, rev24-writer-pending-after-any-write,
            rev24-follower-timeout-silent, rev24-follower-settled-on-timeout,
            rev24-follower-wait-off-by-one, rev24-wire-name, rev24-wire-wrong-field,
            rev24-pending-default-true, rev24-consolidate-stops-at-first-small-gen,
            rev24-consolidate-keep-ignored, rev24-consolidate-and-for-or
  survived: rev24-pending-not-on-lexical-only, rev24-mcp-line-wrong-key,
            rev24-consolidate-keep-boundary, rev24-consolidate-no-gen-3, rev24-consolidate-newest
  error:    none

Survivors, after reading the tests: five real gaps, none equivalent.
  - test_read_your_writes.py recalls without `lexicalOnly` only, and nothing renders the MCP
    text of a recall with `writesPending`. New: test_read_your_writes.py
    ::test_a_lexical_only_recall_whose_wait_for_its_own_write_expires_says_so_too,
    ::test_the_mcp_tool_result_says_when_the_callers_writes_are_not_searchable_yet
  - The metaKeep test keeps 10 of 4 rows (never exactly metaKeep rows over the threshold), the
    owed-generation test stops at gen 1, and every consolidation test counts rows, never which
    ones. New: test_memory_stop_consolidation.py
    ::test_a_meta_keep_equal_to_a_generation_over_the_threshold_keeps_it_all_open,
    ::test_a_generation_owed_alone_consolidates_its_oldest_rows_and_keeps_the_newest_open[1, 3]
Second run (23:35-23:37 UTC, the 5 survivors, their guards unchanged, the new tests in them):
5 of 5 caught; each new test on its own fails with its bug planted and passes without.

Found while reading (not planted), a strict xfail in test_read_your_writes.py
(::test_an_mcp_recall_that_finds_nothing_while_the_callers_writes_are_pending_says_so):
  - mcp_face/render.py `recall` returns "No memory matches that query..." before it looks at
    `writesPending`: the case the flag exists for (the caller's write is the only match and not
    searchable yet: no hits) reads to the model as a plain "nothing there", the line dropped.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: rev24"
SVC = "lore_sidecar/engine/service.py"
MODEL = "lore_sidecar/model.py"
WIRE = "lore_sidecar/wire/results.py"
RENDER = "lore_sidecar/mcp_face/render.py"
DIST = "lore_sidecar/engine/memory/distiller.py"

RYW = "tests/integration/test_read_your_writes.py"
REPLAY = "tests/e2e/test_transcript_replay.py"
DOCS_EX = "tests/integration/test_docs_examples.py"
MCP = "tests/integration/test_mcp.py"
OWED = "tests/integration/test_memory_stop_consolidation.py"
CONV = "tests/e2e/test_conversation_memory.py::test_a_session_distils_consolidates_curates_and_never_keeps_the_secret"

ROUND = [
    # -- writesPending (49aa455) ------------------------------------------------------------
    # The writer waits as before but drops wait_for's answer: a writer never says writesPending.
    Mutation("rev24-writer-wait-answer-dropped", SVC,
             "            return not seq or indexer.wait_for(seq, self.read_wait_s)\n",
             "            if seq:\n                indexer.wait_for(seq, self.read_wait_s)\n            return True\n",
             (RYW, REPLAY), by=BY),
    # `and` for `or`: every recall on a writer that ever wrote says writesPending (idle or not).
    Mutation("rev24-writer-pending-after-any-write", SVC,
             "return not seq or indexer.wait_for(", "return not seq and indexer.wait_for(",
             (RYW, REPLAY), by=BY),
    # The follower's timed-out wait is not flagged: a follower never says writesPending.
    Mutation("rev24-follower-timeout-silent", SVC,
             "                    caught_up = False\n", "                    pass\n",
             (RYW,), by=BY),
    # The follower settles its mark even when the wait ran out: the next recall does not wait
    # and answers writesPending false while the write is still not searchable.
    Mutation("rev24-follower-settled-on-timeout", SVC,
             "                    caught_up = False\n                    break\n",
             "                    caught_up = False\n                    self.mark.settle(seq)\n                    break\n",
             (RYW,), by=BY),
    # Off by one: the follower waits for indexed_seq to pass its write, not reach it, so every
    # recall after a follower's write waits readWaitMs and says writesPending.
    Mutation("rev24-follower-wait-off-by-one", SVC,
             'while int(self.records.meta("indexed_seq", "0") or 0) < seq:',
             'while int(self.records.meta("indexed_seq", "0") or 0) <= seq:',
             (RYW,), by=BY),
    # Copied from densePartial's condition: a lexicalOnly recall never says writesPending.
    # Survived the first run; added: test_a_lexical_only_recall_whose_wait_for_its_own_write_expires_says_so_too.
    Mutation("rev24-pending-not-on-lexical-only", SVC,
             "        if not caught_up:\n", "        if not caught_up and not lexical_only:\n",
             (RYW, MCP), by=BY),
    # The wire name: writePending.
    Mutation("rev24-wire-name", WIRE,
             '"writesPending": r.writes_pending,', '"writePending": r.writes_pending,',
             (RYW, REPLAY, DOCS_EX, MCP), by=BY),
    # The wire field read from the wrong attribute (densePartial's).
    Mutation("rev24-wire-wrong-field", WIRE,
             '"writesPending": r.writes_pending,', '"writesPending": r.dense_partial,',
             (RYW, REPLAY, MCP), by=BY),
    # The MCP line looks for the model's name, not the wire's: never shown.
    # Survived the first run; added: test_the_mcp_tool_result_says_when_the_callers_writes_are_not_searchable_yet.
    Mutation("rev24-mcp-line-wrong-key", RENDER,
             'if r.get("writesPending"):', 'if r.get("writes_pending"):',
             (MCP, RYW), by=BY),
    # Wrong default: every recall says writesPending.
    Mutation("rev24-pending-default-true", MODEL,
             "    writes_pending: bool = False\n", "    writes_pending: bool = True\n",
             (RYW, REPLAY, DOCS_EX), by=BY),
    # -- consolidation (55906d7) ---------------------------------------------------------------
    # The old stop at the first generation not over the threshold: a later one owed alone waits forever.
    Mutation("rev24-consolidate-stops-at-first-small-gen", DIST,
             "            if len(rows) <= s.meta_threshold or len(rows) <= s.meta_keep:\n                continue\n",
             "            if len(rows) <= s.meta_threshold or len(rows) <= s.meta_keep:\n                break\n",
             (OWED, CONV), by=BY),
    # metaKeep not checked: with metaKeep above the rows the slice goes negative.
    Mutation("rev24-consolidate-keep-ignored", DIST,
             " or len(rows) <= s.meta_keep:", ":",
             (OWED, CONV), by=BY),
    # Boundary: exactly metaKeep rows (over the threshold) consolidates nothing into a row (old == []).
    # Survived the first run; added: test_a_meta_keep_equal_to_a_generation_over_the_threshold_keeps_it_all_open.
    Mutation("rev24-consolidate-keep-boundary", DIST,
             " or len(rows) <= s.meta_keep:", " or len(rows) < s.meta_keep:",
             (OWED, CONV), by=BY),
    # `and` for `or`: a generation under the threshold but over metaKeep is consolidated early.
    Mutation("rev24-consolidate-and-for-or", DIST,
             "if len(rows) <= s.meta_threshold or len(rows) <= s.meta_keep:",
             "if len(rows) <= s.meta_threshold and len(rows) <= s.meta_keep:",
             (OWED, CONV), by=BY),
    # Generations 0-2 only: a full generation 3 is never lifted into generation 4.
    # Survived the first run; added: test_a_generation_owed_alone_consolidates_its_oldest_rows_and_keeps_the_newest_open[3].
    Mutation("rev24-consolidate-no-gen-3", DIST,
             "        for generation in range(0, 4):\n", "        for generation in range(0, 3):\n",
             (OWED, CONV), by=BY),
    # The newest rows consolidated, the oldest metaKeep kept open.
    # Survived the first run; added: test_a_generation_owed_alone_consolidates_its_oldest_rows_and_keeps_the_newest_open.
    Mutation("rev24-consolidate-newest", DIST,
             "            old = rows[: len(rows) - s.meta_keep]\n", "            old = rows[s.meta_keep:]\n",
             (OWED, CONV), by=BY),
]
