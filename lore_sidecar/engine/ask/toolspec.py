"""The tools as the model sees them (names, descriptions, JSON schemas) and one dispatch that
runs a call and turns its result — or its refusal — into the text the model reads.

A refusal is an answer, not an exception: the model reads "refused: …" and goes on. Every
result is redacted (a `.env` the model opens reaches it as `[REDACTED:…]`) and cut to
`RESULT_CHARS`, so one call cannot flood the window. `remember` is the one tool that keeps
something: a fact for the ledger, with the sha256 of the files it cites, hashed now.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from lore_sidecar.engine.ask.tools import Tools
from lore_sidecar.engine.capture.redact import redact
from lore_sidecar.errors import BadParams, LoreError

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
SPEC = {s["name"]: s for s in SPECS}


@dataclass
class Result:
    text: str
    refused: bool = False
    read: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (sha256, "a-b" lines)
    fact: tuple[str, dict[str, str]] | None = None  # remember: (text, {path: sha256})


# Argument names other tools give the same thing (Claude Code's Read takes `file_path`): taken
# for ours only where the tool has the target and not the alias, and only one of them is given.
ALIASES = {"file_path": "path", "filePath": "path", "filepath": "path", "file": "path",
           "file_paths": "paths", "filePaths": "paths"}
_INTEGER = re.compile(r"-?[0-9]+")
_TYPES = {"string": "a string", "integer": "an integer", "boolean": "true or false", "array": "a list of strings"}


def call(tools: Tools, name: Any, args: Any) -> Result:
    """Run one tool call the model made. Every way a call can be wrong — an unknown tool,
    arguments that are not an object (or JSON that does not parse), a missing, unknown or
    ambiguous argument, a wrong type — is a refusal naming what the tool takes, never an
    exception: the model reads it and tries again."""
    checked = check(name, args)
    if isinstance(checked, Result):
        return checked
    try:
        return _run(tools, name, checked)
    except LoreError as exc:
        return Result(f"refused ({exc.kind}): {exc.message}", refused=True)
    except BadParams as exc:  # a path the jail will not resolve (NUL, too long): the model's call, not the client's
        return Result(f"refused (badPath): {'; '.join(exc.errors) or exc.message}", refused=True)
    except (TypeError, ValueError, KeyError) as exc:  # a tool's own argument rule the schema does not say
        return Result(f"refused: bad arguments for {name}: {exc}", refused=True)


def check(name: Any, args: Any) -> dict[str, Any] | Result:
    """`args` as the tool's schema wants them (aliases renamed, integer strings read as
    integers), or the refusal that says what is wrong and what the tool takes."""
    spec = SPEC.get(name) if isinstance(name, str) else None
    if spec is None:
        return Result(f"refused: no tool named {str(name)[:100]!r}; the tools are {', '.join(sorted(NAMES))}",
                      refused=True)
    if isinstance(args, str):  # arguments sent as JSON text (some models and endpoints do)
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return _bad(name, f"the arguments are not valid JSON ({args[:80]!r})")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return _bad(name, f"the arguments must be a JSON object, not {type(args).__name__}")
    if "_unparsed" in args:  # the OpenAI-compatible client could not parse them
        return _bad(name, f"the arguments are not valid JSON ({str(args['_unparsed'])[:80]!r})")
    props = spec["input_schema"].get("properties", {})
    out: dict[str, Any] = {}
    for key, value in args.items():
        target = ALIASES.get(key, key) if key not in props else key
        if target not in props:
            return _bad(name, f"it takes no argument {str(key)[:60]!r}")
        if target in out:
            return _bad(name, f"{target!r} was given twice (as {target!r} and {key!r})")
        out[target] = value
    for key in spec["input_schema"].get("required", []):
        if out.get(key) is None:
            return _bad(name, f"{key!r} is required")
    for key, value in list(out.items()):
        if value is None:  # an optional argument sent as null: as if not given
            del out[key]
            continue
        want = props[key].get("type")
        fixed = _typed(want, value)
        if fixed is _WRONG:
            return _bad(name, f"{key!r} must be {_TYPES.get(want, want)}, not {_shown(value)}")
        out[key] = fixed
    return out


_WRONG = object()


def _typed(want: str | None, value: Any) -> Any:
    if want == "string":
        return value if isinstance(value, str) else _WRONG
    if want == "integer":
        if isinstance(value, bool):
            return _WRONG
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and len(value) < 12 and _INTEGER.fullmatch(value.strip()):
            return int(value)  # "10" for 10: unambiguous (ASCII digits only: "--5" and "²" pass isdigit, not int)
        return _WRONG
    if want == "boolean":
        if isinstance(value, bool):
            return value
        return {"true": True, "false": False}.get(value.lower(), _WRONG) if isinstance(value, str) else _WRONG
    if want == "array":
        return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else _WRONG
    return value


def _shown(value: Any) -> str:
    return f"{type(value).__name__} {json.dumps(value, ensure_ascii=False, default=str)[:60]}"


def _bad(name: str, why: str) -> Result:
    spec = SPEC[name]["input_schema"]
    props, required = spec.get("properties", {}), set(spec.get("required", []))
    takes = ", ".join(f"{k} ({_TYPES.get(v.get('type'), v.get('type'))}{', required' if k in required else ''})"
                      for k, v in props.items()) or "no arguments"
    return Result(f"refused: bad arguments for {name}: {why}. {name} takes: {takes}", refused=True)


def _run(tools: Tools, name: str, a: dict[str, Any]) -> Result:
    if name == "Read":
        r = tools.read(a["path"], a.get("offset") or 0, a.get("limit") or 2000)
        start = r["startLine"]
        body = "\n".join(f"{start + i:>5}\t{line}" for i, line in enumerate(r["lines"]))
        more = f"\n[{r['total']} lines in all; read more with offset]" if r["truncated"] else ""
        lines = f"{start}-{start + max(0, len(r['lines']) - 1)}"
        return Result(_cut(f"{r['path']} (sha256 {r['sha256'][:12]})\n{body}{more}"), read={r["path"]: (r["sha256"], lines)})
    if name == "Grep":
        r = tools.grep(a["pattern"], a.get("glob"), a.get("context") or 0)
        text = "\n".join(r["matches"]) or "no matches"
        return Result(_cut(text + ("\n[more matches were cut]" if r["truncated"] else "")))
    if name == "Glob":
        r = tools.glob(a["pattern"])
        return Result(_cut("\n".join(r["paths"]) or "no files match"))
    if name == "find_paths":
        r = tools.find_paths(a.get("path") or ".", a.get("depth") or 2)
        return Result(_cut("\n".join(r["entries"]) or "empty"))
    if name == "get_changed_files":
        return Result(_cut("\n".join(tools.get_changed_files()["changed"]) or "no changes"))
    if name == "git_search":
        r = tools.git_search(a["query"], a.get("path"), bool(a.get("patch")), a.get("limit") or 20)
        return Result(_cut(r["log"] or "no commits match"))
    if name == "remember":
        fact, paths = a["fact"].strip(), a["paths"]
        if not fact or not isinstance(paths, list) or not paths or len(paths) > 20:
            return Result("refused: a fact and 1-20 paths it comes from", refused=True)
        sources = {}
        for p in paths:
            sha = tools.sha256(str(p))
            if sha is None:
                return Result(f"refused: {str(p)[:200]!r} is not a readable file of the project", refused=True)
            sources[tools.relative(str(p))] = sha
        return Result("noted", fact=(redact(fact), sources))
    raise ValueError(f"no runner for {name}")  # SPECS and _run disagree: a bug, found by the tests


def _cut(text: str) -> str:
    text = redact(text)
    if len(text) > RESULT_CHARS:
        return text[:RESULT_CHARS] + f"\n[cut at {RESULT_CHARS} characters]"
    return text


def args_text(args: Any) -> str:
    return json.dumps(args, ensure_ascii=False)[:300]
