"""LongMemEval_S session and turn recall: lore-sidecar over stdio against SQLite FTS5 and bm25s.

    python bench/longmemeval.py [--data ../shared/data/longmemeval-dev/longmemeval_s_dev.jsonl.gz]
        [--limit N] [--types multi-session,temporal-reasoning] [--options '{...}'] [--out ...]

Data: LongMemEval_S (Wu et al., ICLR 2025, MIT), the development half, read where it lies
and never copied. Every question has its own haystack of ~50 sessions: each question gets a
fresh store and its own real sidecar (`lore-sidecar --stdio`), so no question's words weigh
in another's BM25 statistics (measured: ~3-5 s a question on this machine). Each haystack
session is one `lore/recordMessages` call, its turns with their roles, the session's date
as their time (one second apart, in order); a session the haystack lists twice is recorded
once (the same for the peers). The question is asked with `lore/recall` limited to
messages, `limit` DEPTH turns, with `now` = the question's date: relative words ("last
week", "two weeks ago") count from it, and nothing is hidden (`--no-now` asks without it).
With `--as-of` it is also asked as of the question's date, but `asOf` hides every message
written after it, and 22 of the 233 dev questions have evidence sessions dated after their
question (the data's dates): the default asks without it.

Metrics (the benchmark's own; abstention questions, ids ending `_abs`, left out):
session recall_any@k and recall_all@k, sessions ranked by their best turn in the ranking;
turn recall_all@k over the `has_answer` turns (questions without such turns left out of it);
overall and per question type.

Peers in the same run, over the same turns: (a) SQLite FTS5, porter tokenizer, bm25()
ranking, OR of the question's content words (as bench/locomo.py); (b) bm25s (English
stopwords), an index per question.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine, pct, settle, steps, write_result  # noqa: E402
from lore_sidecar import __version__  # noqa: E402
from lore_sidecar.client import StdioClient, sidecar_command  # noqa: E402
from lore_sidecar.engine import uris  # noqa: E402
from lore_sidecar.engine.recall.query import query_terms  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "longmemeval-dev" / "longmemeval_s_dev.jsonl.gz"
K = (1, 3, 5, 10)
DEPTH = 100  # turns asked for: sessions are ranked by their best turn among them

Turn = tuple[str, int]  # (session id, turn index)


def iso(date: str) -> str:
    """'2023/05/30 (Tue) 16:40' -> '2023-05-30T16:40:00Z'."""
    day, _, clock = date.partition(" (")
    clock = clock.split(") ", 1)[-1] if ") " in clock else "00:00"
    return datetime.strptime(f"{day} {clock}", "%Y/%m/%d %H:%M").strftime("%Y-%m-%dT%H:%M:%SZ")


def load(path: Path, *, types: set[str] | None = None, limit: int | None = None) -> list[dict]:
    """Questions as {id, type, question, now, sessions: [(sid, time, [turn])], sessions_wanted, turns_wanted}."""
    out = []
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            item = json.loads(line)
            if item["question_id"].endswith("_abs") or (types and item["question_type"] not in types):
                continue
            sessions, seen = [], set()
            for sid, date, turns in zip(item["haystack_session_ids"], item["haystack_dates"], item["haystack_sessions"], strict=True):
                if sid not in seen:  # a few haystacks list one session twice, identical
                    seen.add(sid)
                    sessions.append((sid, iso(date), turns))
            out.append({
                "id": item["question_id"], "type": item["question_type"], "question": item["question"],
                "now": iso(item["question_date"]), "sessions": sessions,
                "sessions_wanted": set(item["answer_session_ids"]),
                "turns_wanted": {(sid, i) for sid, _, turns in sessions for i, t in enumerate(turns) if t.get("has_answer")},
            })
            if limit is not None and len(out) >= limit:
                break
    return out


def turns_of(q: dict) -> list[tuple[Turn, str]]:
    return [((sid, i), t["content"]) for sid, _, turns in q["sessions"] for i, t in enumerate(turns)]


# -- systems: each returns, per question, its ranked turns and the query latencies ------------
def run_lore(questions: list[dict], tmp: Path, options: dict, stores: Path | None = None, as_of: bool = False,
             now: bool = True) -> tuple[list[list[Turn]], list[float], list[float]]:
    """`stores`: keep each question's store there and reuse it when a run finds it (only for
    experiments with recall settings: the record and its indexes do not depend on them)."""
    ranked, lat, ingest = [], [], []
    ws = (stores if stores is not None else tmp) / "ws"  # the project: a kept store is found by it again
    ws.mkdir(parents=True, exist_ok=True)
    for n, q in enumerate(steps(questions, "lore-sidecar: questions")):
        store = (stores / q["id"]) if stores is not None else tmp / f"store-{n}"
        kept = stores is not None and (store / "recorded").exists()
        client = StdioClient(sidecar_command("--store-dir", str(store)))
        try:
            t0 = time.perf_counter()
            client.initialize(ws, options={"watch": False, "indexWorkspace": False, **options})
            total = 0
            for sid, when, turns in ([] if kept else q["sessions"]):
                start = datetime.strptime(when, "%Y-%m-%dT%H:%M:%SZ")
                msgs = [{"id": str(i), "role": t["role"] if t["role"] in ("user", "assistant") else "user",
                         "content": t["content"], "createdAt": (start + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ")}
                        for i, t in enumerate(turns)]
                client.request("lore/recordMessages", {"sessionId": sid, "harness": "longmemeval", "messages": msgs}, timeout=300)
                total += len(msgs)
            settle(client, total)
            if not kept and options.get("distiller", "auto") != "off":
                # As bench/locomo.py: the distiller's logs join the text index; distil now, as a
                # store left alone ends up, so the figures do not depend on when the question came.
                client.request("lore/distill", {}, timeout=600)
                settle(client, total)
            if kept:
                settle(client, sum(len(turns) for _, _, turns in q["sessions"]))
            else:
                ingest.append(time.perf_counter() - t0)
                if stores is not None:
                    (store / "recorded").touch()
            t1 = time.perf_counter()
            ask = {"query": q["question"], "sources": ["messages"], "limit": DEPTH, **({"now": q["now"]} if now else {})}
            res = client.request("lore/recall", {**ask, "asOf": q["now"]} if as_of else ask)
            lat.append((time.perf_counter() - t1) * 1000)
            ids = []
            for h in res["hits"]:
                sid, mid = uris.parse(h["uri"])[1]
                ids.append((sid, int(mid)))
            ranked.append(ids)
        finally:
            client.close()
            if stores is None:
                shutil.rmtree(store, ignore_errors=True)
    return ranked, lat, ingest




def run_fts5(questions: list[dict]) -> tuple[list[list[Turn]], list[float]]:
    ranked, lat = [], []
    for q in questions:
        db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(text, sid UNINDEXED, n UNINDEXED, tokenize='porter')")
        db.executemany("INSERT INTO t(text, sid, n) VALUES (?,?,?)", [(text, sid, i) for (sid, i), text in turns_of(q)])
        terms = query_terms(q["question"])
        t = time.perf_counter()
        rows = db.execute("SELECT sid, n FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?",
                          (" OR ".join(f'"{w}"' for w in terms), DEPTH)).fetchall() if terms else []
        lat.append((time.perf_counter() - t) * 1000)
        ranked.append([(sid, int(n)) for sid, n in rows])
        db.close()
    return ranked, lat


def run_bm25s(questions: list[dict]) -> tuple[list[list[Turn]], list[float]]:
    import bm25s

    ranked, lat = [], []
    for q in questions:
        turns = turns_of(q)
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize([text for _, text in turns], stopwords="en", show_progress=False), show_progress=False)
        t = time.perf_counter()
        tokens = bm25s.tokenize([q["question"]], stopwords="en", show_progress=False)
        try:
            docs, _ = retriever.retrieve(tokens, k=min(DEPTH, len(turns)), show_progress=False)
            ids = [turns[i][0] for i in docs[0]]
        except Exception:  # a question made only of stopwords
            ids = []
        lat.append((time.perf_counter() - t) * 1000)
        ranked.append(ids)
    return ranked, lat


# -- metrics -----------------------------------------------------------------------------------
def session_order(ranked: list[Turn]) -> list[str]:
    """Sessions in the order of their best turn."""
    seen: dict[str, None] = {}
    for sid, _ in ranked:
        seen.setdefault(sid, None)
    return list(seen)


def metrics(ranked: list[Turn], q: dict) -> dict[str, float | None]:
    sessions = session_order(ranked)
    row: dict[str, float | None] = {}
    want = q["sessions_wanted"]
    for k in K:
        top = set(sessions[:k])
        row[f"session_any@{k}"] = float(bool(want & top))
        row[f"session_all@{k}"] = float(want <= top)
    turns = q["turns_wanted"]
    for k in K:
        row[f"turn_all@{k}"] = float(turns <= set(ranked[:k])) if turns else None
    return row


def aggregate(rows: list[dict]) -> dict:
    out: dict[str, float | int] = {"n": len(rows)}
    for key in rows[0] if rows else ():
        vals = [r[key] for r in rows if r[key] is not None]
        out[key] = round(sum(vals) / len(vals), 4) if vals else None
    return out


def score(ranked: list[list[Turn]], questions: list[dict]) -> dict:
    rows = [metrics(r, q) for r, q in zip(ranked, questions, strict=True)]
    by_type: dict[str, list[dict]] = {}
    for row, q in zip(rows, questions, strict=True):
        by_type.setdefault(q["type"], []).append(row)
    return {"overall": aggregate(rows), "by_type": {t: aggregate(v) for t, v in sorted(by_type.items())},
            "per_question": {q["id"]: row for q, row in zip(questions, rows, strict=True)}}


def dump(systems: dict[str, tuple[list, list]], questions: list[dict]) -> dict:
    """Per question: its type, the evidence turns, and each system's ranked turns ("sid:n")."""
    return {q["id"]: {"type": q["type"], "question": q["question"],
                      "wanted": sorted(f"{sid}:{n}" for sid, n in q["turns_wanted"]),
                      "sessions_wanted": sorted(q["sessions_wanted"]),
                      **{name: [f"{sid}:{n}" for sid, n in ranked[i]] for name, (ranked, _) in systems.items()}}
            for i, q in enumerate(questions)}


SHOWN = ("session_any@5", "session_all@5", "session_all@10", "turn_all@5", "turn_all@10")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "longmemeval.json"))
    ap.add_argument("--limit", type=int, default=None, help="the first N questions (after --types)")
    ap.add_argument("--types", default="", help="question types, comma-separated (default: all)")
    ap.add_argument("--options", default="{}", help="initializationOptions for the sidecar, as JSON (experiments)")
    ap.add_argument("--stores", default=None, help="keep each question's store in this folder and reuse it (recall-setting experiments only)")
    ap.add_argument("--as-of", action="store_true", help="ask with asOf = the question's date (it also hides later messages: 22 dev questions have evidence dated after their question)")
    ap.add_argument("--no-now", action="store_true", help="ask without `now` (relative words then count from the clock)")
    ap.add_argument("--no-peers", action="store_true", help="lore-sidecar alone (experiments)")
    ap.add_argument("--dump", default=None, help="write each system's ranked turns per question here (JSON), to compare rankings")
    args = ap.parse_args()
    types = {t for t in args.types.split(",") if t} or None
    questions = load(Path(args.data), types=types, limit=args.limit)
    tmp = Path(tempfile.mkdtemp(prefix="lore-lme-"))
    systems: dict[str, tuple[list, list]] = {}
    try:
        ranked, lat, ingest = run_lore(questions, tmp, json.loads(args.options), Path(args.stores) if args.stores else None, args.as_of,
                                     not args.no_now)
        systems["lore-sidecar"] = (ranked, lat)
        if not args.no_peers:
            systems["SQLite FTS5"] = run_fts5(questions)
            systems["bm25s"] = run_bm25s(questions)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    table = {name: {**score(r, questions), "p50_ms": round(statistics.median(lat), 3), "p95_ms": round(pct(lat, 95), 3)}
             for name, (r, lat) in systems.items()}
    result = {
        "machine": machine(), "lore_sidecar": __version__, "options": json.loads(args.options), "as_of": args.as_of, "now": not args.no_now,
        "data": {"questions": len(questions), "turns": sum(len(turns_of(q)) for q in questions),
                 "types": sorted({q["type"] for q in questions})},
        "lore_ingest_s_p50": round(statistics.median(ingest), 2) if ingest else None,
        "systems": table,
    }
    write_result(args.out, result)
    if args.dump:
        write_result(args.dump, dump(systems, questions))
    print(f"{'system':14s} {'type':26s} {'n':>4s} " + " ".join(f"{m:>14s}" for m in SHOWN))
    for name, row in table.items():
        for label, agg in [("overall", row["overall"]), *row["by_type"].items()]:
            cells = " ".join(f"{agg[m]:14.3f}" if agg.get(m) is not None else f"{'-':>14s}" for m in SHOWN)
            print(f"{name:14s} {label:26s} {agg['n']:4d} {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
