"""Durability helpers shared by the store's file writers (spool, journal, vector snapshots)."""

from __future__ import annotations

import os
from pathlib import Path


def fsync_path(path: Path) -> None:
    """Make a file's contents, or a directory's entries (a new or renamed file), durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
