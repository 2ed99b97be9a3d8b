"""Independent review round 2 (issue 35): the dashboard, the team record, backups and the
nightly pass, dream and decay, redaction, recall and fact paging, install/uninstall, the
store's privacy and the hook daemon. Every bug was chosen from the product code, its
docstrings and README.md / docs/protocol.md / docs/security.md / docs/maintenance.md /
docs/team.md / docs/architecture.md before any test was read; the test files were picked by
name and `grep -l`. Earlier rounds' names and `old` texts were read only to avoid repeating one.

First run (2026-12-04 02:08-02:31 UTC, `python3 tools/mutations.py <the 18 names>` once; load
average 6.4 at the start, 10-17 while it ran beside a full suite run in /work/clone): 9 of 18
caught (50%). Survived: f2b-ui-edit-ignores-version, f2b-backup-exports-forgotten-nodes,
f2b-nightly-new-store-dreams-at-once, f2b-dream-advisory-becomes-latest,
f2b-decay-unlogged-open-ignored, f2b-redact-keys-kept, f2b-recall-deferral-judged-by-first-page,
f2b-facts-history-ignores-asof, f2b-git-home-without-pid. No stale and no error outcome.

Finished (2026-12-04, by a helper who had not read the tests before the first run): each of
the nine survivors is a real promise (docs/maintenance.md, docs/protocol.md,
docs/configuration.md, or the docstring of the code it breaks), so each got a test, named in
a comment under its entry; `python3 tools/mutations.py <the nine>` then caught all nine, and
each was caught again by its new test alone. With the nine the first run caught (not re-run),
18 of 18.

A real bug found while reading backups.Nightly (fixed, docs/maintenance.md says so): a
scheduled backup that raised an OSError (a file where backupDir should be, an unplugged drive,
a full disk) ended the schedule's thread, so no backup and no dream ran again until the
instance stepped down and back up. Backup and dream now fail apart, logged, and the schedule
goes on: tests/integration/test_nightly.py::
test_a_backup_folder_that_cannot_be_written_stops_neither_the_schedule_nor_the_dream, seen
failing on the code before the fix.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: independent, fresh round 2 (issue 35)"
GUARD = "lore_sidecar/ui/guard.py"
PAGES = "lore_sidecar/ui/pages.py"
REC = "lore_sidecar/shared/record.py"
REP = "lore_sidecar/shared/replica.py"
BK = "lore_sidecar/backups.py"
ST = "lore_sidecar/store/backup.py"
DREAM_REQ = "lore_sidecar/engine/maintenance/requests.py"
DECAY = "lore_sidecar/engine/maintenance/decay.py"
RED = "lore_sidecar/engine/capture/redact.py"
RECALLER = "lore_sidecar/engine/recall/recaller.py"
FQ = "lore_sidecar/engine/facts/queries.py"
INST = "lore_sidecar/setup/install.py"
EVENTS = "lore_sidecar/hook/events.py"
FALLBACK = "lore_sidecar/hook/fallback.py"
GITSAFE = "lore_sidecar/engine/gitsafe.py"

UI = ("tests/integration/test_dashboard_access.py", "tests/e2e/test_dashboard.py")
SHR = ("tests/integration/test_shared.py",)
BACKUPS = ("tests/integration/test_backup.py", "tests/integration/test_backup_roundtrip.py",
           "tests/integration/test_restore_edges.py")
MNT = ("tests/unit/test_dream_rules.py", "tests/integration/test_maintenance.py")
DECAY_T = ("tests/unit/test_decay.py", "tests/integration/test_maintenance.py")
REDACT = ("tests/unit/test_redact.py", "tests/unit/test_redact_formats.py")
PAGING = ("tests/integration/test_paging.py", "tests/integration/test_dense_leg.py")
FACTS = ("tests/integration/test_facts.py", "tests/integration/test_paging.py")
INSTALL = ("tests/integration/test_install.py", "tests/integration/test_agent_installs.py")
HOOK = ("tests/integration/test_store_privacy.py", "tests/integration/test_lifecycle.py")
FALLBACK_T = ("tests/integration/test_store_privacy.py", "tests/integration/test_lifecycle.py",
              "tests/e2e/test_harness_hooks.py")
GIT = ("tests/integration/test_hostile_git.py",)

ROUND = [
    # --- the dashboard ---------------------------------------------------------------------------
    # A top-level navigation from another site (Sec-Fetch-Site: cross-site, no Origin) is let
    # through: the guard refuses it only when an Origin header came too.
    Mutation("f2b-ui-cross-site-navigation-let-through", GUARD, '        if fetch_site in ("cross-site", "same-site"):\n',
             '        if fetch_site in ("cross-site", "same-site") and origin is not None:\n', UI, by=BY),
    # The edit form's version is dropped: a save over a concurrent change overwrites it
    # instead of answering 409 versionConflict.
    Mutation("f2b-ui-edit-ignores-version", PAGES, '"expectedVersion": version,', '"expectedVersion": None,',
             (*UI, "tests/integration/test_dashboard_edits.py"), by=BY),
    # Survived the first run. Now caught by tests/integration/test_dashboard_edits.py::
    # test_a_save_from_a_page_older_than_the_node_is_refused_and_changes_nothing.

    # --- the team record -------------------------------------------------------------------------
    # createNode at a URI another machine already took is appended (nodeExists only without a URI).
    Mutation("f2b-shared-create-on-taken-uri", REC, '    if method == "createNode":\n        raise LoreError("nodeExists"',
             '    if method == "createNode" and uri is None:\n        raise LoreError("nodeExists"', SHR, by=BY),
    # The team's usage stream is never pulled: other machines' recalls and opens never reach
    # this one's decay and analytics.
    Mutation("f2b-shared-usage-never-pulled", REP, '                self.sync(USAGE, "")\n', "                pass\n",
             SHR, by=BY),

    # --- backups and the nightly pass ------------------------------------------------------------
    # The backup's `.lore.md` exports include forgotten (deleted) nodes.
    Mutation("f2b-backup-exports-forgotten-nodes", ST, "\" WHERE n.deleted_at IS NULL AND n.scope='project' ORDER BY n.uri\"",
             "\" WHERE n.scope='project' ORDER BY n.uri\"", BACKUPS, by=BY),
    # Survived the first run. Now caught by tests/integration/test_backup.py::
    # test_a_backups_exports_hold_the_live_knowledge_and_not_a_forgotten_node.
    # A new store dreams at its first tick, not a dream interval later.
    Mutation("f2b-nightly-new-store-dreams-at-once", BK, 'state.setdefault("lastDream", now)',
             'state.setdefault("lastDream", 0)', (*BACKUPS, "tests/integration/test_nightly.py"), by=BY),
    # Survived the first run. Now caught by tests/integration/test_nightly.py::
    # test_a_new_store_first_dreams_a_dream_interval_after_it_starts_not_at_once.

    # --- dream and decay -------------------------------------------------------------------------
    # A run rolled back once can be rolled back again (alreadyRolledBack never said).
    Mutation("f2b-dream-rollback-twice", DREAM_REQ, '        if run.get("rolledBackAt"):\n            raise LoreError("alreadyRolledBack"',
             '        if run.get("rolledBack"):\n            raise LoreError("alreadyRolledBack"', MNT, by=BY),
    # An advisory run becomes "latest": a default rollback then refuses (or undoes nothing)
    # instead of undoing the last applied run.
    Mutation("f2b-dream-advisory-becomes-latest", DREAM_REQ, '            if not dry_run:\n                self.runs.save("latest"',
             '            if True:\n                self.runs.save("latest"', MNT, by=BY),
    # Survived the first run. Now caught by tests/integration/test_maintenance.py::
    # test_an_advisory_run_after_an_applied_one_leaves_the_default_rollback_undoing_the_applied_one.
    # A lead opened from a recall that did not log what it showed no longer counts as a use.
    Mutation("f2b-decay-unlogged-open-ignored", DECAY,
             "    events += [(t, True, t) for t, q in used if q not in seen]  # opened from an unlogged recall\n",
             "", DECAY_T, by=BY),
    # Survived the first run. Now caught by tests/unit/test_decay.py::
    # test_an_open_from_a_recall_that_logged_nothing_still_counts_as_a_use.

    # --- redaction -------------------------------------------------------------------------------
    # Past MAX_SCAN_CHARS the rest is passed on unscanned instead of replaced by a marker.
    Mutation("f2b-redact-tail-passed-unscanned", RED,
             "text, tail = text[:MAX_SCAN_CHARS], _TRUNCATED.format(n=len(text) - MAX_SCAN_CHARS)",
             "text, tail = text[:MAX_SCAN_CHARS], text[MAX_SCAN_CHARS:]", REDACT, by=BY),
    # A JSON value's keys are not redacted (a secret used as a key is stored as it is).
    Mutation("f2b-redact-keys-kept", RED, "key = base = redact_value(k, budget) if isinstance(k, str) else k",
             "key = base = k", REDACT, by=BY),
    # Survived the first run. Now caught by tests/unit/test_redact.py::
    # test_redact_value_redacts_a_secret_used_as_a_key_and_keeps_plain_keys.

    # --- recall and fact paging ------------------------------------------------------------------
    # The deferred dense leg is judged by the first page's last score, not the asked page's:
    # a later page skips the vector leg and misses vector-only hits of the one full ranking.
    Mutation("f2b-recall-deferral-judged-by-first-page", RECALLER, "last = scored[offset + limit - 1][0]",
             "last = scored[limit - 1][0]", PAGING, by=BY),
    # Survived the first run. Now caught by tests/integration/test_dense_leg.py::
    # test_a_later_page_runs_the_vector_leg_when_a_hit_found_by_meaning_alone_ranks_on_it.
    # history with asOf lists every version ever instead of those holding at asOf.
    Mutation("f2b-facts-history-ignores-asof", FQ, "holds = at if (not history or as_of) else None",
             "holds = at if not history else None", FACTS, by=BY),
    # Survived the first run. Now caught by tests/integration/test_facts.py::
    # test_history_as_of_a_date_lists_only_the_versions_valid_then.

    # --- install / uninstall ---------------------------------------------------------------------
    # Every project's install of a host shares one manifest: uninstalling in one project
    # restores (or deletes) the other project's files too.
    Mutation("f2b-install-manifest-shared-by-projects", INST,
             'key = hashlib.sha1(str(w.project or "user").encode()).hexdigest()[:12]',
             'key = hashlib.sha1(b"user").hexdigest()[:12]', INSTALL, by=BY),
    # A whole file install wrote and the user edited since is deleted by uninstall.
    Mutation("f2b-uninstall-deletes-edited-file", INST,
             'return None if before == (edit.content or "").encode() else before', "return None", INSTALL, by=BY),

    # --- the store's privacy and the hook daemon -------------------------------------------------
    # A /tmp socket folder that its group (not others) may enter passes as private.
    Mutation("f2b-hook-socket-dir-group-open", EVENTS, "and not st.st_mode & 0o077",
             "and not st.st_mode & 0o007", HOOK, by=BY),
    # The degraded hook makes a new store with the umask's mode, not 0700.
    Mutation("f2b-hook-fallback-store-with-umask", FALLBACK, "        make_store_dir(store)\n",
             "        store.mkdir(parents=True, exist_ok=True)\n", FALLBACK_T, by=BY),
    # A git home carries no pid: a process stopped by a signal leaves one nobody sweeps.
    Mutation("f2b-git-home-without-pid", GITSAFE, 'prefix=f"{HOME_PREFIX}{os.getpid()}-"',
             'prefix=HOME_PREFIX', GIT, by=BY),
    # Survived the first run. Now caught by tests/integration/test_hostile_git.py::
    # test_the_home_of_a_process_killed_by_a_signal_is_swept_by_the_next_one.
]
