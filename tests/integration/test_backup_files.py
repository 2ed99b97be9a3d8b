"""What a backup folder holds and how a backup is taken in, file by file (lore_sidecar/backups.py,
store/backup.py, store/backup_intake.py): called in-process on one store a real sidecar
wrote (a project node, a global one, a recall with an unusual query) and on folders made by
hand. The restores these feed are driven end to end in test_backup.py and test_restore_*.py."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from lore_sidecar.errors import LoreError
from lore_sidecar.store import backup as files
from lore_sidecar.store import backup_intake as intake

SESSION = "zanzibar-quokka-session"  # who searched: recall events stay out of a backup


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("bk")
    ws, store = root / "ws", root / "store"
    (ws / ".git").mkdir(parents=True)
    c = StdioClient(sidecar_command())
    c.initialize(ws, options={"storeDir": str(store), "watch": False, "indexWorkspace": False, "distiller": "off"})
    try:
        c.request("lore/createNode", {"uri": "project://ws/pattern/tide", "content": "Tide tables refresh at dawn",
                                      "category": "pattern"})
        c.request("lore/createNode", {"uri": "preferences://user/style/tabs", "content": "The user indents with tabs"})
        c.request("lore/createNode", {"uri": "project://ws/pattern/everywhere", "content": "Commits are signed everywhere",
                                      "scope": "global"})
        c.request("lore/createNode", {"uri": "project://ws/pattern/ebb", "content": "Ebb charts were retired last spring",
                                      "category": "pattern"})
        c.request("lore/deleteNode", {"uri": "project://ws/pattern/ebb"})
        r = c.request("lore/recall", {"query": "tide tables dawn", "sources": ["knowledge"], "sessionId": SESSION})
        assert r["hits"], r
    finally:
        c.close()
    return store


def make(store: Path, out: Path, **kw) -> dict:
    from lore_sidecar import backups

    return files.create(store, out, exports=backups.exports, **kw)


def test_a_backups_database_holds_no_trace_of_what_was_searched_unless_asked(store, tmp_path):
    logged = b"".join(p.read_bytes() for p in store.glob("lore.db*"))
    assert SESSION.encode() in logged  # the control: the store itself logged it
    plain = Path(make(store, tmp_path / "plain")["path"])
    assert SESSION.encode() not in (plain / "lore.db").read_bytes()  # not even in a free page
    assert json.loads((plain / "manifest.json").read_text())["recallEvents"] is False
    kept = Path(make(store, tmp_path / "kept", recall_events=True)["path"])
    assert SESSION.encode() in (kept / "lore.db").read_bytes()
    assert json.loads((kept / "manifest.json").read_text())["recallEvents"] is True


def test_a_backups_exports_hold_project_knowledge_only(store, tmp_path):
    made = Path(make(store, tmp_path / "b")["path"])
    [export] = list((made / "exports").glob("*.lore.md"))
    text = export.read_text()
    assert export.name.startswith("ws-") and "Tide tables refresh at dawn" in text
    assert "indents with tabs" not in text  # a global preference belongs to no project's file
    assert "signed everywhere" not in text  # nor a global node made from this project
    # nor a deleted one, though its row is still in the database (a deletion is recorded, not erased)
    assert "Ebb charts were retired" not in text
    assert b"Ebb charts were retired" in (made / "lore.db").read_bytes()  # the control


def test_a_journal_line_in_flight_is_left_out_and_the_complete_ones_kept(store, tmp_path):
    journal = store / "journal" / "p1"
    journal.mkdir(parents=True)
    (journal / "2026-12.md").write_bytes(b"- one complete line\n- half an app")
    (journal / "notes.txt").write_text("not the journal's")
    made = Path(make(store, tmp_path / "b")["path"])
    assert (made / "journal" / "p1" / "2026-12.md").read_bytes() == b"- one complete line\n"
    assert not (made / "journal" / "p1" / "notes.txt").exists()


def test_backups_made_within_one_second_rotate_by_the_order_they_were_made(store, tmp_path):
    out = tmp_path / "b"
    made = [Path(make(store, out, keep=2)["path"]).name for _ in range(6)]
    assert sorted(p.name for p in out.iterdir()) == sorted(made[-2:]), made


HOLD_NO_PID = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0)
print("held", flush=True)
time.sleep(60)
"""


def test_a_store_whose_writer_lock_is_held_by_an_unnamed_process_is_in_use(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    lock = store / "writer.lock"
    lock.write_text("")
    assert files.in_use(store) is None  # the control: a lock file nobody holds
    holder = subprocess.Popen([sys.executable, "-c", HOLD_NO_PID, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert files.in_use(store) == -1  # held, though no pid is written in it
    finally:
        holder.kill()
        holder.wait(10)
    fd = os.open(lock, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # let go for certain
    os.close(fd)
    assert files.in_use(store) is None


def test_a_named_backup_is_looked_up_in_the_backups_folder_only_when_no_such_path_exists(store, tmp_path, monkeypatch):
    from lore_sidecar import backups
    from lore_sidecar.settings import load_settings

    settings, _ = load_settings(workspace_root=tmp_path, cli={"storeDir": str(store), "backupDir": str(tmp_path / "bk")})
    name = Path(make(store, tmp_path / "bk")["path"]).name
    monkeypatch.chdir(tmp_path)
    assert backups.resolve(settings, Path(name))[0] == tmp_path / "bk" / name  # the control: a bare name
    (tmp_path / name).write_text("a file of that name here")  # what the user named is this, not the backup
    with pytest.raises(LoreError) as e:
        backups.resolve(settings, Path(name))
    assert e.value.kind == "notFound"


def test_a_manifests_index_counts_only_with_its_text_index_and_a_plain_epoch_folder():
    text = {"lore.db": "0", "index/e3/text/meta.json": "0", "index/e3/vectors/vectors.json": "0"}
    assert files.indexes_in({"index": {"dir": "index/e3"}, "files": text}) == "index/e3"
    no_text = {"lore.db": "0", "index/e3/vectors/vectors.json": "0"}
    assert files.indexes_in({"index": {"dir": "index/e3"}, "files": no_text}) is None
    assert files.indexes_in({"index": {"dir": "index/e0"}, "files": {**text, "index/e0/text/meta.json": "0"}}) is None
    assert files.indexes_in({"index": None, "files": text}) is None


def hand_made(folder: Path, manifest: dict, listed: dict[str, bytes]) -> Path:
    folder.mkdir(parents=True)
    for rel, data in listed.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_a_manifest_is_refused_for_a_boolean_version_a_dot_path_or_no_database(tmp_path):
    from lore_sidecar.store.db import SCHEMA_VERSION

    base = {"schemaVersion": SCHEMA_VERSION, "files": {"lore.db": "0" * 64}}
    assert intake.read_manifest(hand_made(tmp_path / "ok", base, {}))["files"]  # the control
    cases = {"bool": ({**base, "schemaVersion": True}, "backupCorrupt"),
             "dot": ({**base, "files": {"lore.db": "0" * 64, "./spool/x.op.json": "0" * 64}}, "backupUnsafeFile"),
             "nodb": ({**base, "files": {"spool/x.op.json": "0" * 64}}, "backupCorrupt")}
    for name, (manifest, kind) in cases.items():
        with pytest.raises(LoreError) as e:
            intake.read_manifest(hand_made(tmp_path / name, manifest, {}))
        assert e.value.kind == kind, name


def test_only_the_listed_database_itself_is_staged_never_a_wal_beside_it(tmp_path):
    import hashlib

    listed = {"lore.db": b"the database", "lore.db-wal": b"frames sqlite would replay", "spoolish/x": b"x"}
    manifest = {"files": {rel: hashlib.sha256(data).hexdigest() for rel, data in listed.items()}}
    backup = hand_made(tmp_path / "b", manifest, listed)
    target = tmp_path / "staged"
    target.mkdir()
    intake.copy_listed(backup, manifest, target, only=("lore.db", "spool"))
    assert sorted(p.name for p in target.rglob("*")) == ["lore.db"]


def test_a_backup_carrying_no_proven_indexes_is_restored_by_rebuilding_them(store, tmp_path):
    from lore_sidecar import backups
    from lore_sidecar.app import open_engine
    from lore_sidecar.settings import load_settings

    made = Path(make(store, tmp_path / "bk")["path"])
    manifest = json.loads((made / "manifest.json").read_text())
    assert files.indexes_in(manifest) is not None  # the control: as made, it carries them
    manifest["index"] = None  # as an older version wrote it: nothing proves any index current
    (made / "manifest.json").write_text(json.dumps(manifest))
    settings, _ = load_settings(workspace_root=tmp_path, cli={"storeDir": str(tmp_path / "restored")})
    r = backups.restore(settings, made, open_engine)
    assert r["indexes"] == "rebuilt" and r["counts"]["nodes"] == 4, r  # tide, tabs, the global one, the deleted ebb
