"""Conversation recall in several languages against the same questions in English (XPersona).

    python bench/multilingual.py [--data DIR] [--langs Jp,Zh,Ko,Fr] [--out bench/results/multilingual.json]

Data: XPersona (Lin et al., 2020; github.com/HLTCHKUST/Xpersona, MIT licence): Persona-Chat
test dialogues with human-checked translations. DIR (default `$LORE_XPERSONA`, else
/work/xpersona) holds `En_persona_test.json` and `<Lang>_persona_split_test_human_annotated.json`
from the repository's `dataset/` folder, whole or a prefix of each (a JSON list of
{"persona": [sentences], "dialogue": [[user, bot], ...]}). docs/benchmarks.md says how
to fetch them. Nothing is copied into the repository.

Alignment: a translated split is a subset of the English test file, in its order (each
language picked its own subset). Each translated dialogue is matched to the next English
dialogue with as many persona sentences and turns whose utterance lengths correlate
(> 0.3); a dialogue without one is left out. Persona sentences keep their order.

The check, for each language L and for the English originals of L's dialogues (a store
each, a real sidecar over stdio each, distiller off): every dialogue is one session
recorded with one `lore/recordMessages` (turns alternating user/assistant); every persona
sentence of every dialogue is asked with `lore/recall` (messages, limit DEPTH), and
sessions are ranked by their best message. Relevant: every dialogue whose persona holds the
same sentence (the English sentence decides, so both sides share the labels). Persona
sentences are paraphrased in the dialogues, not copied.

Metrics: session hit@1, hit@5 (recall_any), MRR; per language, the ratio to English on the
same questions. Systems: lore-sidecar hybrid (defaults), lexical (`lexicalOnly`), dense
(`lexicalWeight` 0: the vector leg decides); SQLite FTS5 `unicode61 remove_diacritics 2`
(OR of the question's words) and, for CJK, FTS5 `trigram` (OR of the question's 3-grams).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine, settle, write_result  # noqa: E402
from lore_sidecar import __version__  # noqa: E402
from lore_sidecar.client import StdioClient, sidecar_command  # noqa: E402
from lore_sidecar.engine import uris  # noqa: E402

DEFAULT_DATA = Path(os.environ.get("LORE_XPERSONA", "/work/xpersona"))
LANGS = ("Jp", "Zh", "Ko", "Fr", "It", "Id")
CJK_LANGS = {"Jp", "Zh", "Ko"}
DEPTH = 100  # messages asked for; sessions ranked by their best one
K = (1, 5)


def load(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def _corr(a: list[float], b: list[float]) -> float:
    if len(a) < 3:
        return 1.0
    try:
        return statistics.correlation(a, b)
    except statistics.StatisticsError:
        return 0.0


def _lengths(d: dict) -> list[float]:
    return [float(len(u)) for turn in d["dialogue"] for u in turn]


def align(english: list[dict], other: list[dict], window: int = 12) -> list[tuple[int, int]]:
    """(English index, translated index) pairs, in order."""
    pairs, at = [], 0
    for j, d in enumerate(other):
        best = None
        for i in range(at, min(len(english), at + window)):
            e = english[i]
            if len(e["persona"]) != len(d["persona"]) or len(e["dialogue"]) != len(d["dialogue"]):
                continue
            c = _corr(_lengths(e), _lengths(d))
            if c > 0.3 and (best is None or c > best[1]):
                best = (i, c)
        if best is not None:
            pairs.append((best[0], j))
            at = best[0] + 1
    return pairs


def _key(sentence: str) -> str:
    return " ".join(sentence.lower().split()).rstrip(".")


def questions_of(english: list[dict], dialogues: list[dict], pairs: list[tuple[int, int]]) -> list[dict]:
    """Every persona sentence of every aligned dialogue, in the dialogue's language, with the
    sessions (positions in `pairs`) whose English persona holds the same sentence."""
    holders: dict[str, set[int]] = {}
    for s, (i, _) in enumerate(pairs):
        for p in english[i]["persona"]:
            holders.setdefault(_key(p), set()).add(s)
    out = []
    for s, (i, j) in enumerate(pairs):
        for k, p in enumerate(english[i]["persona"]):
            out.append({"q": dialogues[j]["persona"][k], "en": p, "relevant": sorted(holders[_key(p)]), "session": s})
    return out


def sessions_of(dialogues: list[dict], pairs: list[tuple[int, int]], side: int) -> list[list[str]]:
    """The turns of each aligned dialogue (side 0: English, 1: translated), in order."""
    return [[u for turn in dialogues[p[side]]["dialogue"] for u in turn] for p in pairs]




def _session_order(hits: list[dict]) -> list[int]:
    order: list[int] = []
    for h in hits:
        sid = uris.parse(h["uri"])[1][0]
        s = int(sid.rsplit("-", 1)[1])
        if s not in order:
            order.append(s)
    return order


def run_lore(sessions: list[list[str]], qs: list[dict], store: Path, ws: Path) -> dict[str, list[list[int]]]:
    """hybrid and lexical from one sidecar; dense from a second on the same store."""
    out: dict[str, list[list[int]]] = {}
    base = {"watch": False, "indexWorkspace": False, "distiller": "off"}
    client = StdioClient(sidecar_command("--store-dir", str(store)))
    try:
        client.initialize(ws, options=base)
        for s, turns in enumerate(sessions):
            msgs = [{"id": str(n), "role": "user" if n % 2 == 0 else "assistant", "content": t,
                     "createdAt": f"2024-01-01T00:{s % 60:02d}:{n:02d}Z"} for n, t in enumerate(turns)]
            client.request("lore/recordMessages", {"sessionId": f"dlg-{s}", "harness": "xpersona", "messages": msgs}, timeout=300)
        settle(client, sum(len(t) for t in sessions))
        for name, extra in (("lore hybrid", {}), ("lore lexical", {"lexicalOnly": True})):
            out[name] = [_session_order(client.request("lore/recall", {"query": q["q"], "sources": ["messages"], "limit": DEPTH, **extra})["hits"])
                         for q in qs]
    finally:
        client.close()
    client = StdioClient(sidecar_command("--store-dir", str(store)))
    try:
        client.initialize(ws, options={**base, "lexicalWeight": 0})
        settle(client, sum(len(t) for t in sessions))
        out["lore dense"] = [_session_order(client.request("lore/recall", {"query": q["q"], "sources": ["messages"], "limit": DEPTH})["hits"])
                             for q in qs]
    finally:
        client.close()
    return out


_WORDS = re.compile(r"\w+")


def run_fts5(sessions: list[list[str]], qs: list[dict], tokenizer: str) -> list[list[int]]:
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(text, s UNINDEXED, tokenize=\"{tokenizer}\")")
    db.executemany("INSERT INTO t(text, s) VALUES (?, ?)", [(u, s) for s, turns in enumerate(sessions) for u in turns])
    ranked = []
    for q in qs:
        words = _WORDS.findall(q["q"].lower())
        if tokenizer == "trigram":
            words = sorted({w[i : i + 3] for w in words for i in range(len(w) - 2)})
        words = [w for w in words if '"' not in w]
        rows = db.execute(f"SELECT s FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT {DEPTH}",
                          (" OR ".join(f'"{w}"' for w in words),)).fetchall() if words else []
        order: list[int] = []
        for (s,) in rows:
            if s not in order:
                order.append(s)
        ranked.append(order)
    return ranked


def score(ranked: list[list[int]], qs: list[dict]) -> dict:
    hits = {k: 0.0 for k in K}
    rr = 0.0
    for order, q in zip(ranked, qs, strict=True):
        rel = set(q["relevant"])
        first = next((n for n, s in enumerate(order) if s in rel), None)
        for k in K:
            hits[k] += first is not None and first < k
        rr += 0.0 if first is None else 1.0 / (first + 1)
    n = len(qs)
    return {**{f"hit@{k}": round(hits[k] / n, 4) for k in K}, "MRR": round(rr / n, 4), "n": n}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--langs", default=",".join(LANGS))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "multilingual.json"))
    args = ap.parse_args()
    data = Path(args.data)
    english = load(data / "En_persona_test.json")
    tmp = Path(tempfile.mkdtemp(prefix="lore-xpersona-"))
    ws = tmp / "ws"
    ws.mkdir()
    result: dict = {"machine": machine(), "lore_sidecar": __version__, "languages": {}}
    try:
        for lang in args.langs.split(","):
            path = data / f"{lang}_persona_split_test_human_annotated.json"
            if not path.exists():
                print(f"{lang}: no {path.name}, skipped", file=sys.stderr)
                continue
            other = load(path)
            pairs = align(english, other)
            qs = questions_of(english, other, pairs)
            qs_en = [{**q, "q": q["en"]} for q in qs]
            row: dict = {"dialogues": len(pairs), "of": len(other), "questions": len(qs), "systems": {}}
            for side, label, questions in ((0, "En", qs_en), (1, lang, qs)):
                sessions = sessions_of(english if side == 0 else other, pairs, side)
                systems = run_lore(sessions, questions, tmp / f"store-{lang}-{label}", ws)
                systems["FTS5 unicode61"] = run_fts5(sessions, questions, "unicode61 remove_diacritics 2")
                if lang in CJK_LANGS:
                    systems["FTS5 trigram"] = run_fts5(sessions, questions, "trigram")
                row["systems"][label] = {name: score(r, questions) for name, r in systems.items()}
            for name, m in row["systems"][lang].items():
                en = row["systems"]["En"].get(name)
                if en:
                    m["ratio_to_en"] = {k: round(m[k] / max(en[k], 1e-9), 3) for k in ("hit@1", "hit@5", "MRR")}
            result["languages"][lang] = row
            print(f"\n{lang}: {len(pairs)} of {len(other)} dialogues aligned, {len(qs)} questions")
            print(f"  {'system':18s} {'side':4s} {'hit@1':>6s} {'hit@5':>6s} {'MRR':>6s}  ratio hit@5/MRR")
            for name in row["systems"][lang]:
                for label in ("En", lang):
                    m = row["systems"][label].get(name)
                    if m:
                        r = m.get("ratio_to_en", {})
                        print(f"  {name:18s} {label:4s} {m['hit@1']:6.3f} {m['hit@5']:6.3f} {m['MRR']:6.3f}"
                              f"  {r.get('hit@5', ''):} {r.get('MRR', '')}")
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_result(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
