"""Knowledge-node rules: URIs, fields, the priority budget, disclosure checks. Pure.

A node is one piece of curated memory addressed by a URI (`project://<project>/<path>`,
`preferences://user`, any `<scheme>://<authority>/<path>` that is not one of the recall
schemes). Its *domain* is the scheme and authority: what `lore/listDomains` groups by.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lore_sidecar.engine.capture.redact import redact
from lore_sidecar.errors import LoreError, outside_workspace
from lore_sidecar.words import words

CATEGORIES = ("decision", "pattern", "preference", "architecture", "gotcha")
SCOPES = ("project", "global")
DEFAULT_PRIORITY = 2
# At most this many live nodes per priority in one scope (a project, or global). Priority 0
# and 1 nodes are injected at every session start: the budget keeps that block small.
PRIORITY_BUDGET = {0: 5, 1: 15}
# Schemes recall hits use; a node may not take them.
RESERVED_SCHEMES = ("session", "distillation", "fact", "file", "entity", "http", "https")
_URI = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<authority>[^/\s?#]+)(?P<path>(?:/[^\s?#]*)?)$")
_SITUATION = re.compile(r"\b(?:when|whenever|if|before|after|while|during|unless)\b", re.I)


def parse_uri(uri: str) -> tuple[str, str]:
    """(scheme, domain) of a node URI, or an `invalidUri` refusal saying what is wrong."""
    m = _URI.match(uri or "")
    if not m:
        raise LoreError("invalidUri", f"a node URI looks like project://<project>/<path> or preferences://user; got {uri!r}", uri=uri)
    scheme = m.group("scheme")
    if scheme in RESERVED_SCHEMES:
        raise LoreError("invalidUri", f"{scheme}:// addresses recall hits, not knowledge nodes", uri=uri)
    path = m.group("path")
    if scheme == "project" and (not path.strip("/") or "//" in path):
        raise LoreError("invalidUri", f"a project node needs a path after the project: project://<project>/<path>; got {uri!r}", uri=uri)
    if any(seg in (".", "..") for seg in path.split("/")):
        raise LoreError("invalidUri", f"a node URI may not contain . or .. segments: {uri!r}", uri=uri)
    return scheme, f"{scheme}://{m.group('authority')}"


def default_scope(scheme: str) -> str:
    return "project" if scheme == "project" else "global"


def check_fields(*, category: str | None, priority: int | None, scope: str | None) -> None:
    if category is not None and category not in CATEGORIES:
        raise LoreError("invalidNode", f"category must be one of {', '.join(CATEGORIES)}; got {category!r}")
    if priority is not None and not (isinstance(priority, int) and 0 <= priority <= 4):
        raise LoreError("invalidNode", f"priority must be 0..4; got {priority!r}")
    if scope is not None and scope not in SCOPES:
        raise LoreError("invalidNode", f"scope must be project or global; got {scope!r}")


def check_content(content: str) -> str:
    if not isinstance(content, str) or not content.strip():
        raise LoreError("invalidNode", "a node's content must not be empty")
    return redact(content.strip())  # every write path (client, curator, import) passes here


def budget_refusal(priority: int, live_at_priority: int, scope_label: str) -> LoreError | None:
    """The refusal when one more node at `priority` would exceed the budget, else None."""
    cap = PRIORITY_BUDGET.get(priority)
    if cap is None or live_at_priority < cap:
        return None
    return LoreError(
        "priorityBudget",
        f"{scope_label} already has {live_at_priority} priority-{priority} nodes (the budget is {cap}); "
        f"lower this node's priority or demote one of the others",
        priority=priority,
        budget=cap,
    )


def disclosure_warnings(disclosure: str | None) -> list[str]:
    """A disclosure says *when* to surface a node. One that strings two situations together
    ("when editing X and when deploying Y") surfaces it in both and is usually two nodes."""
    if not disclosure:
        return []
    situations = len(_SITUATION.findall(disclosure))
    if situations >= 2 or (situations and re.search(r";|\band also\b", disclosure)):
        return [f"the disclosure strings {max(situations, 2)} situations together; consider one node per situation"]
    return []


def normalise_sources(sources: Iterable[Mapping[str, Any]] | None) -> list[dict[str, str | None]]:
    out: list[dict[str, str | None]] = []
    for i, src in enumerate(sources or []):
        path = src.get("path") if isinstance(src, Mapping) else None
        if not isinstance(path, str) or not path.strip():
            raise LoreError("invalidNode", f"sources[{i}] needs a path", index=i)
        sha = src.get("sha256")
        if sha is not None and not re.fullmatch(r"[0-9a-f]{64}", str(sha)):
            raise LoreError("invalidNode", f"sources[{i}].sha256 must be 64 lowercase hex digits", index=i)
        out.append({"path": path.strip(), "sha256": sha})
    out.sort(key=lambda s: s["path"] or "")
    return out


def similarity(a: str, b: str) -> float:
    """Word-set Jaccard: how the curator tells a restatement from new knowledge (words of any
    language, as the text index cuts them: CJK text by its characters and bigrams)."""
    wa, wb = {w.lower() for w in words(a)}, {w.lower() for w in words(b)}
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def snapshot(row: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a history entry keeps (everything a reader needs to see what changed)."""
    return {
        k: row[k]
        for k in ("uri", "scope", "content", "category", "priority", "disclosure", "expires_at", "suppressed", "sources")
    }


NODE_TEXT_FIELDS = ("content", "disclosure", "title", "reason")


def redacted_node_args(args: dict[str, Any]) -> dict[str, Any]:
    """A node operation's free text with secrets redacted, before it is checked or spooled."""
    out = {k: redact(v) if k in NODE_TEXT_FIELDS and isinstance(v, str) else v for k, v in args.items()}
    if isinstance(out.get("changes"), dict):
        out["changes"] = redacted_node_args(out["changes"])
    return out


def relative_sources(root: str, args: dict[str, Any]) -> dict[str, Any]:
    """Source paths as a node records them: relative to the project root (createNode and
    retain carry `sources`, updateNode carries them in `changes`). A source is a file of the
    project - its hash is what demotes the node when the file changes - so a path that
    resolves outside the root (`..`, an absolute path elsewhere, a symlink out) is refused."""
    base = Path(root).resolve()

    def rel(path: Any) -> Any:
        if not isinstance(path, str) or not path.strip():
            return path  # normalise_sources names the problem
        where = (base / path.strip()).resolve()
        try:
            return where.relative_to(base).as_posix()
        except ValueError:
            raise outside_workspace(path) from None

    out = dict(args)
    for holder in (out, out.get("changes") if isinstance(out.get("changes"), dict) else {}):
        if isinstance(holder.get("sources"), list):
            holder["sources"] = [{**s, "path": rel(s.get("path"))} if isinstance(s, dict) else s for s in holder["sources"]]
    return out
