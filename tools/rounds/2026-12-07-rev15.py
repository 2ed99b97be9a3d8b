"""rev15: independent review of `fast` (4cd5594..4aba084^2: recall reads each message candidate
once, lore_sidecar/engine/recall/reads.py; the indexing line's file count; `Projects.ids_at`
and `IndexRequests.progress_at`; the fold's keys in one call) and `bin` (4cd5594..5cd20cd^2:
the `embedderDim` setting, WordLlama's Matryoshka width).

Bugs chosen from the code and docs before any file under tests/ was opened; guarding tests
chosen by file name and `grep -rl` only.

First run (16:59 UTC, once, `python tools/mutations.py <the 16 names>`, 5 m 7 s wall, load
2-8 on 2 cores): 9 of 16 caught.
  caught:   rev15-reads-overwrite-known, rev15-reads-shared, rev15-progress-unmarked-files-zero,
            rev15-status-progress-first-folder, rev15-dim-any-integer, rev15-dim-option-name,
            rev15-default-dim-128, rev15-app-no-dim, rev15-dim-attr-unset
  survived: rev15-reads-absent-forgotten, rev15-recall-indexing-first-folder,
            rev15-ids-at-root-none, rev15-one-of-raw, rev15-dim-workspace-ok,
            rev15-files-no-dim, rev15-name-always-suffixed
  error:    none

Survivors, after reading the tests (all seven real gaps, none equivalent):
  rev15-reads-absent-forgotten: no test had a candidate whose row is missing (the case
    reads.py documents: "a missing row stays missing"); with the bug the recall raises
    KeyError. New: test_recall_reads_once.py::test_a_candidate_whose_row_is_gone_is_left_out_of_both_passes_and_never_read_again
  rev15-recall-indexing-first-folder: test_files_so_far_counts_the_asked_projects_files_alone
    asked `index.progress(project)` only, never a recall's line. Two lines added there: a
    recall naming the second folder's project carries that project's line.
  rev15-ids-at-root-none: no test recalled scope "all" from a named project (the one
    scope-all recall, in the killed-writer test, has one project). New:
    test_store_and_index.py::test_a_recall_of_scope_all_finds_every_projects_messages_from_any_project
  rev15-one-of-raw: embedderDim was only set through initializationOptions (a JSON number).
    New: test_embedder_dim.py::test_embedder_dim_from_the_environment_is_a_number_the_model_takes
  rev15-dim-workspace-ok: nothing set embedderDim in a workspace file. New:
    test_embedder_dim.py::test_a_workspace_file_cannot_choose_the_width
  rev15-files-no-dim: nothing loaded WordLlama as the files model with a width. New:
    test_embedder_dim.py::test_a_wordllama_files_model_keeps_the_width_too (note: the code
    applies the width to a WordLlama files model, docs/configuration.md says "conversation
    vectors"; the test pins the code's behaviour)
  rev15-name-always-suffixed: only the narrow name (endswith "-d128") was asserted. New:
    test_embedder_dim.py::test_the_default_width_keeps_the_name_stores_were_indexed_under_and_each_width_has_its_own
Each new test fails with its bug planted (run alone) and passes without. Second run (17:05
UTC, the 7 survivors, 3 m 8 s): 7 of 7 caught.

Noticed while reading: `lore doctor` (setup/doctor.py engine_checks) loads the embedder
without `embedderDim`, so with embedderDim 128 it reports "wordllama-l2-supercat-256
(256-d)" while lore/status says "-d128", 128. Strict xfail:
test_embedder_dim.py::test_doctor_names_the_model_at_the_configured_width (passes once
`dim=settings.embedder_dim` is passed there).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: rev15"
READS = "tests/integration/test_recall_reads_once.py"
STORE = "tests/integration/test_store_and_index.py"
REPLIES = "tests/integration/test_recall_replies.py"
FIRST = "tests/integration/test_first_contact.py"
WORKSPACE = "tests/integration/test_workspace_indexing.py"
FACTS = "tests/integration/test_facts.py"
DIM = "tests/integration/test_embedder_dim.py"
EMB = "tests/unit/test_embedders.py"
SETTINGS = "tests/unit/test_settings_and_wire.py"
TRUST = "tests/integration/test_trust_boundaries.py"
FILES_MODEL = "tests/integration/test_files_model_change.py"

ROUND = [
    # -- fast: reads.py, recaller.py --------------------------------------------------------
    # A key the read did not return (a message deleted since the index saw it) is not
    # remembered as absent: `message_rows` then raises KeyError and the recall fails.
    Mutation("rev15-reads-absent-forgotten", "lore_sidecar/engine/recall/reads.py",
             "known.update((k, got.get(k, absent)) for k in missing)", "known.update(got)",
             (READS, STORE), by=BY),
    # `keys` for `missing`: the second pass overwrites every row the first pass found with
    # "absent", so a deferred dense leg that found something new drops the lexical hits.
    Mutation("rev15-reads-overwrite-known", "lore_sidecar/engine/recall/reads.py",
             "known.update((k, got.get(k, absent)) for k in missing)",
             "known.update((k, got.get(k, absent)) for k in keys)",
             (READS, STORE), by=BY),
    # The remembered reads kept on the recaller (shared between recalls): a later recall sees
    # the rows and session places of the first (a reply recorded since never joins its question).
    Mutation("rev15-reads-shared", "lore_sidecar/engine/recall/recaller.py",
             "reads = RowsOnce(self.records)  # the second pass",
             "reads = self.__dict__.setdefault('_reads', RowsOnce(self.records))  # the second pass",
             (READS, REPLIES, STORE), by=BY),
    # -- fast: the indexing line --------------------------------------------------------------
    # Files counted only once a scan mark exists: a store indexed before the mark (files, no
    # mark) says "the workspace is not indexed yet" on every answer.
    Mutation("rev15-progress-unmarked-files-zero", "lore_sidecar/engine/indexing/progress.py",
             "files = records.files.count(found.id) if found else 0",
             "files = records.files.count(found.id) if mark else 0",
             (FIRST, WORKSPACE), by=BY),
    # recall's indexing line about the first folder's project, not the one asked.
    Mutation("rev15-recall-indexing-first-folder", "lore_sidecar/engine/service.py",
             "indexing=self.index.progress_at(root)", "indexing=self.index.progress()",
             (FIRST, WORKSPACE, STORE), by=BY),
    # status/ask's indexing line about the first folder's project, not the one asked.
    Mutation("rev15-status-progress-first-folder", "lore_sidecar/engine/indexing/requests.py",
             "return self.progress_at(self.i.projects.root(project))",
             "return self.progress_at(self.i.projects.root(None))",
             (FIRST, WORKSPACE, STORE), by=BY),
    # ids_at tells "every project" by a missing root, not by the scope: recall (which always
    # passes the root now) with scope "all" searches one project only.
    Mutation("rev15-ids-at-root-none", "lore_sidecar/engine/projects.py",
             '        if scope == "all":\n            return None\n        found = self.records.find_project(root)',
             '        if root is None:\n            return None\n        found = self.records.find_project(root)',
             (STORE, FACTS), by=BY),
    # -- bin: embedderDim ---------------------------------------------------------------------
    # Any integer 64..256 taken: `embedderDim: 100` is not reported as a bad setting (the lower
    # layer's value kept); the embedder then fails to load and recall goes lexical-only.
    Mutation("rev15-dim-any-integer", "lore_sidecar/settings.py",
             '"embedderDim": (conv.one_of((64, 128, 256))', '"embedderDim": (conv.integer(64, 256)',
             (SETTINGS, DIM, EMB), by=BY),
    # one_of returns the raw value (like `choice`): LORE_EMBEDDER_DIM=128 gives the string
    # "128", which WordLlama refuses: no vectors at all.
    Mutation("rev15-one-of-raw", "lore_sidecar/settings_values.py",
             "        return n\n\n    return conv\n\n\ndef path", "        return v\n\n    return conv\n\n\ndef path",
             (SETTINGS, DIM, EMB), by=BY),
    # The documented option name misspelt: `embedderDim` is an unknown option, ignored.
    Mutation("rev15-dim-option-name", "lore_sidecar/settings.py",
             '"embedderDim": (', '"embeddingDim": (',
             (SETTINGS, DIM, EMB), by=BY),
    # A workspace file may set the width: a cloned repository makes the user's whole store re-embed.
    Mutation("rev15-dim-workspace-ok", "lore_sidecar/settings.py",
             '"lateCandidates", "debounceMs",', '"lateCandidates", "debounceMs", "embedderDim",',
             (SETTINGS, TRUST, DIM), by=BY),
    # A wrong default: 128 instead of 256 (every existing store re-embeds on upgrade).
    Mutation("rev15-default-dim-128", "lore_sidecar/settings.py",
             "embedder_dim: int = 256", "embedder_dim: int = 128",
             (SETTINGS, DIM, EMB), by=BY),
    # The setting never reaches the models: the sidecar always embeds at 256.
    Mutation("rev15-app-no-dim", "lore_sidecar/app.py",
             "load_models(self.settings.embedder, self.settings.files_embedder, dim=self.settings.embedder_dim)",
             "load_models(self.settings.embedder, self.settings.files_embedder)",
             (DIM, EMB, SETTINGS), by=BY),
    # A WordLlama files model (filesEmbedder "wordllama", another default) ignores the width.
    Mutation("rev15-files-no-dim", "lore_sidecar/llm/embedders.py",
             "load_embedder(files, lazy=True, dim=dim)", "load_embedder(files, lazy=True)",
             (DIM, EMB, FILES_MODEL), by=BY),
    # The default width's name changes too: every store written before re-embeds on upgrade,
    # and lore/status names another model.
    Mutation("rev15-name-always-suffixed", "lore_sidecar/llm/embedders.py",
             'self.name = "wordllama-l2-supercat-256" if dim == 256 else f"wordllama-l2-supercat-256-d{dim}"',
             'self.name = f"wordllama-l2-supercat-256-d{dim}"',
             (DIM, EMB, FILES_MODEL), by=BY),
    # The width kept in the table but not in `dim`: vectors allocated at 256 (embedding a
    # narrow width fails), and the store's space says 256.
    Mutation("rev15-dim-attr-unset", "lore_sidecar/llm/embedders.py",
             "        self.dim = dim\n", "        self.dim = WORDLLAMA_DIM\n",
             (DIM, EMB), by=BY),
]
