"""What a request may ask of capture: record messages (through the one write path)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from lore_sidecar.engine.capture import messages as capture
from lore_sidecar.errors import LoreError
from lore_sidecar.model import NewMessage

REPLY_FIELDS = ("recorded", "duplicates", "ids", "durable", "applied", "opId")


class CaptureRequests:
    def __init__(self, instance: Any):
        self.i = instance  # the engine: records, projects, writes

    def record_messages(self, *, project: str | None, session_id: str, harness: str | None,
                        messages: Sequence[dict]) -> dict[str, Any]:
        records = self.i.records
        ids: list[str] = []

        def check() -> tuple[str, list[NewMessage]]:
            if not session_id.strip():
                raise LoreError("invalidKey", "sessionId must not be empty", value=session_id)
            normalised = []
            for n, m in enumerate(messages):
                try:
                    normalised.append(capture.normalise(session_id=session_id, harness=harness, **m))
                except ValueError as exc:
                    raise LoreError("invalidMessage", f"messages[{n}]: {exc}", index=n) from None
            ids[:] = [m.msg_id for m in normalised]
            return self.i.projects.root(project), normalised

        def apply(checked: tuple[str, list[NewMessage]]) -> dict[str, Any]:
            root, normalised = checked
            outcome = records.insert_messages(records.ensure_project(root).id, normalised)
            new = sum(1 for _, was_new in outcome if was_new)
            return {"recorded": new, "duplicates": len(outcome) - new}

        def unapplied(checked: tuple[str, list[NewMessage]]) -> dict[str, Any]:
            # The writer has not applied it yet: counts as the record held when we spooled.
            known = records.existing_message_ids(session_id, ids)
            return {"recorded": sum(1 for i in ids if i not in known), "duplicates": len(known)}

        out = self.i.writes.submit(
            check=check, apply=apply, unapplied=unapplied,
            op=lambda c: {"kind": "recordMessages", "project": c[0], "messages": [asdict(m) for m in c[1]]})
        out["ids"] = ids
        return {k: out[k] for k in REPLY_FIELDS if k in out}
