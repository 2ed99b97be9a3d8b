"""A store whose outbox was trimmed, reopened by a release whose files model has another name:
only the files are embedded again; messages keep their vectors (their model did not change),
the status says vectors are missing until the files have theirs, and a re-embedding stopped
half way is taken up again on the next start."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager

import numpy as np

from lore_sidecar.engine.indexing.dense import DenseWorker
from lore_sidecar.llm import embedders as E
from lore_sidecar.store.lock import WriterLock
from lore_sidecar.store.vector_index import VectorIndex
from tests.integration.test_dense_leg import ASKED, SAID
from tests.integration.test_late_interaction import _keys, _workspace
from tests.integration.test_store_and_index import engine_for, record

OLD_NAME = "all-minilm-l6-v2-int8-dq"  # the files model's name in the store of the report
TEXTS = [SAID] + [f"filler message number {i} about lunch" for i in range(40)]


def _vectors(e, kind: str) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    for (k, _), rows in e.view.vectors.contents().items():
        if k == kind:
            out.update(rows)
    return out


def _open_held(store, ws, monkeypatch):
    """An engine whose dense leg is held busy from its start (released by the caller), and
    the texts the conversation model embeds from then on."""
    held, embedded = [], []
    init, embed = DenseWorker.__init__, E.WordLlamaEmbedder.embed

    def holding(self, *a, **kw):
        init(self, *a, **kw)
        self.lock.acquire()
        held.append(self)

    def counting(self, texts):
        embedded.extend(texts)
        return embed(self, texts)

    monkeypatch.setattr(E.WordLlamaEmbedder, "embed", counting)
    with monkeypatch.context() as m:
        m.setattr(DenseWorker, "__init__", holding)
        e = engine_for(store, [str(ws)], watch=False)
    assert len(held) == 1
    return e, held[0].lock, embedded


# A file of many chunks: its kind is counted by chunks, not files.
LONG_DOC = "\n\n".join(f"## Section {i}\n\n" + f"Paragraph {i} of the long guide: the ferry timetable for pier {i} "
                         "changes every season, and the harbour office posts it by the gate. " * 6 for i in range(40))


def _old_store(tmp_path, monkeypatch, *, long_file: bool = False):
    """A store written by a release whose files model was called OLD_NAME: a workspace and
    messages embedded, then closed (the final save trims the outbox behind both legs).
    `long_file`: the workspace also holds a file of many chunks."""
    ws = _workspace(tmp_path / "ws")
    if long_file:
        (ws / "guide.md").write_text(LONG_DOC)
    store = tmp_path / "store"
    with monkeypatch.context() as m:
        m.setattr(E.LazyMiniLM, "name", OLD_NAME)
        e = engine_for(store, [str(ws)], watch=False)
        try:
            e.index.scan()
            record(e, "s", TEXTS)
            assert e.index.wait(120)
            messages = _vectors(e, "messages")
            assert len(messages) == 41 and _vectors(e, "files")
            directory = e.view.vectors.directory
        finally:
            e.close()
    assert json.loads((directory / "vectors.json").read_text())["spaces"]["files"] == f"{OLD_NAME}/384"
    return ws, store, messages


def test_a_files_model_rename_on_a_trimmed_store_reembeds_files_only(tmp_path, monkeypatch):
    ws, store, messages = _old_store(tmp_path, monkeypatch)
    e, held, embedded = _open_held(store, ws, monkeypatch)
    try:
        # The precondition of the report: nothing of the messages is left to replay.
        assert int(e.records.meta("outbox_trimmed", "0")) == e.records.outbox_head() > 0
        assert e.records.outbox_after(0) == []
        try:  # the dense leg has not started: the files are not embedded again yet
            assert _vectors(e, "messages") == messages  # kept, not thrown away with the files'
            assert _vectors(e, "files") == {}  # the old model's are gone
            assert e.status()["vectorLag"] > 0  # and the status says so
            hits = e.recall(ASKED, sources=["messages"]).hits  # found by meaning, the messages' vectors
            assert [h.uri for h in hits][:1] == ["session://s/s-0"]
        finally:
            held.release()
        assert e.index.wait(120)
        assert not set(embedded) & set(TEXTS)  # no message embedded again (their model did not change)
        assert e.status()["vectorLag"] == 0
        assert _vectors(e, "messages") == messages
        keys = _keys(e)
        assert set(_vectors(e, "files")) == set(keys)  # every chunk embedded again ...
        assert e.view.vectors.spaces["files"] == (E.MINILM_INT8_NAME, 384)  # ... by the current model
        assert e.view.vectors.late_of("files", list(keys)).keys() == set(keys)
        # Control: the same question by words only does not find the message.
        assert e.recall(ASKED, sources=["messages"], lexical_only=True).hits == []
        directory = e.view.vectors.directory
    finally:
        e.close()
    meta = json.loads((directory / "vectors.json").read_text())
    assert meta["spaces"]["files"] == f"{E.MINILM_INT8_NAME}/384"


def test_a_files_model_rename_counts_every_chunk_left_while_its_first_batch_is_embedded(tmp_path, monkeypatch):
    """A renamed model's kind is counted whole as soon as the dense leg lists it: while its
    first batch is being embedded `vectorLag` is every chunk (it read 1, the kind, until a
    batch was done). The control: 0 once they are all in."""
    ws, store, _ = _old_store(tmp_path, monkeypatch, long_file=True)
    inside, release = threading.Event(), threading.Event()
    add = DenseWorker.add

    def held_add(self, *a, **kw):
        inside.set()
        release.wait(60)
        return add(self, *a, **kw)

    monkeypatch.setattr(DenseWorker, "add", held_add)
    e = engine_for(store, [str(ws)], watch=False)
    try:
        try:
            assert inside.wait(60)  # the files' first batch, being embedded again
            assert e.view.vectors.stale == {"files"}
            chunks = len(_keys(e))
            assert chunks > len(set(_keys(e).values()))
            assert e.status()["vectorLag"] == chunks
        finally:
            release.set()
        assert e.index.wait(120)
        assert e.status()["vectorLag"] == 0
    finally:
        release.set()
        e.close()


def test_a_reembedding_stopped_half_way_is_taken_up_on_the_next_start(tmp_path, monkeypatch):
    ws, store, messages = _old_store(tmp_path, monkeypatch)
    e, held, _ = _open_held(store, ws, monkeypatch)
    try:
        try:  # the dense leg has not started
            # What a stop in the middle leaves: one chunk embedded again, the others not.
            key = next(iter(_keys(e)))
            e.view.vectors.upsert("files", 1, [key], np.ones((1, 384), dtype=np.float32))
            e.view.vectors.save(e.view.vectors.saved_seq)
            directory = e.view.vectors.directory
            meta = json.loads((directory / "vectors.json").read_text())
            assert meta["spaces"]["files"] != f"{E.MINILM_INT8_NAME}/384"  # not claimed as done
            assert meta["spaces"]["messages"] == e.view.vectors._spaces_meta()["messages"]
            # A reader of that save takes the messages and leaves the unfinished files out.
            reader = VectorIndex(directory, spaces=e.view.vectors.spaces, writable=False)
            assert reader.holds(["messages", "files"], None) == {"messages"}
            assert reader.stale == {"files"}
            one = _vectors(e, "files")[key]
            e.view.indexer.dense.interrupt()  # stopped before it embeds anything
        finally:
            held.release()
    finally:
        e.close()  # its last save keeps the files unfinished
    meta = json.loads((directory / "vectors.json").read_text())
    assert meta["spaces"]["files"] != f"{E.MINILM_INT8_NAME}/384"
    e = engine_for(store, [str(ws)], watch=False)
    try:
        assert e.index.wait(120)
        assert _vectors(e, "messages") == messages
        files = _vectors(e, "files")
        assert set(files) == set(_keys(e)) and files[key] != one  # the half-way vector replaced too
        assert e.status()["vectorLag"] == 0
    finally:
        e.close()


def test_vectors_lost_on_a_trimmed_store_are_embedded_again_without_a_text_rebuild(tmp_path, monkeypatch):
    """What a sidecar stopped in the middle of its first save leaves (the report's store):
    vector files without `vectors.json`, the outbox trimmed past everything. A status asked
    at once counts every record to embed again (files by their chunks), before the dense leg
    has listed one."""
    ws, store, messages = _old_store(tmp_path, monkeypatch, long_file=True)
    e = engine_for(store, [str(ws)], watch=False)
    try:
        assert e.index.wait(120)
        directory = e.view.vectors.directory
    finally:
        e.close()
    (directory / "vectors.json").unlink()
    e, held, embedded = _open_held(store, ws, monkeypatch)
    try:
        try:
            assert e.records.outbox_after(0) == []
            counts = e.records.counts(None)
            assert counts["chunks"] > counts["files"]  # (a file of many chunks)
            every = sum(counts["chunks" if kind == "files" else kind] for kind in e.view.vectors.spaces)
            assert every > counts["messages"]
            # Nothing of the vectors is there: every record counts (it read 1 a kind, or a
            # files kind by its files, until the dense leg listed their keys).
            assert e.status()["vectorLag"] == every
            assert e.status()["indexLagMs"] == 0  # the text index is kept as it is
            assert [h.uri for h in e.recall("automobile overheated", sources=["messages"]).hits][:1] == ["session://s/s-0"]
        finally:
            held.release()
        assert e.index.wait(120)
        assert e.status()["vectorLag"] == 0
        assert _vectors(e, "messages") == messages and set(_vectors(e, "files")) == set(_keys(e))
        assert set(TEXTS) <= set(embedded)  # every message embedded again
        hits = e.recall(ASKED, sources=["messages"]).hits  # by meaning only
        assert [h.uri for h in hits][:1] == ["session://s/s-0"]
        assert e.recall(ASKED, sources=["messages"], lexical_only=True).hits == []
    finally:
        e.close()


def test_a_text_index_rebuilt_on_a_trimmed_store_keeps_the_vectors(tmp_path, monkeypatch):
    """A new text schema (or a lost text index) rebuilds the words from the record; the
    vectors, level with the outbox, are not embedded again."""
    ws, store, messages = _old_store(tmp_path, monkeypatch)
    e = engine_for(store, [str(ws)], watch=False)
    try:
        assert e.index.wait(120)
        files = _vectors(e, "files")
        text_dir = e.view.text.directory
    finally:
        e.close()
    (text_dir / "SCHEMA").write_text("lore-text-0")  # an older release's words
    e, held, embedded = _open_held(store, ws, monkeypatch)
    try:
        try:
            assert e.records.outbox_after(0) == []
            assert _vectors(e, "messages") == messages and _vectors(e, "files") == files
        finally:
            held.release()
        assert e.index.wait(120)
        assert e.status()["vectorLag"] == 0 and e.status()["indexLagMs"] == 0
        assert not set(embedded) & set(TEXTS)  # no message embedded again
        assert _vectors(e, "messages") == messages and _vectors(e, "files") == files
        # The words are back (the rebuild ran) and the meaning is still there.
        assert [h.uri for h in e.recall("automobile overheated", sources=["messages"]).hits][:1] == ["session://s/s-0"]
        assert [h.uri for h in e.recall(ASKED, sources=["messages"]).hits][:1] == ["session://s/s-0"]
        assert e.recall(ASKED, sources=["messages"], lexical_only=True).hits == []
    finally:
        e.close()


def test_a_reader_counts_the_records_of_a_kind_still_to_embed_again_not_the_kind(tmp_path, monkeypatch):
    """A follower sees a kind being embedded again only as unfinished in the writer's last
    snapshot, and leaves its vectors out: `vectorLag` counts every record of it (it counted
    the kind, 1, whatever its size). The control: the same follower once the writer is done."""
    ws, store, _ = _old_store(tmp_path, monkeypatch, long_file=True)  # its files' vectors are another model's
    with _held_writer_role(store):  # a writer alive elsewhere: this instance reads
        reader = engine_for(store, [str(ws)], watch=False)
        try:
            assert not reader.role.writer and reader.view.vectors.stale == {"files"}
            chunks = len(_keys(reader))
            assert chunks > len(set(_keys(reader).values())) > 1  # files counted by their chunks
            assert reader.status()["vectorLag"] == chunks
            # and a files recall says its meaning part is partial (both positions are level)
            assert reader.recall("ferry timetable", sources=["files"]).dense_partial
        finally:
            reader.close()
    e = engine_for(store, [str(ws)], watch=False)  # a writer embeds them again
    try:
        assert e.index.wait(120) and e.status()["vectorLag"] == 0
    finally:
        e.close()
    with _held_writer_role(store):
        reader = engine_for(store, [str(ws)], watch=False)
        try:
            assert not reader.role.writer and reader.view.vectors.stale == set()
            assert reader.status()["vectorLag"] == 0
            assert not reader.recall("ferry timetable", sources=["files"]).dense_partial
        finally:
            reader.close()


@contextmanager
def _held_writer_role(store):
    """The writer lock held, and its heartbeat kept, by someone else while the block runs."""
    holder = WriterLock(store / "writer.lock")
    assert holder.try_acquire()
    beat = threading.Event()
    threading.Thread(target=lambda: [holder.heartbeat() for _ in iter(lambda: beat.wait(0.1), True)], daemon=True).start()
    try:
        yield
    finally:
        beat.set()
        holder.release()
