"""Backups and restores of a store, and the writer's nightly maintenance (a backup, a dream).

Composition level (like verbs.py): it joins the store's backup files (store/backup.py), the
`.lore.md` rendering (engine/memory/lore_md.py) and, for a restore, a whole engine opened on
the staged copy — a restore is verified by use before it replaces anything: the database's
integrity and counts, then its indexes rebuilt and a sample of its messages found by recall.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lore_sidecar.engine.memory import lore_md
from lore_sidecar.errors import LoreError
from lore_sidecar.settings import Settings
from lore_sidecar.store import backup as files

log = logging.getLogger(__name__)
SAMPLE_DEPTH = 5_000  # hits a restore looks through for each sampled message's session


def backup_dir(settings: Settings) -> Path:
    return Path(settings.store.backup_dir) if settings.store.backup_dir else Path(settings.store_dir) / "backups"


def exports(nodes: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    return {f"{Path(root).name}-{hashlib.sha1(root.encode()).hexdigest()[:8]}": lore_md.render(ns)
            for root, ns in nodes.items()}


def backup(settings: Settings, out: Path | None = None, keep: int | None = None) -> dict[str, Any]:
    return files.create(Path(settings.store_dir), out or backup_dir(settings),
                        keep=keep or settings.store.backup_keep, recall_events=settings.store.backup_recall_events,
                        exports=exports)


def resolve(settings: Settings, given: Path) -> tuple[Path, str]:
    """The backup `given` names, and how it was chosen: a backup folder itself, a folder of
    backups (the newest), or a backup's bare name in the backups folder."""
    def is_backup(p: Path) -> bool:
        return p.is_dir() and not p.is_symlink() and (p / "manifest.json").exists()

    if is_backup(given):
        return given, "the backup given"
    if given.is_dir():
        found = sorted(p for p in given.glob(f"{files.PREFIX}*") if is_backup(p))
        if found:
            return found[-1], f"the newest of {len(found)} backups in {given}"
    named = backup_dir(settings) / given.name
    if not given.exists() and given.name.startswith(files.PREFIX) and is_backup(named):
        return named, f"the backup named {given.name} in {named.parent}"
    raise LoreError("notFound", f"{given}: not a lore backup, a folder of backups, or the name of one in "
                    f"{backup_dir(settings)}", path=str(given))


def restore(settings: Settings, source: Path, open_engine: Callable[..., Any],
            progress: Callable[[str], None] = lambda message: None, *, rebuild_indexes: bool = False) -> dict[str, Any]:
    """Replace the store with a backup, once the backup has proven itself on a staged copy.
    The store must not be in use (no writer holds its lock). The old store is kept aside
    (renamed `<store>.before-restore-<time>`), never deleted. `rebuild_indexes`: leave the
    indexes the backup carries and rebuild them from the record."""
    store = Path(settings.store_dir)
    source, took = resolve(settings, source)
    progress(f"checking {source.name} ({took})")
    manifest = files.verify(source)
    writer = files.in_use(store)
    if writer is not None:
        raise LoreError("storeBusy", f"{store} is in use (pid {writer} writes it); stop the sidecars using it, "
                        "then restore", retryable=True)
    staged = store.parent / f".{store.name}.restore-{secrets.token_hex(3)}"
    try:
        progress("copying it to a staging store")
        files.stage(source, manifest, staged, indexes=not rebuild_indexes)
        indexes = not rebuild_indexes and files.indexes_in(manifest) is not None
        progress("catching the backed-up indexes up and recalling a sample" if indexes else
                 "rebuilding the indexes and recalling a sample")
        sample = _try_out(settings, staged, open_engine, rebuild=not indexes)
        restored = files.counted(staged / "lore.db")  # the manifest's counts are optional
        previous = None
        if store.exists():
            previous = _aside_name(store)
            os.replace(store, previous)
        os.replace(staged, store)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    return {"restoredFrom": str(source), "took": took, "store": str(store),
            "previous": str(previous) if previous else None, "counts": restored,
            "indexes": "restored" if indexes else "rebuilt", "sampleRecalled": sample}


def _aside_name(store: Path) -> Path:
    """A free `<store>.before-restore-<time>` name: two restores in one second keep both
    stores they replaced."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = store.parent / f"{store.name}.before-restore-{stamp}"
    name, n = base, 1
    while name.exists():
        n += 1
        name = base.with_name(f"{base.name}-{n}")
    return name


def _try_out(settings: Settings, staged: Path, open_engine: Callable[..., Any], *, rebuild: bool) -> int:
    trial = replace(settings, store_dir=staged, distiller="off",
                    index=replace(settings.index, watch=False, index_workspace=False))
    engine = open_engine(trial, [])
    try:
        if rebuild:
            engine.index.rebuild("all", lambda message, pct: None)
        elif not engine.index.wait(3600):
            raise files.corrupt("the restored indexes did not catch up with the restored record")
        found = 0
        for session_id, text in files.sample_messages(staged):
            query = " ".join(text.split()[:12])
            if not _recalls_session(engine, query, session_id):
                raise files.corrupt(f"the restored store does not find its own message ({query[:60]!r})")
            found += 1
        return found
    finally:
        engine.close()


def _recalls_session(engine: Any, query: str, session_id: str) -> bool:
    """Whether recall of `query` finds a message of `session_id`, through the pages.
    Trigger: many sessions open with the same words (a harness's "please continue"). Why:
    the sampled one then ties with the others and may rank past the first page, and a
    healthy backup was refused. Outcome: the hits are walked with `nextOffset` (bounded at
    SAMPLE_DEPTH), and only a recall that never reaches the session refuses."""
    offset = 0
    while True:
        result = engine.recall(query, scope="all", sources=["messages"], limit=50, offset=offset)
        if any(h.session_id == session_id for h in result.hits):
            return True
        if not result.truncated or result.next_offset is None or result.next_offset <= offset \
                or result.next_offset >= SAMPLE_DEPTH:
            return False
        offset = result.next_offset


class Nightly:
    """On the writer: a backup every `backupIntervalMs`, a dream of each opened project every
    `dreamIntervalMs`; when each last ran is kept in `<store>/maintenance.json`."""

    def __init__(self, engine: Any, settings: Settings):
        self.engine = engine
        self.settings = settings
        self.state_path = Path(settings.store_dir) / "maintenance.json"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lore-nightly", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def alive(self) -> bool:
        return self._thread.is_alive()

    def _state(self) -> dict[str, float]:
        try:
            return json.loads(self.state_path.read_text())
        except (OSError, ValueError):
            return {}

    def _run(self) -> None:
        s = self.settings.store
        intervals = [i for i in (s.backup_interval_ms, s.dream_interval_ms) if i]
        if not intervals:
            return
        tick = min(60.0, min(intervals) / 1000 / 5)
        while not self._stop.wait(tick):
            if not self.engine.role.writer:
                return
            state, now = self._state(), time.time()
            state.setdefault("lastDream", now)  # a new store dreams a day from now, not at once
            # Trigger: the backup folder cannot be written (a file in its place, an unplugged
            # drive, a full disk). Why: an OSError escaping here ended this thread, so neither
            # backups nor dreams ran again until the instance stepped down and back up.
            # Outcome: the failure is logged, the backup is tried again at the next tick, and
            # the dream keeps its own schedule.
            try:
                if s.backup_interval_ms and now - state.get("lastBackup", 0) >= s.backup_interval_ms / 1000:
                    made = backup(self.settings)
                    state["lastBackup"] = now
                    log.info("scheduled backup: %s", made["path"])
            except (LoreError, OSError) as exc:
                log.warning("scheduled backup failed: %s", exc)
            try:
                if s.dream_interval_ms and now - state.get("lastDream", 0) >= s.dream_interval_ms / 1000:
                    for folder in self.engine.projects.on_disk():
                        run = self.engine.maintenance.dream(project=folder)
                        log.info("scheduled dream of %s: %s applied, %s proposed", folder, run["applied"], run["proposed"])
                    state["lastDream"] = now
            except LoreError as exc:
                log.warning("scheduled dream failed: %s", exc)
            tmp = self.state_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(state))
            os.replace(tmp, self.state_path)
