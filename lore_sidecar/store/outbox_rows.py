"""The index outbox: the changes the derived indexes have still to absorb, written in the
same transaction as the record rows they follow (store/records.py), read by the legs that
apply them, trimmed once every leg has passed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from lore_sidecar.store.db import Database


class OutboxEntry(NamedTuple):
    """A change the indexes must apply. A tuple: a first scan reads tens of thousands, and
    one builds in half a frozen dataclass's time (0.24 against 0.45 µs)."""

    seq: int
    op: str
    kind: str
    key: int
    project_id: int


class OutboxRows:
    """The outbox's reads and trim; a part of Records (which sets `db` and has `meta`)."""

    db: Database
    meta: Callable[[str, str | None], str | None]

    def outbox_after(self, seq: int, limit: int = 5000) -> list[OutboxEntry]:
        rows = self.db.reader().execute(
            "SELECT seq, op, kind, key, project_id FROM index_outbox WHERE seq>? ORDER BY seq LIMIT ?",
            (seq, limit),
        )
        return list(map(OutboxEntry._make, rows))

    def outbox_head(self) -> int:
        """The newest outbox sequence ever written (trimmed entries included)."""
        row = self.db.reader().execute("SELECT MAX(seq) FROM index_outbox").fetchone()
        return max(row[0] or 0, int(self.meta("outbox_trimmed", "0") or 0))

    def outbox_upserts_after(self, seq: int, kinds: Sequence[str]) -> int:
        """Upserts of these kinds after `seq`: what a leg at `seq` has still to do."""
        sql = f"SELECT COUNT(*) FROM index_outbox WHERE seq>? AND op='upsert' AND kind IN ({','.join('?' * len(kinds)) or 'NULL'})"
        return int(self.db.reader().execute(sql, (seq, *kinds)).fetchone()[0])

    def outbox_file_upserts(self, after: int, upto: int) -> list[tuple[int, str]]:
        """(seq, file path) of the workspace chunk upserts in (after, upto]: lets a caller
        tell the ones of files the dense leg will not embed (vendored ones)."""
        rows = self.db.reader().execute(
            "SELECT o.seq, f.path FROM index_outbox o JOIN chunks c ON c.id=o.key JOIN files f ON f.id=c.file_id"
            " WHERE o.seq>? AND o.seq<=? AND o.op='upsert' AND o.kind='files'",
            (after, upto),
        )
        return [(int(r[0]), r[1]) for r in rows]

    def outbox_trim(self, upto: int) -> None:
        with self.db.write() as c:
            c.execute("DELETE FROM index_outbox WHERE seq<=?", (upto,))
            c.execute(
                "INSERT INTO meta(key, value) VALUES ('outbox_trimmed', ?) ON CONFLICT(key)"
                " DO UPDATE SET value=MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
                (str(upto),),
            )
