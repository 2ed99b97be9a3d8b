"""The one place a workspace folder becomes a project key: its canonical root."""

from __future__ import annotations

from pathlib import Path


def canonical_root(folder: str | Path) -> str:
    """The enclosing git top-level of `folder` (real path), else the folder's real path."""
    path = Path(folder).expanduser().resolve()
    probe = path
    while True:
        if (probe / ".git").exists():
            return str(probe)
        if probe.parent == probe:
            return str(path)
        probe = probe.parent
