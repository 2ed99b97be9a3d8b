"""Reading and writing host config files without losing what the user has.

JSON keeps every existing key in its order (the file is re-indented); a JSON file with
comments (JSONC) is refused rather than rewritten without them. TOML goes through tomlkit,
which keeps comments and layout.
"""

from __future__ import annotations

import json
from typing import Any

import tomlkit

from lore_sidecar.errors import LoreError


def load_json(text: str | None, where: str) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LoreError("configUnreadable", f"{where} is not plain JSON ({exc.msg} at line {exc.lineno}); "
                        "it was left as it is - add lore's entries by hand (see --dry-run on a copy)") from None
    if not isinstance(doc, dict):
        raise LoreError("configUnreadable", f"{where} does not hold a JSON object; it was left as it is")
    return doc


def dump_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def load_toml(text: str | None, where: str) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text or "")
    except Exception as exc:  # tomlkit raises several parse error types
        raise LoreError("configUnreadable", f"{where} is not valid TOML ({exc}); it was left as it is") from None


def dump_toml(doc: tomlkit.TOMLDocument) -> str:
    return tomlkit.dumps(doc)


def table(doc: Any, *keys: str) -> Any:
    """The nested table at `keys`, created (as `[a.b]` headers) where missing."""
    here = doc
    for i, key in enumerate(keys):
        if key not in here:
            here[key] = tomlkit.table(is_super_table=i < len(keys) - 1)
        here = here[key]
    return here


def add_unique(items: list[Any], value: Any) -> list[Any]:
    return items if value in items else [*items, value]


def prune_empty(doc: dict[str, Any], *keys: str) -> None:
    """Drop `keys` (a path) and then each parent that became empty."""
    chain = [doc]
    for key in keys[:-1]:
        nxt = chain[-1].get(key)
        if not isinstance(nxt, dict):
            return
        chain.append(nxt)
    chain[-1].pop(keys[-1], None)
    for parent, key in zip(reversed(chain[:-1]), reversed(keys[:-1]), strict=True):
        if isinstance(parent.get(key), dict) and not parent[key]:
            parent.pop(key)
