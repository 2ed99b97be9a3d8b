"""Entities by rule: file paths, symbols and service names, with the aliases people use for
them, and the relations a sentence states between two of them. Pure.

The LLM distiller names entities too (its ENTITIES: section); these rules run always, so a
store without a key still learns that `db.py` is `lore_sidecar/store/db.py` and that
`WriterLock` is `writer_lock`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from lore_sidecar.engine.memory.distill import PATH

_CAMEL = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b")
_CALL = re.compile(r"\b([a-z_][a-z0-9_]{2,}(?:\.[a-z_][a-z0-9_]*)*)\(\)")
_SNAKE = re.compile(r"`([a-z_][a-z0-9]*(?:_[a-z0-9]+)+)`")
_SERVICE = re.compile(r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+)*-(?:service|server|api|worker|gateway|queue|db)\b")
_RELATION = re.compile(r"\b(uses|depends on|imports|calls|replaces|replaced|wraps|reads|writes)\b", re.I)
KINDS = ("file", "symbol", "service", "tool", "library", "concept")


@dataclass
class Entity:
    name: str
    kind: str
    aliases: set[str] = field(default_factory=set)


def camel_to_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def snake_to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def canonical_path(raw: str) -> str:
    path = re.sub(r":\d+$", "", raw)
    while path.startswith("./"):
        path = path[2:]
    return path


def path_aliases(path: str) -> set[str]:
    base = path.rsplit("/", 1)[-1]
    out = {base} if base != path else set()
    if path.endswith(".py") and "/" in path:
        out.add(path[:-3].replace("/", "."))
    return out


def extract(text: str) -> dict[str, Entity]:
    """Entities named in `text`, keyed by canonical name."""
    found: dict[str, Entity] = {}

    def add(name: str, kind: str, aliases: Iterable[str] = ()) -> None:
        e = found.setdefault(name, Entity(name, kind))
        e.aliases |= {a for a in aliases if a and a != name}

    for m in PATH.finditer(text):
        path = canonical_path(m.group(0))
        if "://" in path or len(path) > 300:
            continue
        add(path, "file", path_aliases(path))
    for m in _CAMEL.finditer(text):
        add(m.group(0), "symbol", [camel_to_snake(m.group(0))])
    for m in _CALL.finditer(text):
        name = m.group(1)
        last = name.rsplit(".", 1)[-1]
        add(name, "symbol", [last, snake_to_camel(last)] if "_" in last or last != name else [])
    for m in _SNAKE.finditer(text):
        add(m.group(1), "symbol", [snake_to_camel(m.group(1))])
    for m in _SERVICE.finditer(text):
        add(m.group(0), "service")
    return found


def relations(text: str, known: Iterable[str]) -> list[tuple[str, str, str]]:
    """(subject, relation, object) where one line says `<entity> uses <entity>` and alike."""
    names = sorted(set(known), key=len, reverse=True)
    out: list[tuple[str, str, str]] = []
    for line in text.splitlines():
        for m in _RELATION.finditer(line):
            before, after = line[: m.start()], line[m.end():]
            subj = next((n for n in names if before.rstrip().endswith(n)), None)
            obj = next((n for n in names if after.lstrip().startswith(n)), None)
            if subj and obj and subj != obj:
                out.append((subj, m.group(1).lower(), obj))
    return out


def merge_llm(found: dict[str, Entity], named: Iterable[tuple[str, str, list[str]]]) -> dict[str, Entity]:
    """Add the entities the LLM named; an LLM alias of a rule-found entity joins it."""
    for name, kind, aliases in named:
        name = canonical_path(name) if kind == "file" else name
        e = found.setdefault(name, Entity(name, kind if kind in KINDS else "concept"))
        e.aliases |= {a for a in aliases if a != name}
    return found
