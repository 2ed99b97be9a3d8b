"""Authors' sweep (issue 35) of the area "store-faces-1": the dashboard (lore_sidecar/ui/),
backups and restore (lore_sidecar/backups.py, store/backup*.py) and install / uninstall /
doctor (lore_sidecar/setup/). Written to find, before the next independent round, the
one-line mistakes no test asserted: a throwaway script (not committed) wrote 105 mutants of
the kinds reviewers plant (a comparison flipped, a `not` dropped, a default or limit
changed, a condition made always true or false, a field or key renamed, one name dropped
from a tuple), each applied to a scratch copy of HEAD 607df4a and run against the area's
whole test files by name and `grep -l`, fastest first, `-x` (the dashboard:
test_dashboard_access.py, test_dashboard_edits.py, e2e/test_dashboard.py; backups:
test_restore_edges.py, test_nightly.py, test_backup.py, test_restore_untrusted.py,
test_backup_roundtrip.py; setup: test_agent_installs.py, test_install.py (less the wheel
build), test_doctor.py).

Totals. On a loaded 2-core machine (load 8-13) a surviving mutant took 2-9 minutes against
the whole files, so in the hour only 17 of the 105 ran that way: 9 caught, 8 not (one of
them, g-no-ipv6, only by an e2e fixture error), of which 1 equivalent (b-keep-arg-ignored:
no caller passes `keep`, the setting always decides). Six more dashboard mutants ran against
test_dashboard_access.py as it was (beside the first new page tests): 3 caught, 3 not, of
which 1 equivalent (h-link-keeps-empty: no page hands link() an empty value). First-time
catch where measured: 12 of 21 non-equivalent mutants (57%). 54 more were not run against
the old files, only against the new tests below: 52 seen failing there, 2 equivalent (each
new test passes on HEAD). 73 are recorded here, each with the test that catches it. 28 were
not run at all in the time, left for the next round: the nightly schedule's four (a
follower running it, the last backup or dream not kept, the tick), the index proof's four
(a torn copy accepted, the epoch unchecked, the outbox kept inclusively, no trim mark), the
restore's sample check and query, its `indexes` word and `previous`, the late-db integrity
and version-0 checks, the staged journal, the spool glob, recall_shown kept, a sample of
one, the peers table's tcp6, the usage chart's colours, three doctor print/exit paths and
its disk threshold, two status mappings (nodeExists, a timeout), a files node's page, and
two install labels.

Judged equivalent, so not listed: b-keep-arg-ignored, h-link-keeps-empty (above);
s-no-vacuum (dropping the backup's VACUUM: this SQLite has secure_delete on, so the deleted recall rows are zeroed
anyway; tests/integration/test_backup_files.py checks the bytes and passes with it);
s-project-scope-any (exports without `scope='project'`: a global node has no project row
for the JOIN, so none is exported either way).

New test files, each named for what it covers so a reviewer choosing by name finds it:
tests/integration/test_dashboard_pages.py, tests/integration/test_backup_files.py,
tests/unit/test_doctor_checks.py, tests/unit/test_install_edits.py; and four tests added to
tests/integration/test_dashboard_access.py. No real product bug was found.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "authors: sweep (issue 35)"
GUARD = "lore_sidecar/ui/guard.py"
PAGES = "lore_sidecar/ui/pages.py"
HTML = "lore_sidecar/ui/html.py"
BK = "lore_sidecar/backups.py"
ST = "lore_sidecar/store/backup.py"
INTAKE = "lore_sidecar/store/backup_intake.py"
INST = "lore_sidecar/setup/install.py"
DOCTOR = "lore_sidecar/setup/doctor.py"
HOSTS = "lore_sidecar/setup/hosts.py"
AGENTS = "lore_sidecar/setup/agents.py"
YAML = "lore_sidecar/setup/yaml_block.py"
FORMATS = "lore_sidecar/setup/formats.py"
COMMANDS = "lore_sidecar/setup/commands.py"

PAGES_T = "tests/integration/test_dashboard_pages.py"
ACCESS_T = "tests/integration/test_dashboard_access.py"
DOCTOR_T = "tests/unit/test_doctor_checks.py"
BACKUP_T = "tests/integration/test_backup_files.py"
INSTALL_T = "tests/unit/test_install_edits.py"

ROUND = [
    Mutation('p-scope-always-project', PAGES, 'scope = "all" if request.query.get("scope") == "all" else "project"',
             'scope = "project"', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-sources-filter-ignored', PAGES, 'if s in ALL_SOURCES] or list(ALL_SOURCES)',
             'if s in ()] or list(ALL_SOURCES)', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-retain-category-dropped', PAGES, '"category": f.get("category") or None,',
             '"category": None,', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-retain-harness', PAGES, '"category": f.get("category") or None,\n                                            "harness": "dashboard"',
             '"category": f.get("category") or None,\n                                            "harness": "cli"', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-edit-priority-ignored', PAGES, 'if f.get("priority", "").isdigit():',
             'if False:', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-suppress-inverted', PAGES, 'on = f.get("suppressed") == "1"',
             'on = f.get("suppressed") == "0"', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-toggle-value-swapped', PAGES, 'suppressed=0 if m.get("suppressed") else 1',
             'suppressed=1 if m.get("suppressed") else 0', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-ledger-changed-missing-swapped', PAGES, '\'<b class=bad>changed</b>\' if e["exists"]',
             '\'<b class=bad>missing</b>\' if e["exists"]', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-notfound-400', PAGES, '(404 if exc.kind == "notFound"',
             '(400 if exc.kind == "notFound"', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-facts-subject-ignored', PAGES, '**({"subject": subject} if subject else {})',
             '**({})', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-facts-no-history', PAGES, '{"history": True, "limit": 200',
             '{"history": False, "limit": 200', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('h-note-unescaped', HTML, '{escape(note)}</div>',
             '{note}</div>', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('g-cookie-path', GUARD, 'path="/", httponly',
             'path="/node", httponly', (PAGES_T,), by=BY),
    # First run: caught. Also caught by tests/integration/test_dashboard_pages.py (the test named here, the faster).
    Mutation('g-cookie-name-no-port', GUARD, 'return f"lore_ui_{port}"',
             'return "lore_ui"', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('g-http-exc-no-finish', GUARD, '        except web.HTTPException as exc:  # a 404, a 405\n            _finish(exc, access, port, auth)\n',
             '        except web.HTTPException as exc:  # a 404, a 405\n', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-dream-dryrun-inverted', PAGES, '{"dryRun": f.get("advisory") == "1"}',
             '{"dryRun": f.get("advisory") != "1"}', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-change-state-swapped', PAGES, '"applied" if ch["applied"] else "proposed"',
             '"proposed" if ch["applied"] else "applied"', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-rollback-ignores-runid', PAGES, '{"runId": f.get("runId") or None}',
             '{"runId": None}', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-rolledback-run-offers-rollback', PAGES, '            elif not run.get("rolledBackAt"):\n',
             '            else:\n', (PAGES_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-badparams-422', PAGES, 'return web.Response(status=400, text="bad input: "',
             'return web.Response(status=422, text="bad input: "', (PAGES_T,), by=BY),
    # Run against test_dashboard_access.py as it was: survived. Now caught by tests/integration/test_dashboard_pages.py.
    Mutation('p-truncated-note-inverted', PAGES, 'if r.get("truncated") else ""',
             'if not r.get("truncated") else ""', (PAGES_T,), by=BY),
    # Run against test_dashboard_access.py as it was: survived. Now caught by tests/integration/test_dashboard_pages.py.
    Mutation('g-ttl-boundary', GUARD, 'if until < now:',
             'if until <= now:', (ACCESS_T,), by=BY),
    # First run: survived. Now caught by tests/integration/test_dashboard_access.py.
    Mutation('g-no-ipv6', GUARD, ', f"[::1]:{port}"}',
             '}', (ACCESS_T,), by=BY),
    # First run: not caught (the whole files ended in an e2e fixture error, no failure). Now caught by tests/integration/test_dashboard_access.py.
    Mutation('g-origin-https', GUARD, 'origin not in {f"http://{h}" for h in hosts}',
             'origin not in {f"https://{h}" for h in hosts}', (ACCESS_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_access.py.
    Mutation('g-launch-any-method', GUARD, 'if request.method != "GET" or not code',
             'if not code', (ACCESS_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_dashboard_access.py.
    Mutation('d-privacy-others-only', DOCTOR, '    if mode & 0o077:\n',
             '    if mode & 0o007:\n', (DOCTOR_T,), by=BY),
    # First run: survived. Now caught by tests/unit/test_doctor_checks.py.
    Mutation('d-schema-newer-warn', DOCTOR, 'out.append(Check("schema", FAIL, f"schema {facts.schema} is newer',
             'out.append(Check("schema", WARN, f"schema {facts.schema} is newer', (DOCTOR_T,), by=BY),
    # First run: survived. Now caught by tests/unit/test_doctor_checks.py.
    Mutation('d-index-threshold', DOCTOR, 'OK if pending < 10_000 else WARN,',
             'OK,', (DOCTOR_T,), by=BY),
    # First run: survived. Now caught by tests/unit/test_doctor_checks.py.
    Mutation('d-stale-no-toml', DOCTOR, '(".json", ".toml", ".py")',
             '(".json", ".py")', (DOCTOR_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_doctor_checks.py.
    Mutation('d-store-missing-fail', DOCTOR, 'return [Check("store", OK, f"{store} does not exist yet',
             'return [Check("store", FAIL, f"{store} does not exist yet', (DOCTOR_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_doctor_checks.py.
    Mutation('d-spool-quarantine-ok', DOCTOR, 'out.append(Check("spool", WARN, f"{quarantined} quarantined',
             'out.append(Check("spool", OK, f"{quarantined} quarantined', (DOCTOR_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_doctor_checks.py.
    Mutation('s-manifest-recallevents-true', ST, '"recallEvents": recall_events,',
             '"recallEvents": True,', (BACKUP_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_backup_files.py.
    Mutation('s-journal-not-cut', ST, 'cut = data[: data.rfind(b"\\n") + 1] if f.suffix == ".md" else data',
             'cut = data', (BACKUP_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_backup_files.py.
    Mutation('s-stamp-seconds', ST, 'strftime("%Y%m%dT%H%M%S.%fZ")',
             'strftime("%Y%m%dT%H%M%SZ")', (BACKUP_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_backup_files.py.
    Mutation('s-in-use-unknown-pid-free', ST, 'return lock.holder_pid() or -1',
             'return lock.holder_pid() or None', (BACKUP_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_backup_files.py.
    Mutation('b-resolve-name-even-if-exists', BK, 'if not given.exists() and given.name.startswith',
             'if given.name.startswith', (BACKUP_T,), by=BY),
    # First run: survived. Now caught by tests/integration/test_backup_files.py.
    Mutation('s-indexes-in-no-text', ST, 'return d if any(rel.startswith(d + "/text/") for rel in manifest["files"]) else None',
             'return d', (BACKUP_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_backup_files.py.
    Mutation('n-bool-version-ok', INTAKE, 'if not isinstance(version, int) or isinstance(version, bool):',
             'if not isinstance(version, int):', (BACKUP_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_backup_files.py.
    Mutation('n-dot-component-ok', INTAKE, 'any(x in ("..", ".", "") for x in rel.split("/"))',
             'any(x in ("..", "") for x in rel.split("/"))', (BACKUP_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_backup_files.py.
    Mutation('n-no-db-listed-ok', INTAKE, '    if "lore.db" not in files:\n        raise',
             '    if False:\n        raise', (BACKUP_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_backup_files.py.
    Mutation('n-only-prefix-loose', INTAKE, 'if only is not None and not any(rel == p or rel.startswith(p + "/") for p in only):',
             'if only is not None and not any(rel.startswith(p) for p in only):', (BACKUP_T,), by=BY),
    # Not run against the old files (time). Caught by tests/integration/test_backup_files.py.
    Mutation('b-indexes-claimed-without-proof', BK, 'indexes = not rebuild_indexes and files.indexes_in(manifest) is not None',
             'indexes = not rebuild_indexes', (BACKUP_T,), by=BY),
    # First run: survived. Now caught by tests/integration/test_backup_files.py.
    Mutation('hs-is-ours-any', HOSTS, 'return bool(hooks) and all(isinstance(h, dict)',
             'return bool(hooks) and any(isinstance(h, dict)', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('hs-add-hooks-dups', HOSTS, '            groups = [g for i, g in enumerate(groups) if i not in ours[1:]]\n',
             '', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('hs-no-sessionend', HOSTS, '("Stop", None),\n                 ("SessionEnd", None))',
             '("Stop", None))', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('hs-hook-timeout', HOSTS, '"timeout": 10}]',
             '"timeout": 60}]', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('hs-permissions-left-empty', HOSTS, '        if not perms:\n            doc.pop("permissions")',
             '        if False:\n            doc.pop("permissions")', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('f-prune-parents-kept', FORMATS, '        if isinstance(parent.get(key), dict) and not parent[key]:\n            parent.pop(key)',
             '        if False:\n            parent.pop(key)', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('hs-helix-entry-kept', HOSTS, 'if rest == defaults and set(entry) == {"name", "language-servers"}:',
             'if False:', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('hs-codex-trust-user', HOSTS, '        if project is not None:  # project hooks run only in a trusted project',
             '        if True:  # project hooks run only in a trusted project', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('hs-codex-env-vars-short', HOSTS, '"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]\nHELIX',
             '"ANTHROPIC_API_KEY"]\nHELIX', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('a-copilot-version-missing', AGENTS, '        doc.setdefault("version", 1)\n',
             '', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('a-copilot-version-left', AGENTS, '        if set(doc) == {"version"}:\n            doc.pop("version")',
             '        if False:\n            doc.pop("version")', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('a-discovery-lowered', AGENTS, 'low = current is None or float(current) < float(HERMES_DISCOVERY_S)',
             'low = True', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('a-mcp-only-when-lore', AGENTS, 'mcp_only = other not in ("", "lore")',
             'mcp_only = other not in ("",)', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('y-tilde-not-empty', YAML, 'EMPTY = ("", "{}", "~", "null")',
             'EMPTY = ("", "{}", "null")', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('y-parent-kept-empty', YAML, '    if not any(_content(line) for line in lines[p + 1: end]):\n        lines = [*lines[:p], *lines[end:]]\n',
             '', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('y-block-end-lt', YAML, '            if _indent(lines[j]) <= base:',
             '            if _indent(lines[j]) < base:', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('y-remove-top-any-value', YAML, 'if k is None or _inline(lines[k]) != value or',
             'if k is None or', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('in-json-reformat', INST, '            return before  # nothing to do',
             '            pass  # nothing to do', (INSTALL_T,), by=BY),
    # First run: caught. Also caught by tests/unit/test_install_edits.py (the test named here, the faster).
    Mutation('in-hand-entries-skipped', INST, '    for change in plan(host, w, removing=True):\n        if str(change.path) in manifest["files"]:\n            continue\n',
             '    for change in []:\n        if str(change.path) in manifest["files"]:\n            continue\n', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('in-xdg-state-ignored', INST, 'state = Path(w.env["XDG_STATE_HOME"]) if w.env.get("XDG_STATE_HOME") else w.home / ".local" / "state"',
             'state = w.home / ".local" / "state"', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('in-empty-object-kept', INST, 'target.strip() in (b"{}", b"")',
             'target.strip() in (b"",)', (INSTALL_T,), by=BY),
    # First run: caught. Also caught by tests/unit/test_install_edits.py (the test named here, the faster).
    Mutation('in-dirs-parent-first', INST, 'key=len, reverse=True)',
             'key=len)', (INSTALL_T,), by=BY),
    # First run: caught. Also caught by tests/unit/test_install_edits.py (the test named here, the faster).
    Mutation('c-useronly-rc', COMMANDS, '        print(f"lore-sidecar: {args.host} is set up per user; drop --project", file=sys.stderr)\n        return 2',
             '        print(f"lore-sidecar: {args.host} is set up per user; drop --project", file=sys.stderr)\n        return 0', (INSTALL_T,), by=BY),
    # Not run against the old files (time). Caught by tests/unit/test_install_edits.py.
    Mutation('g-no-localhost', GUARD, 'f"localhost:{port}", ',
             '', (ACCESS_T,), by=BY),
    # First run: caught by tests/integration/test_dashboard_access.py (whole files as they were).
    Mutation('b-recall-events-setting-ignored', BK, 'recall_events=settings.store.backup_recall_events',
             'recall_events=False', ('tests/integration/test_backup.py',), by=BY),
    # First run: caught by tests/integration/test_backup.py (whole files as they were).
    Mutation('in-manifest-kept', INST, '    if mpath.exists():\n        mpath.unlink()\n',
             '', ('tests/integration/test_install.py',), by=BY),
    # First run: caught by tests/integration/test_install.py (whole files as they were).
    Mutation('d-stale-gt-lt', DOCTOR, 'elif lf.heartbeat_age_s * 1000 > stale_ms:',
             'elif lf.heartbeat_age_s > stale_ms:', ('tests/integration/test_doctor.py',), by=BY),
    # First run: caught by tests/integration/test_doctor.py (whole files as they were).
    Mutation('g-post-token-on-get', GUARD, 'if not given and request.method == "POST":',
             'if not given and request.method == "GET":', (ACCESS_T,), by=BY),
    # First run: caught by tests/integration/test_dashboard_access.py (whole files as they were).
    Mutation('g-421-as-403', GUARD, 'return refuse(421,',
             'return refuse(403,', (ACCESS_T,), by=BY),
    # First run: caught by tests/integration/test_dashboard_access.py (whole files as they were).
    Mutation('g-referrer-policy', GUARD, '"Referrer-Policy": "no-referrer"',
             '"Referrer-Policy": "same-origin"', (ACCESS_T,), by=BY),
    # First run: caught by tests/integration/test_dashboard_access.py (whole files as they were).
    Mutation('g-with-token-drops-query', GUARD, 'query = (parts.query + "&" if parts.query else "") + urlencode',
             'query = urlencode', (ACCESS_T,), by=BY),
    # First run: caught by tests/integration/test_dashboard_access.py (whole files as they were).
]
