"""Compound names cut into their parts: `dates_in_range` -> dates in range, `HTTPServer` ->
HTTP Server. Pure; the text index's `parts` field holds them, and a scan's worker processes
compute them for the files they prepare (the text leg then only reads them).

Every word character here is ASCII [A-Za-z0-9_], as the text index's analyzer has it. In
other text a name ends where a CJK character begins, as a word does (lore_sidecar.words):
`設定はparse_configで読む` holds `parse_config`, so `config` finds it.
"""

from __future__ import annotations

import re

from lore_sidecar.words import ASCII_WORD_BYTES, CJK

# A compound identifier the other fields keep whole (their tokens are [A-Za-z0-9_]+, so
# dotted.names and kebab-case are split there already): snake_case, camelCase, PascalCase,
# and names with leading underscores.
_COMPOUND = re.compile(
    r"\b_*[A-Za-z0-9]*(?:[A-Za-z0-9]_[A-Za-z0-9]|[a-z][A-Z]|[A-Z]{2}[a-z])[A-Za-z0-9_]*"
    r"|\b_+[A-Za-z0-9][A-Za-z0-9_]*"  # _private, __init__: the word without its underscores
)
# Its parts: "HTTPServer" -> HTTP, Server; "dates_in_range" -> dates, in, range.
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def compound_parts(text: str) -> str:
    """The pieces of the compound identifiers in `text`, for the `parts` field: a query for
    "range" then finds `dates_in_range`, while the whole token still matches in the others.
    CJK characters are cut out first: for `\\b` they are word characters, so a name glued to
    them (`はparse_configで`) would begin at no word boundary."""
    if not text.isascii():
        text = _CJK_RUN.sub(" ", text)
    return " ".join(p for m in _COMPOUND.finditer(text) for p in _PART.findall(m.group(0)) if len(p) > 1)


# Every byte of ASCII text that is not a word character ([A-Za-z0-9_]) becomes a space: the
# text index's table (lore_sidecar.words), so the two cut ASCII text alike.
WORD_BYTES = ASCII_WORD_BYTES
_RUN = re.compile(f"[^\\W{CJK}]+")  # a run of word characters, none of them CJK
_CJK_RUN = re.compile(f"[{CJK}]+")
PARTS_CACHE_WORDS = 1 << 16  # distinct words remembered (~6 MB at most); then forgotten at once


class CompoundParts:
    """compound_parts(text), a word at a time: the same string, ~3x faster on source files.

    Trigger: every document indexed (the regex cost ~60 ns a character, half the text leg's
    time on a workspace). Why it is the same: a match of `_COMPOUND` holds only word
    characters and begins at a word boundary, so no match spans two runs of word characters
    and each run is matched alone exactly as inside the text (at its start the boundary holds
    either way, inside it none does; CJK characters end a run, as `compound_parts` blanks them).
    Outcome: the text is cut into its runs (in ASCII text by a byte table and split, else by
    `_RUN`: word characters other than CJK), each distinct run is split once and remembered,
    and the runs' parts are joined in order."""

    def __init__(self) -> None:
        self._words: dict[bytes | str, str] = {}

    def __call__(self, text: str) -> str:
        runs = text.encode("ascii").translate(WORD_BYTES).split() if text.isascii() else _RUN.findall(text)
        words = self._words
        if len(words) > PARTS_CACHE_WORDS:
            words.clear()
        for run in set(runs).difference(words):
            words[run] = compound_parts(run.decode("ascii") if isinstance(run, bytes) else run)
        return " ".join(filter(None, map(words.get, runs)))

    def of(self, title: str, body: str) -> str:
        """A document's `parts` field: the parts of the names in its title and body."""
        return self(f"{title} {body}")
