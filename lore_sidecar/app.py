"""The composition root: the only place that reads settings and builds adapters."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from lore_sidecar.engine.indexer import Indexer
from lore_sidecar.engine.service import Engine, Role
from lore_sidecar.engine.workspace_index import WorkspaceIndex
from lore_sidecar.errors import LoreError
from lore_sidecar.llm.embedders import EmbedderUnavailable, load_embedder
from lore_sidecar.settings import Settings
from lore_sidecar.store.db import SCHEMA_VERSION, Database
from lore_sidecar.store.lock import WriterLock
from lore_sidecar.store.records import Records
from lore_sidecar.store.text_index import TextIndex
from lore_sidecar.store.vector_index import VectorIndex

log = logging.getLogger(__name__)
FOLLOWER_WAIT_S = 10.0


def open_engine(
    settings: Settings,
    folders: list[str],
    *,
    on_commit=lambda generation, engine: None,
    start_indexer: bool = True,
) -> Engine:
    store = Path(settings.store_dir)
    store.mkdir(parents=True, exist_ok=True)
    lock = WriterLock(store / "writer.lock")
    writer = lock.try_acquire()
    try:
        if not writer:
            _wait_for_store(store)
        db = Database(store / "lore.db", writable=writer)
        records = Records(db)
        embedder = None
        try:
            embedder = load_embedder(settings.embedder)
        except EmbedderUnavailable as exc:
            # Never silently swap in something else: run lexical-only and say so in status.
            log.error("embedder %r unavailable (%s); recall runs lexical-only", settings.embedder, exc)
        text = TextIndex(store / "index" / "text", writable=writer)
        vectors = (
            VectorIndex(store / "index" / "vectors", dim=embedder.dim, model=embedder.name, writable=writer)
            if embedder
            else None
        )
    except BaseException:
        lock.release()
        raise

    engine_ref: list[Engine] = []
    indexer = None
    workspace = None
    if writer:
        indexer = Indexer(
            records,
            text,
            vectors,
            embedder,
            on_commit=lambda g: on_commit(g, engine_ref[0]) if engine_ref else None,
        )
        workspace = WorkspaceIndex(records, max_file_bytes=settings.index.max_file_bytes, on_change=indexer.notify)

    def close() -> None:
        text.close()
        db.close()
        lock.release()

    engine = Engine(
        settings=settings,
        records=records,
        text=text,
        vectors=vectors,
        embedder=embedder,
        indexer=indexer,
        workspace=workspace,
        role=Role(writer=writer, writer_pid=lock.holder_pid()),
        # No distiller is built yet (conversation-memory issue): say so rather than pretend.
        distiller_mode="off",
        folders=[str(Path(f).resolve()) for f in folders],
        on_close=close,
    )
    engine_ref.append(engine)
    if indexer is not None and start_indexer:
        indexer.start()
    return engine


def _wait_for_store(store: Path) -> None:
    """A follower reads only a store the writer has created and migrated."""
    import sqlite3  # noqa: TID251 (a read-only probe; the composition root may)

    deadline = time.monotonic() + FOLLOWER_WAIT_S
    db = store / "lore.db"
    while time.monotonic() < deadline:
        if db.exists() and (store / "index" / "text" / "SCHEMA").exists():
            try:
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
                    v = c.execute("PRAGMA user_version").fetchone()[0]
                if v >= SCHEMA_VERSION:
                    return
            except sqlite3.Error:
                pass
        time.sleep(0.05)
    raise LoreError("storeNotReady", f"{store}: the writer has not initialised the store", retryable=True)
