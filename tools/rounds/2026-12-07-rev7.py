"""Independent review round rev7: 12 bugs over the day's changes — the conversation's own
token ratio and the spare breakpoint on the last call's tail (engine/context/calibrate.py,
requests.py), MiniLM's int8 graph and its vectors' name (llm/minilm_graph.py, embedders.py),
and "N chunks to go" without vendored files' chunks (engine/indexing/progress.py, dense.py).

Method: the bugs were chosen from `git diff e625059 d169acf -- lore_sidecar/` (changed or added
lines only), the code's docstrings, docs/context.md and docs/architecture.md's promise text,
before any test was opened; tools/mutations.py and the earlier rounds were read only for the
format and to leave out a bug already planted. The guarding test files were chosen by file
name and `grep -l <module or function name> tests/` only.

FIRST_RUN
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
             (BREAK_T,), by=BY),
    # -- MiniLM in int8 and its vectors' name --------------------------------------------------
    # the engine's lazy embedder keeps the float graph's name: a store embedded by it is not
    # re-embedded.
    Mutation("r7-int8-lazy-keeps-the-float-name", EMB,
             "    name = MINILM_INT8_NAME\n", '    name = "all-minilm-l6-v2-int8"\n',
             (MODEL_CHANGE_T, INT8_T, DENSE_T), by=BY),
    # texts batched four to a pass in int8: a vector depends on its batch-mates (per-pass
    # activation quantisation, padding).
    Mutation("r7-int8-batched-passes", EMB,
             "self.batch = 1 if int8 else MINILM_BATCH", "self.batch = MINILM_BATCH",
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
             (PRI_T,), by=BY),
    # a leg that went back (a rebuild) keeps nothing of what it had passed: vendored upserts it
    # forgot are not subtracted again.
    Mutation("r7-progress-rebuild-not-reread", PROGRESS,
             "        if at < self.at:  # the leg went back", "        if False:  # the leg went back",
             (PRI_T,), by=BY),
    # items done ahead without a vector are subtracted from "to go" as if embedded.
    Mutation("r7-dense-ahead-counts-vectorless", DENSE_PY,
             "return len(self._ahead) - len(self._vectorless)", "return len(self._ahead)",
             (PRI_T, DENSE_T), by=BY),
]
