"""`.lore.md`: a project's knowledge as reviewable markdown that travels with the code. Pure.

Stable by construction: nodes sorted by URI, fields in a fixed order, one JSON line of
metadata per node, so a diff shows exactly the knowledge that changed. People may edit the
content under a node's heading; the metadata line is what the importer reads to know which
node it is.

    ## project://shop/decisions/payments
    <!-- lore {"category":"decision","priority":1,"scope":"project",...} -->
    We use Stripe for payments because ...
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

HEADER = (
    "# Project knowledge\n\n"
    "<!-- Written by `lore-sidecar export`; imported by lore-sidecar when it changes (e.g. after a\n"
    "     git pull). Edit the text under a heading freely; keep each `<!-- lore ... -->` line. -->\n"
)
FIELDS = ("category", "priority", "scope", "disclosure", "expiresAt", "sources", "suppressed")
_NODE = re.compile(r"^## (?P<uri>\S+)\n<!-- lore (?P<meta>\{.*\}) -->\n", re.M)


def render(nodes: Iterable[Mapping[str, Any]]) -> str:
    parts = [HEADER]
    for n in sorted(nodes, key=lambda n: n["uri"]):
        meta = {k: n.get(k) for k in FIELDS if n.get(k) is not None and n.get(k) != [] and n.get(k) != ""}
        if not meta.get("suppressed"):
            meta.pop("suppressed", None)  # written only when true: an ordinary node's line stays short
        body = n["content"].strip().replace("\n## ", "\n\\## ").replace("\n<!-- lore ", "\n\\<!-- lore ")
        parts.append(f"\n## {n['uri']}\n<!-- lore {json.dumps(meta, sort_keys=True, ensure_ascii=False)} -->\n{body}\n")
    return "".join(parts)


def parse(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """(nodes, problems). A node whose metadata line is broken is reported, not guessed."""
    nodes: list[dict[str, Any]] = []
    problems: list[str] = []
    matches = list(_NODE.finditer(text))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        body = text[m.end() : end].strip("\n")
        body = body.replace("\n\\## ", "\n## ").replace("\n\\<!-- lore ", "\n<!-- lore ")
        try:
            meta = json.loads(m.group("meta"))
        except ValueError as exc:
            problems.append(f"{m.group('uri')}: unreadable metadata ({exc})")
            continue
        if not isinstance(meta, dict) or not body.strip():
            problems.append(f"{m.group('uri')}: {'no content' if isinstance(meta, dict) else 'metadata is not an object'}")
            continue
        node = {"uri": m.group("uri"), "content": body.strip(), **{k: meta.get(k) for k in FIELDS}}
        node["suppressed"] = bool(node["suppressed"])  # absent: an ordinary, surfaced node
        nodes.append(node)
    return nodes, problems
