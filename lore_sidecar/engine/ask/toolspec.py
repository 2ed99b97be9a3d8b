"""The tools as the model sees them (names, descriptions, JSON schemas) and one dispatch that
runs a call and turns its result — or its refusal — into the text the model reads.

A refusal is an answer, not an exception: the model reads "refused: …" and goes on. Every
result is redacted (a `.env` the model opens reaches it as `[REDACTED:…]`) and cut to
`RESULT_CHARS`, so one call cannot flood the window. `remember` is the one tool that keeps
something: a fact for the ledger, with the sha256 of the files it cites, hashed now.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lore_sidecar.engine.ask.tools import Tools
from lore_sidecar.engine.capture.redact import redact
from lore_sidecar.errors import LoreError

RESULT_CHARS = 12_000

_PATH = {"type": "string", "description": "A path relative to the project root."}
SPECS: list[dict[str, Any]] = [
    {"name": "Read", "description": "Read a text file of the project, with line numbers.",
     "input_schema": {"type": "object", "required": ["path"], "properties": {
         "path": _PATH, "offset": {"type": "integer", "description": "First line to read, from 0."},
         "limit": {"type": "integer", "description": "How many lines (at most 2000)."}}}},
    {"name": "Grep", "description": "Search the project's files with an extended regular expression.",
     "input_schema": {"type": "object", "required": ["pattern"], "properties": {
         "pattern": {"type": "string"}, "glob": {"type": "string", "description": "Only files matching it, e.g. *.py"},
         "context": {"type": "integer", "description": "Lines of context around each match (0-5)."}}}},
    {"name": "Glob", "description": "List the project's files whose path or name matches a glob.",
     "input_schema": {"type": "object", "required": ["pattern"], "properties": {"pattern": {"type": "string"}}}},
    {"name": "find_paths", "description": "The folder tree under a path, to a small depth.",
     "input_schema": {"type": "object", "properties": {"path": _PATH, "depth": {"type": "integer"}}}},
    {"name": "get_changed_files", "description": "Files changed in the working tree (git status).",
     "input_schema": {"type": "object", "properties": {}}},
    {"name": "git_search", "description": "Commits whose message matches the query, optionally only those "
                                          "touching a path, optionally with their patches.",
     "input_schema": {"type": "object", "required": ["query"], "properties": {
         "query": {"type": "string"}, "path": _PATH, "patch": {"type": "boolean"}, "limit": {"type": "integer"}}}},
    {"name": "remember", "description": "Record a durable fact about this codebase for later questions, citing "
                                        "the files it comes from (it is marked stale when they change).",
     "input_schema": {"type": "object", "required": ["fact", "paths"], "properties": {
         "fact": {"type": "string", "description": "One self-contained sentence."},
         "paths": {"type": "array", "items": {"type": "string"}, "description": "The files it comes from."}}}},
]
NAMES = {s["name"] for s in SPECS}


@dataclass
class Result:
    text: str
    refused: bool = False
    read: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (sha256, "a-b" lines)
    fact: tuple[str, dict[str, str]] | None = None  # remember: (text, {path: sha256})


def call(tools: Tools, name: str, args: Any) -> Result:
    if not isinstance(args, dict):
        return Result("refused: the arguments must be an object", refused=True)
    try:
        return _run(tools, name, args)
    except LoreError as exc:
        return Result(f"refused ({exc.kind}): {exc.message}", refused=True)
    except (TypeError, ValueError) as exc:  # wrong argument names or types
        return Result(f"refused: bad arguments for {name}: {exc}", refused=True)


def _run(tools: Tools, name: str, a: dict[str, Any]) -> Result:
    if name == "Read":
        r = tools.read(str(a["path"]), int(a.get("offset") or 0), int(a.get("limit") or 2000))
        start = r["startLine"]
        body = "\n".join(f"{start + i:>5}\t{line}" for i, line in enumerate(r["lines"]))
        more = f"\n[{r['total']} lines in all; read more with offset]" if r["truncated"] else ""
        lines = f"{start}-{start + max(0, len(r['lines']) - 1)}"
        return Result(_cut(f"{r['path']} (sha256 {r['sha256'][:12]})\n{body}{more}"), read={r["path"]: (r["sha256"], lines)})
    if name == "Grep":
        r = tools.grep(str(a["pattern"]), a.get("glob"), int(a.get("context") or 0))
        text = "\n".join(r["matches"]) or "no matches"
        return Result(_cut(text + ("\n[more matches were cut]" if r["truncated"] else "")))
    if name == "Glob":
        r = tools.glob(str(a["pattern"]))
        return Result(_cut("\n".join(r["paths"]) or "no files match"))
    if name == "find_paths":
        r = tools.find_paths(str(a.get("path") or "."), int(a.get("depth") or 2))
        return Result(_cut("\n".join(r["entries"]) or "empty"))
    if name == "get_changed_files":
        return Result(_cut("\n".join(tools.get_changed_files()["changed"]) or "no changes"))
    if name == "git_search":
        r = tools.git_search(str(a["query"]), a.get("path"), bool(a.get("patch")), int(a.get("limit") or 20))
        return Result(_cut(r["log"] or "no commits match"))
    if name == "remember":
        fact, paths = str(a["fact"]).strip(), a.get("paths") or []
        if not fact or not isinstance(paths, list) or not paths or len(paths) > 20:
            return Result("refused: a fact and 1-20 paths it comes from", refused=True)
        sources = {}
        for p in paths:
            sha = tools.sha256(str(p))
            if sha is None:
                return Result(f"refused: {str(p)[:200]!r} is not a readable file of the project", refused=True)
            sources[tools.relative(str(p))] = sha
        return Result("noted", fact=(redact(fact), sources))
    return Result(f"refused: no tool named {name[:100]!r}; the tools are {', '.join(sorted(NAMES))}", refused=True)


def _cut(text: str) -> str:
    text = redact(text)
    if len(text) > RESULT_CHARS:
        return text[:RESULT_CHARS] + f"\n[cut at {RESULT_CHARS} characters]"
    return text


def args_text(args: Any) -> str:
    return json.dumps(args, ensure_ascii=False)[:300]
