"""Split a file's text into retrievable chunks. Pure.

Markdown by headings, code by top-level definitions, anything else by line windows. Long
sections are windowed so no chunk is too long to embed or read in one glance.
"""

from __future__ import annotations

import re

from lore_sidecar.filetypes import CODE_EXT, MARKDOWN_EXT
from lore_sidecar.model import Chunk

MAX_LINES = 80
WINDOW = 60
OVERLAP = 10
MIN_LINES = 4

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_DEFINITION = re.compile(
    r"^(?:export\s+(?:default\s+)?)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?"
    r"(?:def|class|function\*?|fn|func|impl|struct|enum|trait|interface|type|module|"
    r"local\s+function|defmodule|defn|const|let|var)\s+([A-Za-z_$][\w$]*)"
)
# `func (r *Recv) Name(` in Go: the receiver comes before the name.
_GO_METHOD = re.compile(r"^func\s+\([^)]*\)\s+([A-Za-z_]\w*)")


def chunk_file(path: str, text: str) -> list[Chunk]:
    lines = text.splitlines()
    if not lines:
        return []
    dot = path.rfind(".")
    ext = path[dot:].lower() if dot >= 0 else ""
    if ext in MARKDOWN_EXT:
        sections = _markdown_sections(lines)
    elif ext in CODE_EXT:
        sections = _code_sections(lines)
    else:
        sections = [(0, len(lines), "window", "")]
    out: list[Chunk] = []
    for start, end, kind, title in _merge_small(sections):
        for s, e in _windows(start, end):
            body = "\n".join(lines[s:e]).strip()
            if body:
                out.append(Chunk(s + 1, e, kind, title, body))
    return out


def _markdown_sections(lines: list[str]) -> list[tuple[int, int, str, str]]:
    starts: list[tuple[int, str]] = []
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        m = None if fenced else _HEADING.match(line)
        if m:
            starts.append((i, m.group(2)))
    if not starts or starts[0][0] != 0:
        starts.insert(0, (0, ""))
    return [
        (s, starts[j + 1][0] if j + 1 < len(starts) else len(lines), "heading" if t else "window", t)
        for j, (s, t) in enumerate(starts)
    ]


def _code_sections(lines: list[str]) -> list[tuple[int, int, str, str]]:
    starts: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        if not line or line[0].isspace():
            continue
        m = _GO_METHOD.match(line) or _DEFINITION.match(line)
        if m:
            # Attach decorators / doc comments directly above the definition.
            j = i
            while j > 0 and lines[j - 1].lstrip().startswith(("@", "#[", "///", "//", "/**", " *")):
                j -= 1
            starts.append((j, m.group(1)))
    if not starts or starts[0][0] != 0:
        starts.insert(0, (0, ""))
    return [
        (s, starts[j + 1][0] if j + 1 < len(starts) else len(lines), "definition" if t else "window", t)
        for j, (s, t) in enumerate(starts)
        if (starts[j + 1][0] if j + 1 < len(starts) else len(lines)) > s
    ]


def _merge_small(sections: list[tuple[int, int, str, str]]) -> list[tuple[int, int, str, str]]:
    """Fold a section shorter than MIN_LINES into the one after it (e.g. a lone import)."""
    out: list[tuple[int, int, str, str]] = []
    carry: int | None = None
    for start, end, kind, title in sections:
        if carry is not None:
            start, carry = carry, None
        if end - start < MIN_LINES and not title:
            carry = start
            continue
        out.append((start, end, kind, title))
    if carry is not None:
        if out:
            s, _, k, t = out[-1]
            out[-1] = (s, sections[-1][1], k, t)
        else:
            out.append((carry, sections[-1][1], "window", ""))
    return out


def _windows(start: int, end: int) -> list[tuple[int, int]]:
    if end - start <= MAX_LINES:
        return [(start, end)]
    spans = []
    s = start
    while s < end:
        e = min(end, s + WINDOW)
        spans.append((s, e))
        if e == end:
            break
        s = e - OVERLAP
    return spans
