"""What the non-ASCII paths of the word analysis cost: `words()` on German, Turkish (İ) and
Japanese text, and `snippet()` on 12 KB of German with the query term near its end and with
no term in it. Wall-clock medians in µs of one process; alternate two trees to compare.

    python bench/any_language_paths.py                   # this tree
    python bench/any_language_paths.py --tree /tmp/main  # another checkout (e.g. git archive main)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _median_us(f, n: int) -> float:
    runs = []
    for _ in range(9):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        runs.append((time.perf_counter() - t0) / n * 1e6)
    return round(statistics.median(runs), 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", default=str(ROOT), help="the checkout whose lore_sidecar is timed")
    sys.path.insert(0, ap.parse_args().tree)
    from lore_sidecar.engine.recall import query as q
    from lore_sidecar.words import words

    de = "Die Größe der Straßenbahnhaltestelle überrascht mich, sagte Jörg. " * 20
    tr = "Gelecek hafta İstanbul'a gidiyorum, İzmir'e değil. " * 20
    ja = "今日は京都へ行きました。設定はparse_configで読む。" * 20
    long_de = "Einleitung ohne Inhalt über Größen. " * 300 + "Die Haltestelle Kreuzberg." + " Schluss." * 100
    terms = q.query_terms("Haltestelle Kreuzberg")
    print(json.dumps({
        "words_de_us": _median_us(lambda: words(de), 300),
        "words_tr_us": _median_us(lambda: words(tr), 300),
        "words_ja_us": _median_us(lambda: words(ja), 300),
        "snippet_de_12KB_us": _median_us(lambda: q.snippet(long_de, terms), 100),
        "snippet_de_12KB_no_match_us": _median_us(lambda: q.snippet(long_de, ["zzz"]), 100),
    }))


if __name__ == "__main__":
    main()
