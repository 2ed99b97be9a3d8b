"""`lore/getNode`: the full item behind any URI a recall hit can carry (a message, a fact, a
workspace chunk, or a memory tier: knowledge node, distillation, entity)."""

from __future__ import annotations

from pathlib import Path

from lore_sidecar.engine import uris
from lore_sidecar.engine.workspace import inside
from lore_sidecar.errors import not_found
from lore_sidecar.model import NodeContent


def read_node(engine, uri: str) -> NodeContent:
    if uris.is_memory_uri(uri):
        return engine._memory().get(uri)
    kind, parts = uris.parse(uri)
    if kind == "facts":
        row = engine._facts().by_fact_id(parts[0])
        if row is None:
            raise not_found(uri)
        return NodeContent(uri=uri, source="facts", content=f"{row['subject']} :: {row['predicate']} :: {row['object']}",
                           metadata=engine._facts().wire(row))
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
    for project in engine.records.projects():
        root = Path(project.root)
        try:
            rel = Path(path).relative_to(root).as_posix()
        except ValueError:
            continue
        row = engine.records.chunk_at(project.root, rel, start, end)
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
        # Not a chunk boundary we stored: serve the lines from the file itself, but only
        # from inside a known workspace.
        real = inside(root, Path(path))
        lines = real.read_text(errors="replace").splitlines()[start - 1 : end]
        return NodeContent(
            uri=uri,
            source="files",
            content="\n".join(lines),
            metadata={"path": path, "startLine": start, "endLine": end, "project": project.root},
        )
    raise not_found(uri)
