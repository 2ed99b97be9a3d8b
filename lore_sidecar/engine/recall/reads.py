"""The message rows one recall reads, each read once.

Trigger: a recall whose dense leg is deferred (recaller.py: it runs only when a vector-only
hit could still reach the page) fuses and ranks twice, and the second pass asked SQLite again
for every lexical candidate's row, its place in its session and the names it holds. Why: at
100k messages those reads are most of a pass (~1 ms), and the second pass differs from the
first only by the vector leg's few new candidates. Outcome: each is read once per recall;
a key asked again is answered from what the first read found (a missing row stays missing).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


class RowsOnce:
    """`records`' message reads, remembered for one recall (never shared between recalls:
    the next one reads the store as it is then)."""

    def __init__(self, records: Any):
        self.records = records
        self._rows: dict[int, Any] = {}  # key -> row, or None: no such message
        self._around: dict[int, Any] = {}  # key -> Neighbours, or None
        self._naming: dict[tuple[str, ...], dict[int, int]] = {}  # names -> key -> count (0: none)

    def message_rows(self, keys: Iterable[int]) -> dict[int, Any]:
        keys = list(keys)
        _fill(self._rows, keys, self.records.message_rows)
        return {k: self._rows[k] for k in keys if self._rows[k] is not None}

    def message_neighbours(self, keys: Iterable[int]) -> dict[int, Any]:
        keys = list(keys)
        _fill(self._around, keys, self.records.message_neighbours)
        return {k: self._around[k] for k in keys if self._around[k] is not None}

    def messages_naming(self, keys: Iterable[int], names: Sequence[str]) -> dict[int, int]:
        keys, known = list(keys), self._naming.setdefault(tuple(names), {})
        _fill(known, keys, lambda missing: self.records.messages_naming(missing, names), absent=0)
        return {k: known[k] for k in keys if known[k]}


def _fill(known: dict[int, Any], keys: list[int], read, absent: Any = None) -> None:
    """Read the keys not asked before; those the read does not return are remembered as `absent`."""
    missing = [k for k in dict.fromkeys(keys) if k not in known]
    if missing:
        got = read(missing)
        known.update((k, got.get(k, absent)) for k in missing)
