"""Merging a small block into a YAML file (Hermes' config.yaml) line by line, keeping every
comment, blank line and key order the user has.

Why not a YAML library: PyYAML drops comments and ruamel.yaml would be a runtime dependency
for one file of one host. lore only ever needs `parent: {child: ...}` entries and top-level
scalars in block style, so it edits those lines and leaves the rest byte for byte. What it
cannot edit safely (a parent written in flow style with content, tabs for indentation) is
refused with `configUnreadable`, and the file is left as it is.

An entry is a list of `(depth, text)` lines relative to the child level, e.g.
`[(0, "lore:"), (1, 'command: "/usr/bin/lore-sidecar"')]`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from lore_sidecar.errors import LoreError

EMPTY = ("", "{}", "~", "null")


def scalar(value: Any) -> str:
    """A YAML scalar or flow collection: JSON is valid YAML and quotes whatever needs it."""
    return json.dumps(value, ensure_ascii=False)


def _lines(text: str) -> list[str]:
    if "\t" in "".join(line[: len(line) - len(line.lstrip())] for line in text.splitlines()):
        raise LoreError("configUnreadable", "the YAML file is indented with tabs; it was left as it is")
    return text.splitlines(keepends=True)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


def _key_line(lines: list[str], key: str, indent: int, start: int, end: int) -> int | None:
    pattern = re.compile(rf"^ {{{indent}}}{re.escape(key)}\s*:(\s|$)")
    for i in range(start, end):
        if pattern.match(lines[i]) and _indent(lines[i]) == indent:
            return i
    return None


def _block_end(lines: list[str], i: int) -> int:
    """One past the last line of the block that starts at line i (its more-indented lines),
    not counting blank or comment lines at its end (they belong to what follows)."""
    base = _indent(lines[i])
    last = i
    for j in range(i + 1, len(lines)):
        if _content(lines[j]):
            if _indent(lines[j]) <= base:
                break
            last = j
    return last + 1


def _inline(line: str) -> str:
    """The value written on a `key: value` line (comment removed), '' when none."""
    value = line.split(":", 1)[1]
    value = re.sub(r"\s+#.*$", "", value).strip()
    return value


def _child_indent(lines: list[str], start: int, end: int) -> int:
    for j in range(start, end):
        if _content(lines[j]):
            return _indent(lines[j])
    return 2


def _render(entry: list[tuple[int, str]], indent: int, unit: int) -> list[str]:
    return [" " * (indent + depth * unit) + text + "\n" for depth, text in entry]


def _ensure_newline(lines: list[str]) -> None:
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"


def get(text: str, parent: str, child: str) -> str | None:
    """The inline value of `parent.child` (unquoted), or None when it is not there."""
    lines = _lines(text)
    p = _key_line(lines, parent, 0, 0, len(lines))
    if p is None:
        return None
    end = _block_end(lines, p)
    c = _key_line(lines, child, _child_indent(lines, p + 1, end), p + 1, end)
    if c is None:
        return None
    value = _inline(lines[c])
    return value.strip("'\"") if value not in ("~", "null") else ""


def set_child(text: str, parent: str, child: str, entry: list[tuple[int, str]]) -> str:
    """`parent.child` replaced by (or given) `entry`; everything else kept as it is."""
    lines = _lines(text)
    p = _key_line(lines, parent, 0, 0, len(lines))
    if p is None:
        _ensure_newline(lines)
        return "".join([*lines, f"{parent}:\n", *_render(entry, 2, 2)])
    inline = _inline(lines[p])
    if inline not in EMPTY:
        raise LoreError("configUnreadable", f"`{parent}:` is written inline ({inline[:40]}); write it as a block "
                        "(one entry per line) and run install again - the file was left as it is")
    end = _block_end(lines, p)
    if inline:
        lines[p] = f"{parent}:\n"
    unit = _child_indent(lines, p + 1, end)
    c = _key_line(lines, child, unit, p + 1, end)
    if c is not None:
        return "".join([*lines[:c], *_render(entry, unit, unit), *lines[_block_end(lines, c):]])
    _ensure_newline(lines)
    return "".join([*lines[:end], *_render(entry, unit, unit), *lines[end:]])


def remove_child(text: str, parent: str, child: str) -> str:
    """`parent.child` taken out, and `parent:` too when nothing is left under it."""
    lines = _lines(text)
    p = _key_line(lines, parent, 0, 0, len(lines))
    if p is None:
        return text
    end = _block_end(lines, p)
    c = _key_line(lines, child, _child_indent(lines, p + 1, end), p + 1, end)
    if c is None:
        return text
    lines = [*lines[:c], *lines[_block_end(lines, c):]]
    end = _block_end(lines, p)
    if not any(_content(line) for line in lines[p + 1: end]):
        lines = [*lines[:p], *lines[end:]]
    return "".join(lines)


def set_top(text: str, key: str, value: str) -> str:
    lines = _lines(text)
    k = _key_line(lines, key, 0, 0, len(lines))
    if k is None:
        _ensure_newline(lines)
        return "".join([*lines, f"{key}: {value}\n"])
    lines[k] = f"{key}: {value}\n"
    return "".join(lines)


def remove_top(text: str, key: str, value: str) -> str:
    """A top-level `key: value` line taken out, only when it still says `value`."""
    lines = _lines(text)
    k = _key_line(lines, key, 0, 0, len(lines))
    if k is None or _inline(lines[k]) != value or _block_end(lines, k) != k + 1:
        return text
    return "".join([*lines[:k], *lines[k + 1:]])


def top(text: str, key: str) -> str | None:
    lines = _lines(text)
    k = _key_line(lines, key, 0, 0, len(lines))
    return None if k is None else _inline(lines[k])
