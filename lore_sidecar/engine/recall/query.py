"""Query parsing, cue terms and snippets: pure functions over text."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

WORD = re.compile(r"[A-Za-z0-9_]+")

# A short English stopword list: words that carry no topic. Kept small on purpose; BM25's
# idf already discounts frequent words, this only keeps them out of the AND query.
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does doing for from had has have
    how i if in into is it its me my no nor not of on or our ours she he her his him so than
    that the their them then there these they this those to too us was we were what when
    where which while who whom why will with would you your yours about after again all am
    any because before being below between both during each few further here just more most
    other out over own same should some such through under until up very off once only
    ever also did let lets""".split()
)


def query_terms(query: str) -> list[str]:
    """The query's content words, in order, deduplicated, lowercased."""
    seen: dict[str, None] = {}
    for w in WORD.findall(query):
        lw = w.lower()
        if lw not in STOPWORDS and lw not in seen:
            seen[lw] = None
    if not seen:  # a query of only stopwords still searches for something
        for w in WORD.findall(query):
            seen.setdefault(w.lower(), None)
    return list(seen)


def search_terms(query: str) -> list[str]:
    """What the lexical leg searches for: the content words in order, a word the query
    repeats kept as often as it is said (BM25 then weighs it more), fragments of one
    character ("e.g." -> e, g) dropped."""
    words = [w.lower() for w in WORD.findall(query)]
    kept = [w for w in words if w not in STOPWORDS and len(w) > 1]
    return kept or query_terms(query)


@functools.lru_cache(maxsize=4096)
def stems_of(analyze: Callable[[str], list[str]], text: str) -> frozenset[str]:
    """The stems a text holds. Remembered per text: the same messages, distillations and
    nodes come back across recalls, and analysing a long distillation is the costly part of
    a hit. Each distinct word is analysed once (the analyzer splits on WORD's pattern and
    lowercases, so the set is the same as analysing the whole text)."""
    if text.isascii():  # lowered whole first (one C call, not one per word); only ASCII, where lowering maps words to words
        return frozenset(analyze(" ".join(set(WORD.findall(text.lower())))))
    return frozenset(analyze(" ".join({w.lower() for w in WORD.findall(text)})))


@functools.lru_cache(maxsize=1024)
def _term_stems(analyze: Callable[[str], list[str]], term: str) -> tuple[str, ...]:
    return tuple(analyze(term))


def cues(
    terms: Sequence[str], text: str, analyze: Callable[[str], list[str]], title: str = ""
) -> list[str]:
    """The query terms (as the user wrote them) whose stems occur in the text or title."""
    present = stems_of(analyze, title + "\n" + text)
    out = []
    for t in terms:
        stems = _term_stems(analyze, t)
        if stems and all(s in present for s in stems):
            out.append(t)
    return out


def snippet(text: str, terms: Sequence[str], width: int = 240) -> str:
    """A window of `text` around the first occurrence of any term (case-insensitive)."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    lower = flat.lower()
    best = -1
    for t in terms:
        m = re.search(r"\b" + re.escape(t.lower()), lower)
        if m and (best < 0 or m.start() < best):
            best = m.start()
    if best < 0:
        return flat[: width - 1].rstrip() + "…"
    start = max(0, best - width // 3)
    end = min(len(flat), start + width)
    start = max(0, end - width)
    out = flat[start:end].strip()
    return ("…" if start > 0 else "") + out + ("…" if end < len(flat) else "")


# A pasted 10 MB prompt is still a query of a few thousand words.
MAX_QUERY_CHARS = 8192
