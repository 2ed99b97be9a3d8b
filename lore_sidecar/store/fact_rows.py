"""Fact rows in SQLite: a replay of the journal and the notes, plus their resolution.

Every write here runs in one fenced transaction that first appends to the journal (when the
change comes from the API), then writes rows, re-resolves the touched slots with the
engine's pure resolver, and queues the index outbox. Slot resolution is passed in as a
function so the rules live in one place (`engine/facts/rules.py`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from lore_sidecar.model import FactFilter
from lore_sidecar.store.db import Database
from lore_sidecar.store.journal import Journal

ROW_COLUMNS = (
    "fact_id", "slot", "subject", "predicate", "object", "subject_key", "predicate_key", "object_key",
    "valid_from", "valid_until", "recorded_at", "source", "confidence", "origin", "origin_path",
    "origin_line", "ord",
)
EFF_COLUMNS = ("eff_until", "closed_at", "superseded_by", "merged_into", "shadowed")
CLOSE_COLUMNS = ("slot", "subject", "predicate", "valid_until", "recorded_at", "origin_path", "origin_line", "ord")

# A row is in force at `at` (two parameters: at, at) when it holds then — valid from
# inclusive, until exclusive — by the materialised resolution: the SQL twin of `rules.holds`.
HOLDS_SQL = "(f.valid_from IS NULL OR f.valid_from <= ?) AND (f.eff_until IS NULL OR ? < f.eff_until)"
VISIBLE_SQL = "f.merged_into IS NULL AND f.shadowed=0"


def _in_slots(prefix: str, project_ids: Sequence[int] | None, slots: Sequence[str]):
    """(where, params) per chunk of `slots`, within `project_ids` (None: every project)."""
    for i in range(0, len(slots), 500):
        part = list(slots[i : i + 500])
        where = f"{prefix}slot IN ({','.join('?' * len(part))})"
        params: list[Any] = part
        if project_ids is not None:
            where += f" AND {prefix}project_id IN ({','.join('?' * len(project_ids))})"
            params = part + list(project_ids)
        yield where, params


def _body(row: dict) -> str:
    return f"{row['subject']} {row['predicate']} {row['object']}"


# rows, closes of one slot -> {fact_id: {eff_until, closed_at, superseded_by, merged_into, shadowed}}
SlotResolver = Callable[[list[dict], list[dict]], dict[str, dict[str, Any]]]


class FactRows:
    def __init__(self, db: Database, journal: Journal):
        self.db = db
        self.journal = journal

    # -- writes -----------------------------------------------------------------------------
    def append_and_insert(
        self,
        root: str,
        project_id: int,
        day: str,
        line: str,
        row: dict | None,
        close: dict | None,
        resolver: SlotResolver,
        *,
        ord_of: Callable[[str, int], int],
        also: Callable[[sqlite3.Connection, str, int, dict[str, dict]], None] | None = None,
    ) -> tuple[str, int, dict[str, dict]]:
        """Journal first (fsynced), then the row or close, then the slot's resolution, all
        inside one fenced transaction. Returns (journal path, line, slot resolution)."""
        with self.db.write() as c:
            path, line_no = self.journal.append(root, day, [line])
            slot = (row or close)["slot"]
            where = {"origin_path": path, "origin_line": line_no, "ord": ord_of(path, line_no)}
            if row is not None:
                self._insert_row(c, project_id, {**row, "origin": "journal", **where})
            if close is not None:
                self._insert_close(c, project_id, {**close, **where})
            eff = self._resolve_slots(c, project_id, [slot], resolver)
            self._note_journal_file(c, path)
            if also is not None:  # e.g. marking a spooled operation applied, atomically
                also(c, path, line_no, eff)
        return path, line_no, eff

    def replace_note(self, c: sqlite3.Connection, project_id: int, path: str, rows: Sequence[dict], resolver: SlotResolver) -> None:
        """The facts of one workspace note, replaced (the note changed or went away)."""
        old = self._drop_note(c, project_id, path)
        for row in rows:
            self._insert_row(c, project_id, {**row, "origin": "note", "origin_path": path})
        self._resolve_slots(c, project_id, sorted(old | {r["slot"] for r in rows}), resolver)

    def sighting(self, c: sqlite3.Connection, project_id: int, key: str, now: str) -> str:
        c.execute("INSERT OR IGNORE INTO fact_sightings(project_id, key, first_seen) VALUES (?,?,?)", (project_id, key, now))
        return c.execute("SELECT first_seen FROM fact_sightings WHERE project_id=? AND key=?", (project_id, key)).fetchone()[0]

    def wipe(self, c: sqlite3.Connection) -> None:
        c.execute(
            "INSERT INTO index_outbox(op, kind, key, project_id) SELECT 'delete', 'facts', id, project_id FROM facts"
        )
        c.execute("DELETE FROM facts")
        c.execute("DELETE FROM facts_fts")
        c.execute("DELETE FROM fact_closes")

    def insert_replayed(self, c: sqlite3.Connection, project_id: int, rows: Iterable[dict], closes: Iterable[dict]) -> None:
        rows = list(rows)
        if rows:
            first = c.execute("SELECT COALESCE(MAX(id), 0) FROM facts").fetchone()[0] + 1
            c.executemany(
                f"INSERT INTO facts(id, project_id, {', '.join(ROW_COLUMNS)}) VALUES (?, ?{', ?' * len(ROW_COLUMNS)})",
                [(first + i, project_id, *(r.get(k) for k in ROW_COLUMNS)) for i, r in enumerate(rows)],
            )
            c.executemany(
                "INSERT INTO facts_fts(rowid, body) VALUES (?, ?)",
                [(first + i, _body(r)) for i, r in enumerate(rows)],
            )
            c.executemany(
                "INSERT INTO index_outbox(op, kind, key, project_id) VALUES ('upsert', 'facts', ?, ?)",
                [(first + i, project_id) for i in range(len(rows))],
            )
        closes = list(closes)
        if closes:
            c.executemany(
                f"INSERT INTO fact_closes(project_id, {', '.join(CLOSE_COLUMNS)}) VALUES (?{', ?' * len(CLOSE_COLUMNS)})",
                [(project_id, *(cl.get(k) for k in CLOSE_COLUMNS)) for cl in closes],
            )

    def resolve_all(self, c: sqlite3.Connection, resolver: SlotResolver) -> int:
        """Resolve every slot in one pass over the table (a replay)."""
        rows_by: dict[tuple[int, str], list[dict]] = {}
        for r in c.execute("SELECT * FROM facts"):
            d = dict(r)
            rows_by.setdefault((d["project_id"], d["slot"]), []).append(d)
        closes_by: dict[tuple[int, str], list[dict]] = {}
        for r in c.execute("SELECT * FROM fact_closes"):
            d = dict(r)
            closes_by.setdefault((d["project_id"], d["slot"]), []).append(d)
        updates = []
        for key, rows in rows_by.items():
            for fid, e in resolver(rows, closes_by.get(key, [])).items():
                updates.append((*(e[k] for k in EFF_COLUMNS), fid))
        c.executemany(f"UPDATE facts SET {', '.join(f'{k}=?' for k in EFF_COLUMNS)} WHERE fact_id=?", updates)
        c.execute("DELETE FROM journal_files")
        for path in self.journal.state():
            self._note_journal_file(c, path)
        c.execute("ANALYZE facts")
        return len(rows_by)

    def _insert_row(self, c: sqlite3.Connection, project_id: int, row: dict) -> None:
        cur = c.execute(
            f"INSERT INTO facts(project_id, {', '.join(ROW_COLUMNS)}) VALUES (?{', ?' * len(ROW_COLUMNS)})",
            (project_id, *(row.get(k) for k in ROW_COLUMNS)),
        )
        c.execute("INSERT INTO facts_fts(rowid, body) VALUES (?, ?)", (cur.lastrowid, _body(row)))
        c.execute(
            "INSERT INTO index_outbox(op, kind, key, project_id) VALUES ('upsert', 'facts', ?, ?)",
            (cur.lastrowid, project_id),
        )

    def _insert_close(self, c: sqlite3.Connection, project_id: int, close: dict) -> None:
        c.execute(
            f"INSERT INTO fact_closes(project_id, {', '.join(CLOSE_COLUMNS)}) VALUES (?{', ?' * len(CLOSE_COLUMNS)})",
            (project_id, *(close.get(k) for k in CLOSE_COLUMNS)),
        )

    def _drop_note(self, c: sqlite3.Connection, project_id: int, path: str) -> set[str]:
        rows = c.execute(
            "SELECT id, slot FROM facts WHERE project_id=? AND origin='note' AND origin_path=?", (project_id, path)
        ).fetchall()
        if not rows:
            return set()  # a note without facts (most): one statement, not two
        for fid, _ in rows:
            c.execute("INSERT INTO index_outbox(op, kind, key, project_id) VALUES ('delete', 'facts', ?, ?)", (fid, project_id))
            c.execute("DELETE FROM facts_fts WHERE rowid=?", (fid,))
        c.execute("DELETE FROM facts WHERE project_id=? AND origin='note' AND origin_path=?", (project_id, path))
        return {slot for _, slot in rows}

    def _resolve_slots(self, c: sqlite3.Connection, project_id: int, slots: Sequence[str], resolver: SlotResolver) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for slot in slots:
            rows, closes = self.slot(c, project_id, slot)
            eff = resolver(rows, closes)
            c.executemany(
                f"UPDATE facts SET {', '.join(f'{k}=?' for k in EFF_COLUMNS)} WHERE fact_id=?",
                [(*(e[k] for k in EFF_COLUMNS), fid) for fid, e in eff.items()],
            )
            out.update(eff)
        return out

    def _note_journal_file(self, c: sqlite3.Connection, rel: str) -> None:
        st = (self.journal.directory / rel).stat()
        c.execute(
            "INSERT INTO journal_files(path, size, mtime_ns) VALUES (?,?,?) ON CONFLICT(path) DO UPDATE"
            " SET size=excluded.size, mtime_ns=excluded.mtime_ns",
            (rel, st.st_size, st.st_mtime_ns),
        )

    # -- reads ------------------------------------------------------------------------------
    def conn(self) -> sqlite3.Connection:
        return self.db.reader()

    def slot(self, c: sqlite3.Connection, project_id: int, slot: str) -> tuple[list[dict], list[dict]]:
        rows = [dict(r) for r in c.execute("SELECT * FROM facts WHERE project_id=? AND slot=?", (project_id, slot))]
        closes = [dict(r) for r in c.execute("SELECT * FROM fact_closes WHERE project_id=? AND slot=?", (project_id, slot))]
        return rows, closes

    def slot_now(self, project_id: int, slot: str) -> tuple[list[dict], list[dict]]:
        """One slot's rows and closes as committed now."""
        return self.slot(self.conn(), project_id, slot)

    def matching(self, f: FactFilter, *, holds_at: str | None = None, visible_only: bool = False,
                 recorded_by: str | None = None, limit: int | None = None) -> list[dict]:
        """Rows the filter names, in the facts' display order: optionally only those in force
        at `holds_at` by the materialised resolution, only visible ones (not merged into an
        equal row, not shadowed), only those recorded by `recorded_by`."""
        where, params = self._where(f, holds_at, visible_only, recorded_by)
        order = "f.subject_key, f.predicate_key, f.valid_from, f.recorded_at, f.ord, f.fact_id"
        return self.select(where, params, order=order, limit=limit)

    def count_matching(self, f: FactFilter, *, holds_at: str | None = None, visible_only: bool = False) -> int:
        where, params = self._where(f, holds_at, visible_only, None)
        return self.conn().execute(f"SELECT COUNT(*) FROM facts f WHERE {where}", params).fetchone()[0]

    def groups(self, f: FactFilter, by: str, *, holds_at: str) -> list[tuple[str, int]]:
        """(label, count) of the rows in force at `holds_at`, grouped by one key, biggest first."""
        column, label = {"predicate": ("f.predicate_key", "f.predicate"), "object": ("f.object_key", "f.object"),
                         "subject": ("f.subject_key", "f.subject")}[by]
        where, params = self._where(f, holds_at, True, None)
        sql = (f"SELECT MIN({label}), COUNT(*) FROM facts f WHERE {where} GROUP BY {column} "
               f"ORDER BY COUNT(*) DESC, {column}")
        return [(r[0], r[1]) for r in self.conn().execute(sql, params)]

    def _where(self, f: FactFilter, holds_at: str | None, visible_only: bool, recorded_by: str | None):
        where, params = ["1=1"], []
        if f.project_ids is not None:
            if not f.project_ids:
                return "0=1", []
            where.append(f"f.project_id IN ({','.join('?' * len(f.project_ids))})")
            params += list(f.project_ids)
        for column, value in (("subject_key", f.subject_key), ("predicate_key", f.predicate_key),
                              ("object_key", f.object_key)):
            if value:
                where.append(f"f.{column}=?")
                params.append(value)
        if f.words:
            where.append("f.id IN (SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?)")
            params.append(" ".join('"' + w.replace('"', '""') + '"' for w in f.words))
        if visible_only:
            where.append(VISIBLE_SQL)
        if holds_at is not None:
            where.append(HOLDS_SQL)
            params += [holds_at, holds_at]
        if recorded_by is not None:
            where.append("f.recorded_at <= ?")
            params.append(recorded_by)
        return " AND ".join(where), params

    def by_fact_id(self, fact_id: str) -> dict | None:
        rows = self.select("f.fact_id=?", [fact_id])
        return rows[0] if rows else None

    def journal_state_changed(self) -> bool:
        saved = {r[0]: [r[1], r[2]] for r in self.conn().execute("SELECT path, size, mtime_ns FROM journal_files")}
        return saved != self.journal.state()

    def select(self, where: str, params: Sequence[Any], *, order: str = "", limit: int | None = None) -> list[dict]:
        sql = f"SELECT f.*, p.root AS project_root FROM facts f JOIN projects p ON p.id=f.project_id WHERE {where}"
        if order:
            sql += f" ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [dict(r) for r in self.conn().execute(sql, list(params))]

    def count(self, where: str, params: Sequence[Any]) -> int:
        return self.conn().execute(f"SELECT COUNT(*) FROM facts f WHERE {where}", list(params)).fetchone()[0]

    def closes_for(self, project_ids: Sequence[int] | None, slots: Sequence[str]) -> list[dict]:
        out: list[dict] = []
        c = self.conn()
        for where, params in _in_slots("", project_ids, slots):
            out.extend(dict(r) for r in c.execute(f"SELECT * FROM fact_closes WHERE {where}", params))
        return out

    def rows_in_slots(self, project_ids: Sequence[int] | None, slots: Sequence[str]) -> list[dict]:
        out: list[dict] = []
        for where, params in _in_slots("f.", project_ids, slots):
            out.extend(self.select(where, params))
        return out

    def all_rows(self) -> list[dict]:
        return [dict(r) for r in self.conn().execute("SELECT * FROM facts ORDER BY fact_id")]

    def all_closes(self) -> list[dict]:
        return [dict(r) for r in self.conn().execute("SELECT * FROM fact_closes ORDER BY project_id, slot, recorded_at, ord")]
