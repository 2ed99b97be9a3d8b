"""Independent review round (issue 35: "a fresh independent round, planted by someone who did
not write the tests: >= 90% caught"): the dashboard guard, the team record on PostgreSQL,
backups, dream and decay, redaction, paging, install/uninstall. Every bug was chosen from the
product code, its docstrings and README.md / docs/protocol.md / docs/security.md /
docs/maintenance.md / docs/architecture.md before any test was read; the test files were
picked by name and `grep -l`. Earlier rounds' bug names were read only to avoid repeating one.

First run (python tools/mutations.py <the 19 names>, 2 cores at load 3-6, 16:25-16:44 UTC):
13 of 19 caught (68%); survived: ui-host-any-name, shared-move-onto-taken-uri,
shared-cursor-other-team, backup-recall-events-kept, restore-ignores-busy-store,
dream-contradiction-when-new-named. No 'error' or 'stale' outcome. Each survivor has a test
added since (comments below); rerun of the six with them (16:47-16:54 UTC): 6 of 6 caught, and
each added test passes on the clean tree.

Found while reading, not planted: a manifest whose schemaVersion is a string crashed restore
with an internal error (TypeError) instead of a refusal; fixed in backup_intake.read_manifest,
tested as the hostile backup "a schema version that is not a number". And restore's sample
of messages to recall was spread over every message but looked up among the long ones only
(a store of mostly short replies proved itself by one recall, not three); fixed in
store/backup.sample_messages, tested in test_backup.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: independent, fresh round (issue 35)"
GUARD = "lore_sidecar/ui/guard.py"
REC = "lore_sidecar/shared/record.py"
REP = "lore_sidecar/shared/replica.py"
BK = "lore_sidecar/backups.py"
ST = "lore_sidecar/store/backup.py"
DREAM = "lore_sidecar/engine/maintenance/dream.py"
DECAY = "lore_sidecar/engine/maintenance/decay.py"
RED = "lore_sidecar/engine/capture/redact.py"
RECALLER = "lore_sidecar/engine/recall/recaller.py"
FQ = "lore_sidecar/engine/facts/queries.py"
INST = "lore_sidecar/setup/install.py"
FORMATS = "lore_sidecar/setup/formats.py"

UI = ("tests/integration/test_dashboard_access.py", "tests/e2e/test_dashboard.py")
SHR = ("tests/integration/test_shared.py",)
BACKUPS = ("tests/integration/test_restore_untrusted.py", "tests/integration/test_backup.py",
           "tests/integration/test_backup_roundtrip.py")
MNT = ("tests/integration/test_maintenance.py",)
DECAY_T = ("tests/unit/test_decay.py", "tests/integration/test_maintenance.py")
REDACT = ("tests/unit/test_redact.py", "tests/unit/test_redact_formats.py")
PAGING = ("tests/integration/test_paging.py",)
TIMELINE = ("tests/integration/test_paging.py", "tests/integration/test_facts.py")
INSTALL = ("tests/integration/test_install.py", "tests/integration/test_agent_installs.py")

ROUND = [
    # --- the dashboard guard ------------------------------------------------------------------
    # Host checked by its port only: a page on a DNS name rebound to 127.0.0.1 sends
    # `Host: evil.example:PORT` and is answered (guard.py: 421 otherwise).
    # SURVIVED at first (the 421 case sent a name without a port). Added:
    # test_dashboard_access.py::test_a_rebound_dns_name_is_refused_even_when_it_carries_the_dashboards_port.
    Mutation("ui-host-any-name", GUARD, "        if request.host not in hosts:\n",
             '        if not request.host.endswith(f":{port}"):\n', UI, by=BY),
    # Only a launch code gets the session cookie: the printed `?token=` URL opened by hand no
    # longer logs the browser in ("Any answer to a request carrying the token sets the same
    # cookie").
    Mutation("ui-token-sets-no-cookie", GUARD, '    if auth in ("token", "code"):\n',
             '    if auth == "code":\n', UI, by=BY),

    # --- the team record -----------------------------------------------------------------------
    # expectedVersion compared one way only: an update made against an older version (a stale
    # read) is accepted by the record instead of versionConflict.
    Mutation("shared-stale-version-accepted", REC, "        if expected is not None and expected != version:\n",
             "        if expected is not None and expected > version:\n", SHR, by=BY),
    # moveNode onto a URI another node holds is not arbitrated (nodeExists) in the record.
    # SURVIVED at first (no test moved a node). Added: test_shared.py::
    # test_a_move_onto_a_uri_the_team_holds_is_refused_in_the_record_and_appends_nothing.
    Mutation("shared-move-onto-taken-uri", REC,
             '        if conn.execute("SELECT 1 FROM lore_nodes WHERE team=%s AND uri=%s", (team, args["new_uri"])).fetchone():\n',
             "        if False:\n", SHR, by=BY),
    # The cursor file of another team is trusted: after sharedTeam changes, the new team's
    # log is read from the old team's positions and its first operations are never applied.
    # SURVIVED at first (no store changed team). Added: test_shared.py::
    # test_a_store_that_changes_team_replays_the_new_teams_log_from_its_start.
    Mutation("shared-cursor-other-team", REP, 'if data.get("team") == self.record.team else {}',
             'if data.get("team") else {}', SHR, by=BY),

    # --- backups and restore ---------------------------------------------------------------------
    # Rotation deletes the newest backups past `keep` instead of the oldest.
    Mutation("backup-rotate-deletes-newest", ST, "    gone = found[: max(0, len(found) - keep)]\n",
             "    gone = found[keep:]\n", BACKUPS, by=BY),
    # Recall events (what was searched, what was opened) copied into every backup although
    # backupRecallEvents is off by default.
    # SURVIVED at first (no test looked into a backup's recall tables). Added: test_backup.py::
    # test_recall_events_are_left_out_of_a_backup_unless_backup_recall_events_is_on.
    Mutation("backup-recall-events-kept", ST, "            for table in () if recall_events else RECALL_EVENTS:\n",
             "            for table in ():\n", BACKUPS, by=BY),
    # restore goes ahead while a writer holds the store's lock (storeBusy dropped).
    # SURVIVED at first (every restore ran on a store nobody used). Added: test_backup.py::
    # test_a_restore_is_refused_while_a_writer_uses_the_store_and_changes_nothing.
    Mutation("restore-ignores-busy-store", BK, "    if writer is not None:\n", "    if False:\n", BACKUPS, by=BY),

    # --- dream and decay -------------------------------------------------------------------------
    # Supersession suppresses the newer decision and keeps the older one.
    Mutation("dream-supersede-suppresses-newer", DREAM, '                add(old, "supersede",',
             '                add(new, "supersede",', MNT, by=BY),
    # A node that already states the new value (and mentions the old one) is suppressed as a
    # contradiction.
    # SURVIVED at first (the seeded store has no node naming both values). Added: the new
    # tests/unit/test_dream_rules.py (run first for this bug).
    Mutation("dream-contradiction-when-new-named", DREAM,
             "subject in text and old in text and new not in text:",
             "subject in text and old in text:", ("tests/unit/test_dream_rules.py", *MNT), by=BY),
    # A miss no longer ages the item: a memory shown 30 times and never opened stays fresh.
    Mutation("decay-miss-not-aging", DECAY, "            since += 1\n", "            since += 0\n", DECAY_T, by=BY),

    # --- redaction -------------------------------------------------------------------------------
    # Slack bot tokens (xoxb-) kept: the class loses "b".
    Mutation("redact-slack-bot-missed", RED, '_token("xox", "[abposre]-', '_token("xox", "[aposre]-', REDACT, by=BY),
    # AWS temporary (STS) access key ids (ASIA…) kept.
    Mutation("redact-aws-sts-missed", RED, "(?:AKIA|ASIA|AGPA|", "(?:AKIA|AGPA|", REDACT, by=BY),
    # Only RSA/EC/DSA PEM private keys redacted: OpenSSH and PKCS#8 ("BEGIN PRIVATE KEY") kept.
    Mutation("redact-openssh-key-missed", RED, r'r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----',
             r'r"-----BEGIN (?:RSA |EC |DSA )?PRIVATE KEY(?: BLOCK)?-----', REDACT, by=BY),

    # --- paging ----------------------------------------------------------------------------------
    # recall's nextOffset counts from 0: page 2 says nextOffset = limit again, a client
    # following it loops on page 2.
    Mutation("recall-next-offset-from-zero", RECALLER, "            next_offset=offset + len(hits) if truncated else None,\n",
             "            next_offset=len(hits) if truncated else None,\n", PAGING, by=BY),
    # timeline's nextOffset counts from 0 likewise.
    Mutation("timeline-next-offset-from-zero", FQ, '**({"nextOffset": offset + len(page)} if more else {})}',
             '**({"nextOffset": len(page)} if more else {})}', TIMELINE, by=BY),

    # --- install / uninstall ---------------------------------------------------------------------
    # Uninstall prunes every parent of lore's key, empty or not: the user's other MCP servers
    # (mcpServers.<theirs>) go with lore's.
    Mutation("install-prune-takes-siblings", FORMATS, "        if isinstance(parent.get(key), dict) and not parent[key]:\n",
             "        if isinstance(parent.get(key), dict):\n", INSTALL, by=BY),
    # Uninstall restores the original bytes even when the host rewrote the file since the
    # install: the host's own changes are lost.
    Mutation("uninstall-restores-over-host-edits", INST, '        if _sha(current) == entry.get("after"):\n',
             '        if entry.get("after"):\n', INSTALL, by=BY),
    # The `.lore-backup` beside a changed file holds lore's new content, not the file as it
    # was just before the change.
    Mutation("install-backup-holds-new", INST, '            c.path.with_name(c.path.name + ".lore-backup").write_bytes(c.before)\n',
             '            c.path.with_name(c.path.name + ".lore-backup").write_bytes(c.after)\n', INSTALL, by=BY),
]
