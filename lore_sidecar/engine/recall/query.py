"""Query parsing, cue terms and snippets: pure functions over text."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Sequence

from lore_sidecar.words import LATIN, is_cjk, words

# A word of ASCII text: what the text index's analyzer takes from it (lore_sidecar.words; a
# word of any other text is what `words()` gives).
WORD_CHARS = "A-Za-z0-9_"
WORD = re.compile(f"[{WORD_CHARS}]+")

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


def asks_for_words(query: str) -> bool:
    """Whether the query holds a content word (a word that is not a stopword)."""
    return any(w.lower() not in STOPWORDS for w in words(query, query=True))


def query_terms(query: str) -> list[str]:
    """The query's content words, in order, deduplicated, lowercased (folded, outside ASCII;
    CJK text as its character bigrams)."""
    seen: dict[str, None] = {}
    found = [w.lower() for w in words(query, query=True)]
    for lw in found:
        if lw not in STOPWORDS and lw not in seen:
            seen[lw] = None
    if not seen:  # a query of only stopwords still searches for something
        for lw in found:
            seen.setdefault(lw, None)
    return list(seen)


def search_terms(query: str) -> list[str]:
    """What the lexical leg searches for: the content words in order, a word the query
    repeats kept as often as it is said (BM25 then weighs it more), fragments of one
    character ("e.g." -> e, g) dropped (not a CJK character: 猫 is a word)."""
    found = [w.lower() for w in words(query, query=True)]
    kept = [w for w in found if w not in STOPWORDS and (len(w) > 1 or is_cjk(w))]
    return kept or query_terms(query)


IDENTIFIER = re.compile(r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+")


def identifiers(query: str) -> list[str]:
    """The code names the query spells out (`line_numbers`, `parseConfig`, `TranscriptRenderer`),
    as written. Stemmed and split into words they also match their kin (`line_number`,
    `parse`), which can outnumber the one text that holds the name itself."""
    return list(dict.fromkeys(m.group(0) for m in IDENTIFIER.finditer(query) if len(m.group(0)) >= 4))


@functools.lru_cache(maxsize=4096)
def stems_of(analyze: Callable[[str], list[str]], text: str) -> TextStems | frozenset[str]:
    """The stems a text holds (`stem in stems_of(...)`). Remembered per text: the same
    messages, distillations and nodes come back across recalls. Each distinct word is
    analysed once (in ASCII text the analyzer splits on WORD's pattern and lowercases, so the
    set is the same as analysing the whole text; any other text is analysed whole)."""
    if text.isascii():  # lowered whole (one C call, not one per word); only ASCII, where lowering maps words to words
        return TextStems(analyze, text.lower())
    return frozenset(analyze(text))


class TextStems:
    """The stems of an ASCII text, found one initial at a time as they are asked about.

    Trigger: a hit's cues ask whether a few query stems occur in its text. Why: stemming
    every distinct word of a text the first time it is a hit was most of a new recall's
    cost (~0.7 ms of 2.9 at 100k messages), and a stem begins with its word's first
    character (the English stemmer only rewrites a word's ending, from its second character
    on), so only the words sharing a stem's initial can give it. Outcome: the words with
    that initial are stemmed once, on the first question about it; the answer is the one
    stemming the whole text gives."""

    __slots__ = ("_analyze", "_lower", "_by_initial")

    def __init__(self, analyze: Callable[[str], list[str]], lower: str):
        self._analyze = analyze
        self._lower = lower
        self._by_initial: dict[str, frozenset[str]] = {}

    def __contains__(self, stem: str) -> bool:
        initial = stem[:1]
        got = self._by_initial.get(initial)
        if got is None:
            words = set(_words_from(initial).findall(self._lower)) if initial else set()
            got = self._by_initial[initial] = frozenset(self._analyze(" ".join(words)))
        return stem in got


@functools.lru_cache(maxsize=64)
def _words_from(initial: str) -> re.Pattern:
    return re.compile(f"(?<![{WORD_CHARS}])" + re.escape(initial) + f"[{WORD_CHARS}]*")


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
    """A window of `text` around the first occurrence of any term (case-insensitive), its
    whitespace runs shown as single spaces."""
    if len(text) > LONG_TEXT and text.isascii() and terms and all(WORD.fullmatch(t) for t in terms):
        return _snippet_of_long(text, terms, width)
    return _snippet_of_flat(text, terms, width)


# Beyond this a text (a distillation of a long session: 10-130 KB) is not flattened and
# lowered whole to cut 240 characters out of it: only around the first match.
LONG_TEXT = 4096


def _snippet_of_flat(text: str, terms: Sequence[str], width: int) -> str:
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    if not flat.isascii():
        return _window(flat, _first_folded(flat, terms), width)
    lower = flat.lower()
    best = -1
    for t in terms:
        m = re.search(("" if is_cjk(t) else r"\b") + re.escape(t.lower()), lower)
        if m and (best < 0 or m.start() < best):
            best = m.start()
    return _window(flat, best, width)


# Non-ASCII text is searched a piece of about this many characters at a time, and a match is
# mapped back inside a piece of about FOLD_STEP.
FOLD_PIECE = 2048
FOLD_STEP = 128
# Where a text is cut: before a space, a CJK full stop or comma, a hiragana, an ideograph or a
# Hangul syllable (none a combining mark, so decomposing and case-folding the pieces gives the
# pieces of the whole; no term but a CJK one spans such a cut, and a CJK term is 1-2
# characters, so a piece is searched with the character after it).
_CUT = re.compile("[ \u3001\u3002\u3041-\u3096\u4e00-\u9fff\uac00-\ud7a3]")
LATIN_MARKS = "[\u0300-\u036f]*"


def _decomposed(text: str) -> str:
    """`text` as it is searched: compatibility-decomposed and case-folded (Größe -> gro\u0308sse,
    ＡＢＣ -> abc, İ -> i\u0307). Decomposing works a character at a time, so the result of a
    text cut before any non-mark is the results of its pieces, end to end."""
    return unicodedata.normalize("NFKD", text).casefold()


def _cut(text: str, start: int, size: int) -> int:
    """The first cut of `text` at least `size` characters after `start` (or its end)."""
    m = _CUT.search(text, start + size)
    return m.start() if m else len(text)


def _first_folded(flat: str, terms: Sequence[str]) -> int:
    """Where in `flat` (non-ASCII, single-spaced) the first of the terms begins, searching the
    text as the index reads it (lore_sidecar.words: `grosse` in `Größe`, `abc` in `ＡＢＣ`,
    `istanbul` in `İstanbul`), or -1.

    Trigger: a snippet of non-ASCII text. Why: recall's terms are folded words, and folding is
    not length-preserving (ß -> ss), so a position in a folded copy is not one in the text.
    Outcome: the text is decomposed a piece at a time (`_decomposed`; a term's Latin letters
    then match with any accents after them) up to the first piece with a match; the match is
    mapped back to the smaller piece holding it, and inside that to the character whose
    decomposed prefix first reaches past it (a binary search of the prefixes). Costs ~10x a
    search of `text.lower()` (~0.4 ms for 12 KB of German against 0.03 ms), on hits only."""
    pattern = _folded_terms(tuple(terms))
    if pattern is None:
        return -1
    start = 0
    while start < len(flat):
        end = _cut(flat, start, FOLD_PIECE)
        searched = _decomposed(flat[start:end])
        # and the next character: a CJK bigram can span the cut (a match starting past the
        # piece is left to the next piece, which begins there)
        m = pattern.search(searched + _decomposed(flat[end:end + 1]))
        if m and m.start() < len(searched):
            at = m.start()
            while True:  # the step whose decomposition holds position `at`
                step = _cut(flat, start, FOLD_STEP)
                n = len(_decomposed(flat[start:step]))
                if at < n or step >= end:
                    break
                at -= n
                start = step
            piece = flat[start:step]
            lo, hi = 1, len(piece)  # the smallest k whose decomposed piece[:k] reaches past `at`
            while lo < hi:
                mid = (lo + hi) // 2
                if len(_decomposed(piece[:mid])) > at:
                    hi = mid
                else:
                    lo = mid + 1
            return start + lo - 1
        start = end
    return -1


@functools.lru_cache(maxsize=1024)
def _folded_terms(terms: tuple[str, ...]) -> re.Pattern | None:
    """The terms, folded as the index folds words and decomposed as `_decomposed` leaves the
    text, as one pattern whose leftmost match is the earliest of theirs (a CJK term anywhere,
    any other at a word's start; a Latin letter followed by any accents)."""
    alts = {w for t in terms for w in (words(t, query=True) if not t.isascii() else [t.lower()])}
    if not alts:
        return None
    return re.compile("|".join(("" if is_cjk(w) else r"\b") + _pattern_of(w) for w in sorted(alts, key=len, reverse=True)))


def _pattern_of(word: str) -> str:
    return "".join(re.escape(c) + (LATIN_MARKS if LATIN.match(c) else "") for c in _decomposed(word))


def _window(flat: str, best: int, width: int) -> str:
    """`width` characters of `flat` around position `best` (-1: no match: its start)."""
    if len(flat) <= width:
        return flat
    if best < 0:
        return flat[: width - 1].rstrip() + "…"
    start = max(0, best - width // 3)
    end = min(len(flat), start + width)
    start = max(0, end - width)
    out = flat[start:end].strip()
    return ("…" if start > 0 else "") + out + ("…" if end < len(flat) else "")


@functools.lru_cache(maxsize=1024)
def _first_of(terms: tuple[str, ...]) -> re.Pattern:
    return re.compile(r"\b(?:" + "|".join(re.escape(t.lower()) for t in terms) + ")", re.IGNORECASE)


def _snippet_of_long(text: str, terms: Sequence[str], width: int) -> str:
    """What `_snippet_of_flat` gives, flattening only the text around the first match.

    Why it is the same: on ASCII, a case-insensitive search of the raw text finds each term
    where a search of the lowered, flattened text does (collapsing a whitespace run moves
    no word boundary), and the leftmost match of the alternation is the earliest of the
    terms' first matches. Flattening a piece of the text gives a piece of the flattened
    whole; where the piece stops short of the text's end it still holds more than `width`
    flattened characters on that side of the match, so every decision `_window` makes (how
    far to reach, whether more text lies beyond) falls inside it."""
    m = _first_of(tuple(terms)).search(text)
    head, tail = (text[: m.start()], text[m.start():]) if m else ("", text)
    before = _flat_end(head, width + 1, from_end=True)
    after = _flat_end(tail, width + 1, from_end=False)
    gap = " " if before and after and head[-1:].isspace() else ""
    return _window(before + gap + after, len(before) + len(gap) if m else -1, width)


def _flat_end(raw: str, need: int, *, from_end: bool) -> str:
    """At least `need` flattened characters from one end of `raw`, or all of it."""
    span = 2 * need
    while True:
        flat = " ".join((raw[-span:] if from_end else raw[:span]).split())
        if span >= len(raw) or len(flat) >= need:
            return flat
        span *= 4


# A pasted 10 MB prompt is still a query of a few thousand words.
MAX_QUERY_CHARS = 8192
