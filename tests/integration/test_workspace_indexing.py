"""Workspace indexing edge cases on a real filesystem."""

from __future__ import annotations

import os
from pathlib import Path

from lore_sidecar.engine.workspace.walk import IgnoreRules, walk
from tests.integration.test_store_and_index import engine_for


def paths(root: Path, max_bytes: int = 1_000_000) -> list[str]:
    return sorted(e.rel for e in walk(root, root, IgnoreRules(root), max_bytes))


def test_walk_honours_ignores_and_skips_binaries_generated_and_oversized(tmp_path, workspace):
    (workspace / "node_modules/pkg").mkdir(parents=True)
    (workspace / "node_modules/pkg/index.js").write_text("x")
    (workspace / "app.min.js").write_text("x")
    (workspace / "big.txt").write_text("y" * 2000)
    (workspace / ".loreignore").write_text("docs/\n")
    (workspace / "src/nested").mkdir()
    (workspace / "src/nested/.gitignore").write_text("local_*.py\n")
    (workspace / "src/nested/local_conf.py").write_text("x = 1\n")
    (workspace / "src/nested/kept.py").write_text("y = 2\n")
    got = paths(workspace, max_bytes=1000)
    assert got == [".gitignore", ".loreignore", "README.md", "src/billing.py", "src/nested/.gitignore", "src/nested/kept.py"]


def test_symlinks_out_of_the_workspace_are_never_indexed(tmp_path, workspace):
    outside = tmp_path / "outside.md"
    outside.write_text("# Secret\nplatypus credentials\n")
    os.symlink(outside, workspace / "link.md")
    os.symlink(tmp_path, workspace / "linkdir")
    inside_target = workspace / "README.md"
    os.symlink(inside_target, workspace / "readme-link.md")
    got = paths(workspace)
    assert "link.md" not in got and not any(p.startswith("linkdir") for p in got)
    assert "readme-link.md" in got  # control: a link that stays inside is fine


def test_incremental_rescan_rereads_only_changed_files_and_drops_deleted_ones(tmp_path, workspace):
    e = engine_for(tmp_path / "store", [str(workspace)])
    try:
        first = e.view.workspace.scan(str(workspace))
        assert first.indexed == 4
        again = e.view.workspace.scan(str(workspace))
        assert again.indexed == 0 and again.deleted == 0
        (workspace / "docs/deploy.md").write_text("# Deploying\n\nWe moved to GitHub Actions.\n")
        (workspace / "README.md").unlink()
        third = e.view.workspace.scan(str(workspace))
        assert third.indexed == 1 and third.deleted == 1
        e.index.wait()
        assert e.recall("GitHub Actions", sources=["files"]).hits
        assert not e.recall("Stripe card payments", sources=["files"]).hits
    finally:
        e.close()


def test_a_branch_switch_sized_change_triggers_one_full_rescan(tmp_path, workspace):
    e = engine_for(tmp_path / "store", [str(workspace)])
    try:
        e.view.workspace.scan(str(workspace))
        changed = []
        for i in range(250):
            p = workspace / "gen" / f"f{i}.md"
            p.parent.mkdir(exist_ok=True)
            p.write_text(f"# File {i}\n\nwombat number {i}\n")
            changed.append(str(p))
        e.view.workspace.apply_changes(str(workspace), changed)
        assert e.records.counts(None)["files"] == 254
        e.index.wait()
        assert e.recall("wombat number 249", sources=["files"]).hits
    finally:
        e.close()


def test_one_unreadable_file_does_not_stop_indexing(tmp_path, workspace):
    bad = workspace / "src/locked.py"
    bad.write_text("secret = 1\n")
    bad.chmod(0)
    (workspace / "src/latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    e = engine_for(tmp_path / "store", [str(workspace)])
    try:
        stats = e.view.workspace.scan(str(workspace))
        assert stats.seen >= 5
        e.index.wait()
        assert e.recall("invoice tax", sources=["files"]).hits
    finally:
        bad.chmod(0o644)
        e.close()


# Files of credential folders: their names are ordinary (`config`), their folders are not.
IN_CREDENTIAL_FOLDERS = (".ssh/config", "deploy/.aws/config", ".kube/config", ".docker/config.json",
                         ".config/gcloud/properties", ".config/gh/hosts.yml")
LOOK_ALIKES = ("kube/config.yaml", "docs/ssh/config")  # the controls: ordinary folders of similar names


def _plant(workspace: Path) -> None:
    for rel in (*IN_CREDENTIAL_FOLDERS, *LOOK_ALIKES):
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(f"token = quokka {rel}\n")


def test_the_walk_never_lists_a_file_inside_a_credential_folder(tmp_path, workspace):
    _plant(workspace)
    got = paths(workspace)
    assert not [p for p in got if p in IN_CREDENTIAL_FOLDERS], got
    assert all(p in got for p in LOOK_ALIKES), got


def test_a_watched_change_inside_a_credential_folder_is_not_indexed(tmp_path, workspace):
    e = engine_for(tmp_path / "store", [str(workspace)])
    try:
        e.view.workspace.scan(str(workspace))
        _plant(workspace)  # created after the scan: the watcher reports them one by one
        e.view.workspace.apply_changes(str(workspace), [str(workspace / rel) for rel in (*IN_CREDENTIAL_FOLDERS,
                                                                                          *LOOK_ALIKES)])
        indexed = {rel for p in e.records.projects() for rel in e.records.files.file_states(p.id)}
        assert not indexed & set(IN_CREDENTIAL_FOLDERS), indexed
        assert set(LOOK_ALIKES) <= indexed, indexed
    finally:
        e.close()


def test_a_folder_is_ignored_by_its_path_from_the_ignore_files_folder_not_by_its_name(tmp_path):
    """A pattern with a slash is anchored to its ignore file's folder (gitignore): the walk
    judges a folder by its path from there, which it builds from its parent's and its name."""
    root = tmp_path / "ws"
    for rel in ("src/generated/api.py", "src/tmp/keep.py", "tmp/scratch.py", "generated/keep.py",
                "lib/src/generated/keep.py", "pkg/out/gone.py", "pkg/sub/out/keep.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x = 1\n")
    (root / ".gitignore").write_text("src/generated/\n/tmp/\n")
    (root / "pkg/.gitignore").write_text("/out/\n")
    assert paths(root) == [".gitignore", "generated/keep.py", "lib/src/generated/keep.py", "pkg/.gitignore",
                           "pkg/sub/out/keep.py", "src/tmp/keep.py"]


# -- independent review, hunt round 6 (tools/rounds/2026-12-07-hunt6.py) ----------------------------

def test_a_project_scanned_to_the_end_once_is_never_still_being_indexed_again(tmp_path, workspace):
    """engine/indexing/progress.py: "first" marks a project whose first full scan runs, "done"
    one that finished; a later full scan (every start, a reindex) is no first scan: answers
    given while it runs do not say "the workspace is still being indexed", and one cut short
    leaves the project done. The control: during the very first scan they say it."""
    e = engine_for(tmp_path / "store", [str(workspace)])
    seen: list[bool] = []

    def during(message: str, percent: int | None) -> None:
        seen.append(e.index.progress(str(workspace))["stillIndexing"])

    def cut(message: str, percent: int | None) -> None:
        raise RuntimeError("stopped mid-scan")

    try:
        e.index.scan(progress=during)
        first, seen[:] = list(seen), []
        assert first and all(first), first  # the control: the first scan says so
        assert not e.index.progress(str(workspace))["stillIndexing"]
        (workspace / "docs/deploy.md").write_text("# Deploying\n\nWe moved to GitHub Actions.\n")
        e.index.scan(progress=during, force=True)
        assert seen and not any(seen), seen
        e.index.scan(progress=cut, force=True)  # a full scan that never reaches its end
        assert not e.index.progress(str(workspace))["stillIndexing"]
    finally:
        e.close()


def test_a_scan_of_many_batches_commits_the_text_index_once_it_has_written_its_last(tmp_path, monkeypatch):
    """While a scan writes batch after batch the text leg adds them without committing each
    (COMMIT_EVERY_S); every file is searchable by its words once the scan is done."""
    from lore_sidecar.engine.indexing import indexer as indexer_mod
    from lore_sidecar.engine.workspace import index as index_mod

    monkeypatch.setattr(indexer_mod, "COMMIT_EVERY_S", 3600.0)
    monkeypatch.setattr(index_mod, "SCAN_BATCH_FILES", 2)  # 20 files: 10 transactions
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(20):
        (ws / f"note_{i}.md").write_text(f"# Note {i}\n\nquokka{i} lives here\n")
    e = engine_for(tmp_path / "store", [str(ws)], watch=False, distiller="off")
    try:
        assert e.index.wait_words(30)
        indexer = e.view.indexer
        commits = []
        commit = indexer.text.commit
        indexer.text.commit = lambda seq: (commits.append(seq), commit(seq))[1]
        for i in range(20):
            (ws / f"note_{i}.md").write_text(f"# Note {i}\n\nwombat{i} lives here now\n")
        e.index.scan()
        assert e.index.wait_words(30)
        assert len(commits) == 1  # one commit for the 10 batches (each committed alone before)
        assert any("note_7.md" in h.uri for h in e.recall("wombat7", sources=["files"]).hits)
        assert not e.recall("quokka7", sources=["files"]).hits  # the old text is gone
    finally:
        e.close()


def test_someone_waiting_for_the_words_gets_a_commit_while_a_scan_still_writes(tmp_path, monkeypatch):
    from lore_sidecar.engine.indexing import indexer as indexer_mod
    from tests.integration.test_store_and_index import record

    monkeypatch.setattr(indexer_mod, "COMMIT_EVERY_S", 3600.0)
    ws = tmp_path / "ws"
    ws.mkdir()
    e = engine_for(tmp_path / "store", [str(ws)], watch=False, distiller="off")
    try:
        indexer = e.view.indexer
        with indexer.writing():  # a scan in progress, for the whole test
            record(e, "s", ["the numbat crossed the road"])
            assert indexer.wait_for(e.records.outbox_head(), 30)  # not held until the scan ends
            assert e.recall("numbat", sources=["messages"]).hits
    finally:
        e.close()


def test_a_batch_of_files_written_together_never_reuses_an_id_and_replaces_what_was_there(tmp_path):
    """A scan's batch is written in a few statements with ids given from AUTOINCREMENT's
    counters: a chunk id once given (then deleted) is never given again, an edited file's
    old chunks leave the index, and every new chunk gets its outbox row in order."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("a", "b", "c"):
        (ws / f"{name}.md").write_text(f"# {name}\n\nfirst{name} words\n\n## more\n\nsecond{name} words\n")
    e = engine_for(tmp_path / "store", [str(ws)], watch=False, distiller="off")
    try:
        e.index.scan()
        assert e.index.wait_words(30)
        conn = e.records.files.db.reader()
        before = max(r[0] for r in conn.execute("SELECT id FROM chunks"))
        (ws / "c.md").unlink()  # the highest ids go: MAX(id) falls below them
        e.index.scan()
        (ws / "a.md").write_text("# a\n\nthirda words\n")
        (ws / "d.md").write_text("# d\n\nfirstd words\n")
        head = e.records.outbox_head()
        e.index.scan()
        assert e.index.wait_words(30)
        conn = e.records.files.db.reader()
        fresh = [r[0] for r in conn.execute("SELECT c.id FROM chunks c JOIN files f ON f.id=c.file_id"
                                            " WHERE f.path IN ('a.md', 'd.md') ORDER BY c.id")]
        assert fresh and min(fresh) > before  # never an id given before
        upserts = [e_.key for e_ in e.records.outbox_after(head, 1000) if e_.op == "upsert"]
        assert upserts == fresh  # each new chunk's outbox row, in chunk order
        assert any("a.md" in h.uri for h in e.recall("thirda", sources=["files"]).hits)
        assert not e.recall("firsta", sources=["files"]).hits  # the edited file's old chunks are gone
        assert not e.recall("firstc", sources=["files"]).hits  # and the deleted file's
        assert any("b.md" in h.uri for h in e.recall("secondb", sources=["files"]).hits)  # control: untouched
    finally:
        e.close()


def test_scan_rows_skip_the_fsync_but_the_index_never_takes_them_in_before_the_record_is_synced(tmp_path):
    """A scan's batches commit without an fsync (the files are their record); the text leg
    fsyncs the record before every index commit, and every other write stays FULL."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(5):
        (ws / f"n{i}.md").write_text(f"# n{i}\n\nbilby{i}\n")
    e = engine_for(tmp_path / "store", [str(ws)], watch=False, distiller="off")
    try:
        db = e.records.files.db
        order, modes = [], []
        sync, commit, execute_hook = db.sync, e.view.indexer.text.commit, db.write

        def write(*, durable=True):
            modes.append(durable)
            return execute_hook(durable=durable)

        db.sync = lambda: (order.append("sync"), sync())[1]
        e.view.indexer.text.commit = lambda seq: (order.append("commit"), commit(seq))[1]
        db.write = write
        e.index.scan()
        assert e.index.wait_words(30)
        assert False in modes  # the scan's rows went without an fsync
        assert order and order[0] == "sync"
        assert all(order[i - 1] == "sync" for i, x in enumerate(order) if x == "commit")  # each commit after a sync
        assert db._writer.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL again for every other write
    finally:
        e.close()


def test_files_so_far_counts_the_asked_projects_files_alone(tmp_path):
    """engine/indexing/progress.py: while a project's first scan is marked as running, every
    answer says how many of *its* files are indexed (a count of the project's files only:
    counting every tier there walked 100k messages on each recall). Another project's files
    and the project's messages are not counted; the control: a finished scan says nothing."""
    from lore_sidecar.engine.indexing.progress import FIRST, _key

    a, b = tmp_path / "a", tmp_path / "b"
    for root, n in ((a, 5), (b, 2)):
        (root / ".git").mkdir(parents=True)
        for i in range(n):
            (root / f"note_{i}.md").write_text(f"# Note {i}\n\nkestrel{i} nests here\n")
    e = engine_for(tmp_path / "store", [str(a), str(b)], watch=False, distiller="off")
    try:
        e.index.scan()
        assert e.index.wait_words(30)
        e.capture.record_messages(project=str(b), session_id="s1", harness="test", messages=[
            {"role": "user", "content": f"kestrel question {i}", "msg_id": f"m{i}", "created_at": None,
             "tool_name": None, "tool_call_id": None} for i in range(4)])
        done = e.index.progress(str(b))
        assert not done["stillIndexing"] and done["filesSoFar"] == 0  # the control: scanned to the end
        pid = e.records.find_project(str(b.resolve())).id  # marked as a first scan cut short leaves it
        e.records.fenced(lambda c: e.records.set_meta(c, _key(pid), FIRST))
        got = e.index.progress(str(b))
        assert got["stillIndexing"] and got["filesSoFar"] == 2, got
        # Every answer carries the line of the project it asked about: a recall too.
        said = e.recall("kestrel question", project=str(b), sources=["messages"]).indexing
        assert said["stillIndexing"] and said["filesSoFar"] == 2, said
        assert e.index.progress(str(a))["filesSoFar"] == 0  # a finished project says nothing
    finally:
        e.close()


def test_an_exit_asked_after_the_walks_first_report_stops_the_walk_at_its_next_one(tmp_path, monkeypatch):
    """Reviewer round rev22 (rev22-walk-reports-once): the first scan's walk reports every
    WALK_REPORT_FILES files found, each report a chance to stop (an exit), not once at the
    1,000th file: an exit asked while it lists its 1,100th file of 2,400 stops it at the
    2,000th, not after the whole tree. The walk's entries are counted where the scan takes them."""
    from lore_sidecar.engine.workspace import index
    from lore_sidecar.errors import ScanStopped

    ws = tmp_path / "ws"
    for d in range(12):
        (ws / f"d{d:02d}").mkdir(parents=True)
        for i in range(200):
            (ws / f"d{d:02d}" / f"f{i:03d}.txt").write_text(f"plover {d} {i}\n")
    listed, exiting = [0], [False]
    real_walk = index.walk

    def counted(*args, **kwargs):
        for entry in real_walk(*args, **kwargs):
            listed[0] += 1
            if listed[0] == 1_100:
                exiting[0] = True  # the exit arrives here
            yield entry

    def report(message: str, percent: int | None) -> None:
        if exiting[0]:
            raise ScanStopped()

    monkeypatch.setattr(index, "walk", counted)
    e = engine_for(tmp_path / "store", [str(ws)], watch=False, distiller="off")
    try:
        try:
            e.index.scan(progress=report)
        except ScanStopped:
            pass
        assert exiting[0]
        assert listed[0] == 2 * index.WALK_REPORT_FILES, listed[0]
    finally:
        e.close()
