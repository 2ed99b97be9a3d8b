"""rev19: independent review of the graph-less vector delta (c209c53, fd7333b, 5960cdd:
store/vector_flat.py, store/vector_index.py, store/vector_part.py), a fast model's dense
step taking the whole outbox window (5d0ee9b: engine/indexing/dense.py) and the memory
thread's stop between segments (d175d2f: engine/memory/distiller.py).

Bugs chosen from the code and docs before any file under tests/ was opened; guarding tests
chosen by file name and `grep -rl` only.

First run (20:07-20:11 UTC, once, `python tools/mutations.py <the 16 names>`, load 2-8 on
2 cores; the guarding files pass unmutated, 45 tests): 9 of 16 caught.
  caught:   rev19-flat-remove-no-repoint, rev19-flat-upsert-appends,
            rev19-flat-search-whole-capacity, rev19-idx-old-delta-as-floats,
            rev19-idx-save-keeps-old-delta, rev19-part-contents-no-delta,
            rev19-dense-step-inverted, rev19-mem-stop-not-raised,
            rev19-mem-stop-checked-before-wait
  survived: rev19-flat-remove-last-kept, rev19-flat-quantize-rounds,
            rev19-flat-grow-drops-rows, rev19-idx-sweep-ignores-delta, rev19-idx-fold-at-8192,
            rev19-dense-step-fast-capped, rev19-mem-stopping-logged-as-failure
  error:    none

Survivors, after reading the tests: seven real gaps, none equivalent.
  The exact-neighbours test removes 300 random keys of 1,500 and never the last row; its
  1,500 arrive in one upsert into an empty delta (the growth copies no row); its expected rows
  come from `quantize` itself. The sweep test leaves only a `.usearch` orphan. Every test
  passes its own `fold_at`. No test counts a fast model's step (the STEP=1 tests are of the
  files model, slow). The stop test asserts the thread ended and nothing was distilled, which
  the stop caught as any exception (logged "memory pass failed", a second's sleep) also does.
  New tests: test_delta_without_graph.py (newest row removed; a delta grown past 1,024;
  quantised as usearch does; an orphan `.delta` swept; the default folds at 32,768),
  test_dense_leg.py (a fast model's step takes the window, a slow one's STEP; a stop between
  segments logs no failure). Each fails with its bug planted, passes without. Second run of
  the seven (20:15-20:16 UTC): 7 of 7 caught.

Found while reading (a real bug, not a planted one): `Part.remove` returned
`bool(gone) or bool(self.delta is not None and self.delta.remove(karr))`, so once a key of
the call was a live frozen one the delta was never asked: a step's deletes of one project
(a folded key and a delta one) left the delta's vector live. Fixed on this branch, with
test_vector_parts.py::test_one_removal_of_a_frozen_vector_and_a_delta_vector_removes_both and
the mutation rev19-part-remove-short-circuit (added after the first run, not in its figure).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: rev19"
FLAT = "lore_sidecar/store/vector_flat.py"
VIDX = "lore_sidecar/store/vector_index.py"
VPART = "lore_sidecar/store/vector_part.py"
DENSE = "lore_sidecar/engine/indexing/dense.py"
DIST = "lore_sidecar/engine/memory/distiller.py"

VEC = ("tests/integration/test_delta_without_graph.py", "tests/integration/test_vector_parts.py")
DLEG = "tests/integration/test_dense_leg.py"
DPRI = "tests/integration/test_dense_priority.py"
WF = "tests/unit/test_words_first.py"

ROUND = [
    # -- the graph-less delta (store/vector_flat.py) -----------------------------------------
    # A removal moves the last row into the gap but the moved key's row map is not re-pointed:
    # a later replacement or removal of that key hits a row past the end.
    Mutation("rev19-flat-remove-no-repoint", FLAT,
             "                self.row[moved] = at\n", "", VEC, by=BY),
    # `self._n = last` inside the gap branch: removing the last row leaves it counted, so the
    # removed key is still searched (and saved).
    # Survived; added test_delta_without_graph.py::test_the_newest_vector_removed_from_the_delta_is_gone_from_its_answers_and_its_file.
    Mutation("rev19-flat-remove-last-kept", FLAT,
             "                self.row[moved] = at\n            self._n = last\n",
             "                self.row[moved] = at\n                self._n = last\n", VEC, by=BY),
    # A replacement appends a second row instead of overwriting: the old value still answers.
    Mutation("rev19-flat-upsert-appends", FLAT,
             "            at = self.row.get(k)\n", "            at = None\n", VEC, by=BY),
    # Rounded instead of truncated: rows no longer equal usearch's own int8 quantisation.
    # Survived; added test_delta_without_graph.py::test_the_delta_quantises_a_vector_as_usearch_does_in_an_int8_cosine_index.
    Mutation("rev19-flat-quantize-rounds", FLAT,
             "np.trunc(v / norms * 127.0)", "np.round(v / norms * 127.0)", VEC, by=BY),
    # The scan covers the whole capacity, not the live rows: a removed key's stale row (and
    # zero rows mapped to key 0) can answer.
    Mutation("rev19-flat-search-whole-capacity", FLAT,
             # (the delta's columns since 3b06c8c: its live count taken for the capacity)
             "        n = self._n\n        if not n or limit <= 0:", "        n = len(self._keys) if self._n else 0\n        if not n or limit <= 0:", VEC, by=BY),
    # Growing past 1,024 rows copies the keys but not the rows: older vectors become zeros.
    # Survived; added test_delta_without_graph.py::test_a_delta_that_grows_past_its_first_rows_keeps_the_rows_it_had.
    Mutation("rev19-flat-grow-drops-rows", FLAT,
             "keys[: self._n], cols[:, : self._n], invs[: self._n] = self._keys[: self._n], self._cols[:, : self._n], self._inv[: self._n]",
             "keys[: self._n], invs[: self._n] = self._keys[: self._n], self._inv[: self._n]", VEC, by=BY),
    # -- the index (store/vector_index.py) ---------------------------------------------------
    # The sweep forgets the new suffix: a crash's orphan `.delta` files stay for ever.
    # Survived; added test_delta_without_graph.py::test_a_delta_file_no_list_names_is_swept_by_the_next_writer.
    Mutation("rev19-idx-sweep-ignores-delta", VIDX,
             'ours = name.endswith((".usearch", DELTA_SUFFIX, BIG_ROWS_SUFFIX))', 'ours = name.endswith((".usearch", BIG_ROWS_SUFFIX))',
             VEC, by=BY),
    # An earlier release's graph delta read as float rows, cast to int8: all zeros.
    Mutation("rev19-idx-old-delta-as-floats", VIDX,
             'rows = np.stack(old.get(keys, dtype="i8")) if len(keys) else None',
             'rows = np.stack(old.get(keys, dtype="f32")) if len(keys) else None', VEC, by=BY),
    # A save no longer retires the previous save's delta file: one more file every save.
    Mutation("rev19-idx-save-keeps-old-delta", VIDX,
             "                    gone += [part.delta_name] if part.delta_name else []\n", "", VEC, by=BY),
    # FOLD_AT left at the dropped 8,192 (fd7333b): folds four times as often.
    # Survived; added test_delta_without_graph.py::test_by_default_a_delta_folds_at_32768_vectors_not_before.
    Mutation("rev19-idx-fold-at-8192", VIDX, "FOLD_AT = 32_768", "FOLD_AT = 8_192", VEC, by=BY),
    # -- the part (store/vector_part.py) -----------------------------------------------------
    # contents() leaves out the delta: a check of the live vectors misses every recent one.
    Mutation("rev19-part-contents-no-delta", VPART,
             "        out.update({k: r.tobytes() for k, r in zip(keys.tolist(), rows if rows is not None else [], strict=True)})\n",
             "", VEC, by=BY),
    # Added after the first run: the bug found while reading, put back.
    Mutation("rev19-part-remove-short-circuit", VPART,
             "        dropped = self.delta.remove(karr) if self.delta is not None else 0\n        return bool(gone) or bool(dropped)\n",
             "        return bool(gone) or bool(self.delta is not None and self.delta.remove(karr))\n",
             ("tests/integration/test_vector_parts.py::test_one_removal_of_a_frozen_vector_and_a_delta_vector_removes_both",),
             by=BY),
    # -- a fast model's step (engine/indexing/dense.py) --------------------------------------
    # The condition inverted: MiniLM's step takes the whole window, a fast model's is bounded.
    Mutation("rev19-dense-step-inverted", DENSE,
             'if getattr(self.models.for_kind(kind), "batch", None):',
             'if not getattr(self.models.for_kind(kind), "batch", None):', (DLEG, DPRI), by=BY),
    # The old cap kept as a safety: a fast model's step is STEP again.
    # Survived; added test_dense_leg.py::test_a_fast_models_step_takes_the_whole_window_and_step_bounds_a_slow_ones.
    Mutation("rev19-dense-step-fast-capped", DENSE,
             "                slow += 1\n        return todo\n",
             "                slow += 1\n        return todo[:STEP]\n", (DLEG, DPRI), by=BY),
    # -- the memory thread's stop (engine/memory/distiller.py) -------------------------------
    # The stop not acted on between segments: the pass goes on distilling.
    Mutation("rev19-mem-stop-not-raised", DIST,
             "        if self._stop.is_set():\n            raise _Stopping\n", "", (DLEG, WF), by=BY),
    # The stop looked at before the wait instead of after: a stop during the wait lets one
    # more segment be distilled.
    Mutation("rev19-mem-stop-checked-before-wait", DIST,
             "        wait_for_words(self.words_pending, self._stop)\n        if self._stop.is_set():\n            raise _Stopping\n",
             "        if self._stop.is_set():\n            raise _Stopping\n        wait_for_words(self.words_pending, self._stop)\n",
             (DLEG, WF), by=BY),
    # The handler dropped: the stop is logged as a failed pass and the thread sleeps a second.
    # Survived; added test_dense_leg.py::test_a_stop_while_distilling_waits_for_words_is_a_stop_not_a_failed_pass.
    Mutation("rev19-mem-stopping-logged-as-failure", DIST,
             "            except _Stopping:\n                return\n", "", (DLEG, WF), by=BY),
]
