"""Bitemporal facts: replay time, query latency and assert throughput at 100k facts.

    python bench/facts.py [--facts 100000] [--queries 2000] [--asserts 2000] [--out bench/results/facts.json]

Corpus (seeded): a journal of `--facts` lines as the engine writes them: subjects `service N`
with 6 predicates; about one slot in five changes value over time (supersession); one in
twenty is closed later with a backdated end (an `[invalidate]` line). Spread over 300 day
files, as a year of work would be.

replay      wipe the fact rows and rebuild them from the journal (parse, insert, resolve
            every slot), timed in-process.
queries     a mix: current facts of a subject; a subject as of a past date; a subject as known
            at a past record time (re-resolves its slots); a predicate + object; a text
            match. Peer, same run: the same filters on a plain SQLite table with one row per
            fact and a single `valid_until` column (what a store without a record-time axis
            keeps), with the same indexes.
asserts     `--asserts` single durable assertions on top (journal line fsynced, then the
            SQLite transaction), one at a time.
"""

from __future__ import annotations

import argparse
import json
import random
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

from bench.common import machine, pct, write_result  # noqa: E402
from lore_sidecar import __version__  # noqa: E402
from lore_sidecar.app import open_engine  # noqa: E402
from lore_sidecar.engine.facts import rules as F  # noqa: E402
from lore_sidecar.settings import load_settings  # noqa: E402
from lore_sidecar.store.journal import HEADER, slug  # noqa: E402

SEED = 20261130
PREDICATES = ["uses", "owner", "runs on", "deploys to", "language", "on call"]
VALUES = ["Stripe", "Adyen", "alice", "bob", "carol", "Buildkite", "GitHub Actions", "k8s", "ECS", "Python", "Go", "Rust"]
BASE = datetime(2024, 1, 1)



def iso(d: datetime) -> str:
    return d.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def write_journal(store: Path, root: str, n: int, rng: random.Random) -> tuple[int, list[dict]]:
    """The journal the engine would have written; returns (lines, plain rows for the peer)."""
    d = store / "journal" / slug(root)
    d.mkdir(parents=True)
    (d / ".project").write_text(root)
    n_subjects = max(10, n // 5)
    lines_by_day: dict[int, list[str]] = {}
    plain: list[dict] = []
    written = 0
    while written < n:
        s = f"service {rng.randrange(n_subjects)}"
        p = rng.choice(PREDICATES)
        day = rng.randrange(300)
        recorded = BASE + timedelta(days=day, seconds=rng.randrange(86400), microseconds=rng.randrange(10**6))
        valid_from = BASE + timedelta(days=rng.randrange(day + 1))
        obj = rng.choice(VALUES)
        fid = f"b{written:07d}"
        attrs = {"valid_from": F.show(iso(valid_from)), "recorded_at": F.show(iso(recorded)), "source": "stated", "id": fid}
        lines_by_day.setdefault(day, []).append(F.fact_line(s, p, obj, attrs))
        plain.append({"subject": s, "predicate": p, "object": obj, "valid_from": iso(valid_from), "recorded_at": iso(recorded)})
        written += 1
        if rng.random() < 0.05 and written < n:
            close_day = min(299, day + rng.randrange(1, 60))
            recorded_close = BASE + timedelta(days=close_day, seconds=rng.randrange(86400))
            until = valid_from + timedelta(days=rng.randrange(1, 90))
            attrs = {"valid_until": F.show(iso(until)), "recorded_at": F.show(iso(recorded_close))}
            lines_by_day.setdefault(close_day, []).append(F.invalidate_line(s, p, attrs))
            written += 1
    for day, lines in lines_by_day.items():
        (d / f"{(BASE + timedelta(days=day)).strftime('%Y-%m-%d')}.md").write_text(HEADER + "\n".join(lines) + "\n")
    return written, plain


def peer_table(path: Path, plain: list[dict]) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE facts(id INTEGER PRIMARY KEY, subject TEXT, predicate TEXT, object TEXT, valid_from TEXT,"
        " valid_until TEXT, recorded_at TEXT)"
    )
    db.executemany(
        "INSERT INTO facts(subject, predicate, object, valid_from, recorded_at) VALUES (?,?,?,?,?)",
        [(r["subject"], r["predicate"], r["object"], r["valid_from"], r["recorded_at"]) for r in plain],
    )
    db.execute("CREATE INDEX p_s ON facts(subject)")
    db.execute("CREATE INDEX p_p ON facts(predicate, object)")
    db.commit()
    return db


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--asserts", type=int, default=2000)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "facts.json"))
    args = ap.parse_args()
    rng = random.Random(SEED)
    tmp = Path(tempfile.mkdtemp(prefix="lore-facts-"))
    try:
        ws = tmp / "ws"
        (ws / ".git").mkdir(parents=True)
        root = str(ws.resolve())
        store = tmp / "store"
        lines, plain = write_journal(store, root, args.facts, rng)
        settings, _ = load_settings(env={}, user_file=Path("/nonexistent"),
                                    init_options={"storeDir": str(store), "embedder": "none", "indexWorkspace": False})
        t0 = time.perf_counter()
        engine = open_engine(settings, [str(ws)], start_indexer=False)  # replays on start: the journal is new
        start_s = time.perf_counter() - t0
        try:
            replay = engine.facts.replay()  # and once more, timed on its own
            n_rows = engine.status()["counts"]["facts"]
            n_subjects = max(10, args.facts // 5)
            kinds = {
                "current by subject": lambda: engine.facts.query(subject=f"service {rng.randrange(n_subjects)}"),
                "subject as of a date": lambda: engine.facts.query(
                    subject=f"service {rng.randrange(n_subjects)}", as_of=iso(BASE + timedelta(days=rng.randrange(300)))),
                "subject as known at": lambda: engine.facts.query(
                    subject=f"service {rng.randrange(n_subjects)}", as_of=iso(BASE + timedelta(days=rng.randrange(300))),
                    as_known_at=iso(BASE + timedelta(days=rng.randrange(300)))),
                "predicate + object": lambda: engine.facts.query(predicate=rng.choice(PREDICATES), object=rng.choice(VALUES)),
                "text match": lambda: engine.facts.query(text=f"{rng.choice(VALUES)} service {rng.randrange(n_subjects)}"),
            }
            peer = peer_table(tmp / "peer.db", plain)
            peer_kinds = {
                "current by subject": lambda: peer.execute(
                    "SELECT * FROM facts WHERE subject=? AND valid_until IS NULL LIMIT 50", (f"service {rng.randrange(n_subjects)}",)).fetchall(),
                "subject as of a date": lambda: peer.execute(
                    "SELECT * FROM facts WHERE subject=? AND valid_from<=? AND (valid_until IS NULL OR ?<valid_until) LIMIT 50",
                    (f"service {rng.randrange(n_subjects)}", *[iso(BASE + timedelta(days=rng.randrange(300)))] * 2)).fetchall(),
                "predicate + object": lambda: peer.execute(
                    "SELECT * FROM facts WHERE predicate=? AND object=? AND valid_until IS NULL LIMIT 50",
                    (rng.choice(PREDICATES), rng.choice(VALUES))).fetchall(),
                "text match": lambda: peer.execute(
                    "SELECT * FROM facts WHERE (subject||' '||predicate||' '||object) LIKE ? AND (subject||' '||predicate||' '||object) LIKE ? LIMIT 50",
                    (f"%{rng.choice(VALUES)}%", f"%service {rng.randrange(n_subjects)}%")).fetchall(),
            }
            results = {}
            all_ms: list[float] = []
            per = max(1, args.queries // len(kinds))
            for name, fn in kinds.items():
                for _ in range(20):
                    fn()
                lat = []
                for _ in range(per):
                    t = time.perf_counter()
                    fn()
                    lat.append((time.perf_counter() - t) * 1000)
                all_ms += lat
                entry = {"p50_ms": round(statistics.median(lat), 3), "p95_ms": round(pct(lat, 95), 3)}
                if name in peer_kinds:
                    plat = []
                    for _ in range(per):
                        t = time.perf_counter()
                        peer_kinds[name]()
                        plat.append((time.perf_counter() - t) * 1000)
                    entry["peer_p50_ms"] = round(statistics.median(plat), 3)
                    entry["ratio_p50"] = round(entry["p50_ms"] / max(entry["peer_p50_ms"], 1e-6), 2)
                results[name] = entry
            asserts = []
            for i in range(args.asserts):
                t = time.perf_counter()
                engine.facts.assert_fact(project=None, subject=f"service {rng.randrange(n_subjects)}", predicate=rng.choice(PREDICATES),
                                   object=rng.choice(VALUES), valid_from=iso(BASE + timedelta(days=300 + i // 100)))
                asserts.append((time.perf_counter() - t) * 1000)
            peer_ins = []
            for _ in range(args.asserts):
                t = time.perf_counter()
                peer.execute("INSERT INTO facts(subject, predicate, object, valid_from, recorded_at) VALUES (?,?,?,?,?)",
                             ("s", "p", "o", "2025-01-01", "2025-01-01"))
                peer.commit()
                peer_ins.append((time.perf_counter() - t) * 1000)
        finally:
            engine.close()
        result = {
            "machine": machine(),
            "lore_sidecar": __version__,
            "journal_lines": lines,
            "fact_rows": n_rows,
            "open_with_replay_s": round(start_s, 2),
            "replay": replay,
            "queries": {"all_p50_ms": round(statistics.median(all_ms), 3), "all_p95_ms": round(pct(all_ms, 95), 3), **results},
            "asserts": {
                "n": args.asserts,
                "per_s": round(args.asserts / (sum(asserts) / 1000), 1),
                "p50_ms": round(statistics.median(asserts), 3),
                "p95_ms": round(pct(asserts, 95), 3),
                "peer_sqlite_insert_commit_p50_ms": round(statistics.median(peer_ins), 3),
            },
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_result(args.out, result)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
