"""The meaning index of a workspace: vendored and generated files stay out of it unless
`embedVendored` is set (still found by their words), and the rest is embedded most useful
first — files a caller opened from recall, then files changed lately, then documents, then
the rest (engine/indexing/priority.py, engine/indexing/dense.py)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from lore_sidecar.engine.indexing import dense
from tests.integration.test_store_and_index import engine_for

# What the walk indexes of vendored and generated code (node_modules/, lock files and *.min.js
# it skips altogether): a vendored package, a Go vendor tree, and a minified bundle's one line.
VENDORED = {
    "_vendor/resolvelib/resolvers.py": "def resolve_conflict(requirements):\n    return backtrack(requirements)\n",
    "vendor/github.com/acme/retry/retry.go": "package retry\n\nfunc Backoff(n int) int { return n * 2 }\n",
    "static/bundle.js": "var zebrafish=1;" * 200 + "\n",
}
PARAGRAPH = "The shop resolves the versions of its parts by asking each supplier for a quote, " * 14
OWN = {
    "src/resolver.py": "def pick_version(candidates):\n    return max(candidates)\n",
    "README.md": "# Shop\n\nHow the shop resolves versions of its parts.\n",
    # Prose written a paragraph a line has lines as long as a bundle's: it is no bundle.
    "docs/suppliers.md": f"# Suppliers\n\n{PARAGRAPH}\n\n{PARAGRAPH}\n",
    "notes/quotes.py": f'"""{PARAGRAPH}"""\n\nQUOTES = []\n',
}


def _chunks(e) -> dict[str, int]:
    rows = e.records.db.reader().execute("SELECT chunks.id, files.path FROM chunks JOIN files ON files.id = chunks.file_id")
    return {path: key for key, path in rows}


def _embedded(e, chunks: dict[str, int]) -> set[str]:
    """The files whose chunk has a vector (every embedded chunk keeps its word pieces)."""
    pieces = e.view.vectors.late_of("files", list(chunks.values()))
    return {path for path, key in chunks.items() if pieces.get(key)}


def _scan(tmp_path: Path, name: str, files: dict[str, str], **options):
    ws = tmp_path / name
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    e = engine_for(tmp_path / f"{name}-store", [str(ws)], watch=False, **options)
    e.index.scan()
    assert e.index.wait(120)
    return e


def test_vendored_and_generated_files_stay_out_of_the_meaning_index_but_are_found_by_their_words(tmp_path):
    e = _scan(tmp_path, "ws", {**VENDORED, **OWN})
    try:
        chunks = _chunks(e)
        assert set(chunks) == set(VENDORED) | set(OWN)
        assert _embedded(e, chunks) == set(OWN)
        assert e.status()["vectorLag"] == 0 and e.index.progress(None)["meaning"]["chunksToGo"] == 0
        hits = e.recall("resolve_conflict backtrack", sources=["files"]).hits
        assert any(h.path.endswith("_vendor/resolvelib/resolvers.py") for h in hits)
        assert any(h.path.endswith("bundle.js") for h in e.recall("zebrafish", sources=["files"]).hits)
    finally:
        e.close()
    # Control: the same files with embedVendored get vectors, every one.
    e = _scan(tmp_path, "ws2", {**VENDORED, **OWN}, embedVendored=True)
    try:
        chunks = _chunks(e)
        assert _embedded(e, chunks) == set(VENDORED) | set(OWN)
    finally:
        e.close()


FILES = {
    "a_old.py": "def tally_ledger(rows):\n    return sum(rows)\n",
    "b_guide.md": "# Guide\n\nHow to read the ledger totals.\n",
    "c_opened.py": "def parse_invoice(text):\n    return text.split(';')\n",
    "d_new.py": "def send_reminder(user):\n    return user.email\n",
}


def _embedding_order(tmp_path: Path, name: str, prioritised: bool) -> list[str]:
    """The files in the order the dense leg embedded their chunks, after a scan of FILES
    (all but d_new.py a month old) and a recall whose hit c_opened.py the caller opened."""
    ws = tmp_path / name
    ws.mkdir()
    month_ago = time.time() - 30 * 86_400
    for rel, text in FILES.items():
        (ws / rel).write_text(text)
        if rel != "d_new.py":
            os.utime(ws / rel, (month_ago, month_ago))
    e = engine_for(tmp_path / f"{name}-store", [str(ws)], watch=False)
    try:
        worker = e.view.indexer.dense
        if not prioritised:
            worker.order = None  # outbox order, as before
        seen: list[str] = []
        load = worker.load

        def recording(kind, keys):
            docs = load(kind, keys)
            seen.extend(Path(d.path).name for d in docs)
            return docs

        worker.load = recording
        with worker.paused():
            e.index.scan()
            assert e.view.indexer.wait_for(e.records.outbox_head(), 60)
            hit = e.recall("parse_invoice", sources=["files"], lexical_only=True, runtime="test")
            assert hit.hits and hit.hits[0].path.endswith("c_opened.py")
            e.get_node(hit.hits[0].uri, query_id=hit.query_id, runtime="test")
        assert e.index.wait(120)
        return seen
    finally:
        e.close()


def test_the_meaning_index_embeds_opened_then_recent_then_documents_then_the_rest(tmp_path, monkeypatch):
    monkeypatch.setattr(dense, "STEP", 1)  # one chunk a step: the order is what each step chose
    assert _embedding_order(tmp_path, "ws", prioritised=True) == ["c_opened.py", "d_new.py", "b_guide.md", "a_old.py"]
    # Control: the same scan and the same opened file, taken in outbox order.
    assert _embedding_order(tmp_path, "ws2", prioritised=False) == ["a_old.py", "b_guide.md", "c_opened.py", "d_new.py"]
