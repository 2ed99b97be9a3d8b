"""Real SQLite, Tantivy and usearch under tmp dirs."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lore_sidecar.app import open_engine
from lore_sidecar.errors import LoreError
from lore_sidecar.settings import load_settings
from lore_sidecar.store.db import SCHEMA_VERSION, Database
from lore_sidecar.store.migrations import MIGRATIONS


def engine_for(store: Path, folders: list[str], **options):
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"), init_options={"storeDir": str(store), **options})
    return open_engine(settings, folders)


def record(engine, session: str, texts: list[str], start: int = 0):
    return engine.capture.record_messages(project=None, session_id=session, harness="test", messages=[
        {"role": "user", "content": t, "msg_id": f"{session}-{start + i}", "created_at": None, "tool_name": None, "tool_call_id": None}
        for i, t in enumerate(texts)
    ])


def test_a_store_stamped_by_a_newer_version_is_refused_unread(tmp_path):
    db = Database(tmp_path / "lore.db", writable=True)
    db.close()
    with sqlite3.connect(tmp_path / "lore.db") as c:
        c.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    with pytest.raises(LoreError) as err:
        Database(tmp_path / "lore.db", writable=True)
    assert err.value.kind == "storeTooNew"
    # Control: the current version opens fine.
    with sqlite3.connect(tmp_path / "lore.db") as c:
        c.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    Database(tmp_path / "lore.db", writable=True).close()


def test_migrations_are_named_recorded_and_idempotent(tmp_path):
    Database(tmp_path / "lore.db", writable=True).close()
    Database(tmp_path / "lore.db", writable=True).close()
    with sqlite3.connect(tmp_path / "lore.db") as c:
        names = [r[0] for r in c.execute("SELECT name FROM schema_migrations")]
        assert names == [name for name, _ in MIGRATIONS]
        assert len(names) == len(set(names)) >= 2
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_rebuilt_index_answers_exactly_like_the_live_one(tmp_path, workspace):
    e = engine_for(tmp_path / "store", [str(workspace)])
    try:
        e.index.scan()
        words = ["retry", "backoff", "stripe", "invoice", "deploy", "buildkite", "refund", "webhook", "tax", "pipeline"]
        record(e, "s", [f"{words[i % 10]} {words[(i * 3) % 10]} discussion number {i}" for i in range(400)])
        queries = ["retry backoff", "stripe invoice", "deploy pipeline buildkite", "refund window", "tax", "number 17"]
        e.index.wait()
        live = {q: [(h.uri, h.score) for h in e.recall(q, limit=25).hits] for q in queries}
        e.index.rebuild("all")
        rebuilt = {q: [(h.uri, h.score) for h in e.recall(q, limit=25).hits] for q in queries}
        assert rebuilt == live
        assert all(live[q] for q in queries)
    finally:
        e.close()


def test_a_chunk_recorded_without_its_parts_is_still_found_by_them(tmp_path):
    # A store written before chunks kept their compound names' parts (migration 0008 leaves
    # them NULL): the index cuts them itself when it rebuilds.
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "dates.py").write_text("def dates_in_range(start, end):\n    return list(walk(start, end))\n")
    e = engine_for(tmp_path / "store", [str(ws)], watch=False, distiller="off", filesEmbedder="none")
    try:
        e.index.scan()
        e.index.wait()

        def found() -> list[str]:
            return [h.path for h in e.recall("range", sources=["files"], lexical_only=True).hits]

        assert found() and found()[0].endswith("dates.py")  # control: found by a part, as prepared
        with sqlite3.connect(tmp_path / "store" / "lore.db") as c:
            assert c.execute("UPDATE chunks SET parts=NULL").rowcount > 0
        e.index.rebuild("all")
        assert found() and found()[0].endswith("dates.py")
    finally:
        e.close()


def test_indexes_survive_a_restart_and_a_lost_index_is_rebuilt_from_the_record(tmp_path, workspace):
    store = tmp_path / "store"
    e = engine_for(store, [str(workspace)])
    record(e, "s", ["the okapi migrates at dawn"])
    e.index.scan()
    e.index.wait()
    before = [h.uri for h in e.recall("okapi dawn").hits]
    e.close()
    e = engine_for(store, [str(workspace)])
    try:
        e.index.wait()
        assert [h.uri for h in e.recall("okapi dawn").hits] == before
    finally:
        e.close()
    import shutil

    shutil.rmtree(store / "index")
    e = engine_for(store, [str(workspace)])
    try:
        e.index.wait()
        for _ in range(100):
            if e.view.indexer.applied_seq and [h.uri for h in e.recall("okapi dawn").hits] == before:
                break
            import time

            time.sleep(0.05)
        assert [h.uri for h in e.recall("okapi dawn").hits] == before
    finally:
        e.close()


def test_writer_killed_mid_ingest_loses_no_committed_message_and_the_index_catches_up(tmp_path):
    store = tmp_path / "store"
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from tests.integration.test_store_and_index import engine_for, record
        from pathlib import Path
        e = engine_for(Path({str(store)!r}), [])
        i = 0
        while True:
            record(e, "crash", [f"kiwi message {{i + j}}" for j in range(50)], start=i)
            i += 50
            print(i, flush=True)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    acked = 0
    for line in proc.stdout:
        acked = int(line)
        if acked >= 2000:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    e = engine_for(store, [])
    try:
        assert e.records.db.integrity_ok()
        n = e.records.counts(None)["messages"]
        assert n >= acked
        e.index.wait(60)
        res = e.recall("kiwi message", scope="all", limit=5, sources=["messages"])
        assert res.total >= 5
        assert e.view.text.num_docs() == n
    finally:
        e.close()


def test_vector_snapshots_are_replaced_atomically(tmp_path):
    import numpy as np

    from lore_sidecar.store.vector_index import VectorIndex

    v = VectorIndex(tmp_path, spaces={"messages": ("m", 4)}, writable=True)
    v.upsert("messages", 1, [1, 2], np.eye(4, dtype=np.float32)[:2])
    v.save(5)
    assert not list(tmp_path.glob(".*.tmp"))
    reader = VectorIndex(tmp_path, spaces={"messages": ("m", 4)}, writable=False)
    assert reader.saved_seq == 5 and reader.size() == 2
    v.upsert("messages", 1, [3], np.eye(4, dtype=np.float32)[2:3])
    v.save(6)
    assert reader.refresh() and reader.size() == 3
    # A different model's vectors are never reused; that kind is embedded again ...
    other = VectorIndex(tmp_path, spaces={"messages": ("other", 4)}, writable=False)
    assert other.size() == 0 and other.stale == {"messages"}
    # ... and only that kind: another kind's model change keeps these.
    more = VectorIndex(tmp_path, spaces={"messages": ("m", 4), "files": ("n", 8)}, writable=False)
    assert more.size() == 3 and more.stale == {"files"}
    # A writer embeds that kind again; a reader sees it done, though the seq has not moved.
    writer = VectorIndex(tmp_path, spaces={"messages": ("m", 4), "files": ("n", 8)}, writable=True)
    assert writer.stale == {"files"}
    writer.upsert("files", 1, [7], np.eye(8, dtype=np.float32)[:1])
    writer.save(6)
    more.refresh()
    assert more.stale == {"files"} and more.size() == 3  # not finished: not taken
    writer.reembedded("files")
    writer.save(6)
    assert more.refresh() and more.stale == set() and more.size() == 4


def test_text_search_keeps_to_the_asked_kinds_and_projects_and_the_scope_never_scores(tmp_path):
    """Whichever way a scope is put to Tantivy (no clause when nothing else is there, the few
    others excluded, or the asked ones required), a search returns exactly the asked kinds and
    projects, with the scores an unscoped search gives the same documents."""
    from lore_sidecar.model import Doc
    from lore_sidecar.store.text_index import TextIndex

    ti = TextIndex(tmp_path / "text", writable=True)
    docs = [Doc("messages", i, 1, "", f"alpha note {i} " + "beta " * (i % 4)) for i in range(30)]
    docs += [Doc("messages", 100 + i, 2, "", f"alpha other {i}") for i in range(3)]
    docs += [Doc("files", 200 + i, 1, "", f"alpha chunk {i}", path=f"src/m{i}.py") for i in range(2)]
    ti.upsert(docs)
    ti.commit(1)

    def search(kinds, projects):
        return ti.search(["alpha", "beta"], kinds=kinds, project_ids=projects, limit=100, conjunctive=False)

    everything = {(k, key): score for k, key, score in search(["messages", "files", "facts"], None)}
    assert len(everything) == 35  # nothing else in the index: no scope clause at all
    cases = {
        (("messages",), (1,)): {("messages", i) for i in range(30)},  # the few others excluded
        (("files",), (1,)): {("files", 200), ("files", 201)},  # the asked ones required
        (("files",), (2,)): set(),  # required, and none there
        (("messages", "files"), (2,)): {("messages", 100 + i) for i in range(3)},
        (("messages", "files"), (1, 2)): set(everything),
    }
    for (kinds, projects), want in cases.items():
        got = search(list(kinds), list(projects))
        assert {(k, key) for k, key, _ in got} == want, (kinds, projects)
        assert all(score == everything[(k, key)] for k, key, score in got), (kinds, projects)

    # Deleted documents still count in Tantivy's document frequencies until a merge: the
    # scope must not take a project with only deleted documents left for an empty one.
    ti.delete("messages", [100, 101, 102])
    ti.commit(2)
    assert search(["messages"], [2]) == []
    assert len(search(["messages"], [1])) == 30


def test_a_recall_of_scope_all_finds_every_projects_messages_from_any_project(tmp_path):
    """engine/service.py finds the asked project's root once, for the ids and the indexing
    line; scope "all" still means every project, whichever project is named. The control:
    scope "project" keeps to the named one."""
    a, b = tmp_path / "a", tmp_path / "b"
    for root in (a, b):
        (root / ".git").mkdir(parents=True)
    e = engine_for(tmp_path / "store", [str(a), str(b)], indexWorkspace=False, watch=False, distiller="off")
    try:
        e.capture.record_messages(project=str(b), session_id="sb", harness="test", messages=[
            {"role": "user", "content": "the heron roosts by the weir", "msg_id": "b0", "created_at": None,
             "tool_name": None, "tool_call_id": None}])
        assert e.index.wait_words(30)
        assert [h.uri for h in e.recall("heron weir", project=str(b), sources=["messages"]).hits] == ["session://sb/b0"]
        assert e.recall("heron weir", project=str(a), sources=["messages"]).hits == []  # the control
        for project in (str(a), str(b), None):
            hits = e.recall("heron weir", project=project, scope="all", sources=["messages"]).hits
            assert [h.uri for h in hits] == ["session://sb/b0"], project
    finally:
        e.close()
