"""Document and code search quality, with SQLite FTS5 and bm25s on the same data in the same run.

    python bench/retrieval.py                     # CACM and CoSQA-dev from ../shared/data/retrieval
    python bench/retrieval.py --sets cacm --data /path/to/retrieval

Each set is used as a user's workspace would be: one file per document (`.md`) or snippet
(`.py`) in a folder given to `initialize`; every query goes through `lore/recall` over stdio
(the default hybrid, and `lexicalOnly` for the ablation); chunks of one file count once, at
their best rank. Reported: nDCG@10, R@10, MRR@10, per system, plus index and query speed.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine, pct, rss_mb, steps, write_result  # noqa: E402
from lore_sidecar.client import StdioClient, sidecar_command  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "retrieval"
K = 10
Corpus = dict[str, str]  # file name -> text
Queries = list[tuple[str, str, set[str]]]  # (query id, text, relevant file names)


# -- the sets ------------------------------------------------------------------------------------
def _fields(block: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in re.split(r"^\.(?=[A-Z]\b)", block, flags=re.M)[1:]:
        tag, _, body = part.partition("\n")
        out[tag.strip()[:1]] = body.strip()
    return out


def cacm(data: Path) -> tuple[Corpus, Queries]:
    corpus: Corpus = {}
    for block in re.split(r"^\.I ", (data / "cacm" / "cacm.all").read_text(errors="replace"), flags=re.M)[1:]:
        doc_id, _, rest = block.partition("\n")
        f = _fields("\n" + rest)
        authors = " ".join(f.get("A", "").split("\n"))
        corpus[f"CACM-{int(doc_id):04d}.md"] = f"# {' '.join(f.get('T', '').split())}\n\n{authors}\n\n{f.get('W', '')}\n"
    relevant: dict[int, set[str]] = {}
    for line in (data / "cacm" / "qrels.text").read_text().splitlines():
        q, d, *_ = line.split()
        relevant.setdefault(int(q), set()).add(f"CACM-{int(d):04d}.md")
    queries: Queries = []
    for block in re.split(r"^\.I ", (data / "cacm" / "query.text").read_text(errors="replace"), flags=re.M)[1:]:
        qid, _, rest = block.partition("\n")
        text = " ".join(_fields("\n" + rest).get("W", "").split())
        if int(qid) in relevant:
            queries.append((qid.strip(), text, relevant[int(qid)]))
    return corpus, queries


def cosqa(data: Path) -> tuple[Corpus, Queries]:
    index = json.loads((data / "cosqa-dev" / "code_idx_map.txt").read_text())
    corpus = {f"snippet_{i:05d}.py": code + "\n" for code, i in index.items()}
    queries = [(q["idx"], q["doc"], {f"snippet_{int(q['retrieval_idx']):05d}.py"})
               for q in json.loads((data / "cosqa-dev" / "cosqa-retrieval-dev-500.json").read_text())]
    return corpus, queries


SETS: dict[str, Callable[[Path], tuple[Corpus, Queries]]] = {"cacm": cacm, "cosqa": cosqa}


# -- metrics ---------------------------------------------------------------------------------------
def scores(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    top = ranked[:K]
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(top) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(K, len(relevant))))
    rr = next((1 / (i + 1) for i, d in enumerate(top) if d in relevant), 0.0)
    return {"nDCG@10": dcg / ideal if ideal else 0.0, "R@10": len(set(top) & relevant) / len(relevant), "MRR@10": rr}


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in rows[0]}


def unique(names: list[str]) -> list[str]:
    seen: set[str] = set()
    return [n for n in names if not (n in seen or seen.add(n))]


# -- systems ---------------------------------------------------------------------------------------
def lore(corpus: Corpus, queries: Queries, modes: dict[str, dict], options: dict | None = None) -> dict[str, dict]:
    with tempfile.TemporaryDirectory(prefix="lore-retrieval-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        for name, text in corpus.items():
            (ws / name).write_text(text)
        client = StdioClient(sidecar_command("--store-dir", str(Path(tmp) / "store")))
        try:
            t0 = time.perf_counter()
            client.initialize(ws, options={"watch": False, "distiller": "off", **(options or {})})
            while True:
                status = client.request("lore/status")
                if status["counts"]["files"] >= len(corpus) and status["indexLagMs"] == 0 and status["vectorLag"] == 0:
                    break
                time.sleep(0.1)
            index_s = time.perf_counter() - t0
            peak_mb = rss_mb(client.proc.pid, "VmHWM")  # indexing's high-water mark, MiniLM's batches included
            out = {}
            for mode, extra in modes.items():
                rows, took = [], []
                for _, text, relevant in steps(queries, f"lore-sidecar {mode}"):
                    t1 = time.perf_counter()
                    result = client.request("lore/recall", {"query": text, "sources": ["files"], "limit": 50, **extra})
                    took.append((time.perf_counter() - t1) * 1000)
                    ranked = unique([Path(h["path"]).name for h in result["hits"] if h.get("path")])
                    rows.append(scores(ranked, relevant))
                out[mode] = {**mean(rows), "p50_ms": round(pct(took, 50), 2), "p95_ms": round(pct(took, 95), 2),
                             "index_docs_per_s": round(len(corpus) / index_s), "peak_rss_mb": peak_mb}
            return out
        finally:
            client.close()


def fts5(corpus: Corpus, queries: Queries) -> dict:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE d USING fts5(name UNINDEXED, body, tokenize='porter unicode61')")
    t0 = time.perf_counter()
    db.executemany("INSERT INTO d VALUES (?, ?)", list(corpus.items()))
    index_s = time.perf_counter() - t0
    rows, took = [], []
    for _, text, relevant in queries:
        words = [w for w in re.findall(r"\w+", text.lower()) if len(w) > 1]
        t1 = time.perf_counter()
        ranked = [r[0] for r in db.execute(
            "SELECT name FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT ?", (" OR ".join(f'"{w}"' for w in words), K))] if words else []
        took.append((time.perf_counter() - t1) * 1000)
        rows.append(scores(ranked, relevant))
    return {**mean(rows), "p50_ms": round(pct(took, 50), 2), "p95_ms": round(pct(took, 95), 2),
            "index_docs_per_s": round(len(corpus) / max(index_s, 1e-9))}


def bm25s_peer(corpus: Corpus, queries: Queries) -> dict:
    import bm25s

    names = list(corpus)
    t0 = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([corpus[n] for n in names], stopwords="en", show_progress=False), show_progress=False)
    index_s = time.perf_counter() - t0
    rows, took = [], []
    for _, text, relevant in queries:
        t1 = time.perf_counter()
        tokens = bm25s.tokenize([text], stopwords="en", show_progress=False)
        ranked = []
        if tokens.vocab:
            docs, _ = retriever.retrieve(tokens, k=K, show_progress=False)
            ranked = [names[i] for i in docs[0]]
        took.append((time.perf_counter() - t1) * 1000)
        rows.append(scores(ranked, relevant))
    return {**mean(rows), "p50_ms": round(pct(took, 50), 2), "p95_ms": round(pct(took, 95), 2),
            "index_docs_per_s": round(len(corpus) / max(index_s, 1e-9))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--sets", default="cacm,cosqa")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "retrieval.json"))
    ap.add_argument("--options", default="{}", help="initializationOptions for lore-sidecar, as JSON (experiments)")
    ap.add_argument("--no-peers", action="store_true", help="lore-sidecar only (quicker experiments)")
    args = ap.parse_args()
    result: dict = {"machine": machine(), "sets": {}}
    for name in args.sets.split(","):
        corpus, queries = SETS[name](Path(args.data))
        modes = {"hybrid": {}, "lexical": {"lexicalOnly": True}}
        systems = {f"lore-sidecar {m}": r for m, r in lore(corpus, queries, modes, json.loads(args.options)).items()}
        if not args.no_peers:
            systems["sqlite fts5"] = fts5(corpus, queries)
            systems["bm25s"] = bm25s_peer(corpus, queries)
        result["sets"][name] = {"docs": len(corpus), "queries": len(queries), "systems": systems}
        print(f"\n{name}: {len(corpus)} docs, {len(queries)} queries", file=sys.stderr)
        for system, r in systems.items():
            print(f"  {system:24} nDCG@10 {r['nDCG@10']:.4f}  R@10 {r['R@10']:.4f}  MRR@10 {r['MRR@10']:.4f}  "
                  f"p50 {r['p50_ms']} ms  index {r['index_docs_per_s']} docs/s"
                  + (f"  peak RSS {r['peak_rss_mb']} MB" if r.get("peak_rss_mb") else ""), file=sys.stderr)
    write_result(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
