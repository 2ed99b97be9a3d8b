"""A backup is untrusted input: restore refuses what the migrations did not create and any
file it would have to follow, each with a stable kind, the target store untouched and no
byte of an outside file taken in — beside the control backup, which restores (and keeps the
old store aside). Each hostile backup carries a manifest re-sealed to match it, as an
attacker would write it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from lore_sidecar.errors import LoreError

CANARY = b"CANARY-7f3a9c outside secret line\n"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lore_sidecar", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def tree_digest(root: Path) -> dict[str, str]:
    # writer.lock aside: the is-it-in-use check takes and releases the lock (it notes its pid)
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink() and p.name != "writer.lock"}


def holds_canary(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and not p.is_symlink() and CANARY.strip() in p.read_bytes()]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A real store's backup, and a store restored from it (the target each attack aims at)."""
    root = tmp_path_factory.mktemp("restore")
    ws, store = root / "ws", root / "store"
    (ws / ".git").mkdir(parents=True)
    c = StdioClient(sidecar_command())
    c.initialize(ws, options={"storeDir": str(store), "watch": False, "indexWorkspace": False, "distiller": "off"})
    try:
        c.request("lore/recordMessages", {"sessionId": "s", "messages": [
            {"role": "user", "content": f"the harbour pilot boards ship number {i} at dawn"} for i in range(8)]})
        c.request("lore/assertFact", {"subject": "harbour", "predicate": "pilot", "object": "jo"})
    finally:
        c.close()
    r = cli("backup", "--store-dir", str(store), "--out", str(root / "backups"), "--json", cwd=ws)
    assert r.returncode == 0, r.stderr
    backup = Path(json.loads(r.stdout)["path"])
    target = root / "target" / "store"
    r = cli("restore", str(backup), "--store-dir", str(target), cwd=ws)
    assert r.returncode == 0, r.stderr
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(CANARY)
    (outside / "0001.op.json").write_bytes(CANARY)
    return {"ws": ws, "backup": backup, "target": target, "outside": outside}


def reseal(backup: Path, listed: dict[str, str] | None = None) -> None:
    """Rewrite the manifest to match the backup as it is now, as a forger would."""
    manifest = json.loads((backup / "manifest.json").read_text())
    files = {p.relative_to(backup).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(backup.rglob("*")) if p.is_file() and not p.is_symlink() and p.name != "manifest.json"}
    manifest["files"] = {**files, **(listed or {})}
    (backup / "manifest.json").write_text(json.dumps(manifest))


def journal_file(backup: Path) -> Path:
    return next((backup / "journal").rglob("*.md"))


def sql(statement: str):
    def plant(backup: Path, outside: Path) -> None:
        db = sqlite3.connect(backup / "lore.db")
        db.execute(statement)
        db.commit()
        db.close()
        reseal(backup)
    return plant


def late_db_trigger(backup: Path, outside: Path) -> None:
    from lore_sidecar.store.late_table import SCHEMA

    vectors = next(backup.glob("index/*/vectors"))
    db = sqlite3.connect(vectors / "late.db")
    db.execute(SCHEMA)
    db.execute("CREATE TRIGGER spy AFTER INSERT ON late BEGIN DELETE FROM late; END")
    db.commit()
    db.close()
    reseal(backup)


def symlinked_journal_file(backup: Path, outside: Path) -> None:
    f = journal_file(backup)
    f.unlink()
    f.symlink_to(outside / "secret.txt")
    reseal(backup, {f.relative_to(backup).as_posix(): hashlib.sha256(CANARY).hexdigest()})


def symlinked_spool_dir(backup: Path, outside: Path) -> None:
    shutil.rmtree(backup / "spool", ignore_errors=True)
    (backup / "spool").symlink_to(outside, target_is_directory=True)
    reseal(backup, {"spool/0001.op.json": hashlib.sha256(CANARY).hexdigest()})


def fifo(backup: Path, outside: Path) -> None:
    f = journal_file(backup).with_name("2026-12-31.md")
    os.mkfifo(f)
    reseal(backup, {f.relative_to(backup).as_posix(): hashlib.sha256(b"").hexdigest()})


def hard_link(backup: Path, outside: Path) -> None:
    f = journal_file(backup).with_name("2026-12-30.md")
    os.link(outside / "secret.txt", f)
    reseal(backup)


def listed_but_missing(backup: Path, outside: Path) -> None:
    journal_file(backup).unlink()  # the manifest still lists it


def dotdot_in_manifest(backup: Path, outside: Path) -> None:
    reseal(backup, {"../../outside/secret.txt": hashlib.sha256(CANARY).hexdigest()})


def redefined_index(backup: Path, outside: Path) -> None:
    # A migration's index under its own name, its uniqueness gone: every name the migrations
    # create is there, only the SQL says otherwise.
    db = sqlite3.connect(backup / "lore.db")
    db.executescript("DROP INDEX nodes_live_uri; CREATE INDEX nodes_live_uri ON nodes(uri);")
    db.close()
    reseal(backup)


def lying_counts(backup: Path, outside: Path) -> None:
    manifest = json.loads((backup / "manifest.json").read_text())
    manifest["counts"]["messages"] += 1
    (backup / "manifest.json").write_text(json.dumps(manifest))


def listed_export_missing(backup: Path, outside: Path) -> None:
    # A listed file restore does not stage (exports are for people): still refused.
    reseal(backup, {"exports/ws-00000000.lore.md": hashlib.sha256(b"# ws\n").hexdigest()})


def schema_version_not_a_number(backup: Path, outside: Path) -> None:
    # Read before anything else is checked: an internal error (a str compared with an int)
    # instead of a refusal with its kind.
    manifest = json.loads((backup / "manifest.json").read_text())
    manifest["schemaVersion"] = "9"
    (backup / "manifest.json").write_text(json.dumps(manifest))


ATTACKS = {
    "a trigger": (sql("CREATE TRIGGER spy AFTER INSERT ON messages BEGIN INSERT INTO meta(key, value) "
                      "VALUES ('loot' || new.id, new.text); END"), "backupSchemaMismatch", "trigger 'spy'"),
    "a view": (sql("CREATE VIEW peek AS SELECT text FROM messages"), "backupSchemaMismatch", "view 'peek'"),
    "an extra table": (sql("CREATE TABLE loot(x TEXT)"), "backupSchemaMismatch", "table 'loot'"),
    "an extra virtual table": (sql("CREATE VIRTUAL TABLE loot USING fts5(x)"), "backupSchemaMismatch", "table 'loot'"),
    "an extra index": (sql("CREATE INDEX by_role ON messages(role)"), "backupSchemaMismatch", "index 'by_role'"),
    "a trigger in the vectors' late.db": (late_db_trigger, "backupSchemaMismatch", "late.db: trigger 'spy'"),
    "a symlinked journal file": (symlinked_journal_file, "backupUnsafeFile", "is a symlink"),
    "a symlinked spool folder": (symlinked_spool_dir, "backupUnsafeFile", "spool in"),
    "a FIFO": (fifo, "backupUnsafeFile", "special file"),
    "a hard link to an outside file": (hard_link, "backupUnsafeFile", "hard-linked"),
    "a listed file that is missing": (listed_but_missing, "backupIncomplete", "listed"),
    "a manifest path outside the backup": (dotdot_in_manifest, "backupUnsafeFile", "not a plain relative path"),
    "a migration's index redefined under its own name": (redefined_index, "backupSchemaMismatch",
                                                         "index 'nodes_live_uri' the migrations did not create"),
    "counts the database does not hold": (lying_counts, "backupCorrupt", "does not hold what its manifest counts"),
    "a listed export that is missing": (listed_export_missing, "backupIncomplete",
                                        "exports/ws-00000000.lore.md is listed"),
    "a schema version that is not a number": (schema_version_not_a_number, "backupCorrupt",
                                              "schemaVersion is not a whole number"),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_hostile_backup_is_refused_with_its_kind_the_store_untouched_and_no_outside_byte_taken(made, tmp_path, attack):
    plant, kind, says = ATTACKS[attack]
    hostile = tmp_path / "lore-backup-hostile"
    shutil.copytree(made["backup"], hostile)
    plant(hostile, made["outside"])
    home = tmp_path / "t"
    target = home / "store"
    shutil.copytree(made["target"], target)
    before = tree_digest(home)
    r = cli("restore", str(hostile), "--store-dir", str(target), cwd=made["ws"])
    assert r.returncode == 2 and kind in r.stderr and says in r.stderr, r.stderr
    assert tree_digest(home) == before  # the store untouched, no staging left behind
    assert holds_canary(home) == []
    assert CANARY.decode().strip() not in r.stdout + r.stderr


def test_the_control_backup_restores_and_the_old_store_is_kept_aside(made, tmp_path):
    control = tmp_path / "lore-backup-control"
    shutil.copytree(made["backup"], control)
    home = tmp_path / "t"
    target = home / "store"
    shutil.copytree(made["target"], target)
    (target / "keep-me.txt").write_text("the store before the restore")
    old = tree_digest(target)
    r = cli("restore", str(control), "--store-dir", str(target), "--json", cwd=made["ws"])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    previous = Path(out["previous"])
    assert previous.parent == home and previous != target
    assert tree_digest(previous) == old  # renamed aside, byte for byte, not deleted
    assert not (target / "keep-me.txt").exists()
    db = sqlite3.connect(target / "lore.db")
    assert db.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 8
    assert db.execute("SELECT COUNT(*) FROM sqlite_schema WHERE type IN ('trigger', 'view')").fetchone()[0] == 0
    db.close()
    facts = cli("facts", "query", "--subject", "harbour", "--store-dir", str(target), cwd=made["ws"])
    assert "jo" in facts.stdout, facts.stdout + facts.stderr


def swapped_after_the_check(made: dict, tmp_path: Path, swap) -> tuple[LoreError, Path]:
    """Restore a copy of the good backup, `swap` run on one journal file once the backup has
    been checked and before it is copied (the progress line between the two)."""
    from lore_sidecar import backups
    from lore_sidecar.settings import load_settings

    backup = tmp_path / "lore-backup-swapped"
    shutil.copytree(made["backup"], backup)
    f = journal_file(backup)
    home = tmp_path / "t"
    home.mkdir()
    settings, _ = load_settings(workspace_root=made["ws"], cli={"storeDir": str(home / "store")})

    def progress(message: str) -> None:
        if message.startswith("copying"):
            swap(f)

    def never(*args, **kwargs):
        raise AssertionError("a backup refused at the copy is never opened as a store")

    with pytest.raises(LoreError) as refused:
        backups.restore(settings, backup, never, progress)
    return refused.value, home


def test_a_file_swapped_for_a_symlink_after_the_check_is_refused_at_the_copy_without_reading_it(made, tmp_path):
    def to_link(f: Path) -> None:
        f.unlink()
        f.symlink_to(made["outside"] / "secret.txt")

    exc, home = swapped_after_the_check(made, tmp_path, to_link)
    assert exc.kind == "backupUnsafeFile" and "passes through a symlink" in exc.message, exc.message
    assert list(home.iterdir()) == [] and holds_canary(home) == []  # no store, no staging left


def test_a_file_rewritten_after_the_check_is_refused_by_the_hash_of_its_copy(made, tmp_path):
    # the control of the one above: the same swap point, a plain file with other bytes
    def rewrite(f: Path) -> None:
        f.write_bytes(CANARY)

    exc, home = swapped_after_the_check(made, tmp_path, rewrite)
    assert exc.kind == "backupCorrupt" and "changed since the backup was written" in exc.message, exc.message
    assert list(home.iterdir()) == [] and holds_canary(home) == []


def test_a_backups_spool_is_staged_with_its_database_and_journal(made, tmp_path):
    # Acknowledged follower writes not yet applied travel in spool/: staging must take them
    # (the restored writer applies them), beside the database and the journal.
    from lore_sidecar.store import backup as files

    backup = tmp_path / "lore-backup-spooled"
    shutil.copytree(made["backup"], backup)
    (backup / "spool").mkdir(exist_ok=True)
    op = json.dumps({"opId": "0001-reviewer", "op": "recordMessages"}).encode()
    (backup / "spool" / "0001-reviewer.op.json").write_bytes(op)
    reseal(backup)
    target = tmp_path / "staged"
    files.stage(backup, files.verify(backup), target)
    assert (target / "spool" / "0001-reviewer.op.json").read_bytes() == op
    assert (target / "lore.db").is_file() and [p.read_text() for p in (target / "journal").rglob(".project")]
