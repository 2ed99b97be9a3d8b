"""Facts a workspace note states: `key:: value` lines, `- [key] value` items and
frontmatter fields. Only valid time may be stated in a note; record time and source never
come from note content (DESIGN §2.6). Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lore_sidecar.engine.facts.rules import norm_key, parse_line, ts
from lore_sidecar.errors import LoreError


@dataclass(frozen=True, slots=True)
class NoteFact:
    subject: str
    predicate: str
    object: str
    valid_from: str | None
    valid_until: str | None
    line: int  # 1-based


_FIELD = re.compile(r"^\s*(?:[-*]\s+)?([A-Za-z][\w \-]{0,40}?)::\s+(\S.*?)\s*$")
_BRACKET = re.compile(r"^\s*[-*]\s+\[([A-Za-z][\w \-]{0,40})\]\s+(\S.*?)\s*$")
_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
SKIP_FRONTMATTER = {"title", "date", "created", "updated", "modified"}
# Attributes content may state about valid time; never who stated it or when it was learnt.
NOTE_ATTRS = ("valid_from", "valid_until")


def _frontmatter(lines: list[str]) -> tuple[dict[str, list[tuple[str, int]]], int]:
    """A small YAML subset: `key: value`, `key: [a, b]`, and `key:` followed by `- item`s."""
    if not lines or lines[0].strip() != "---":
        return {}, 0
    out: dict[str, list[tuple[str, int]]] = {}
    current: str | None = None
    for i in range(1, len(lines)):
        raw = lines[i]
        if raw.strip() in ("---", "..."):
            return out, i + 1
        item = re.match(r"^\s+-\s+(.*\S)\s*$", raw)
        if item and current:
            out.setdefault(current, []).append((_yaml_scalar(item.group(1)), i + 1))
            continue
        m = re.match(r"^([A-Za-z_][\w\-]*)\s*:\s*(.*?)\s*$", raw)
        if not m:
            current = None
            continue
        current, value = m.group(1), m.group(2)
        if value.startswith("[") and value.endswith("]"):
            out[current] = [(_yaml_scalar(v), i + 1) for v in value[1:-1].split(",") if v.strip()]
        elif value:
            out[current] = [(_yaml_scalar(value), i + 1)]
    return {}, 0  # no closing fence: not frontmatter


def _yaml_scalar(v: str) -> str:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    return v


def _valid_time(value: str | None, name: str) -> str | None:
    if not value:
        return None
    try:
        return ts(value, field_name=name)
    except LoreError:
        return None  # a note is not an API call: an unreadable date is simply not used


def extract_note_facts(text: str, stem: str) -> list[NoteFact]:
    """Facts stated in a markdown note: `- [fact] S :: p :: O` lines, frontmatter fields,
    `key:: value` inline fields and `- [key] value` items. Only valid time may come from
    the note (its attributes, else its frontmatter date)."""
    lines = text.splitlines()
    front, body_start = _frontmatter(lines)
    title = next((v for v, _ in front.get("title", [])), None)
    if title is None:
        for raw in lines[body_start:]:
            m = _H1.match(raw)
            if m:
                title = m.group(1)
                break
    subject = (title or stem).strip()
    note_date = _valid_time(next((v for v, _ in front.get("date", [])), None), "date")
    out: list[NoteFact] = []
    if norm_key(subject):
        for key, values in front.items():
            if key.lower() in SKIP_FRONTMATTER or not norm_key(key):
                continue
            for value, line in values:
                if value and norm_key(value):
                    out.append(NoteFact(subject, key, value, note_date, None, line))
    fenced = False
    for i in range(body_start, len(lines)):
        raw = lines[i]
        if _FENCE.match(raw):
            fenced = not fenced
            continue
        if fenced:
            continue
        parsed = parse_line(raw)
        if parsed is not None:
            if parsed.kind == "fact" and norm_key(parsed.subject) and norm_key(parsed.predicate) and norm_key(parsed.object or ""):
                vf = _valid_time(parsed.attrs.get("valid_from"), "valid_from") or note_date
                vu = _valid_time(parsed.attrs.get("valid_until"), "valid_until")
                if vu is None or vf is None or vu > vf:
                    out.append(NoteFact(parsed.subject, parsed.predicate, parsed.object or "", vf, vu, i + 1))
            continue
        m = _BRACKET.match(raw)
        if m and m.group(1).strip().lower() not in ("x", "fact", "invalidate"):
            key, value = m.group(1).strip(), m.group(2)
        else:
            m = _FIELD.match(raw)
            if not m or " :: " in raw:
                continue
            key, value = m.group(1).strip(), m.group(2)
        if norm_key(subject) and norm_key(key) and norm_key(value):
            out.append(NoteFact(subject, key, value, note_date, None, i + 1))
    return out
