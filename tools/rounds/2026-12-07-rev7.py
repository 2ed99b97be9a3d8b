"""Independent review round rev7: 12 bugs over the day's changes — the conversation's own
token ratio and the spare breakpoint on the last call's tail (engine/context/calibrate.py,
requests.py), MiniLM's int8 graph and its vectors' name (llm/minilm_graph.py, embedders.py),
and "N chunks to go" without vendored files' chunks (engine/indexing/progress.py, dense.py).

Method: the bugs were chosen from `git diff e625059 d169acf -- lore_sidecar/` (changed or added
lines only), the code's docstrings, docs/context.md and docs/architecture.md's promise text,
before any test was opened; tools/mutations.py and the earlier rounds were read only for the
format and to leave out a bug already planted. The guarding test files were chosen by file
name and `grep -l <module or function name> tests/` only.

First run (`python tools/mutations.py <the 12 names>`, once, 2026-12-07 05:31:49-05:34:51
UTC, ~3 min, on 2 cores at load average 3.6-7): 8 of 12 caught (67%). No stale or error outcome.
- context (calibrate.py, requests.py) 4/5: caught r7-ctx-window-at-the-whole-body-ratio,
  r7-ctx-share-from-the-largest-conversation, r7-ctx-share-of-the-wrong-part,
  r7-ctx-appended-counted-in-messages; survived r7-ctx-fifth-breakpoint.
- MiniLM int8 and its vectors' name 4/4: caught r7-int8-lazy-keeps-the-float-name,
  r7-int8-batched-passes, r7-int8-split-k-v-swapped, r7-int8-unsigned-weights-not-offset.
- "N chunks to go" (progress.py, dense.py) 0/3: survived r7-progress-bisect-left,
  r7-progress-rebuild-not-reread, r7-dense-ahead-counts-vectorless.

Survivors (each commented at its entry): all 4 are real promises and got a test that fails
with the bug planted by hand in a scratch copy of the tree (PYTHONPATH at the copy) and passes
without; it is listed first among the entry's guarding tests. No product bug was found.

Rerun with the tests added (`python tools/mutations.py <the 4 survivors>`, 05:36:51-05:38:5x
UTC): 4 of 4 caught. Round after the rerun: 12 of 12 caught. On the unplanted tree the three
new tests pass (four times each for the two in test_dense_priority.py), and so do the touched
files whole with test_dense_leg.py (18 passed).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: rev7"

CTX_REQ, CALIB = "lore_sidecar/engine/context/requests.py", "lore_sidecar/engine/context/calibrate.py"
EMB, GRAPH = "lore_sidecar/llm/embedders.py", "lore_sidecar/llm/minilm_graph.py"
PROGRESS, DENSE_PY = "lore_sidecar/engine/indexing/progress.py", "lore_sidecar/engine/indexing/dense.py"

CALIB_T, BREAK_T = "tests/integration/test_context_calibration.py", "tests/integration/test_context_breakpoints.py"
INT8_T, MODEL_CHANGE_T = "tests/unit/test_minilm_int8.py", "tests/integration/test_files_model_change.py"
DENSE_T, PRI_T = "tests/integration/test_dense_leg.py", "tests/integration/test_dense_priority.py"
VCOUNT = "test_the_vendored_count_is_exact_at_the_legs_position_and_owed_again_when_it_goes_back"

ROUND = [
    # -- the conversation's own ratio and the last call's tail ---------------------------------
    # the window's sizes priced at the whole body's ratio again (the measured one never used).
    Mutation("r7-ctx-window-at-the-whole-body-ratio", CTX_REQ,
             "conv_ratio = state.conv_ratio or state.ratio  #", "conv_ratio = state.ratio  #",
             (CALIB_T,), by=BY),
    # the share re-measured on a LARGER conversation than before, not a smaller one.
    Mutation("r7-ctx-share-from-the-largest-conversation", CTX_REQ,
             "or conv_raw < state.share_conv_raw:", "or conv_raw > state.share_conv_raw:",
             (CALIB_T,), by=BY),
    # the system prompt's share taken in proportion to the conversation's estimate (args swapped).
    Mutation("r7-ctx-share-of-the-wrong-part", CALIB,
             "return counted * fixed_raw / max(1, fixed_raw + conv_raw)",
             "return counted * conv_raw / max(1, fixed_raw + conv_raw)",
             (CALIB_T,), by=BY),
    # the appended content counted in messages, not blocks: a dozen parallel tool calls (two
    # messages of 12 blocks) get no spare breakpoint.
    Mutation("r7-ctx-appended-counted-in-messages", CTX_REQ,
             'appended = sum(len(x["content"]) if isinstance(x, dict) and isinstance(x.get("content"), list) else 1',
             'appended = sum(1 if isinstance(x, dict) and isinstance(x.get("content"), list) else 1',
             (BREAK_T,), by=BY),
    # the prefix breakpoint no longer spends a spare: with a harness's own two markers, the
    # last call's tail makes a fifth (Anthropic allows 4).
    Mutation("r7-ctx-fifth-breakpoint", CTX_REQ,
             '            marks.append({"at": "prefix", "index": boundary})\n            spare -= 1\n',
             '            marks.append({"at": "prefix", "index": boundary})\n',
             (BREAK_T + "::test_a_harness_marking_system_and_tools_never_gets_more_than_four_breakpoints", BREAK_T), by=BY),
    # Survived (the breakpoint test's harness marks nothing, so 4 were always to spare). Real:
    # Anthropic refuses a fifth marker. Added test_context_breakpoints.py::
    # test_a_harness_marking_system_and_tools_never_gets_more_than_four_breakpoints (system and
    # tools marked by the harness, bursts at L1 with the prefix's breakpoint); fails planted.
    # -- MiniLM in int8 and its vectors' name --------------------------------------------------
    # the engine's lazy embedder keeps the float graph's name: a store embedded by it is not
    # re-embedded.
    Mutation("r7-int8-lazy-keeps-the-float-name", "lore_sidecar/llm/minilm.py",
             "    name = MINILM_INT8_NAME\n", '    name = "all-minilm-l6-v2-int8"\n',
             (MODEL_CHANGE_T, INT8_T, DENSE_T), by=BY),
    # texts batched four to a pass in int8: a vector depends on its batch-mates (per-pass
    # activation quantisation, padding).
    # (MiniLM moved to llm/minilm.py, and the current path runs one unpadded text a pass:
    # the same promise planted there — each pass padded to its call's longest text.)
    Mutation("r7-int8-batched-passes", "lore_sidecar/llm/minilm.py",
             "            ids = np.array([encs[j].ids], dtype=np.int64)\n",
             "            ids = np.array([encs[j].ids + [0] * (max(len(e.ids) for e in encs) - len(encs[j].ids))],"
             " dtype=np.int64)\n",
             (INT8_T, DENSE_T), by=BY),
    # the fused projection's Split hands K's columns to V and V's to K.
    Mutation("r7-int8-split-k-v-swapped", GRAPH,
             '"Split", [name, sizes], [q_out, k_out, v_out]', '"Split", [name, sizes], [q_out, v_out, k_out]',
             (INT8_T,), by=BY),
    # without VNNI the weights are not offset to uint8: negative weights wrap (this machine
    # has VNNI, so only a test that forces signed_weights=False can see it).
    Mutation("r7-int8-unsigned-weights-not-offset", GRAPH,
             "w, zp = (w.astype(np.int16) + 128).astype(np.uint8), np.full(scale.shape, 128, np.uint8)",
             "w, zp = w.astype(np.uint8), np.full(scale.shape, 128, np.uint8)",
             (INT8_T,), by=BY),
    # -- "N chunks to go" without vendored chunks ----------------------------------------------
    # a vendored upsert exactly at the leg's position is still subtracted (wrong bisect side).
    Mutation("r7-progress-bisect-left", PROGRESS,
             "del self.seqs[: bisect.bisect_right(self.seqs, at)]", "del self.seqs[: bisect.bisect_left(self.seqs, at)]",
             (PRI_T + "::" + VCOUNT, PRI_T), by=BY),
    # Survived (the leg was only ever held at 0 or let run to the end). Real. Added
    # test_dense_priority.py::test_the_vendored_count_is_exact_at_the_legs_position_and_owed_again_when_it_goes_back
    # (the real VendoredUpserts on a scanned store's outbox, the position exactly on a
    # vendored upsert); fails planted (3 == 4 - 2).
    # a leg that went back (a rebuild) keeps nothing of what it had passed: vendored upserts it
    # forgot are not subtracted again.
    Mutation("r7-progress-rebuild-not-reread", PROGRESS,
             "        if at < self.at:  # the leg went back", "        if False:  # the leg went back",
             (PRI_T + "::" + VCOUNT, PRI_T), by=BY),
    # Survived (no test moved the position back). Real: the class's own docstring promises it
    # (a rebuild, or a view on an older snapshot). The same added test ends at 0 after the head
    # and asks again from 0; fails planted (0 == 4).
    # items done ahead without a vector are subtracted from "to go" as if embedded.
    Mutation("r7-dense-ahead-counts-vectorless", DENSE_PY,
             "return len(self._ahead) - len(self._vectorless)", "return len(self._ahead)",
             (PRI_T + "::test_chunks_to_go_mid_catch_up_does_not_subtract_what_was_passed_without_a_vector",
              PRI_T, DENSE_T), by=BY),
    # Survived (chunksToGo was read only with the leg held before anything or done). Real.
    # Added test_dense_priority.py::test_chunks_to_go_mid_catch_up_does_not_subtract_what_was_passed_without_a_vector
    # (STEP 1, the leg held in its second step with the vendored chunks passed ahead of its
    # position): to go is the chunks still to embed; fails planted (1 == 5 - 1).
]
