"""Per-session context-assembly state, one small JSON file per session under
`<store>/context/`. Not the record (nothing to replay or index): operational state that
must survive a restart - the layer, the window, the frozen prefix, calibration and the
forced floor. Any instance may serve a session (a gateway is often a follower), so this is
a file each writes atomically rather than a row only the writer may write."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


class ContextStates:
    def __init__(self, directory: Path):
        self.directory = directory

    def _path(self, session_id: str) -> Path:
        return self.directory / f"{hashlib.sha256(session_id.encode()).hexdigest()[:32]}.json"

    def load(self, session_id: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self._path(session_id).read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def save(self, session_id: str, state: dict[str, Any]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(session_id)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({**state, "sessionId": session_id}))
        os.replace(tmp, path)
