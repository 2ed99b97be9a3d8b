"""Who this instance is right now and what its reads use, as immutable values.

The election replaces `Role` and `View` whole (one attribute assignment each); a request
reads the attribute once and works with that value to the end, so a promotion or demotion
in the middle of a recall never shows it half of either, and no reader takes a lock.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Role:
    writer: bool
    writer_pid: int | None
    epoch: int = 0


@dataclass(frozen=True)
class View:
    """The indexes a read searches. `indexer` and `workspace` are the writer's alone."""

    text: Any  # ports.TextIndex
    vectors: Any  # ports.VectorIndex | None
    recaller: Any  # recall.recaller.Recaller over text and vectors
    index_epoch: int
    indexer: Any = None  # indexing.indexer.Indexer
    workspace: Any = None  # workspace.index.WorkspaceIndex


class WriteMark:
    """The newest record sequence this instance wrote or saw applied for a client: reads
    wait (bounded) until the index has caught up with it — read-your-writes. Several
    request threads raise it at once, so it only ever moves under its lock, and only up;
    `settle(seq)` clears it only if nothing newer arrived meanwhile."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seq = 0

    @property
    def seq(self) -> int:
        return self._seq

    def raise_to(self, seq: int) -> None:
        with self._lock:
            if seq > self._seq:
                self._seq = seq

    def settle(self, seq: int) -> None:
        with self._lock:
            if self._seq <= seq:
                self._seq = 0
