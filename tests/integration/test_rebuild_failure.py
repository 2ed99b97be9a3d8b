"""A rebuild of the words that fails half way with an unexpected error (not a stop) is never
published as whole: the text index's writes are rolled back, so recall keeps answering from
the words as last committed; `lore/status` says so (`indexError`, `indexLagMs` -1) until a
retry succeeds; and the rebuild is tried again until it does. (It used to leave a cleared,
half-refilled index in the writer, which the next ordinary commit published: the workspace's
words were gone until the next rebuild, and nothing said so.)

The fault: the text index refuses the workspace's rows (the kind after the messages) until
the test lets it go; the real engine, store and Tantivy index otherwise."""

from __future__ import annotations

import threading
import time

from tests.integration.test_store_and_index import engine_for, record


def test_a_rebuild_failing_half_way_keeps_the_last_words_says_so_and_is_retried_until_whole(tmp_path, workspace):
    e = engine_for(tmp_path / "store", [str(workspace)], watch=False, distiller="off")
    try:
        e.index.scan()
        record(e, "s", ["The heron ledger closes on Fridays."])
        assert e.index.wait(60)
        text = e.view.indexer.text
        # Control: both tiers are found by their words before the rebuild.
        assert [h.uri for h in e.recall("heron ledger", sources=["messages"]).hits][:1] == ["session://s/s-0"]
        assert any("billing.py" in h.uri for h in e.recall("compute_invoice_total", sources=["files"]).hits)

        real_upsert, failing, failed = text.upsert, threading.Event(), threading.Event()
        failing.set()

        def faulty_upsert(docs):
            docs = list(docs)
            if failing.is_set() and any(d.kind == "files" for d in docs):
                failed.set()
                raise RuntimeError("the disk hiccuped")
            return real_upsert(docs)

        text.upsert = faulty_upsert
        done: list[bool] = []
        rebuild = threading.Thread(target=lambda: done.append(e.view.indexer.request_rebuild(120)), daemon=True)
        rebuild.start()
        assert failed.wait(60)
        # An ordinary write after the failure (it committed the half-rebuilt index).
        record(e, "s", ["The kingfisher rota changes on Mondays."], start=1)
        e.index.wait_words(3)
        status = e.status()
        assert status["indexError"] and "rebuild failed" in status["indexError"], status["indexError"]
        assert status["indexLagMs"] == -1  # not level: the rebuild is still owed
        # The words as last committed, whole: the workspace is still found by its words.
        assert any("billing.py" in h.uri for h in e.recall("compute_invoice_total", sources=["files"]).hits)
        assert [h.uri for h in e.recall("heron ledger", sources=["messages"]).hits][:1] == ["session://s/s-0"]
        assert rebuild.is_alive()  # the reindex is not told it is done

        failing.clear()  # the fault goes: the retry succeeds
        rebuild.join(120)
        assert done == [True]
        assert e.index.wait(60)
        deadline = time.monotonic() + 30
        while (status := e.status())["indexError"] is not None:
            assert time.monotonic() < deadline, status["indexError"]
            time.sleep(0.1)
        assert status["indexLagMs"] == 0
        assert any("billing.py" in h.uri for h in e.recall("compute_invoice_total", sources=["files"]).hits)
        assert [h.uri for h in e.recall("kingfisher rota", sources=["messages"]).hits][:1] == ["session://s/s-1"]
    finally:
        e.close()
