"""Late interaction over workspace chunks: each chunk's word pieces are kept beside its
vector, follow its file, come back the same from a rebuild, and reorder the head of a files
recall (engine/late.py, engine/recall/late_order.py)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path

from tests.integration.test_store_and_index import engine_for

DOCS = {
    "tss.md": "# TSS/360\n\nA time-shared operating system for the IBM System/360 Model 67: many users at terminals share one processor.",
    "survey.md": "# Computers in business\n\nA survey of computers and systems: which computers and which systems firms use for payroll systems.",
    "sort.md": "# Sorting on tape\n\nMerge sorting of records held on magnetic tape, with run lengths and passes compared.",
    "compiler.md": "# A one-pass compiler\n\nTranslating ALGOL programs into machine code in one pass over the source.",
    "paging.md": "# Paging and memory\n\nDemand paging for virtual memory: page faults, replacement, and the working set of a program.",
    "ibm.md": "# IBM 7090 programs\n\nA library of programs for the IBM 7090 computer: routines for matrices and statistics.",
    "queue.md": "# Queues at a computer centre\n\nJobs wait in a batch queue; turnaround time depends on the computer's load and priorities.",
    "terminal.md": "# Interactive terminals\n\nTeletype terminals connected to a shared processor let several users edit and run programs simultaneously.",
}
# Shares "computer" with queue.md and ibm.md, and no content word with terminal.md, whose
# pieces ("shared processor", "several users", "simultaneously") mean what it asks. (With
# "interactively" in place of "simultaneously" the late step's lead over queue.md was a tie
# at 4 digits under the float graph and lost under the int8 one; this text leads under both.)
ASKED = "computer systems used by many people at the same time"


def _workspace(root: Path) -> Path:
    root.mkdir()
    for name, text in DOCS.items():
        (root / name).write_text(text)
    return root


@contextmanager
def _scanned(tmp_path, **options):
    """An engine on a new store with the workspace scanned and every chunk embedded."""
    ws = _workspace(tmp_path / "ws")
    e = engine_for(tmp_path / "store", [str(ws)], watch=False, **options)
    try:
        e.index.scan()
        assert e.index.wait(120)
        yield e, ws
    finally:
        e.close()


def _ranked(e, query, **kw) -> list[str]:
    return [Path(h.path).name for h in e.recall(query, sources=["files"], limit=8, **kw).hits]


def _keys(e) -> dict[int, str]:
    """Every chunk key of the store, with its file's name."""
    rows = e.records.db.reader().execute("SELECT chunks.id, files.path FROM chunks JOIN files ON files.id = chunks.file_id")
    return {key: Path(path).name for key, path in rows}


def test_the_pieces_a_chunk_matches_by_reorder_the_head_of_a_files_recall(tmp_path):
    with _scanned(tmp_path) as (e, ws):
        ranked = _ranked(e, ASKED)
        assert ranked.index("terminal.md") < ranked.index("queue.md")
        assert ranked.index("terminal.md") < ranked.index("ibm.md")
    # Control: the same store and question without the late step keep the two legs' order,
    # where the shared word wins.
    e = engine_for(tmp_path / "store", [str(ws)], watch=False, filesLateWeight=0)
    try:
        assert e.index.wait(120)
        ranked = _ranked(e, ASKED)
        assert ranked.index("queue.md") < ranked.index("terminal.md") if "terminal.md" in ranked else "queue.md" in ranked
    finally:
        e.close()


def test_each_embedded_chunk_keeps_its_pieces_and_loses_them_with_its_file(tmp_path):
    with _scanned(tmp_path) as (e, ws):
        keys = _keys(e)
        rows = e.view.vectors.late_of("files", list(keys))
        assert set(rows) == set(keys) and all(rows.values())
        (ws / "terminal.md").unlink()
        e.index.scan()
        assert e.index.wait(120)
        gone = [k for k, name in keys.items() if name == "terminal.md"]
        after = e.view.vectors.late_of("files", list(keys))
        assert gone and not set(gone) & set(after)
        # Control: the other files' pieces stay, unchanged.
        assert after == {k: v for k, v in rows.items() if k not in gone}


def test_a_rebuild_gives_every_chunk_the_same_pieces(tmp_path):
    with _scanned(tmp_path) as (e, _):
        keys = list(_keys(e))
        live = e.view.vectors.late_of("files", keys)
        ranked = _ranked(e, ASKED)
        e.index.rebuild("all")
        assert e.view.vectors.late_of("files", keys) == live
        assert _ranked(e, ASKED) == ranked


def test_vectors_written_without_pieces_are_rebuilt_with_them_on_the_next_start(tmp_path):
    with _scanned(tmp_path) as (e, ws):
        want = _ranked(e, ASKED)
        vectors_dir = e.view.vectors.directory
    # What an older release left: snapshots and their sequence, no pieces and no word of them.
    meta_path = vectors_dir / "vectors.json"
    meta = json.loads(meta_path.read_text())
    del meta["late"]
    meta_path.write_text(json.dumps(meta))
    with sqlite3.connect(vectors_dir / "late.db") as c:
        c.execute("DELETE FROM late")
    e = engine_for(tmp_path / "store", [str(ws)], watch=False)
    try:
        assert e.index.wait(120)
        keys = _keys(e)
        assert set(e.view.vectors.late_of("files", list(keys))) == set(keys)
        assert _ranked(e, ASKED) == want
    finally:
        e.close()


def test_conversation_gets_late_interaction_only_from_a_model_with_pieces(tmp_path):
    """With `embedder = "minilm"` every message keeps its pieces and a messages recall is
    reordered by them; the default static model has none, and stores none."""
    from tests.integration.test_store_and_index import record

    texts = [text.split("\n\n", 1)[1] for text in DOCS.values()]
    names = list(DOCS)
    empty = tmp_path / "empty"
    empty.mkdir()

    def top(e) -> list[str]:
        return [names[int(h.uri.rsplit("-", 1)[1])] for h in e.recall(ASKED, sources=["messages"], limit=3).hits]

    tops = {}
    for weight in (1.0, 0.0):
        e = engine_for(tmp_path / f"minilm-{weight}", [str(empty)], watch=False, distiller="off",
                       embedder="minilm", lateWeight=weight)
        try:
            record(e, "s", texts)
            assert e.index.wait(60)
            assert len(e.view.vectors.late_of("messages", range(1, 100))) == len(texts)
            tops[weight] = top(e)
        finally:
            e.close()
    # The time-sharing system, whose pieces ("time-shared", "many users") mean what is asked,
    # leads; without the late step the message that repeats "computers" and "systems" does.
    assert tops[1.0][0] == "tss.md" and tops[0.0][0] == "survey.md"
    e = engine_for(tmp_path / "default", [str(empty)], watch=False, distiller="off")
    try:
        record(e, "s", texts)
        assert e.index.wait(60)
        assert e.view.vectors.late_of("messages", range(1, 100)) == {}
        assert e.recall(ASKED, sources=["messages"]).hits  # found all the same, by words and vectors
    finally:
        e.close()


def test_a_follower_reads_the_writers_pieces_and_ranks_a_files_recall_as_it_does(tmp_path):
    """Real sidecars on one store: the follower opens the writer's `late.db` read-only."""
    from bench.fleet import Fleet
    from tests.integration.test_many_sidecars import poll

    ws = _workspace(tmp_path / "ws")
    fleet = Fleet(tmp_path / "store", ws, watch=False)
    try:
        writer = fleet.spawn()
        # All three from one status read: two reads (the first `vectorLag` 0 before the scan
        # wrote anything, the second counting its files) let the test go on before a vector
        # existed (a CI run failed so; reproduced with the dense leg delayed 3 s).
        def level(st) -> bool:
            return st["counts"]["files"] >= len(DOCS) and st["indexLagMs"] == 0 and st["vectorLag"] == 0

        assert level(poll(lambda: writer.request("lore/status"), level, timeout=120)), "the writer never caught up"
        follower = fleet.spawn()
        assert follower.request("lore/status")["role"] == "follower"

        def ranked(client) -> list[str]:
            hits = client.request("lore/recall", {"query": ASKED, "sources": ["files"], "limit": 8})["hits"]
            return [Path(h["path"]).name for h in hits]

        mine = ranked(writer)
        assert mine.index("terminal.md") < mine.index("queue.md")  # the late step's order (see above)
        theirs = poll(lambda: ranked(follower), lambda r: r == mine, timeout=20)
        assert theirs == mine
    finally:
        fleet.close()

