"""rev23: independent review of the large vector part (branch bigstore: store/vector_big.py,
store/vector_index.py, store/vector_part.py) and of the delta's kernel pick re-scored by
usearch's cosine (e661000: `FlatDelta.search` in store/vector_flat.py).

Bugs chosen from the code and docs before any file under tests/ was opened; guarding tests
chosen by file name and `grep -rl` only.

First run (23:26-23:31 UTC, once, `python tools/mutations.py <the 27 names>` in two halves side
by side; the guards pass unmutated: 37 passed): 16 of 27 caught.
  caught:   rev23-find-no-clamp, rev23-find-position-not-row, rev23-search-keys-not-reordered,
            rev23-rows-skip-no-centre, rev23-fold-dead-stay-in-graph, rev23-fold-removed-rows-kept,
            rev23-fold-centre-recomputed, rev23-late-always-2, rev23-late-always-3,
            rev23-late-3-not-read, rev23-meta-drops-rows, rev23-fold-leaves-old-rows,
            rev23-delta-kernel-distances, rev23-delta-keys-not-via-top, rev23-delta-cut-strict,
            rev23-delta-ties-by-usearch
  survived: rev23-codes-uncentred, rev23-codes-int8-wrap, rev23-candidates-no-floor,
            rev23-candidates-no-rerank, rev23-find-no-hit-check, rev23-first-fold-keeps-dead,
            rev23-sweep-keeps-orphan-rows, rev23-sweep-unlinks-live-rows, rev23-big-at-exclusive,
            rev23-large-not-sticky, rev23-delta-no-spare
  error:    none

Survivors, after reading the tests: eleven real gaps, none equivalent.
  - The crafted vectors' shared offset (2.0) is too small for the centre to matter: with the
    centre ignored the large part still agreed 1.0 with exact search (measured; 0.068 at an
    offset of 10), and no difference ever reached +-127, so an int8 (wrapping) subtraction
    never showed.
  - N = 3000 clustered vectors: 100 candidates re-rank as well as 200, so nothing observed
    the candidate count.
  - Every lookup of an absent key was followed by a fold (dead count past fold_dead), which
    clears the dead list: a `_find` answering for any key left no trace.
  - Dead keys were only ever made in a part already large; the fold that first makes a part
    large never met any.
  - No test put a stray .rows file in the directory, or reopened a writer over a large part
    and then opened again (a sweep of the live rows file shows only at the next open).
  - The threshold was crossed at 3,000 with big_at 2,000 (never exactly at it), and no large
    part shrank below it.
  - The delta's SPARE: no rows whose float64 and usearch float32 orders disagree at the cut.
New tests (each fails with its bug planted, passes without):
  rev23-codes-uncentred, rev23-codes-int8-wrap:
    tests/integration/test_vector_big.py::test_codes_are_the_sign_bits_of_each_row_less_the_centre_at_full_width
  rev23-codes-uncentred: ::test_the_centre_taken_off_keeps_vectors_sharing_a_large_offset_apart
  rev23-candidates-no-floor, rev23-candidates-no-rerank:
    ::test_a_search_asks_the_binary_graph_for_rerank_times_the_count_and_at_least_min_candidates
  rev23-find-no-hit-check: ::test_keys_a_large_part_does_not_hold_are_not_found_in_it
  rev23-first-fold-keeps-dead: ::test_keys_dead_in_an_int8_part_stay_gone_when_it_first_grows_large
  rev23-sweep-keeps-orphan-rows, rev23-sweep-unlinks-live-rows:
    ::test_a_writer_opening_sweeps_orphan_rows_files_and_keeps_the_named_one
  rev23-big-at-exclusive: ::test_a_part_of_exactly_big_at_vectors_is_large
  rev23-large-not-sticky: ::test_a_large_part_that_shrinks_below_the_threshold_stays_large
  rev23-delta-no-spare:
    tests/unit/test_delta_kernel.py::test_spare_rows_keep_usearchs_nearest_that_float64_put_just_past_the_cut
Second run (23:35-23:38 UTC, the 11 survivors, same guards): 11 of 11 caught.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BIG = "lore_sidecar/store/vector_big.py"
IDX = "lore_sidecar/store/vector_index.py"
FLAT = "lore_sidecar/store/vector_flat.py"
VBIG = "tests/integration/test_vector_big.py"
PARTS = "tests/integration/test_vector_parts.py"
NOGRAPH = "tests/integration/test_delta_without_graph.py"
KERNEL = "tests/unit/test_delta_kernel.py"
BY = "reviewer: rev23"

ROUND = [
    # survived the first run; added: test_vector_big.py::test_codes_are_the_sign_bits_of_each_row_less_the_centre_at_full_width,
    #   ::test_the_centre_taken_off_keeps_vectors_sharing_a_large_offset_apart
    Mutation('rev23-codes-uncentred', BIG,
             'rows.astype(np.int16) - centre.astype(np.int16) > 0',
             'rows.astype(np.int16) > 0',
             (VBIG, PARTS), by=BY),
    # survived the first run; added: test_vector_big.py::test_codes_are_the_sign_bits_of_each_row_less_the_centre_at_full_width
    Mutation('rev23-codes-int8-wrap', BIG,
             'rows.astype(np.int16) - centre.astype(np.int16) > 0',
             'rows - centre > 0',
             (VBIG, PARTS), by=BY),
    # survived the first run; added: test_vector_big.py::test_a_search_asks_the_binary_graph_for_rerank_times_the_count_and_at_least_min_candidates
    Mutation('rev23-candidates-no-floor', BIG,
             'max(RERANK * count, MIN_CANDIDATES)',
             'RERANK * count',
             (VBIG, PARTS), by=BY),
    # survived the first run; added: test_vector_big.py::test_a_search_asks_the_binary_graph_for_rerank_times_the_count_and_at_least_min_candidates
    Mutation('rev23-candidates-no-rerank', BIG,
             'max(RERANK * count, MIN_CANDIDATES)',
             'max(count, MIN_CANDIDATES)',
             (VBIG, PARTS), by=BY),
    # survived the first run; added: test_vector_big.py::test_keys_a_large_part_does_not_hold_are_not_found_in_it
    Mutation('rev23-find-no-hit-check', BIG,
             'return np.where(hit, np.asarray(self._slot[at]).astype(np.int64), -1)',
             'return np.asarray(self._slot[at]).astype(np.int64)',
             (VBIG, PARTS), by=BY),
    Mutation('rev23-find-no-clamp', BIG,
             '        at = np.minimum(at, self.n - 1)\n',
             '',
             (VBIG, PARTS), by=BY),
    Mutation('rev23-find-position-not-row', BIG,
             'return np.where(hit, np.asarray(self._slot[at]).astype(np.int64), -1)',
             'return np.where(hit, at.astype(np.int64), -1)',
             (VBIG, PARTS), by=BY),
    Mutation('rev23-search-keys-not-reordered', BIG,
             'keys, slots = keys[order], slots[order]',
             'slots = slots[order]',
             (VBIG, PARTS), by=BY),
    Mutation('rev23-rows-skip-no-centre', BIG,
             'self._rows_at = HEADER + dim',
             'self._rows_at = HEADER',
             (VBIG, PARTS), by=BY),
    Mutation('rev23-fold-dead-stay-in-graph', BIG,
             '        if len(present):\n            graph.remove(present)\n',
             '',
             (VBIG, PARTS), by=BY),
    Mutation('rev23-fold-removed-rows-kept', BIG,
             'keep = ~np.isin(k, dead)',
             'keep = ~np.isin(k, dkeys)',
             (VBIG, PARTS), by=BY),
    Mutation('rev23-fold-centre-recomputed', BIG,
             'centre = old.centre',
             'centre = np.trunc(drows.mean(axis=0, dtype=np.float64)).astype(np.int8) if len(drows) else old.centre',
             (VBIG, PARTS), by=BY),
    # survived the first run; added: test_vector_big.py::test_keys_dead_in_an_int8_part_stay_gone_when_it_first_grows_large
    Mutation('rev23-first-fold-keeps-dead', BIG,
             '        okeys = okeys[~np.isin(okeys, dead)]\n',
             '',
             (VBIG, PARTS), by=BY),
    Mutation('rev23-late-always-2', IDX,
             '"late": BIG_LATE if big else PARTS_LATE',
             '"late": PARTS_LATE',
             (VBIG, PARTS, NOGRAPH), by=BY),
    Mutation('rev23-late-always-3', IDX,
             '"late": BIG_LATE if big else PARTS_LATE',
             '"late": BIG_LATE',
             (VBIG, PARTS, NOGRAPH), by=BY),
    Mutation('rev23-late-3-not-read', IDX,
             'late = (PARTS_LATE, BIG_LATE) if',
             'late = (PARTS_LATE,) if',
             (VBIG, PARTS, NOGRAPH), by=BY),
    Mutation('rev23-meta-drops-rows', IDX,
             ', **({"rows": part.rows_name} if part.rows_name else {})}',
             '}',
             (VBIG, PARTS, NOGRAPH), by=BY),
    # survived the first run; added: test_vector_big.py::test_a_writer_opening_sweeps_orphan_rows_files_and_keeps_the_named_one
    Mutation('rev23-sweep-keeps-orphan-rows', IDX,
             'ours = name.endswith((".usearch", DELTA_SUFFIX, BIG_ROWS_SUFFIX))',
             'ours = name.endswith((".usearch", DELTA_SUFFIX))',
             (VBIG, PARTS, NOGRAPH), by=BY),
    # survived the first run; added: test_vector_big.py::test_a_writer_opening_sweeps_orphan_rows_files_and_keeps_the_named_one
    Mutation('rev23-sweep-unlinks-live-rows', IDX,
             'for n in (p.frozen_name, p.rows_name) if n}',
             'for n in (p.frozen_name,) if n}',
             (VBIG, PARTS, NOGRAPH), by=BY),
    Mutation('rev23-fold-leaves-old-rows', IDX,
             'gone = [n for n in (part.frozen_name, part.rows_name, part.delta_name) if n]',
             'gone = [n for n in (part.frozen_name, part.delta_name) if n]',
             (VBIG, PARTS, NOGRAPH), by=BY),
    # survived the first run; added: test_vector_big.py::test_a_part_of_exactly_big_at_vectors_is_large
    Mutation('rev23-big-at-exclusive', IDX,
             '+ len(part.delta or ()) >= self.big_at:',
             '+ len(part.delta or ()) > self.big_at:',
             (VBIG, PARTS, NOGRAPH), by=BY),
    # survived the first run; added: test_vector_big.py::test_a_large_part_that_shrinks_below_the_threshold_stays_large
    Mutation('rev23-large-not-sticky', IDX,
             'if part.rows_name or len(part.frozen or ())',
             'if len(part.frozen or ())',
             (VBIG, PARTS, NOGRAPH), by=BY),
    # survived the first run; added: test_delta_kernel.py::test_spare_rows_keep_usearchs_nearest_that_float64_put_just_past_the_cut
    Mutation('rev23-delta-no-spare', FLAT,
             'pick = min(n, min(limit, n) + SPARE)',
             'pick = min(limit, n)',
             (KERNEL, NOGRAPH, VBIG), by=BY),
    Mutation('rev23-delta-kernel-distances', FLAT,
             'dists = np.asarray(m.distances, dtype=np.float64)',
             'dists = dist[top[np.asarray(m.keys, dtype=np.intp)]]',
             (KERNEL, NOGRAPH, VBIG), by=BY),
    Mutation('rev23-delta-keys-not-via-top', FLAT,
             'keys = self._keys[top[np.asarray(m.keys, dtype=np.intp)]]',
             'keys = self._keys[np.asarray(m.keys, dtype=np.intp)]',
             (KERNEL, NOGRAPH, VBIG), by=BY),
    Mutation('rev23-delta-cut-strict', FLAT,
             'top = np.flatnonzero(dist <= np.partition(dist, pick - 1)[pick - 1])',
             'top = np.flatnonzero(dist < np.partition(dist, pick - 1)[pick - 1])',
             (KERNEL, NOGRAPH, VBIG), by=BY),
    Mutation('rev23-delta-ties-by-usearch', FLAT,
             'order = np.lexsort((keys, dists))[: min(limit, n)]',
             'order = np.argsort(dists, kind="stable")[: min(limit, n)]',
             (KERNEL, NOGRAPH, VBIG), by=BY),
]
