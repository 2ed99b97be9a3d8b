"""`lore/getNode`: the full item behind any URI a recall hit can carry (a message, a fact, a
workspace chunk, or a memory tier: knowledge node, distillation, entity)."""

from __future__ import annotations

from pathlib import Path

from lore_sidecar.engine import uris
from lore_sidecar.engine.capture.redact import redact
from lore_sidecar.engine.project import canonical_root
from lore_sidecar.errors import LoreError, not_found
from lore_sidecar.model import NodeContent


def read_node(engine, uri: str) -> NodeContent:
    if uri.startswith("ledger://"):  # a fact codebase questions learnt (engine/ask/ledger.py)
        return engine.ask.fact_node(uri)
    if uris.is_memory_uri(uri):
        return engine.memory.get(uri)
    kind, parts = uris.parse(uri)
    if kind == "facts":
        row = engine.facts.store.by_fact_id(parts[0])
        if row is None:
            raise not_found(uri)
        return NodeContent(uri=uri, source="facts", content=f"{row['subject']} :: {row['predicate']} :: {row['object']}",
                           metadata=engine.facts.store.wire(row))
    if kind == "messages":
        row = engine.records.message_by_uri_parts(*parts)
        if row is None:
            raise not_found(uri)
        return NodeContent(
            uri=uri,
            source="messages",
            content=row["text"],
            metadata={
                "sessionId": row["session_id"],
                "messageId": row["msg_id"],
                "role": row["role"],
                "harness": row["harness"],
                "toolName": row["tool_name"],
                "toolCallId": row["tool_call_id"],
                "createdAt": row["created_at"],
                "recordedAt": row["recorded_at"],
                "project": row["project_root"],
            },
        )
    path, start, end = parts
    # The jail first: a path outside every opened folder is refused the same way whether or
    # not it exists, before the store or the file system is asked anything about it; so is a
    # credential file (`secretFile`), even if an older index holds chunks of it.
    real = engine.projects.jail.readable(path)
    for project in engine.records.projects():
        root = Path(project.root)
        try:
            rel = real.relative_to(root).as_posix()
        except ValueError:
            continue
        row = engine.records.files.chunk_at(project.root, rel, start, end)
        if row is not None:
            return NodeContent(
                uri=uri,
                source="files",
                content=row["text"],
                metadata={
                    "path": path,
                    "startLine": start,
                    "endLine": end,
                    "title": row["title"],
                    "sha256": row["sha256"],
                    "project": project.root,
                },
            )
    # Not a chunk boundary we stored: serve the lines from the file itself (regular files
    # inside the jail, bounded, redacted like everything indexed).
    data = engine.projects.jail.read_bytes(path, max_bytes=engine.settings.index.max_file_bytes)
    if b"\x00" in data[:8192]:
        raise LoreError("notText", f"{path[:200]!r} is not a text file", path=path[:200])
    lines = data.decode("utf-8", errors="replace").splitlines()[start - 1 : end]
    return NodeContent(
        uri=uri,
        source="files",
        content=redact("\n".join(lines)),
        metadata={"path": path, "startLine": start, "endLine": end, "project": canonical_root(real)},
    )
