"""SQL for knowledge nodes, their history, and recall usage.

Writes take the caller's connection (one fenced transaction per operation, opened by the
engine through `write()`), so a node change, its history entry and its outbox row commit
together or not at all.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from lore_sidecar.model import GLOBAL_PROJECT, Doc
from lore_sidecar.store.db import Database, select_in

NODE_COLUMNS = (
    "uri", "domain", "project_id", "scope", "content", "category", "priority", "disclosure",
    "expires_at", "suppressed", "sources", "stale", "version", "created_at", "updated_at",
)


class NodeRows:
    def __init__(self, db: Database):
        self.db = db

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        with self.db.write() as c:
            yield c

    # -- reads --------------------------------------------------------------------------------
    def live(self, uri: str, c: sqlite3.Connection | None = None) -> sqlite3.Row | None:
        conn = c or self.db.reader()
        return conn.execute(
            "SELECT n.*, p.root AS project_root FROM nodes n LEFT JOIN projects p ON p.id=n.project_id"
            " WHERE n.uri=? AND n.deleted_at IS NULL",
            (uri,),
        ).fetchone()

    def latest(self, uri: str) -> sqlite3.Row | None:
        """The live node, else the most recently deleted one with that URI (for history)."""
        return self.db.reader().execute(
            "SELECT n.*, p.root AS project_root FROM nodes n LEFT JOIN projects p ON p.id=n.project_id"
            " WHERE n.uri=? ORDER BY n.deleted_at IS NOT NULL, n.id DESC LIMIT 1",
            (uri,),
        ).fetchone()

    def count_at_priority(self, c: sqlite3.Connection | None, scope: str, project_id: int | None, priority: int,
                          exclude_id: int | None = None) -> int:
        conn = c or self.db.reader()
        return conn.execute(
            "SELECT COUNT(*) FROM nodes WHERE deleted_at IS NULL AND scope=? AND priority=?"
            " AND (project_id IS ? OR scope='global') AND id IS NOT ?",
            (scope, priority, project_id if scope == "project" else None, exclude_id),
        ).fetchone()[0]

    def by_ids(self, keys: Iterable[int]) -> dict[int, sqlite3.Row]:
        rows = select_in(self.db.reader(), "SELECT n.*, p.root AS project_root FROM nodes n LEFT JOIN projects p"
                         " ON p.id=n.project_id WHERE n.id IN ({})", list(keys))
        return {r["id"]: r for r in rows}

    def listing(self, project_ids: list[int] | None, *, include_global: bool = True, min_priority: int = 4,
                limit: int = 10_000) -> list[sqlite3.Row]:
        """Live nodes of these projects (and global ones), best priority first, then URI."""
        sql = ("SELECT n.*, p.root AS project_root FROM nodes n LEFT JOIN projects p ON p.id=n.project_id"
               " WHERE n.deleted_at IS NULL AND n.priority<=?")
        args: list[Any] = [min_priority]
        if project_ids is not None:
            marks = ",".join("?" * len(project_ids)) or "NULL"
            sql += f" AND (n.project_id IN ({marks})" + (" OR n.scope='global')" if include_global else ")")
            args += project_ids
        sql += " ORDER BY n.priority, n.uri LIMIT ?"
        return list(self.db.reader().execute(sql, (*args, limit)))

    def domains(self, project_ids: list[int] | None) -> list[sqlite3.Row]:
        sql = "SELECT domain, scope, COUNT(*) AS nodes, MIN(priority) AS best FROM nodes WHERE deleted_at IS NULL"
        args: list[Any] = []
        if project_ids is not None:
            sql += f" AND (project_id IN ({','.join('?' * len(project_ids)) or 'NULL'}) OR scope='global')"
            args += project_ids
        return list(self.db.reader().execute(sql + " GROUP BY domain, scope ORDER BY domain", args))

    def history(self, uri: str) -> list[sqlite3.Row]:
        """Every entry of every node that ever had this URI (moves included), oldest first."""
        return list(self.db.reader().execute(
            "SELECT h.* FROM node_history h WHERE h.node_id IN"
            " (SELECT node_id FROM node_history WHERE uri=?) ORDER BY h.id",
            (uri,),
        ))

    def citing(self, c: sqlite3.Connection, project_id: int, paths: Sequence[str]) -> list[sqlite3.Row]:
        """Live nodes of a project whose sources name one of these paths (once each). One
        statement for a scan's whole batch of files: a statement per file cost a first scan
        of 2,000 files ~80 ms on the thread that writes them."""
        out: dict[int, sqlite3.Row] = {}
        for row in select_in(
            c,
            "SELECT * FROM nodes n WHERE n.deleted_at IS NULL AND n.project_id=? AND EXISTS ("
            " SELECT 1 FROM json_each(n.sources) s WHERE json_extract(s.value, '$.path') IN ({}))",
            list(paths), (project_id,),
        ):
            out.setdefault(row["id"], row)
        return list(out.values())

    def file_sha(self, c: sqlite3.Connection | None, project_id: int, rel: str) -> str | None:
        row = (c or self.db.reader()).execute(
            "SELECT sha256 FROM files WHERE project_id=? AND path=?", (project_id, rel)
        ).fetchone()
        return row[0] if row else None

    def docs(self, keys: Iterable[int]) -> list[Doc]:
        """Live nodes as the indexes see them; a global node belongs to no project."""
        rows = self.by_ids(keys)
        return [Doc(kind="knowledge", key=r["id"], project_id=r["project_id"] or GLOBAL_PROJECT,
                    title=f"{r['category'] or ''} {r['uri']}".strip(), body=r["content"], context=r["disclosure"] or "")
                for r in rows.values() if r["deleted_at"] is None]

    def all_keys(self) -> list[tuple[int, int]]:
        return [(r[0], r[1] or 0) for r in self.db.reader().execute(
            "SELECT id, project_id FROM nodes WHERE deleted_at IS NULL ORDER BY id")]

    def count(self, project_id: int | None) -> int:
        return self.db.reader().execute(
            "SELECT COUNT(*) FROM nodes WHERE deleted_at IS NULL AND (project_id IS ? OR scope='global')",
            (project_id,),
        ).fetchone()[0]

    def usage(self) -> dict[str, dict[str, int]]:
        """Per runtime: leads shown (`recalled`) and leads opened (`used`)."""
        r = self.db.reader()
        used = {row[0]: row[1] for row in r.execute(
            "SELECT COALESCE(runtime, 'unknown'), COUNT(*) FROM recall_usage GROUP BY 1 ORDER BY 1")}
        recalled = {row[0]: row[1] for row in r.execute(
            "SELECT COALESCE(runtime, 'unknown'), SUM(leads) FROM recall_log GROUP BY 1 ORDER BY 1")}
        return {"recalled": recalled, "used": used}

    def log_recall(self, c: sqlite3.Connection, query_id: str, session_id: str | None, runtime: str | None,
                   leads: int, at: str, uris: Sequence[str] = ()) -> None:
        c.execute("INSERT OR IGNORE INTO recall_log(query_id, session_id, runtime, leads, at) VALUES (?,?,?,?,?)",
                  (query_id, session_id, runtime, leads, at))
        c.executemany("INSERT OR IGNORE INTO recall_shown(query_id, uri, at) VALUES (?,?,?)",
                      [(query_id, u, at) for u in uris])

    def usage_series(self, days: int) -> dict[str, Any]:
        """{"days": [YYYY-MM-DD...], "runtimes": {runtime: {"recalled": [n per day], "used": [...]}}}."""
        r = self.db.reader()
        since = f"-{int(days)} days"
        rows = {"recalled": r.execute("SELECT substr(at,1,10), COALESCE(runtime,'unknown'), SUM(leads) FROM recall_log"
                                      " WHERE at >= strftime('%Y-%m-%d', 'now', ?) GROUP BY 1, 2", (since,)).fetchall(),
                "used": r.execute("SELECT substr(at,1,10), COALESCE(runtime,'unknown'), COUNT(*) FROM recall_usage"
                                  " WHERE at >= strftime('%Y-%m-%d', 'now', ?) GROUP BY 1, 2", (since,)).fetchall()}
        day_list = sorted({d for kind in rows.values() for d, _, _ in kind})
        out: dict[str, dict[str, list[int]]] = {}
        for kind, found in rows.items():
            for day, runtime, n in found:
                series = out.setdefault(runtime, {"recalled": [0] * len(day_list), "used": [0] * len(day_list)})
                series[kind][day_list.index(day)] = int(n or 0)
        return {"days": day_list, "runtimes": out}

    def usage_history(self, uris: Sequence[str]) -> dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]]]]:
        """Per URI: ([(at, query id) shown], [(at, query id) opened])."""
        out: dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]]]] = {u: ([], []) for u in uris}
        r = self.db.reader()
        for part in range(0, len(uris), 500):
            keys = list(uris[part: part + 500])
            marks = ",".join("?" * len(keys))
            for uri, at, q in r.execute(f"SELECT uri, at, query_id FROM recall_shown WHERE uri IN ({marks})", keys):
                out[uri][0].append((at, q))
            for uri, at, q in r.execute(f"SELECT uri, at, query_id FROM recall_usage WHERE uri IN ({marks})", keys):
                out[uri][1].append((at, q))
        return out

    # -- writes (inside the caller's transaction) ------------------------------------------------
    def insert(self, c: sqlite3.Connection, fields: Mapping[str, Any]) -> int:
        cols = [k for k in NODE_COLUMNS if k in fields]
        cur = c.execute(
            f"INSERT INTO nodes({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            [fields[k] for k in cols],
        )
        return int(cur.lastrowid)

    def update(self, c: sqlite3.Connection, node_id: int, fields: Mapping[str, Any]) -> None:
        cols = [k for k in fields if k in NODE_COLUMNS or k == "deleted_at"]
        c.execute(f"UPDATE nodes SET {', '.join(k + '=?' for k in cols)} WHERE id=?", [*[fields[k] for k in cols], node_id])

    def add_history(self, c: sqlite3.Connection, node_id: int, uri: str, version: int, action: str,
                    snapshot: Mapping[str, Any], runtime: str, at: str) -> None:
        c.execute(
            "INSERT INTO node_history(node_id, uri, version, action, snapshot, runtime, at) VALUES (?,?,?,?,?,?,?)",
            (node_id, uri, version, action, json.dumps(snapshot, sort_keys=True), runtime, at),
        )

    def queue(self, c: sqlite3.Connection, op: str, node_id: int, project_id: int | None) -> None:
        c.execute("INSERT INTO index_outbox(op, kind, key, project_id) VALUES (?, 'knowledge', ?, ?)",
                  (op, node_id, project_id or 0))

    def count_use(self, c: sqlite3.Connection, query_id: str, uri: str, session_id: str | None,
                  runtime: str | None, at: str) -> bool:
        cur = c.execute("INSERT OR IGNORE INTO recall_usage(query_id, uri, session_id, runtime, at) VALUES (?,?,?,?,?)",
                        (query_id, uri, session_id, runtime, at))
        if cur.rowcount == 1:
            c.execute("UPDATE nodes SET uses=uses+1 WHERE uri=? AND deleted_at IS NULL", (uri,))
        return cur.rowcount == 1
