"""LoCoMo turn-level recall: lore-sidecar against SQLite FTS5 and bm25s, same data, same metric.

    python bench/locomo.py [--data ../shared/data/locomo/locomo10.json] [--out bench/results/locomo.json]

Data: LoCoMo (Maharana et al., 2024, CC BY-NC 4.0, evaluation use only), read from where it
lies and never copied. Each of the 10 conversations is its own project; each dialogue turn is
one message recorded through `Engine.record_messages` (the code `lore/recordMessages` runs):
`dia_id` as the message id, the session's date as its time, the speaker's name leading the
text as a transcript shows it, a shared photo as its caption. Every question with evidence
(1,982, category 5 included) is asked through `Engine.recall` (what `lore/recall` answers),
limited to that conversation's project and to messages.

Metric: LoCoMo's `recall_acc` — per question, the fraction of its evidence turns found in
the top k, averaged — at k = 1, 5, 10; MRR of the first evidence turn within the top 10;
overall and per category; latency p50/p95 per query (in-process, query embedding included).

Peers in the same run: (a) SQLite FTS5, porter tokenizer, bm25() ranking, OR of the
question's words; (b) bm25s (English stopwords); (c) lore-sidecar lexical only; (d)
lore-sidecar hybrid, default configuration.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine, pct, steps, write_result  # noqa: E402
from lore_sidecar import __version__  # noqa: E402
from lore_sidecar.app import open_engine  # noqa: E402
from lore_sidecar.engine import uris  # noqa: E402
from lore_sidecar.engine.recall.query import query_terms  # noqa: E402
from lore_sidecar.settings import load_settings  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
K = (1, 5, 10)
EVIDENCE = re.compile(r"D:?(\d+):(\d+)")



def session_time(text: str) -> str | None:
    """'1:56 pm on 8 May, 2023' -> ISO-8601 UTC."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None


def load(path: Path) -> list[dict]:
    """Conversations as {id, sessions: [(session_no, time, [turn])], questions: [...]}."""
    out = []
    for sample in json.loads(path.read_text()):
        conv = sample["conversation"]
        sessions = []
        for key in conv:
            m = re.fullmatch(r"session_(\d+)", key)
            if m and isinstance(conv[key], list):
                n = int(m.group(1))
                sessions.append((n, session_time(conv.get(f"session_{n}_date_time", "")), conv[key]))
        sessions.sort()
        questions = []
        for qa in sample["qa"]:
            if not qa.get("evidence"):
                continue
            ev = {f"D{a}:{b}" for e in qa["evidence"] for a, b in EVIDENCE.findall(e)}
            questions.append({"q": qa["question"], "evidence": ev, "category": qa["category"]})
        out.append({"id": sample["sample_id"], "sessions": sessions, "questions": questions})
    return out


def turn_text(turn: dict) -> str:
    text = f"{turn['speaker']}: {turn.get('text', '')}"
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


def score(ranked: list[list[str]], questions: list[dict]) -> dict:
    per_cat: dict[int, list[tuple[float, ...]]] = {}
    rows = []
    for ids, q in zip(ranked, questions, strict=True):
        ev = q["evidence"]
        r = tuple((len(ev & set(ids[:k])) / len(ev)) if ev else 0.0 for k in K)
        first = next((i for i, x in enumerate(ids[:10]) if x in ev), None)
        row = (*r, 1.0 / (first + 1) if first is not None else 0.0)
        rows.append(row)
        per_cat.setdefault(q["category"], []).append(row)

    def agg(items):
        n = len(items)
        return {**{f"R@{k}": round(sum(x[i] for x in items) / n, 4) for i, k in enumerate(K)},
                "MRR": round(sum(x[3] for x in items) / n, 4), "n": n}

    return {"overall": agg(rows), "by_category": {str(c): agg(v) for c, v in sorted(per_cat.items())}}


def projects_dir(store: Path) -> Path:
    """Each conversation is a project folder inside one workspace beside the store."""
    return Path(store).parent / "locomo-projects"


def lore_engine(convs: list[dict], store: Path, **options):
    """An engine on a new store with every conversation recorded and indexed."""
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"),
                                init_options={"storeDir": str(store), "indexWorkspace": False, "watch": False, **options})
    root = projects_dir(settings.store_dir)
    root.mkdir(parents=True, exist_ok=True)
    engine = open_engine(settings, [str(root)])
    for conv in steps(convs, "recording conversations"):
        for n, when, turns in conv["sessions"]:
            msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": turn_text(t), "msg_id": t["dia_id"],
                     "created_at": when, "tool_name": None, "tool_call_id": None} for i, t in enumerate(turns)]
            engine.capture.record_messages(project=str(root / conv["id"]), session_id=f"{conv['id']}-s{n}", harness="locomo", messages=msgs)
    engine.index.wait(1800)
    # The distiller would otherwise still be writing when the questions start: its
    # observation logs join the same text index, so BM25's document counts (and the
    # entity names recall expands) would change under the run, and the figures with them
    # (measured: 242 of 1,986 top-10s differed between two passes a few seconds apart).
    # Distil everything now, as a store left alone ends up, then wait for its words.
    if engine.settings.distiller != "off":
        engine.memory.distill()
        engine.index.wait(1800)
    return engine


def ask(engine, convs: list[dict], *, lexical_only: bool = False) -> tuple[list[list[str]], list[float]]:
    """Every question through `Engine.recall`: the top-10 turn ids, and the latencies."""
    ranked, lat = [], []
    for conv in steps(convs, "lore-sidecar: conversations"):
        for q in conv["questions"]:
            t = time.perf_counter()
            res = engine.recall(q["q"], project=str(projects_dir(engine.settings.store_dir) / conv["id"]), sources=["messages"], limit=10, lexical_only=lexical_only)
            lat.append((time.perf_counter() - t) * 1000)
            ranked.append([uris.parse(h.uri)[1][1] for h in res.hits])
    return ranked, lat


def run_fts5(convs: list[dict], path: Path) -> tuple[list[list[str]], list[float]]:
    db = sqlite3.connect(path)
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text, conv UNINDEXED, dia UNINDEXED, tokenize='porter')")
    for conv in convs:
        db.executemany("INSERT INTO t(text, conv, dia) VALUES (?,?,?)",
                       [(turn_text(t), conv["id"], t["dia_id"]) for _, _, turns in conv["sessions"] for t in turns])
    db.commit()
    ranked, lat = [], []
    for conv in convs:
        for q in conv["questions"]:
            terms = query_terms(q["q"])
            t = time.perf_counter()
            rows = db.execute(
                "SELECT dia FROM t WHERE t MATCH ? AND conv=? ORDER BY bm25(t) LIMIT 10",
                (" OR ".join(f'"{w}"' for w in terms), conv["id"]),
            ).fetchall() if terms else []
            lat.append((time.perf_counter() - t) * 1000)
            ranked.append([r[0] for r in rows])
    return ranked, lat


def run_bm25s(convs: list[dict]) -> tuple[list[list[str]], list[float]]:
    import bm25s

    ranked, lat = [], []
    for conv in convs:
        turns = [t for _, _, ts in conv["sessions"] for t in ts]
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize([turn_text(t) for t in turns], stopwords="en", show_progress=False), show_progress=False)
        for q in conv["questions"]:
            t = time.perf_counter()
            tokens = bm25s.tokenize([q["q"]], stopwords="en", show_progress=False)
            k = min(10, len(turns))
            try:
                docs, _ = retriever.retrieve(tokens, k=k, show_progress=False)
                ids = [turns[i]["dia_id"] for i in docs[0]]
            except Exception:  # a question made only of stopwords
                ids = []
            lat.append((time.perf_counter() - t) * 1000)
            ranked.append(ids)
    return ranked, lat


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "locomo.json"))
    ap.add_argument("--options", default="{}", help="initializationOptions for the engine, as JSON (experiments)")
    args = ap.parse_args()
    convs = load(Path(args.data))
    questions = [q for c in convs for q in c["questions"]]
    tmp = Path(tempfile.mkdtemp(prefix="lore-locomo-"))
    systems = {}
    try:
        t0 = time.perf_counter()
        engine = lore_engine(convs, tmp / "store", **json.loads(args.options))
        ingest_s = time.perf_counter() - t0
        try:
            systems["lore-sidecar hybrid"] = ask(engine, convs)
            systems["lore-sidecar lexical"] = ask(engine, convs, lexical_only=True)
        finally:
            engine.close()
        systems["SQLite FTS5"] = run_fts5(convs, tmp / "fts.db")
        systems["bm25s"] = run_bm25s(convs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    table = {}
    for name, (ranked, lat) in systems.items():
        table[name] = {**score(ranked, questions), "p50_ms": round(statistics.median(lat), 3), "p95_ms": round(pct(lat, 95), 3)}
    peers = [n for n in table if not n.startswith("lore")]
    best = max(peers, key=lambda n: table[n]["overall"]["R@5"])
    ours = table["lore-sidecar hybrid"]["overall"]
    result = {
        "machine": machine(),
        "lore_sidecar": __version__,
        "data": {"conversations": len(convs), "turns": sum(len(t) for c in convs for _, _, t in c["sessions"]), "questions": len(questions)},
        "lore_ingest_s": round(ingest_s, 2),
        "systems": table,
        "best_peer": best,
        "ratio_vs_best_peer": {m: round(ours[m] / max(table[best]["overall"][m], 1e-9), 3) for m in ("R@5", "R@10", "MRR")},
    }
    write_result(args.out, result)
    print(f"{'system':24s} {'R@1':>6s} {'R@5':>6s} {'R@10':>6s} {'MRR':>6s} {'p50 ms':>8s} {'p95 ms':>8s}")
    for name, row in table.items():
        o = row["overall"]
        print(f"{name:24s} {o['R@1']:6.3f} {o['R@5']:6.3f} {o['R@10']:6.3f} {o['MRR']:6.3f} {row['p50_ms']:8.2f} {row['p95_ms']:8.2f}")
    print(json.dumps(result, indent=2), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
