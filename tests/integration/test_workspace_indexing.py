"""Workspace indexing edge cases on a real filesystem."""

from __future__ import annotations

import os
import time
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


def test_a_scan_s_batches_share_commits_and_its_last_files_are_searchable_when_it_ends(tmp_path, monkeypatch):
    """During a scan the text leg gathers the scan's batches into few Tantivy commits (each
    one a segment, an fsync and a published generation) instead of one per batch; the
    scan's end releases the gathering at once."""
    from lore_sidecar.engine.indexing import indexer as indexer_module
    from lore_sidecar.engine.workspace import index as index_module

    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    for i in range(40):
        (ws / f"mod_{i:02d}.py").write_text(f"def handler_{i}(x):\n    return 'quokka{i}'\n")
    e = engine_for(tmp_path / "store", [str(ws)], embedder="none", watch=False, distiller="off")
    try:
        assert e.index.wait_words(60)
        monkeypatch.setattr(index_module, "SCAN_BATCH_FILES", 4)  # 10 batches, 10 transactions
        monkeypatch.setattr(indexer_module, "SCAN_COMMIT_S", 600.0)  # only the scan's end may commit
        commits: list[bool] = []
        text = e.view.indexer.text
        commit = text.commit
        monkeypatch.setattr(text, "commit", lambda seq: commits.append(e.view.indexer._writing > 0) or commit(seq))
        hook = e.view.workspace.file_hook
        # Each batch's transaction lasts a while, so a text leg that committed every batch would.
        e.view.workspace.file_hook = lambda c, pid, changes: time.sleep(0.1) or hook(c, pid, changes)
        for p in ws.glob("*.py"):
            p.write_text(p.read_text() + "# touched\n")
        e.index.scan()
        assert e.index.wait_words(120)  # the end of the scan ended the 600 s gathering
        assert True not in commits and len(commits) == 1  # one commit, after the scan's last batch
        hits = e.recall("quokka39", sources=["files"]).hits
        assert hits and "mod_39.py" in hits[0].uri  # control: the scan's last file is searchable
    finally:
        e.close()
