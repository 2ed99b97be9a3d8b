"""Rendering a conversation segment for distillation, and the extractive distiller.

Pure functions (groundwork for conversation memory). A segment is rendered as one line per
message; a tool output longer than the limit is replaced by an annotation that keeps what a
reader needs later — its line count, the lines that signal errors, the file paths it names.
Secrets are redacted before anything leaves here. The extractive distiller is the
deterministic fallback when no model is available: it keeps, by rule, the operational
details summaries lose (paths, error messages, commands, decisions).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lore_sidecar.engine.capture.redact import redact

TOOL_OUTPUT_LIMIT = 4000
PROMPT_VERSION = "distill-1"

PATH = re.compile(r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}(?::\d+)?|(?<![\w/])[\w-]+\.(?:py|ts|tsx|js|rs|go|java|rb|md|toml|yaml|yml|json|sql|sh|c|h|cpp)(?::\d+)?\b")
ERROR = re.compile(r"\b(?:error|exception|traceback|failed|failure|fatal|panic|denied|refused|timed? ?out|segfault|not found)\b|\w+Error\b|\bE\d{3,}\b", re.I)
COMMAND = re.compile(r"^\s*(?:\$|>|#)\s+\S|^\[tool call (?:bash|shell|run|exec)\w*\]", re.I)
DECISION = re.compile(
    r"\b(?:we(?:'ll| will)? (?:decided?|chose|choose|go with|use|keep|switch(?:ed)? to)|decided to|let's (?:use|go with|keep|switch)|"
    r"going with|instead of|the fix (?:is|was)|root cause|because)\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Turn:
    role: str
    text: str
    created_at: str = ""
    tool_name: str | None = None


def annotate_tool_output(text: str, limit: int = TOOL_OUTPUT_LIMIT) -> str:
    """`text` itself if short; else a one-line summary that keeps lines, errors and paths."""
    if len(text) <= limit:
        return text
    lines = text.splitlines()
    errors = _unique(line.strip() for line in lines if ERROR.search(line))
    paths = _unique(m.group(0) for m in PATH.finditer(text))
    parts = [f"[tool output elided: {len(lines)} lines, {len(text)} chars"]
    if errors:
        parts.append("errors: " + " | ".join(e[:200] for e in errors[:5]))
    if paths:
        parts.append("paths: " + ", ".join(paths[:15]))
    head = "; ".join(parts) + "]"
    tail = "\n".join(lines[-3:])[-600:]
    return f"{head}\n… last lines:\n{tail}"


def render_segment(turns: Sequence[Turn], limit: int = TOOL_OUTPUT_LIMIT) -> str:
    """The segment as the distiller sees it: redacted, long tool output annotated."""
    out = []
    for t in turns:
        text = annotate_tool_output(t.text, limit) if t.role == "tool" else t.text
        who = f"tool {t.tool_name}" if t.role == "tool" and t.tool_name else t.role
        stamp = f"[{t.created_at}] " if t.created_at else ""
        out.append(f"{stamp}{who}: {text}")
    return redact("\n".join(out))


def extractive_observations(turns: Sequence[Turn], limit: int = TOOL_OUTPUT_LIMIT) -> list[str]:
    """Deterministic observations: each kept line, tagged with why it was kept."""
    observed: list[str] = []
    for t in turns:
        text = annotate_tool_output(t.text, limit) if t.role == "tool" else t.text
        for raw in text.splitlines():
            line = raw.strip()
            if not line or len(line) > 400:
                line = line[:400]
            if not line:
                continue
            tags = []
            if ERROR.search(line):
                tags.append("error")
            if COMMAND.search(line):
                tags.append("command")
            if DECISION.search(line) and t.role in ("user", "assistant"):
                tags.append("decision")
            if PATH.search(line):
                tags.append("path")
            if tags:
                observed.append(f"- ({'/'.join(tags)}) {t.role}: {line}")
    return [redact(o) for o in _unique(observed)]


def _unique(items: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        if item and item not in seen:
            seen[item] = None
    return list(seen)
