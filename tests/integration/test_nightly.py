"""The writer's schedule (backups.Nightly) over stdio: when the first dream of a new store
comes, and that a backup that cannot be written stops neither the schedule nor the dreams.
The control for both is test_backup.py's schedule test: the same duplicates, merged on time."""

from __future__ import annotations

import json
import time
from pathlib import Path

from lore_sidecar.client import StdioClient, sidecar_command

DUPLICATES = ("a", "b")  # the same text twice: a dream merges them into `a`


def start(ws: Path, store: Path, **schedule: object) -> StdioClient:
    c = StdioClient(sidecar_command())
    c.initialize(ws, options={"storeDir": str(store), "watch": False, "indexWorkspace": False, "distiller": "off",
                              **schedule})
    return c


def create_duplicates(c: StdioClient) -> None:
    for n in DUPLICATES:
        c.request("lore/createNode", {"uri": f"project://ws/pattern/{n}", "category": "pattern", "priority": 3,
                                      "content": "Retries use exponential backoff with jitter"})


def listed(c: StdioClient) -> set[str]:
    return {n["uri"] for n in c.request("lore/listNodes", {})["nodes"]}


def test_a_new_store_first_dreams_a_dream_interval_after_it_starts_not_at_once(tmp_path):
    """docs/configuration.md: the first scheduled dream comes a day (`dreamIntervalMs`) after a
    store is new, not at the schedule's first tick."""
    ws, store = tmp_path / "ws", tmp_path / "store"
    (ws / ".git").mkdir(parents=True)
    c = start(ws, store, backupIntervalMs=0, dreamIntervalMs=0)  # no schedule: nothing ticks before them
    try:
        create_duplicates(c)
    finally:
        c.close()
    assert not (store / "maintenance.json").exists()  # the schedule has never run on this store
    c = start(ws, store, backupIntervalMs=500, backupKeep=10, dreamIntervalMs=3_600_000)
    try:
        deadline = time.monotonic() + 60
        made: list[Path] = []
        while len(made) < 3 and time.monotonic() < deadline:  # three backups: the schedule ticked
            time.sleep(0.2)
            made = sorted((store / "backups").glob("lore-backup-*")) if (store / "backups").exists() else []
        now = listed(c)
    finally:
        c.close()
    assert len(made) >= 3
    assert now == {"project://ws/pattern/a", "project://ws/pattern/b"}  # no dream yet
    state = json.loads((store / "maintenance.json").read_text())
    assert state["lastDream"] > 0 and state["lastBackup"] >= state["lastDream"]  # its clock started, no more


def test_a_backup_folder_that_cannot_be_written_stops_neither_the_schedule_nor_the_dream(tmp_path):
    """A file where the backup folder should be (an unplugged drive, a full disk) made each
    scheduled backup raise an OSError that ended the schedule's thread: no dream ever ran."""
    ws, store = tmp_path / "ws", tmp_path / "store"
    (ws / ".git").mkdir(parents=True)
    blocked = tmp_path / "backups-is-a-file"
    blocked.write_text("not a folder\n")
    c = start(ws, store, backupIntervalMs=1000, backupDir=str(blocked), dreamIntervalMs=1500)
    try:
        create_duplicates(c)
        deadline = time.monotonic() + 60
        while len(now := listed(c)) > 1 and time.monotonic() < deadline:
            time.sleep(0.3)
        alive = c.request("lore/status")["role"]
    finally:
        c.close()
    assert now == {"project://ws/pattern/a"}  # the scheduled dream merged them
    assert alive == "writer" and blocked.read_text() == "not a folder\n"
    state = json.loads((store / "maintenance.json").read_text())
    assert state["lastDream"] > 0 and "lastBackup" not in state  # no backup was made, none is claimed
