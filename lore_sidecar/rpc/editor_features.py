"""Standard LSP features for editors that cannot send custom requests (Helix):

- hover on a symbol shows what memory knows about it (knowledge, entities, facts,
  distillations, earlier conversation), read from the file on disk inside the workspace;
- a `workspace/executeCommand` twin's result is also *shown*: written as markdown to
  `<store>/views/<command>.md` and opened with `window/showDocument` when the client supports
  it, else summarised with `window/showMessage`. Automatic for Helix (its
  `:lsp-workspace-command` discards results); `showCommandResults` overrides.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from lore_sidecar.engine.uris import file_path
from lore_sidecar.errors import LoreError

log = logging.getLogger(__name__)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/]*[A-Za-z0-9_]|[A-Za-z_]")
HOVER_SOURCES = ["knowledge", "entities", "facts", "distillations", "messages"]


def word_at(text: str, line: int, character: int) -> str | None:
    lines = text.splitlines()
    if not 0 <= line < len(lines):
        return None
    for m in _WORD.finditer(lines[line]):
        if m.start() <= character <= m.end():
            return m.group(0).strip(".-/")
    return None


def hover_markdown(word: str, hits: list[Any]) -> str:
    lines = [f"**lore** · what memory knows about `{word}`", ""]
    for h in hits:
        title = f" — {h.title}" if h.title else ""
        snippet = " ".join(h.snippet.split())[:200]
        lines.append(f"- `{h.source}` [{h.uri}]({h.uri}){title}: {snippet}")
    return "\n".join(lines)


def result_markdown(command: str, result: Any) -> tuple[str, str]:
    """(full markdown, one-line summary) of a command's result."""
    if isinstance(result, dict) and "hits" in result:
        hits = result["hits"]
        body = [f"# lore: {command}", "", f"{len(hits)} of {result.get('total', len(hits))} hits", ""]
        for i, h in enumerate(hits, 1):
            body += [f"{i}. **{h.get('title') or h['source']}** · score {h['score']:.4f}", f"   {h['uri']}",
                     f"   > {' '.join(h['snippet'].split())[:300]}", ""]
        top = hits[0]["uri"] if hits else "no hits"
        return "\n".join(body), f"lore: {len(hits)} hits; top: {top}"
    pretty = json.dumps(result, indent=2, ensure_ascii=False)
    summary = json.dumps(result, ensure_ascii=False)
    return f"# lore: {command}\n\n```json\n{pretty}\n```\n", f"lore: {summary[:160]}"


def register(server) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(params: lsp.HoverParams) -> lsp.Hover | None:
        try:
            engine = await server.engine()
            path = file_path(params.text_document.uri)
            data = await server.run(engine.projects.jail.read_bytes, path, max_bytes=engine.settings.index.max_file_bytes)
            text = data.decode("utf-8", errors="replace")
            word = word_at(text, params.position.line, params.position.character)
            if not word or len(word) < 3:
                return None
            result = await server.run(engine.recall, word, sources=HOVER_SOURCES, limit=5)
        except (LoreError, OSError) as exc:
            log.info("hover: %s", exc)
            return None
        if not result.hits:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=hover_markdown(word, result.hits)))


async def present(server, command: str, result: Any) -> None:
    """Show a command's result to a client that would otherwise drop it."""
    if not wants_presentation(server):
        return
    try:
        engine = await server.engine()
        markdown, summary = result_markdown(command, result)
        views = Path(engine.settings.store_dir) / "views"
        views.mkdir(parents=True, exist_ok=True)
        target = views / f"{command.replace('/', '-')}.md"
        target.write_text(markdown)
        if _supports_show_document(server):
            await server.window_show_document_async(lsp.ShowDocumentParams(uri=target.as_uri(), take_focus=True))
        else:
            server.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=f"{summary} (full: {target})"))
    except Exception:
        log.exception("presenting %s failed", command)


def wants_presentation(server) -> bool:
    mode = server.settings.show_command_results if server.settings is not None else "auto"
    if mode != "auto":
        return mode == "always"
    info = getattr(server, "client_info", None)
    return bool(info and info.name and info.name.lower().startswith("helix"))


def _supports_show_document(server) -> bool:
    caps = getattr(server.protocol, "client_capabilities", None)
    window = getattr(caps, "window", None)
    show = getattr(window, "show_document", None)
    return bool(show and show.support)
