"""A reindex stopped while it rebuilds the words (before any vector was dropped on disk):
the next start rebuilds the words from the record (their SEQ went with the clear) and keeps
the vectors snapshot it finds, which is level with the outbox it kept: nothing is missing or
stale, every record is found by its words and by its meaning, and no lag is left. (The
re-embedding the reindex asked for is not resumed: the vectors are a cache of the record as
good as the ones a finished reindex makes; a model change is caught on its own.)"""

from __future__ import annotations

import threading

from tests.integration.test_store_and_index import engine_for, record
from tests.support.hold import held

SAID = "The automobile engine overheated on the motorway"  # shares no word with ASKED
ASKED = "car motor too hot highway"


def test_a_reindex_stopped_during_its_word_rebuild_leaves_a_store_whose_next_start_finds_everything(tmp_path, workspace):
    store = tmp_path / "store"
    e = engine_for(store, [str(workspace)], watch=False, distiller="off")
    e.index.scan()
    record(e, "s", [SAID] + [f"filler message number {i}" for i in range(39)])
    assert e.index.wait(60)
    # Control: found by its meaning alone before the reindex.
    assert [h.uri for h in e.recall(ASKED, sources=["messages"]).hits][:1] == ["session://s/s-0"]
    text = e.view.indexer.text
    text.upsert, inside, release = held(text.upsert)
    threading.Thread(target=e.view.indexer.request_rebuild, args=(60,), daemon=True).start()
    assert inside.wait(30)  # the words are being rebuilt (the messages first): cleared, not committed
    closer = threading.Thread(target=e.close)
    closer.start()
    while not e.view.indexer._stop.is_set():
        closer.join(0.01)
    release.set()
    closer.join(60)
    assert not closer.is_alive()
    assert e.view.indexer.error is None  # a stop, not a failure

    again = engine_for(store, [str(workspace)], watch=False, distiller="off")
    try:
        assert again.index.wait(60)
        status = again.status()
        assert status["indexLagMs"] == 0 and status["vectorLag"] == 0, status
        chunks = again.records.counts(None)["chunks"]
        assert chunks > 0 and again.view.text.num_docs() == 40 + chunks and again.view.vectors.size() == 40 + chunks
        assert any("billing.py" in h.uri for h in again.recall("compute_invoice_total", sources=["files"]).hits)
        assert [h.uri for h in again.recall("automobile overheated", sources=["messages"]).hits][:1] == ["session://s/s-0"]
        by_meaning = again.recall(ASKED, sources=["messages"])
        assert [h.uri for h in by_meaning.hits][:1] == ["session://s/s-0"] and not by_meaning.dense_partial
        # A write after the restart is found both ways too (the outbox was followed on).
        record(again, "s", ["The bicycle tyre went flat near the canal"], start=40)
        assert again.index.wait(60)
        assert [h.uri for h in again.recall("cycle puncture by the waterway", sources=["messages"]).hits][:1] == ["session://s/s-40"]
    finally:
        again.close()
