"""The dense leg follows the text index on its own thread: a write is found by its words at
once and by its meaning a moment later; a crash mid catch-up resumes."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import ROOT
from tests.integration.test_store_and_index import engine_for, record

# Shares no word with the query below; only the vector leg can connect them.
SAID = "The automobile engine overheated on the motorway"
ASKED = "car motor too hot highway"


def test_recall_is_lexical_while_vectors_lag_and_hybrid_once_they_catch_up(tmp_path, workspace):
    e = engine_for(tmp_path / "store", [str(workspace)])
    try:
        with e.view.indexer.dense.paused():  # the vector thread is busy elsewhere
            record(e, "s", [SAID])
            by_words = e.recall("automobile overheated", sources=["messages"])
            by_meaning = e.recall(ASKED, sources=["messages"])
            assert [h.uri for h in by_words.hits] == ["session://s/s-0"] and by_words.dense_partial
            assert by_meaning.hits == [] and by_meaning.dense_partial
            assert e.status()["vectorLag"] > 0
            # A second write, searchable by its words: the text leg has finished the pass
            # that took the first one (and would have trimmed the outbox behind it).
            record(e, "s2", ["an unrelated note about lunch"])
            assert e.recall("lunch", sources=["messages"]).hits
        assert e.index.wait(30)
        caught_up = e.recall(ASKED, sources=["messages"])
        assert [h.uri for h in caught_up.hits] == ["session://s/s-0"] and not caught_up.dense_partial
        assert e.status()["vectorLag"] == 0
        # Control: lexical-only never reports the dense leg, and still cannot find it by meaning.
        assert e.recall(ASKED, sources=["messages"], lexical_only=True).hits == []
    finally:
        e.close()


def test_a_crash_while_vectors_lag_resumes_their_catch_up_on_the_next_start(tmp_path, workspace):
    store = tmp_path / "store"
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from tests.integration.test_store_and_index import engine_for, record
        e = engine_for(__import__("pathlib").Path({str(store)!r}), [{str(workspace)!r}])
        e.view.indexer.dense.paused().__enter__()  # vectors never get this far
        record(e, "crash", [{SAID!r}] + [f"filler message number {{i}}" for i in range(499)])
        assert e.view.indexer.wait_for(e.records.outbox_head(), 60)
        assert e.recall("automobile overheated", sources=["messages"]).hits
        os._exit(0)  # no shutdown: no vector snapshot, nothing saved
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120, cwd=str(tmp_path))
    e = engine_for(store, [str(workspace)])
    try:
        assert e.index.wait(60)
        assert e.view.vectors.size() == 500  # every message embedded after the restart
        hits = e.recall(ASKED, sources=["messages"]).hits
        assert hits and hits[0].uri == "session://crash/crash-0"
    finally:
        e.close()
