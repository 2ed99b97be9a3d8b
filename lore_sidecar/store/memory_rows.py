"""SQL for the distiller: per-session marks, distillations, entities.

Reads use the thread's reader connection; writes take the caller's transaction so a
distillation, the mark that says its messages are done, its entities and its outbox rows
commit together.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from lore_sidecar.model import Doc
from lore_sidecar.store.db import Database, select_in

BATCH = 500  # (project, session) pairs per marks query


class MemoryRows:
    def __init__(self, db: Database):
        self.db = db

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        with self.db.write() as c:
            yield c

    # -- noticing new messages ------------------------------------------------------------------
    def newest_by_session(self, after_id: int) -> list[tuple[int, str, int]]:
        """(project_id, session_id, newest message id) of sessions with messages after
        `after_id`. A read: noticing new messages costs the writer no transaction."""
        return [(r[0], r[1], r[2]) for r in self.db.reader().execute(
            "SELECT project_id, session_id, MAX(id) FROM messages WHERE id>? GROUP BY project_id, session_id",
            (after_id,),
        )]

    def distilled_upto(self, keys: Iterable[tuple[int, str]]) -> dict[tuple[int, str], int]:
        keys = list(keys)
        out: dict[tuple[int, str], int] = {}
        for i in range(0, len(keys), BATCH):
            part = keys[i : i + BATCH]
            where = " OR ".join("(project_id=? AND session_id=?)" for _ in part)
            for r in self.db.reader().execute(
                f"SELECT project_id, session_id, distilled_upto FROM memory_marks WHERE {where}",
                [x for key in part for x in key],
            ):
                out[(r[0], r[1])] = r[2]
        return out

    def project_root(self, project_id: int) -> str:
        return self.db.reader().execute("SELECT root FROM projects WHERE id=?", (project_id,)).fetchone()[0]

    def segment(self, project_id: int, session_id: str, after: int, limit: int) -> list[sqlite3.Row]:
        return list(self.db.reader().execute(
            "SELECT id, msg_id, role, text, tool_name, created_at FROM messages"
            " WHERE session_id=? AND project_id=? AND id>? ORDER BY id LIMIT ?",
            (session_id, project_id, after, limit),
        ))

    # -- distillations ----------------------------------------------------------------------------
    def add_distillation(self, c: sqlite3.Connection, row: Mapping[str, Any]) -> int:
        cols = list(row)
        cur = c.execute(
            f"INSERT OR IGNORE INTO distillations({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            [row[k] for k in cols],
        )
        if cur.rowcount != 1:
            return int(c.execute("SELECT id FROM distillations WHERE dist_id=?", (row["dist_id"],)).fetchone()[0])
        key = int(cur.lastrowid)
        c.execute("INSERT INTO index_outbox(op, kind, key, project_id) VALUES ('upsert', 'distillations', ?, ?)",
                  (key, row["project_id"]))
        return key

    def set_distilled(self, c: sqlite3.Connection, project_id: int, session_id: str, upto: int) -> None:
        c.execute(
            "INSERT INTO memory_marks(project_id, session_id, last_msg, distilled_upto) VALUES (?,?,?,?)"
            " ON CONFLICT(project_id, session_id) DO UPDATE SET distilled_upto=MAX(distilled_upto, excluded.distilled_upto),"
            " last_msg=MAX(last_msg, excluded.last_msg)",
            (project_id, session_id, upto, upto))

    def set_curated(self, c: sqlite3.Connection, project_id: int, session_id: str, upto: int) -> None:
        c.execute("UPDATE memory_marks SET curated_upto=MAX(curated_upto, ?) WHERE project_id=? AND session_id=?",
                  (upto, project_id, session_id))

    def open_generation(self, project_id: int, session_id: str, generation: int) -> list[sqlite3.Row]:
        """Rows of one generation not yet consolidated, oldest first."""
        return list(self.db.reader().execute(
            "SELECT * FROM distillations WHERE project_id=? AND session_id=? AND generation=?"
            " AND consolidated_into IS NULL ORDER BY id",
            (project_id, session_id, generation),
        ))

    def consolidation_due(self, threshold: int) -> list[tuple[int, str]]:
        """(project, session) pairs with a generation holding more than `threshold` rows not
        yet consolidated (one pass over the index on (project, session, generation, id))."""
        return [(r[0], r[1]) for r in self.db.reader().execute(
            "SELECT project_id, session_id FROM distillations WHERE consolidated_into IS NULL"
            " GROUP BY project_id, session_id, generation HAVING COUNT(*) > ?",
            (threshold,),
        )]

    def consolidate(self, c: sqlite3.Connection, ids: Sequence[int], into: int) -> None:
        c.executemany("UPDATE distillations SET consolidated_into=? WHERE id=?", [(into, i) for i in ids])

    def curation_due(self) -> list[sqlite3.Row]:
        """Sessions with distillations the curator has not read, with how many."""
        return list(self.db.reader().execute(
            "SELECT k.project_id, k.session_id, k.curated_upto, p.root AS project_root,"
            " (SELECT COUNT(*) FROM distillations d WHERE d.project_id=k.project_id AND d.session_id=k.session_id"
            "  AND d.id>k.curated_upto AND d.generation=0) AS waiting"
            " FROM memory_marks k JOIN projects p ON p.id=k.project_id"
            " WHERE EXISTS (SELECT 1 FROM distillations d WHERE d.project_id=k.project_id"
            "  AND d.session_id=k.session_id AND d.id>k.curated_upto)"))

    def uncurated(self, project_id: int, session_id: str, after: int) -> list[sqlite3.Row]:
        return list(self.db.reader().execute(
            "SELECT * FROM distillations WHERE project_id=? AND session_id=? AND id>? ORDER BY id",
            (project_id, session_id, after),
        ))

    def by_dist_id(self, dist_id: str) -> sqlite3.Row | None:
        return self.db.reader().execute(
            "SELECT d.*, p.root AS project_root FROM distillations d JOIN projects p ON p.id=d.project_id"
            " WHERE d.dist_id=?", (dist_id,)
        ).fetchone()

    def by_ids(self, keys: Iterable[int]) -> dict[int, sqlite3.Row]:
        return {r["id"]: r for r in self._in(
            "SELECT d.*, p.root AS project_root FROM distillations d JOIN projects p ON p.id=d.project_id"
            " WHERE d.id IN ({})", list(keys))}

    def count(self, project_id: int | None) -> int:
        return self.db.reader().execute("SELECT COUNT(*) FROM distillations WHERE project_id IS ?", (project_id,)).fetchone()[0]

    def all_keys(self, table: str) -> list[tuple[int, int]]:
        assert table in ("distillations", "entities")
        return [(r[0], r[1]) for r in self.db.reader().execute(f"SELECT id, project_id FROM {table} ORDER BY id")]

    def distillation_docs(self, keys: Iterable[int]) -> list[Doc]:
        return [Doc(kind="distillations", key=r["id"], project_id=r["project_id"], title=f"gen {r['generation']}",
                    body=r["text"], context=r["session_id"])
                for r in self._in("SELECT id, project_id, generation, session_id, text FROM distillations WHERE id IN ({})", list(keys))]

    def entity_docs(self, keys: Iterable[int]) -> list[Doc]:
        rows = self._in("SELECT id, project_id, name, kind, aliases FROM entities WHERE id IN ({})", list(keys))
        return [Doc(kind="entities", key=r["id"], project_id=r["project_id"], title=r["kind"],
                    body=r["name"] + "\n" + " ".join(json.loads(r["aliases"]))) for r in rows]

    # -- entities ---------------------------------------------------------------------------------
    def upsert_entity(self, c: sqlite3.Connection, project_id: int, name: str, kind: str, aliases: Iterable[str],
                      at: str) -> int:
        c.execute(
            "INSERT INTO entities(project_id, name, kind, aliases, mentions, first_seen) VALUES (?,?,?,'[]',0,?)"
            " ON CONFLICT(project_id, name) DO NOTHING",
            (project_id, name, kind, at),
        )
        row = c.execute("SELECT id, aliases FROM entities WHERE project_id=? AND name=?", (project_id, name)).fetchone()
        known = set(json.loads(row[1]))
        merged = sorted(known | set(aliases))
        c.execute("UPDATE entities SET aliases=?, mentions=mentions+1 WHERE id=?", (json.dumps(merged), row[0]))
        c.executemany("INSERT OR IGNORE INTO entity_aliases(project_id, alias, entity_id) VALUES (?,?,?)",
                      [(project_id, a.lower(), row[0]) for a in {name, *merged}])
        c.execute("INSERT INTO index_outbox(op, kind, key, project_id) VALUES ('upsert', 'entities', ?, ?)",
                  (row[0], project_id))
        return int(row[0])

    def relate(self, c: sqlite3.Connection, project_id: int, subject: int, relation: str, obj: int, evidence: str) -> None:
        c.execute("INSERT OR IGNORE INTO entity_relations(project_id, subject, relation, object, evidence)"
                  " VALUES (?,?,?,?,?)", (project_id, subject, relation, obj, evidence))

    def expansions(self, project_ids: Sequence[int] | None, terms: Sequence[str]) -> list[sqlite3.Row]:
        """Entities any of `terms` names (by canonical name or alias)."""
        if not terms:
            return []
        sql = ("SELECT DISTINCT e.* FROM entity_aliases a JOIN entities e ON e.id=a.entity_id"
               f" WHERE a.alias IN ({','.join('?' * len(terms))})")
        args: list[Any] = [t.lower() for t in terms]
        if project_ids is not None:
            sql += f" AND a.project_id IN ({','.join('?' * len(project_ids)) or 'NULL'})"
            args += list(project_ids)
        return list(self.db.reader().execute(sql + " LIMIT 20", args))

    def entity_rows(self, keys: Iterable[int]) -> dict[int, sqlite3.Row]:
        return {r["id"]: r for r in self._in("SELECT * FROM entities WHERE id IN ({})", list(keys))}

    def entity_by_name(self, name: str) -> sqlite3.Row | None:
        return self.db.reader().execute("SELECT * FROM entities WHERE name=? ORDER BY mentions DESC LIMIT 1", (name,)).fetchone()

    def entity_relations(self, entity_id: int) -> list[sqlite3.Row]:
        return list(self.db.reader().execute(
            "SELECT s.name AS subject, r.relation, o.name AS object, r.evidence FROM entity_relations r"
            " JOIN entities s ON s.id=r.subject JOIN entities o ON o.id=r.object"
            " WHERE r.subject=? OR r.object=? ORDER BY s.name, r.relation, o.name LIMIT 50",
            (entity_id, entity_id),
        ))

    # -- LLM usage --------------------------------------------------------------------------------
    def log_call(self, c: sqlite3.Connection, row: Mapping[str, Any]) -> None:
        cols = list(row)
        c.execute(f"INSERT INTO llm_calls({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", [row[k] for k in cols])

    def llm_usage(self) -> dict[str, int]:
        r = self.db.reader().execute(
            "SELECT COUNT(*), COALESCE(SUM(input_tokens),0), COALESCE(SUM(output_tokens),0),"
            " COALESCE(SUM(cache_read_tokens),0), COALESCE(SUM(cache_write_tokens),0) FROM llm_calls").fetchone()
        return {"calls": r[0], "input": r[1], "output": r[2], "cacheRead": r[3], "cacheWrite": r[4]}

    def _in(self, sql: str, keys: list[int]) -> list[sqlite3.Row]:
        return select_in(self.db.reader(), sql, keys)
