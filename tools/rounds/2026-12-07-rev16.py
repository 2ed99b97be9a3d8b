"""rev16: independent review of ad72375 (a stop that does not wait for a model load:
engine/indexing/dense.py `DenseWorker.stop`, `_embed`'s explicit load, `loads_left_running`,
`abandoned`, `_loading`; llm/minilm.py `LazyMiniLM.loaded`/`load`; rpc/server.py
`serve_stdio`'s exit with a load left running), 1165a3a (doctor's embedder width) and e229fd4
(hosts.py `untrust`'s `entry()` for a malformed `projects`).

Bugs chosen from the code and docs before any file under tests/ was opened; guarding tests
chosen by file name and `grep -rl` only.

First run (17:13 UTC, once, `python tools/mutations.py <the 16 names>`, 5 m 40 s wall, load
3.7-5.9 on 2 cores): 13 of 16 caught.
  caught:   rev16-stop-waits-for-the-load, rev16-abandon-without-break, rev16-abandoned-never-set,
            rev16-explicit-load-inverted, rev16-loaded-default-false, rev16-first-batch-unchecked,
            rev16-stop-never-joins, rev16-left-running-wrong-name, rev16-minilm-loaded-inverted,
            rev16-doctor-no-dim, rev16-untrust-projects-unchecked, rev16-untrust-entry-unchecked,
            rev16-untrust-was-from-doc
  survived: rev16-loading-never-cleared, rev16-exit-code-dropped, rev16-doctor-dim-conversation-only
  error:    none

Survivors, after reading the tests (all three real gaps, none equivalent):
  rev16-loading-never-cleared: the only stop test stops *during* the first load; nothing
    stopped the worker after the load, mid-batch, where it must still be waited for. With the
    bug `_loading` keeps the model's name, the stop abandons a worker in an embedding call, and
    close returns with the batch (and its insert) still running. New:
    test_dense_leg.py::test_once_the_files_model_is_loaded_a_stop_waits_for_the_batch_in_flight
  rev16-exit-code-dropped: the stdio test closes with shutdown + exit (code 0 either way).
    New: test_exit_during_model_load.py::test_an_exit_without_shutdown_while_the_files_model_loads_keeps_its_exit_code_1
    (code 1, with a control without a load)
  rev16-doctor-dim-conversation-only: only the "embedder" line was asserted at the width.
    New: test_embedder_dim.py::test_doctor_names_a_wordllama_files_model_at_the_configured_width_too
Each new test fails with its bug planted (run alone) and passes without. Second run (17:21
UTC, the 3 survivors, ~1 m 40 s): 3 of 3 caught.

Noticed while reading (not tested): only `serve_stdio` ends with os._exit when a load is left
running. The MCP face (mcp_face/serve.py `run_mcp`: `host.close()` then `return 0`) and the
background indexer (background.py, `engine.close()`) close the same engine, so a stop there
now also abandons a MiniLM load and the process goes through interpreter shutdown with the
lore-dense thread still in onnx/onnxruntime: the very exit ad72375 avoids for stdio. Also,
`loads_left_running` is true for any live "lore-dense" thread, not only an abandoned one (a
worker whose 30 s join ran out mid-batch counts too); its docstring says "still building its
model".
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: rev16"
DENSE = "tests/integration/test_dense_leg.py"
EXIT = "tests/e2e/test_exit_during_model_load.py"
MINILM = "tests/unit/test_minilm_int8.py"
DIM = "tests/integration/test_embedder_dim.py"
DOCTOR = "tests/integration/test_doctor.py"
DOCTOR_UNIT = "tests/unit/test_doctor_checks.py"
EDITS = "tests/unit/test_install_edits.py"
INSTALL = "tests/integration/test_install.py"
D = "lore_sidecar/engine/indexing/dense.py"

ROUND = [
    # -- ad72375: dense.py --------------------------------------------------------------------
    # The load check dropped from stop's wait: a stop waits out the load again (up to 30 s).
    # (re-expressed after the leave-loads policy joined the condition; same bug)
    Mutation("rev16-stop-waits-for-the-load", D, "                if self._loading and loads.leave:\n",
             "                if False:\n", (DENSE, EXIT), by=BY),
    # The `break` forgotten: `abandoned` is set and logged, but stop still joins until the
    # load is done (or 30 s): close waits out the load.
    Mutation("rev16-abandon-without-break", D,
             "                    break\n                self._thread.join(timeout=0.05)\n",
             "                self._thread.join(timeout=0.05)\n", (DENSE, EXIT), by=BY),
    # `abandoned` never set: the worker says it was waited for when it was not.
    Mutation("rev16-abandoned-never-set", D, "                    self.abandoned = True\n", "",
             (DENSE, EXIT), by=BY),
    # Inverted condition: the explicit load runs only for a loaded model, so an unloaded one
    # is built inside its first embed, unmarked, and a stop waits for it.
    Mutation("rev16-explicit-load-inverted", D, 'if not getattr(model, "loaded", True):',
             'if getattr(model, "loaded", False):', (DENSE, EXIT), by=BY),
    # Wrong default: a model without `loaded` (WordLlama, a test's model) is taken for an
    # unloaded one and `model.load()` raises AttributeError: no vectors at all.
    Mutation("rev16-loaded-default-false", D, 'if not getattr(model, "loaded", True):',
             'if not getattr(model, "loaded", False):', (DENSE, EXIT), by=BY),
    # The `finally` that clears `_loading` dropped: after the first load the worker looks like
    # it is loading forever, so a later stop (mid-batch) does not wait for the batch.
    Mutation("rev16-loading-never-cleared", D,
             "            try:\n                model.load()\n            finally:\n                self._loading = \"\"\n",
             "            model.load()\n", (DENSE, EXIT), by=BY),
    # The stop check only between batches: a worker whose load was abandoned embeds its first
    # batch anyway (seconds of a core after close) and tries to insert it.
    Mutation("rev16-first-batch-unchecked", D,
             "            if self._stop.is_set():\n                raise Interrupted\n",
             "            if start and self._stop.is_set():\n                raise Interrupted\n",
             (DENSE, EXIT), by=BY),
    # No deadline left: stop never joins the worker, even mid-batch (not loading): close goes
    # on while the worker still embeds and inserts.
    Mutation("rev16-stop-never-joins", D, "deadline = time.monotonic() + 30", "deadline = time.monotonic()",
             (DENSE, EXIT), by=BY),
    # Wrong thread name (the insert pool's prefix): a load left running is never seen, so the
    # stdio sidecar goes through interpreter shutdown with onnx/onnxruntime mid-load.
    # (re-expressed after the check moved to engine/indexing/loads.py; same bug)
    Mutation("rev16-left-running-wrong-name", "lore_sidecar/engine/indexing/loads.py",
             't.name == THREAD and t.is_alive()', 't.name == "lore-vectors" and t.is_alive()', (DENSE, EXIT), by=BY),
    # -- ad72375: minilm.py ------------------------------------------------------------------
    # `loaded` inverted: an unbuilt LazyMiniLM says it is loaded, so the dense leg never marks
    # its load and a stop waits it out.
    Mutation("rev16-minilm-loaded-inverted", "lore_sidecar/llm/minilm.py", "        return self._model is not None\n",
             "        return self._model is None\n", (EXIT, DENSE, MINILM), by=BY),
    # -- ad72375: server.py ------------------------------------------------------------------
    # The exit code dropped on the os._exit path: an `exit` without `shutdown` (code 1) exits 0.
    # (re-expressed after the exit moved into dense.exit_leaving_loads for every server; same bug)
    Mutation("rev16-exit-code-dropped", "lore_sidecar/engine/indexing/loads.py", "    os._exit(code)\n",
             "    os._exit(0)\n", (EXIT,), by=BY),
    # -- 1165a3a: doctor.py ------------------------------------------------------------------
    # Reverted: doctor names WordLlama at 256-d whatever embedderDim says.
    Mutation("rev16-doctor-no-dim", "lore_sidecar/setup/doctor.py",
             "load_embedder(name, lazy=lazy, dim=settings.embedder_dim)", "load_embedder(name, lazy=lazy)",
             (DIM, DOCTOR, DOCTOR_UNIT), by=BY),
    # The width for conversation only (the docs' old wording): a WordLlama files model is
    # named at 256-d while the engine embeds files at embedderDim.
    Mutation("rev16-doctor-dim-conversation-only", "lore_sidecar/setup/doctor.py",
             "load_embedder(name, lazy=lazy, dim=settings.embedder_dim)",
             "load_embedder(name, lazy=lazy, dim=settings.embedder_dim if not lazy else 256)",
             (DIM, DOCTOR, DOCTOR_UNIT), by=BY),
    # -- e229fd4: hosts.py -------------------------------------------------------------------
    # `projects` not checked to be a table: `projects = "x"` makes the uninstall raise.
    Mutation("rev16-untrust-projects-unchecked", "lore_sidecar/setup/hosts.py",
             "got = projects.get(str(project)) if isinstance(projects, dict) else None",
             "got = projects.get(str(project)) if projects is not None else None",
             (EDITS, INSTALL), by=BY),
    # The project's entry not checked to be a table: `projects."/p" = "x"` makes it raise.
    Mutation("rev16-untrust-entry-unchecked", "lore_sidecar/setup/hosts.py",
             "return got if isinstance(got, dict) else None", "return got",
             (EDITS, INSTALL), by=BY),
    # Wrong document: the trust before install read from the current file, so it is always
    # "trusted" and the trust install granted outlives the uninstall.
    Mutation("rev16-untrust-was-from-doc", "lore_sidecar/setup/hosts.py",
             'was = (entry(before) or {}).get("trust_level")', 'was = (entry(doc) or {}).get("trust_level")',
             (EDITS, INSTALL), by=BY),
]
