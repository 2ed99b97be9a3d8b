"""rev18: independent review of 22d04a6 + 571c4b3 (a full rebuild redoes the words and commits
them once at the end, the vectors go to the dense worker, status counts what is left to embed:
engine/indexing/indexer.py, dense.py, status.py, store/text_index.py `clear`, service.py,
background.py), 8e0cbd0 (the Health page's store size with files vanishing mid-count:
ui/pages.py) and 58efb20 (the Pi / OpenCode client waiting for a slow sidecar's first answer:
editors/shared/lore-client.ts, editors/pi/lore.ts, LORE_SIDECAR_READY_MS).

Bugs chosen from the code and docs before any file under tests/ was opened; guarding tests
chosen by file name and `grep -rl` only.

First run (19:49-20:08 UTC, once; two invocations side by side, `python tools/mutations.py
<the Python names>` and `... <the TypeScript names>`, load 10-13 on 2 cores): 5 of 19 caught.
  caught:   rev18-rebuilding-never-cleared, rev18-vectors-on-start-dropped,
            rev18-writer-behind-ignores-backlog, rev18-rebuild-not-writing, rev18-reembed-no-yield
  survived: rev18-reindex-uncounted, rev18-lost-vectors-uncounted, rev18-files-counted-as-files,
            rev18-reader-files-as-files, rev18-reader-behind-ignores-stale,
            rev18-rebuild-ignores-stop, rev18-reembed-counts-late, rev18-health-disk-unguarded,
            rev18-health-top-folder-only, rev18-health-counts-non-files,
            rev18-pi-start-text-every-prompt, rev18-pi-start-not-awaited,
            rev18-client-answered-never-set, rev18-client-ready-env-ignored
  error:    none
(The Python invocation was stopped after rev18-rebuild-ignores-stop, whose scratch copy may
already have held a new test of test_dense_leg.py: it survived anyway, so the figure stands.
The six names after it were then run once from the clean tree: that is their first run.)

Survivors, after reading the tests (all real gaps, none equivalent):
  rev18-reindex-uncounted: the reindex test's dense leg lists the records at once, which
    hides the count taken when the vectors are dropped. New (dense leg held before it lists):
    test_dense_leg.py::test_a_reindex_counts_every_record_at_once_while_the_dense_leg_has_yet_to_list_them
  rev18-lost-vectors-uncounted: the status at once was only asserted `> 0` (1 a kind is > 0).
    test_model_rename_trimmed.py::test_vectors_lost_on_a_trimmed_store_... now asserts every
    record (files by chunks) on a workspace with a file of many chunks.
  rev18-files-counted-as-files, rev18-reader-files-as-files: the test workspace had one chunk a
    file, so files == chunks. `_old_store(long_file=True)` adds a file of many chunks; the
    reader test and the lost-vectors test assert chunks > files and the count by chunks.
  rev18-reader-behind-ignores-stale: nothing asked a reader's recall whether it is partial.
    The reader test now asserts `dense_partial` while files are stale and not after.
  rev18-rebuild-ignores-stop: the stop test stops during the vectors, not the words. New:
    test_dense_leg.py::test_a_stop_while_a_reindex_rebuilds_the_words_writes_none_of_the_rest
  rev18-reembed-counts-late: only a reindex (counted by count_stale) was held mid-embedding.
    New: test_model_rename_trimmed.py::test_a_files_model_rename_counts_every_chunk_left_while_its_first_batch_is_embedded
  rev18-health-*: only "200 while files churn" and "a size is shown" were asserted. New:
    test_dashboard_pages.py::test_the_health_pages_store_size_is_the_bytes_of_its_files_in_every_folder
  rev18-pi-start-*: no test looked at the session-start text, and `pi -p` ran one prompt.
    New (two prompts, one session): test_harness_hooks.py::test_pi_extension_gives_the_session_start_text_to_the_first_prompt_of_a_session_only
  rev18-client-answered-never-set: no sidecar answered and then hung. New:
    test_harness_hooks.py::test_pi_extension_waits_the_usual_3_s_once_the_sidecar_has_answered
  rev18-client-ready-env-ignored: the never-opens test passes with a 20 s bound too; it now
    asserts every logged wait is within LORE_SIDECAR_READY_MS (3000).
Each new or changed test fails with its bug planted and passes without. Second run (20:12-20:19
UTC, the 14 survivors through tools/mutations.py, with the new tests): 14 of 14 caught.

Noticed while reading (not tested): a `lore/reindex` stopped during its word rebuild no longer
redoes the vectors on the next start. `_forget_vectors` drops them in memory only (on disk the
old `vectors.json` stays, and the stop skips the save while `_rebuilding`); the next start
finds the text index behind and rebuilds the words with `vectors=False`, keeping the old
vectors. The old code wiped the vector folder on disk, so its next start embedded everything
again. Also, the vectors are dropped before the words are rebuilt, so recall by meaning finds
nothing for the whole reindex (by design: the reindex test asserts it).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: rev18"
DENSE = "tests/integration/test_dense_leg.py"
RENAME = "tests/integration/test_model_rename_trimmed.py"
WORDS = "tests/unit/test_words_first.py"
PAGES = "tests/integration/test_dashboard_pages.py"
HOOKS = "tests/e2e/test_harness_hooks.py"
PI_TESTS = tuple(f"{HOOKS}::{t}" for t in (
    "test_pi_extension_carries_a_fact_into_the_next_session",
    "test_pi_extension_waits_for_a_sidecar_slow_to_open_and_its_first_prompt_gets_the_recall",
    "test_pi_extension_carries_on_without_memory_when_the_sidecar_never_opens",
    "test_opencode_plugin_carries_a_fact_into_the_next_session",
    "test_pi_extension_gives_the_session_start_text_to_the_first_prompt_of_a_session_only",
    "test_pi_extension_waits_the_usual_3_s_once_the_sidecar_has_answered",
))
IX = "lore_sidecar/engine/indexing/indexer.py"
D = "lore_sidecar/engine/indexing/dense.py"
ST = "lore_sidecar/engine/status.py"
UI = "lore_sidecar/ui/pages.py"
CLIENT = "editors/shared/lore-client.ts"
PI = "editors/pi/lore.ts"

ROUND = [
    # -- 22d04a6 / 571c4b3: the rebuild and what status says about it --------------------------
    # The flag never lowered by the rebuild's commit: after one `lore/reindex` indexLagMs reads
    # -1 for the rest of the process (and a stop skips the final vector snapshot).
    Mutation("rev18-rebuilding-never-cleared", IX,
             "            self._rebuilding = False  # (a rebuild's words are all back with its commit)\n", "",
             (DENSE, RENAME), by=BY),
    # The dropped count on `lore/reindex`: vectorLag counts each kind as 1 until the dense leg
    # lists its keys (the count the commit promises "from the start").
    Mutation("rev18-reindex-uncounted", "lore_sidecar/engine/indexing/rebuild.py",  # (moved from indexer.py)
             "            self.dense.reset(seq)\n            self.dense.count_stale()\n",
             "            self.dense.reset(seq)\n", (DENSE, RENAME), by=BY),
    # The dropped count on start with lost vectors: a status asked at once says 1 per kind
    # (the bench's "vectorLag 320 vs 0 at once").
    Mutation("rev18-lost-vectors-uncounted", IX,
             "            self.dense.reset(trimmed)\n            self.dense.count_stale()\n",
             "            self.dense.reset(trimmed)\n", (RENAME, DENSE), by=BY),
    # The dropped call: lost vectors are never noticed on start; the dense leg follows an
    # outbox trimmed past them and the old records never get a vector again.
    Mutation("rev18-vectors-on-start-dropped", IX,
             "        self._vectors_on_start()\n        self._thread = threading.Thread(",
             "        self._thread = threading.Thread(", (RENAME, DENSE), by=BY),
    # Files counted by their own rows (one per file), not their chunks: vectorLag for a files
    # kind being embedded again is far too small.
    Mutation("rev18-files-counted-as-files", D, 'COUNTED_AS = {"files": "chunks"}', "COUNTED_AS = {}",
             (RENAME, DENSE), by=BY),
    # A reader's count forgets the files -> chunks name (the writer's is right).
    Mutation("rev18-reader-files-as-files", ST,
             "left = sum(counts.get(COUNTED_AS.get(kind, kind), 1) for kind in stale)",
             "left = sum(counts.get(kind, 1) for kind in stale)", (RENAME, DENSE), by=BY),
    # Recall on the writer no longer marked partial while kinds are embedded again (position
    # level, backlog not): densePartial false mid-reindex; the background indexer calls the
    # meaning index level and exits with kinds still stale.
    Mutation("rev18-writer-behind-ignores-backlog", ST,
             "view.indexer.applied_seq > view.indexer.dense_seq or view.indexer.dense_backlog > 0",
             "view.indexer.applied_seq > view.indexer.dense_seq", (DENSE, RENAME), by=BY),
    # A reader's recall not marked partial while the writer's snapshot has stale kinds.
    Mutation("rev18-reader-behind-ignores-stale", ST,
             "return view.text.saved_seq > view.vectors.saved_seq or bool(view.vectors.stale)",
             "return view.text.saved_seq > view.vectors.saved_seq", (RENAME, DENSE), by=BY),
    # No stop check in the rebuild's loop: a stop during `lore/reindex` waits for every word
    # (its 30 s join, then goes on while the rebuild still writes and commits).
    Mutation("rev18-rebuild-ignores-stop", "lore_sidecar/engine/indexing/rebuild.py",  # (moved from indexer.py)
             "                    if self._stop.is_set():\n                        raise Interrupted  # the next start",
             "                    if False:\n                        raise Interrupted  # the next start",
             (DENSE,), by=BY),
    # The rebuild not marked as writing: the dense leg does not wait for the words and embeds
    # the whole record beside the word rebuild (words first broken for a reindex).
    Mutation("rev18-rebuild-not-writing", "lore_sidecar/engine/indexing/rebuild.py",  # (moved from indexer.py)
             "        with self.writing():  # the dense leg waits for the words (words first)\n",
             "        if True:  # the dense leg waits for the words (words first)\n", (DENSE, WORDS), by=BY),
    # The dense leg's re-embedding no longer yields to the words batch by batch.
    Mutation("rev18-reembed-no-yield", D,
             "                self._yield_to_words()  # (a rebuild's words come back first",
             "                pass  # (a rebuild's words come back first", (DENSE, WORDS), by=BY),
    # Kinds counted one at a time again (model rename, no count_stale): a kind not reached yet
    # counts 1 and the kind being embedded counts nothing until its first batch is done.
    Mutation("rev18-reembed-counts-late", D,
             "        self._left.update({kind: len(keys) for kind, keys in todo.items()})  # every kind counted at once\n",
             "", (RENAME, DENSE), by=BY),
    # -- 8e0cbd0: the Health page ----------------------------------------------------------------
    # The store's disk read unguarded (the old code checked it exists): a store folder gone or
    # unreadable makes the Health page a 500.
    Mutation("rev18-health-disk-unguarded", UI,
             "    try:\n        disk = shutil.disk_usage(store)\n    except OSError:\n        disk = None\n",
             "    disk = shutil.disk_usage(store)\n", (PAGES,), by=BY),
    # Only the store's top folder counted: the indexes' folders are left out of the size.
    Mutation("rev18-health-top-folder-only", UI,
             "    for folder, _, names in os.walk(store):",
             "    for folder, _, names in list(os.walk(store))[:1]:", (PAGES,), by=BY),
    # Not only regular files: symlinks (and whatever else) add their own sizes.
    Mutation("rev18-health-counts-non-files", UI,
             "            size += info.st_size if stat.S_ISREG(info.st_mode) else 0\n",
             "            size += info.st_size\n", (PAGES,), by=BY),
    # -- 58efb20: the Pi / OpenCode client --------------------------------------------------------
    # The session-start text is injected on every prompt, not once.
    Mutation("rev18-pi-start-text-every-prompt", PI,
             "    starting = undefined; // the session-start text goes in once\n", "", PI_TESTS, by=BY),
    # The first prompt does not wait for the session-start text: it is lost.
    Mutation("rev18-pi-start-not-awaited", PI,
             "      starting,\n      client?.call(", "      undefined,\n      client?.call(", PI_TESTS, by=BY),
    # `answered` never set: every call in the first 20 s waits up to the ready bound, so a
    # sidecar that hangs after its first answer holds the agent 20 s, not 3 s.
    Mutation("rev18-client-answered-never-set", CLIENT,
             "    if (result !== undefined) this.answered = true;\n", "", PI_TESTS, by=BY),
    # LORE_SIDECAR_READY_MS ignored: the bound is always 20 s.
    Mutation("rev18-client-ready-env-ignored", CLIENT,
             "(Number(process.env.LORE_SIDECAR_READY_MS) || 20_000)", "20_000", PI_TESTS, by=BY),
]
