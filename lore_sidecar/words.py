"""What a word is, in any language: the one analysis the text index stores and the recall
query asks with. Pure; `store/` (the index) and `engine/` (query terms, cues) both use it,
so the two sides cannot drift apart.

- ASCII text: runs of [A-Za-z0-9_] (a byte table; most workspace text takes this path).
- Other text: NFKC (full-width ＡＢＣ and half-width ｶﾅ become their usual forms), Unicode
  case folding (`Straße` and `STRASSE` are one word: strasse), Latin letters lose their
  accents (`canción` = `cancion`, `Größe` = `grosse`; a combining accent left after a Latin
  letter goes too, as the dot of Turkish `İ` that case folding gives: `İstanbul` = `istanbul`),
  and a word is a run of letters, digits, marks or `_` in any script.
- Chinese, Japanese and Korean runs, and Thai, Lao, Khmer and Myanmar ones (written without
  spaces between words too), are indexed as
  their characters and their overlapping character bigrams (東京都 -> 東 京 都 東京 京都), the
  usual practice for BM25 without a dictionary: a two-character word inside a sentence is
  found by itself, and so is a one-character word (猫). A query asks for its runs' bigrams
  only (see `words`). Measured on XPersona (docs/benchmarks.md): asking for the characters
  too ranked better (MRR Jp 0.727 vs 0.697, Zh 0.769 vs 0.696) but made a query of words
  no message holds find every message sharing a particle with it (大阪の寿司 -> の).

The index's analyzer then lowercases (a no-op here), drops terms over 64 bytes and applies
the English stemmer, which only rewrites English suffixes and leaves other scripts alone.
"""

from __future__ import annotations

import re
import unicodedata

# Every byte of ASCII text that is not a word character ([A-Za-z0-9_]) becomes a space.
ASCII_WORD_BYTES = bytes(b if b < 128 and (chr(b).isalnum() or b == 95) else 32 for b in range(256))

# Scripts written without spaces between words (and Korean, whose spaced words carry their
# particles: 학교에 "at school" holds 학교 "school"): Thai, Lao, Myanmar, Hangul jamo, Khmer,
# CJK symbols 々〆〇, kana, compatibility jamo, CJK extension A, unified ideographs, Hangul
# syllables, compatibility ideographs, and the supplementary ideograph planes. Thai, Lao,
# Khmer and Myanmar vowel signs are code points of their own: a bigram may hold one, in the
# index and in the query alike.
_CJK = (
    "\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3005-\u3007\u3040-\u30ff\u3131-\u318e"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
)
CJK = _CJK  # the ranges, for a regex character class (compound.py cuts names at them)
_PIECES = re.compile(f"[{_CJK}]+|[^\\s{_CJK}]+")
_HAS_CJK = re.compile(f"[{_CJK}]")


def _latin_base(ch: str) -> str:
    """A Latin letter without its accents (é -> e, ǿ -> ø, ǣ -> æ); any other character
    unchanged. A letter Unicode does not decompose keeps its form: ø, æ, œ, ł and đ are
    letters of their own, not o, ae, oe, l or d with an accent, so `ø` is not `o` here."""
    cp = ord(ch)
    if not (0xC0 <= cp < 0x250 or 0x1E00 <= cp < 0x1F00):
        return ch
    base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
    return base if base.isalpha() else ch


class _Fold(dict):
    """str.translate table, filled a character at a time: a word character becomes its
    accent-free form, anything else a space; a combining accent (U+0300-U+036F) is marked
    with a NUL before it (no other NUL is left), for `fold` to find in one fast scan."""

    def __missing__(self, cp: int) -> str:
        ch = chr(cp)
        if 0x300 <= cp < 0x370:
            out = "\x00" + ch
        elif ch.isalnum() or ch == "_" or unicodedata.category(ch)[0] == "M":
            out = _latin_base(ch)
        else:
            out = " "
        self[cp] = out
        return out


_FOLD = _Fold()
# Combining accents (U+0300-U+036F) after a Latin letter, which NFKC found no precomposed
# letter for: `İ` case-folds to i + U+0307 (dot above), `x̄` stays x + U+0304.
_MARKS = re.compile("(?:\x00[\u0300-\u036f])+")
# A Latin letter (ASCII, Latin-1 Supplement to Latin Extended-B, Latin Extended Additional)
# after folding; the recall snippet search reads it too (engine/recall/query.py).
LATIN = re.compile("[a-z\u00c0-\u024f\u1e00-\u1eff]")


def _drop_latin_marks(folded: str) -> str:
    """The accents (each after its NUL) dropped after a Latin letter, kept (without the NULs)
    after anything else."""
    return _MARKS.sub(lambda m: "" if m.start() and LATIN.match(folded, m.start() - 1)
                      else m.group().replace("\x00", ""), folded)


def fold(text: str) -> str:
    """Non-ASCII text as `words` reads it before cutting: NFKC, case-folded, Latin letters
    without their accents, every character other than a word character a space. Not
    length-preserving (ß -> ss, ｶﾞ -> ガ): a caller that needs offsets maps them back itself."""
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_FOLD)
    if "\x00" not in folded:
        return folded
    folded = folded.replace("i\x00\u0307", "i")  # İ, the common case, at C speed
    return _drop_latin_marks(folded) if "\x00" in folded else folded


def _grams(run: str, query: bool) -> list[str]:
    """A CJK run's characters (not in a query), then its overlapping bigrams."""
    if len(run) == 1:
        return [run]
    bigrams = [run[i : i + 2] for i in range(len(run) - 1)]
    return bigrams if query else [*run, *bigrams]


def words(text: str, *, query: bool = False) -> list[str]:
    """The words of `text`, in order, as the index holds them before stemming (ASCII words
    keep their case here; the analyzer lowercases them). `query`: as a query asks for them:
    a CJK run of two or more characters by its bigrams only. Why: a lone character the
    index also holds (の, 的, 는) is in nearly every text of its language, and a loose query
    for it finds them all; the query's own one-character words still ask for themselves,
    and a query term is the same under both (idempotent: 大阪 -> 大阪, 猫 -> 猫)."""
    if text.isascii():
        return text.encode("ascii").translate(ASCII_WORD_BYTES).decode("ascii").split()
    folded = fold(text)
    if not _HAS_CJK.search(folded):
        return folded.split()
    out: list[str] = []
    for piece in _PIECES.findall(folded):
        out += _grams(piece, query) if _HAS_CJK.match(piece) else [piece]
    return out


def words_only(text: str, *, query: bool = False) -> str:
    """`text` as the index is given it: its words separated by spaces, so Tantivy's
    whitespace tokenizer finds exactly `words(text)`. Trigger: every field of every
    document indexed. Why: Tantivy's regex tokenizer costs ~4x its whitespace tokenizer
    (0.38 vs 0.09 s for 8 MB of source), and ASCII text (most of a workspace) needs only a
    byte table (offsets kept, no split). Outcome: ASCII is blanked byte for byte; other
    text is folded and cut in Python."""
    if text.isascii():
        return text.encode("ascii").translate(ASCII_WORD_BYTES).decode("ascii")
    return " ".join(words(text, query=query))


def is_cjk(word: str) -> bool:
    """Whether a word is (a piece of) a run of a script without spaces (CJK, Thai, ...): one
    character can be a word."""
    return _HAS_CJK.match(word) is not None
