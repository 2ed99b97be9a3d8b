"""rev21: independent review of the vector delta's transposed rows and int8 dot-product kernel
(3b06c8c: `FlatDelta` in store/vector_flat.py) and of `readWaitMs`, read-your-writes waiting
up to a configurable time on the writer and on a follower (41651a4: engine/service.py
`fresh()`, settings.py, docs/configuration.md).

Bugs chosen from the code and docs before any file under tests/ was opened; guarding tests
chosen by file name and `grep -rl`/`grep -n ^def test` only.

First run (22:26-22:30 UTC, once, `python tools/mutations.py <the 19 names>` in two halves side
by side, load up to ~12 on 2 cores; the guards pass unmutated: 60 passed): 15 of 19 caught.
  caught:   all 13 of the delta's (rev21-grow-drops-norms, rev21-grow-too-small,
            rev21-dup-keeps-first, rev21-replace-appends, rev21-remove-cols-not-moved,
            rev21-remove-inv-not-moved, rev21-remove-row-map-stale, rev21-q8-no-offset,
            rev21-einsum-int8, rev21-norms-int8, rev21-ties-by-position,
            rev21-cut-by-partition, rev21-session-imports-ort), rev21-readwait-apply-key,
            rev21-readwait-workspace-ok
  survived: rev21-readwait-ms-as-s, rev21-readwait-follower-fixed,
            rev21-readwait-writer-fixed, rev21-readwait-default-2s
  error:    none

Survivors, after reading the tests: four real gaps, none equivalent. The only test that sets
readWaitMs (test_many_sidecars' follower write) sets it to 15 s and its read finds the write
well inside any bound, so nothing observed what bound a read waits with; and no test
compared configuration.md's defaults with the code's. New tests (each fails with its bug
planted, passes without):
  rev21-readwait-ms-as-s, rev21-readwait-writer-fixed:
    tests/integration/test_read_wait.py::test_a_read_on_the_writer_waits_for_its_own_write_as_long_as_readwaitms_says
  rev21-readwait-ms-as-s, rev21-readwait-follower-fixed:
    ::test_a_read_on_a_follower_polls_for_the_applied_write_until_readwaitms_then_answers
    (the follower's poll counted on a clock the test owns: no timed assertion)
  rev21-readwait-default-2s:
    tests/unit/test_docs.py::test_every_default_configuration_md_states_is_the_default_the_code_applies
Second run (22:33-22:35 UTC, the 4 survivors, the new tests first in each guard): 4 of 4 caught.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: rev21"
FLAT = "lore_sidecar/store/vector_flat.py"
SVC = "lore_sidecar/engine/service.py"
SET = "lore_sidecar/settings.py"
KERNEL = "tests/unit/test_delta_kernel.py"
NOGRAPH = "tests/integration/test_delta_without_graph.py"
PARTS = "tests/integration/test_vector_parts.py"
DELTA_TESTS = (KERNEL, NOGRAPH, PARTS)
FOLLOWER = "tests/integration/test_many_sidecars.py::test_a_follower_write_is_durable_applied_and_visible_everywhere"
WPATH = "tests/unit/test_write_path.py"
SETTINGS = "tests/unit/test_settings_and_wire.py"
DOCS = "tests/unit/test_docs.py"
TRUST = "tests/integration/test_trust_boundaries.py"
RW = "tests/integration/test_read_wait.py"
DEFAULTS = "tests/unit/test_docs.py::test_every_default_configuration_md_states_is_the_default_the_code_applies"

ROUND = [
    # -- the delta (3b06c8c) ---------------------------------------------------------------
    # Growth forgets to carry the inverse norms: every row held before the growth reads as
    # distance 1.0 (a delta past 1,024 rows loses its older rows from the top).
    Mutation("rev21-grow-drops-norms", FLAT,
             "keys[: self._n], cols[:, : self._n], invs[: self._n] = self._keys[: self._n], self._cols[:, : self._n], self._inv[: self._n]",
             "keys[: self._n], cols[:, : self._n] = self._keys[: self._n], self._cols[:, : self._n]",
             DELTA_TESTS, by=BY),
    # Growth only doubles: one upsert of more than twice the capacity overflows (IndexError).
    Mutation("rev21-grow-too-small", FLAT,  # (the padding of 0373421 since)
             "cap = max(need, 2 * (len(self._keys) - PAD)) + PAD", "cap = 2 * (len(self._keys) - PAD) + PAD",
             DELTA_TESTS, by=BY),
    # A key given twice in one call keeps its first vector, not its last.
    Mutation("rev21-dup-keeps-first", FLAT,
             "_, from_end = np.unique(at_of[::-1], return_index=True)\n        last = len(at_of) - 1 - from_end",
             "_, last = np.unique(at_of, return_index=True)",
             DELTA_TESTS, by=BY),
    # A replaced key gets a second row: its old vector stays searchable, the count grows.
    Mutation("rev21-replace-appends", FLAT, "at = self.row.get(k)", "at = None",
             DELTA_TESTS, by=BY),
    # A removal moves the last key and its norm into the gap but not its column: the moved key
    # is found by the removed key's vector.
    Mutation("rev21-remove-cols-not-moved", FLAT, "                self._cols[:, at] = self._cols[:, last]\n", "",
             DELTA_TESTS, by=BY),
    # A removal moves the last key's column but not its inverse norm: the moved key's distance
    # is computed with the removed row's norm (wrong for int8 rows of another length, or zero).
    Mutation("rev21-remove-inv-not-moved", FLAT,
             "self._keys[at], self._inv[at] = moved, self._inv[last]", "self._keys[at] = moved",
             DELTA_TESTS, by=BY),
    # A removal moves the last row but `row` still points past the end: removing or replacing
    # the moved key later touches a dead slot (the moved key stays searchable after removal).
    Mutation("rev21-remove-row-map-stale", FLAT, "                self.row[moved] = at\n", "",
             DELTA_TESTS, by=BY),
    # The query is cast to uint8 without the zero point's shift: negative components wrap to
    # 128..255 and the kernel's dots are wrong (onnxruntime path only).
    Mutation("rev21-q8-no-offset", FLAT, "q8 = (qv.astype(np.int16) + 128).astype(np.uint8)", "q8 = qv.astype(np.uint8)",
             DELTA_TESTS, by=BY),
    # numpy's path sums in int8 (the cast dropped): the dots overflow and wrap.
    Mutation("rev21-einsum-int8", FLAT, 'np.einsum("i,ij->j", qv.astype(np.int32), self._cols[:, :n])',
             'np.einsum("i,ij->j", qv, self._cols[:, :n])',
             DELTA_TESTS, by=BY),
    # The squared norms summed in int8: they wrap, every inverse norm is wrong.
    Mutation("rev21-norms-int8", FLAT, 'np.einsum("ij,ij->i", rows, rows, dtype=np.int64)', 'np.einsum("ij,ij->i", rows, rows)',
             DELTA_TESTS, by=BY),
    # Ties ordered by row position instead of key: the order of equal distances depends on
    # arrival and removals (a rebuild orders them anew).
    Mutation("rev21-ties-by-position", FLAT, "order = np.lexsort((keys, dists))[: min(limit, n)]",
             'order = np.argsort(dists, kind="stable")[: min(limit, n)]',
             DELTA_TESTS, by=BY),
    # The cut by argpartition: which of several rows tied at the k-th distance survives
    # depends on where they sit, not on their keys.
    Mutation("rev21-cut-by-partition", FLAT,
             "top = np.flatnonzero(dist <= np.partition(dist, pick - 1)[pick - 1]) if pick < n else np.arange(n)",
             "top = np.argpartition(dist, pick - 1)[:pick] if pick < n else np.arange(n)",
             DELTA_TESTS, by=BY),
    # The session imports onnxruntime itself (the docstring: imported after usearch's native
    # module it crashes the process; a process without it must keep numpy's path).
    Mutation("rev21-session-imports-ort", FLAT, 'ort = sys.modules.get("onnxruntime")', "import onnxruntime as ort",
             DELTA_TESTS, by=BY),
    # -- readWaitMs (41651a4) --------------------------------------------------------------
    # The option's milliseconds taken as seconds: a read whose write never gets indexed hangs
    # for 5,000 s instead of answering after 5 s.
    Mutation("rev21-readwait-ms-as-s", SVC, "self.read_wait_s = settings.store.read_wait_ms / 1000",
             "self.read_wait_s = settings.store.read_wait_ms", (RW, WPATH, SETTINGS, FOLLOWER), by=BY),
    # Copy-paste: readWaitMs sets applyWaitMs's field (readWaitMs has no effect, and moves the
    # follower's apply wait).
    Mutation("rev21-readwait-apply-key", SET, '"readWaitMs": (conv.integer(0, 60_000), ("store", "read_wait_ms"))',
             '"readWaitMs": (conv.integer(0, 60_000), ("store", "apply_wait_ms"))', (SETTINGS, DOCS, WPATH, FOLLOWER), by=BY),
    # The follower's poll keeps the old fixed 2 s.
    Mutation("rev21-readwait-follower-fixed", SVC, "deadline = time.monotonic() + self.read_wait_s",
             "deadline = time.monotonic() + 2.0", (RW, WPATH, FOLLOWER), by=BY),
    # The writer's wait keeps the old fixed 2 s.
    Mutation("rev21-readwait-writer-fixed", SVC, "indexer.wait_for(seq, self.read_wait_s)", "indexer.wait_for(seq, 2.0)",
             (RW, WPATH, FOLLOWER), by=BY),
    # The default left at the old 2,000 ms (docs say 5,000).
    Mutation("rev21-readwait-default-2s", SET, "read_wait_ms: int = 5000", "read_wait_ms: int = 2000",
             (DEFAULTS, SETTINGS, DOCS), by=BY),
    # readWaitMs honoured from a workspace file (the docs list it among the user-only options).
    Mutation("rev21-readwait-workspace-ok", SET, '"lateCandidates", "debounceMs",\n})',
             '"lateCandidates", "debounceMs", "readWaitMs",\n})', (SETTINGS, TRUST, DOCS), by=BY),
]
