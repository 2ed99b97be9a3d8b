"""rev20: independent review of suite2 (merged in 5793a3b): shutdown and exit waiting only for
the client's requests, the first scan stopped at its next progress report and waited for,
an open finishing after exit closing its engine, `shuttingDown` (79882a4); an exit during the
engine's imports ending the process at once (f52ac60); a file lock around each harness
install (2de0d74).

Bugs chosen from the code and docs before any file under tests/ was opened; guarding tests
chosen by file name and `grep -rl`/`grep -n ^def test` only.

First run (20:24-20:29 UTC, once, `python tools/mutations.py <the 20 names>` in two halves side
by side, load ~1 on 2 cores; the worktree's .cache a symlink to /work/main/.cache, so the
harness test found Claude Code installed): 10 of 20 caught.
  caught:   rev20-idle-waits-all, rev20-requests-not-tracked, rev20-scan-check-removed,
            rev20-duties-not-stoppable, rev20-close-no-wait, rev20-scanstopped-as-failure,
            rev20-kind-renamed, rev20-exit-waits-imports, rev20-flag-before-imports,
            rev20-loads-left-running-first
  survived: rev20-requests-lore-only, rev20-requests-prune-inverted, rev20-opened-not-kept,
            rev20-late-open-not-closed, rev20-importing-ignores-store-flag,
            rev20-open-ignores-stop, rev20-h-stamp-first, rev20-h-no-recheck,
            rev20-h-shared-lock, rev20-h-hermes-stamp-first
  error:    none

Survivors, after reading the tests: nine real gaps, one equivalent.
  rev20-h-hermes-stamp-first is equivalent for a failed install: the stamp lives inside the
  venv, and `python -m venv --clear` empties that directory before pip runs, stamp included
  (it differs only if venv fails before clearing).
  The piped transcripts (test_wire_order.py, test_stdio_contract.py) send only `lore/*`
  requests and fewer than 256 of them; the e2e exit tests hold the scan (the open long done)
  or the imports (the process ends by os._exit before the open goes on), so nothing had an
  open finish or begin after `close`, held the store opening, or looked at whether `close`
  closes the engine at all; and nothing runs the harness install path (its stamp exists on
  any machine that ran the e2e tests once). New tests (each fails with its bug planted,
  passes without):
  rev20-requests-lore-only:
    tests/integration/test_wire_order.py::test_a_shutdown_piped_behind_editor_requests_waits_for_them_too
  rev20-requests-prune-inverted:
    tests/unit/test_dispatcher_waits.py::test_shutdown_waits_for_the_oldest_requests_of_hundreds_still_in_flight
  rev20-opened-not-kept:
    tests/unit/test_server_close.py::test_close_closes_the_engine_the_open_returned_once
  rev20-late-open-not-closed, rev20-importing-ignores-store-flag:
    ::test_an_open_finishing_after_close_closes_its_own_engine_and_says_shuttingDown
  rev20-open-ignores-stop: ::test_an_open_starting_after_close_opens_no_store
  rev20-h-stamp-first:
    tests/unit/test_harness_install.py::test_a_failed_npm_install_leaves_no_stamp_and_the_next_call_installs_again
  rev20-h-no-recheck, rev20-h-shared-lock: ::test_two_installers_at_once_install_the_harness_once
  (and ::test_a_failed_hermes_install_leaves_no_stamp for a stamp written between venv and pip)
Second run (20:31-20:34 UTC, the 10 survivors, the new tests first in each guard): 9 of 10
caught; rev20-h-hermes-stamp-first survives, as the equivalent it is.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: rev20"
T = "tests/"
TR = "lore_sidecar/rpc/transport.py"
SRV = "lore_sidecar/rpc/server.py"
REQ = "lore_sidecar/engine/indexing/requests.py"
LOADS = "lore_sidecar/engine/indexing/loads.py"
HAR = "tests/support/harness.py"
SCAN = T + "e2e/test_exit_during_scan.py"
SCAN1 = SCAN + "::test_shutdown_and_exit_during_the_first_scan_end_at_its_next_progress_report_and_keep_what_was_acknowledged"
SCAN2 = SCAN + "::test_exit_while_the_engine_is_still_importing_ends_at_once_and_opens_no_store"
STDIO = T + "integration/test_stdio_contract.py"
WIRE = T + "integration/test_wire_order.py"
LOADTESTS = T + "e2e/test_exit_during_model_load.py"
STARTUP = T + "unit/test_startup.py"
KINDS = T + "unit/test_docs.py::test_the_stable_error_kinds_list_names_every_kind_the_code_produces"
HARNESS = (T + "unit/test_harness_install.py",  # added after the first run
           T + "e2e/test_harness_hooks.py::test_claude_code_hooks_carry_a_fact_into_the_next_session")
SERVER_CLOSE = T + "unit/test_server_close.py"  # added after the first run
DISPATCH = T + "unit/test_dispatcher_waits.py"  # added after the first run
WIRE_EDITOR = WIRE + "::test_a_shutdown_piped_behind_editor_requests_waits_for_them_too"  # added after the first run

ROUND = [
    # 79882a4: shutdown/exit wait for the client's requests only
    Mutation("rev20-idle-waits-all", TR,
             "if i in self.requests and not f.done()]", "if not f.done()]", (SCAN1, STDIO), by=BY),
    Mutation("rev20-requests-not-tracked", TR,
             "            self.requests.add(msg_id)\n", "", (STDIO, WIRE, SCAN1), by=BY),
    Mutation("rev20-requests-lore-only", TR,
             "        if has_id:\n            if len(self.requests) > 256:",
             "        if has_id and method.startswith(\"lore/\"):\n            if len(self.requests) > 256:",
             (WIRE_EDITOR, STDIO, WIRE, SCAN1), by=BY),
    Mutation("rev20-requests-prune-inverted", TR,
             "self.requests &= self.protocol._request_futures.keys()",
             "self.requests -= self.protocol._request_futures.keys()", (DISPATCH, STDIO, WIRE, SCAN1), by=BY),
    # 79882a4: the first scan stops at its next report and is waited for
    Mutation("rev20-scan-check-removed", SRV,
             "            if stoppable and self.stopped.is_set():\n                raise ScanStopped()\n", "",
             (SCAN1,), by=BY),
    Mutation("rev20-duties-not-stoppable", SRV,
             "lambda report: engine.index.scan(report), stoppable=True)",
             "lambda report: engine.index.scan(report))", (SCAN1,), by=BY),
    Mutation("rev20-close-no-wait", SRV,
             "        wait_futures(list(self._scans))\n", "", (SCAN1,), by=BY),
    Mutation("rev20-opened-not-kept", SRV,
             "                self._opened = engine\n                return engine",
             "                return engine", (SERVER_CLOSE, SCAN1, STDIO), by=BY),
    Mutation("rev20-late-open-not-closed", SRV,
             "        engine.close()\n        raise LoreError(\"shuttingDown\"",
             "        raise LoreError(\"shuttingDown\"", (SERVER_CLOSE, SCAN1, SCAN2, STDIO), by=BY),
    Mutation("rev20-scanstopped-as-failure", REQ,
             "            except ScanStopped:\n                log.info(\"indexing %s stopped: the process is exiting\", folder)\n"
             "                return\n", "", (SCAN1,), by=BY),
    Mutation("rev20-kind-renamed", SRV,
             "                raise LoreError(\"shuttingDown\", \"the server is exiting\")\n            self._store_opening = True",
             "                raise LoreError(\"shutdown\", \"the server is exiting\")\n            self._store_opening = True",
             (KINDS,), by=BY),
    # f52ac60: an exit during the engine's imports ends the process at once
    Mutation("rev20-exit-waits-imports", SRV,
             "return exit_leaving_loads(exit_code, imports_running=server.importing())",
             "return exit_leaving_loads(exit_code)", (SCAN2, LOADTESTS), by=BY),
    Mutation("rev20-importing-ignores-store-flag", SRV,
             "return work is not None and not work.done() and not self._store_opening",
             "return work is not None and not work.done()", (SERVER_CLOSE, SCAN2, SCAN1, LOADTESTS, STARTUP), by=BY),
    Mutation("rev20-flag-before-imports", SRV,
             "        if self.open_engine is _open_default_engine:\n",
             "        self._store_opening = True\n        if self.open_engine is _open_default_engine:\n",
             (SCAN2, STARTUP), by=BY),
    Mutation("rev20-open-ignores-stop", SRV,
             "            if self.stopped.is_set():\n                raise LoreError(\"shuttingDown\", \"the server is exiting\")\n",
             "", (SERVER_CLOSE, SCAN2, STARTUP, STDIO), by=BY),
    Mutation("rev20-loads-left-running-first", LOADS,
             "    if imports_running:\n"
             "        log.info(\"exiting with the engine's imports left running (the store was not opened)\")\n"
             "    elif not left_running():\n        return code\n    else:\n",
             "    if not left_running():\n        return code\n"
             "    if imports_running:\n"
             "        log.info(\"exiting with the engine's imports left running (the store was not opened)\")\n"
             "    else:\n",
             (SCAN2, LOADTESTS), by=BY),
    # 2de0d74: a file lock around each harness install
    Mutation("rev20-h-stamp-first", HAR,
             "        prefix.mkdir(parents=True, exist_ok=True)\n        subprocess.run([\"npm\", \"install\"",
             "        prefix.mkdir(parents=True, exist_ok=True)\n        stamp.touch()\n        subprocess.run([\"npm\", \"install\"",
             HARNESS, by=BY),
    Mutation("rev20-h-no-recheck", HAR,
             "    if not stamp.exists():  # looked at again under the lock",
             "    if True:  # looked at again under the lock", HARNESS, by=BY),
    Mutation("rev20-h-shared-lock", HAR,
             "fcntl.flock(f, fcntl.LOCK_EX)", "fcntl.flock(f, fcntl.LOCK_SH)", HARNESS, by=BY),
    Mutation("rev20-h-hermes-stamp-first", HAR,
             "                subprocess.run([sys.executable, \"-m\", \"venv\", \"--clear\", str(venv)], check=True, timeout=300)\n",
             "                stamp.parent.mkdir(parents=True, exist_ok=True)\n                stamp.touch()\n"
             "                subprocess.run([sys.executable, \"-m\", \"venv\", \"--clear\", str(venv)], check=True, timeout=300)\n",
             HARNESS, by=BY),
]
