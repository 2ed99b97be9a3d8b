"""Turn messages as harnesses send them into records: verbatim JSON plus a searchable text.

Content is either a string or a list of blocks in Anthropic or OpenAI shape. The verbatim
JSON is stored untouched; the text rendering is what the indexes see.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

from lore_sidecar.engine.capture.redact import redact_value
from lore_sidecar.model import TOOL_CALL_MARK, NewMessage

ROLES = ("user", "assistant", "tool", "system")
MAX_RENDERED_CHARS = 200_000


def iso_utc(value: str | None, *, now: datetime | None = None) -> str:
    """Normalise an ISO-8601 time to `YYYY-MM-DDTHH:MM:SS(.ffffff)Z`; None means now.
    Raises ValueError for anything that is not a time."""
    if value is None:
        dt = now or datetime.now(UTC)
    else:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
    dt = dt.astimezone(UTC)
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ" if dt.microsecond else "%Y-%m-%dT%H:%M:%SZ"
    return dt.strftime(fmt)


def render_content(content: Any) -> str:
    """Readable text of a message body, whatever block dialect it uses."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return _render_block(content)
    if isinstance(content, list):
        parts = [render_content(b) for b in content]
        return "\n".join(p for p in parts if p)
    return str(content)


def _render_block(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind in ("text", "input_text", "output_text") or (kind is None and "text" in block):
        return str(block.get("text", ""))
    if kind == "thinking":
        return str(block.get("thinking", ""))
    if kind in ("tool_use", "server_tool_use", "function_call"):
        args = block.get("input", block.get("arguments", {}))
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False, sort_keys=True)
        return f"{TOOL_CALL_MARK}{block.get('name', '?')}] {args}"
    if kind in ("tool_result", "function_call_output"):
        inner = block.get("content", block.get("output", ""))
        return render_content(inner)
    if kind in ("image", "image_url", "input_image", "document"):
        return f"[{kind}]"
    # Unknown dialect: keep whatever strings it carries so nothing becomes unsearchable.
    return " ".join(str(v) for v in block.values() if isinstance(v, str) and v != kind)


def normalise(
    *,
    session_id: str,
    harness: str | None,
    role: str,
    content: Any,
    msg_id: str | None,
    created_at: str | None,
    tool_name: str | None,
    tool_call_id: str | None,
) -> NewMessage:
    # Secrets never reach the store, its indexes or a model: the record keeps the message
    # with each secret replaced by [REDACTED:<kind>] (see engine/capture/redact.py).
    content = redact_value(content)
    text = render_content(content)
    if len(text) > MAX_RENDERED_CHARS:
        text = text[:MAX_RENDERED_CHARS]
    return NewMessage(
        session_id=session_id,
        msg_id=msg_id or uuid.uuid4().hex,
        role=role,
        content_json=json.dumps(content, ensure_ascii=False),
        text=text,
        created_at=iso_utc(created_at),
        harness=harness,
        tool_name=tool_name,
        tool_call_id=tool_call_id,
    )
