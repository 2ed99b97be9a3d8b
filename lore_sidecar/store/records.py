"""Reads and writes of the record tables. Every row change that an index must see also
writes an `index_outbox` row in the same transaction."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence

from lore_sidecar.model import (
    Doc,
    Neighbours,
    NewMessage,
    Project,
    day_number,
    says_nothing,
    says_something_sql,
)
from lore_sidecar.store import turns
from lore_sidecar.store.db import Database, select_in, utc_now
from lore_sidecar.store.file_rows import FileRows
from lore_sidecar.store.memory_rows import MemoryRows
from lore_sidecar.store.node_rows import NodeRows
from lore_sidecar.store.outbox_rows import OutboxRows

CONTEXT_CHARS = 2000


class Records(OutboxRows):
    def __init__(self, db: Database):
        self.db = db
        self.memory = MemoryRows(db)  # distillations, marks, entities, LLM calls
        self.nodes = NodeRows(db)  # knowledge nodes, history, usage
        self.files = FileRows(db)  # workspace files and their chunks

    # -- meta -----------------------------------------------------------------------------
    def meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.reader().execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, conn: sqlite3.Connection, key: str, value: str) -> None:
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )

    def fenced(self, fn: Callable[[sqlite3.Connection], None]) -> None:
        """Run `fn` (a derived-state commit: Tantivy, usearch snapshot) inside a write
        transaction whose epoch is checked, so an ex-writer never commits derived state."""
        with self.db.write() as c:
            fn(c)

    def index_epoch(self) -> int:
        """Which writer's index directory readers should use (0: the pre-epoch layout)."""
        return int(self.meta("index_epoch", "0") or 0)

    def publish_index_epoch(self, epoch: int) -> None:
        with self.db.write() as c:
            self.set_meta(c, "index_epoch", str(epoch))

    # -- projects -------------------------------------------------------------------------
    def find_project(self, root: str) -> Project | None:
        row = self.db.reader().execute("SELECT id, root FROM projects WHERE root=?", (root,)).fetchone()
        return Project(row[0], row[1]) if row else None

    def ensure_project(self, root: str) -> Project:
        found = self.find_project(root)
        if found:
            return found
        with self.db.write() as c:
            return Project(self._ensure_project(c, root), root)

    def ensure_project_in(self, c: sqlite3.Connection, root: str) -> int:
        return self._ensure_project(c, root)

    def projects_in(self, c: sqlite3.Connection) -> list[Project]:
        return [Project(r[0], r[1]) for r in c.execute("SELECT id, root FROM projects ORDER BY id")]

    def note_paths(self, c: sqlite3.Connection, project_id: int) -> list[str]:
        return [
            r[0]
            for r in c.execute(
                "SELECT path FROM files WHERE project_id=? AND (path LIKE '%.md' OR path LIKE '%.markdown')"
                " ORDER BY path",
                (project_id,),
            )
        ]

    def projects(self) -> list[Project]:
        return [Project(r[0], r[1]) for r in self.db.reader().execute("SELECT id, root FROM projects")]

    # -- messages -------------------------------------------------------------------------
    def insert_messages(
        self, project_id: int, messages: Sequence[NewMessage]
    ) -> list[tuple[str, bool]]:
        """Insert in one transaction; returns (msg_id, was_new) per message, in order."""
        with self.db.write() as c:
            return self._insert_messages(c, project_id, messages)

    def _insert_messages(
        self, c: sqlite3.Connection, project_id: int, messages: Sequence[NewMessage]
    ) -> list[tuple[str, bool]]:
        out: list[tuple[str, bool]] = []
        now = utc_now()
        # Each session's last message that says something (the one whose context a new one completes).
        last_in_session: dict[str, int | None] = {}
        fresh: set[int] = set()  # rows this call inserted: their own outbox entry is still pending
        for m in messages:
            if m.session_id not in last_in_session:
                row = c.execute(f"SELECT id FROM messages WHERE session_id=? AND {says_something_sql('text')}"
                                " ORDER BY id DESC LIMIT 1", (m.session_id,)).fetchone()
                last_in_session[m.session_id] = row[0] if row else None
            cur = c.execute(
                "INSERT OR IGNORE INTO messages(project_id, session_id, msg_id, role, harness,"
                " content, text, tool_name, tool_call_id, created_at, recorded_at)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    project_id,
                    m.session_id,
                    m.msg_id,
                    m.role,
                    m.harness,
                    m.content_json,
                    m.text,
                    m.tool_name,
                    m.tool_call_id,
                    m.created_at,
                    now,
                ),
            )
            new = cur.rowcount == 1
            if new:
                prev = last_in_session[m.session_id]
                # The previous message's context now includes this one (if this one says
                # something); one inserted by this call is indexed after the commit anyway,
                # with its context as it is then.
                if not says_nothing(m.text):
                    if prev is not None and prev not in fresh:
                        c.execute(
                            "INSERT INTO index_outbox(op, kind, key, project_id)"
                            " SELECT 'upsert', 'messages', id, project_id FROM messages WHERE id=?",
                            (prev,),
                        )
                    last_in_session[m.session_id] = cur.lastrowid
                c.execute(
                    "INSERT INTO index_outbox(op, kind, key, project_id) VALUES"
                    " ('upsert', 'messages', ?, ?)",
                    (cur.lastrowid, project_id),
                )
                fresh.add(cur.lastrowid)
            out.append((m.msg_id, new))
        return out

    def _ensure_project(self, c: sqlite3.Connection, root: str) -> int:
        c.execute("INSERT OR IGNORE INTO projects(root, created_at) VALUES (?, ?)", (root, utc_now()))
        return c.execute("SELECT id FROM projects WHERE root=?", (root,)).fetchone()[0]

    # -- spooled operations (applied by the writer, exactly once) --------------------------
    def apply_ops(self, ops: Sequence[tuple[str, str, Callable[[sqlite3.Connection], dict]]]) -> list[bool]:
        """Apply (op_id, kind, apply) triples in one transaction. `apply(conn)` writes the
        rows and returns the result to remember. Returns, per op, whether it was new."""
        out: list[bool] = []
        now = utc_now()
        with self.db.write() as c:
            for op_id, kind, apply in ops:
                if c.execute("SELECT 1 FROM applied_ops WHERE op_id=?", (op_id,)).fetchone():
                    out.append(False)
                    continue
                result = apply(c)
                c.execute(
                    "INSERT INTO applied_ops(op_id, kind, epoch, applied_at, result) VALUES (?,?,?,?,?)",
                    (op_id, kind, self.db.epoch, now, json.dumps(result)),
                )
                out.append(True)
        return out

    def record_messages_op(self, root: str, messages: Sequence[NewMessage]) -> Callable[[sqlite3.Connection], dict]:
        def apply(c: sqlite3.Connection) -> dict:
            outcome = self._insert_messages(c, self._ensure_project(c, root), messages)
            # `seq`: the outbox position that makes these rows searchable (read-your-writes).
            seq = c.execute("SELECT COALESCE(MAX(seq), 0) FROM index_outbox").fetchone()[0]
            return {
                "recorded": sum(1 for _, new in outcome if new),
                "duplicates": sum(1 for _, new in outcome if not new),
                "seq": seq,
            }

        return apply

    def mark_applied(self, c: sqlite3.Connection, op_id: str, kind: str, result: dict) -> None:
        c.execute(
            "INSERT INTO applied_ops(op_id, kind, epoch, applied_at, result) VALUES (?,?,?,?,?)",
            (op_id, kind, self.db.epoch, utc_now(), json.dumps(result)),
        )

    def settle_op(self, op_id: str, kind: str, result: dict) -> None:
        """A spooled operation settled without writing (refused, or found already written):
        remembered, so its sender learns the outcome and it is never applied again."""
        with self.db.write() as c:
            if not c.execute("SELECT 1 FROM applied_ops WHERE op_id=?", (op_id,)).fetchone():
                self.mark_applied(c, op_id, kind, result)

    def op_result(self, op_id: str) -> dict | None:
        row = self.db.reader().execute("SELECT result FROM applied_ops WHERE op_id=?", (op_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def prune_applied_ops(self, older_than: str) -> None:
        with self.db.write() as c:
            c.execute("DELETE FROM applied_ops WHERE applied_at < ?", (older_than,))

    def existing_message_ids(self, session_id: str, msg_ids: Sequence[str]) -> set[str]:
        if not msg_ids:
            return set()
        conn = self.db.reader()
        out: set[str] = set()
        for i in range(0, len(msg_ids), 900):
            part = list(msg_ids[i : i + 900])
            rows = conn.execute(
                f"SELECT msg_id FROM messages WHERE session_id=? AND msg_id IN ({','.join('?' * len(part))})",
                [session_id, *part],
            )
            out.update(r[0] for r in rows)
        return out

    # -- writer epochs ----------------------------------------------------------------------
    def epoch(self) -> int:
        return int(self.meta("epoch", "0") or 0)

    def epochs(self) -> list[dict]:
        rows = self.db.reader().execute(
            "SELECT epoch, pid, claimed_at, claimed_ns, commits, last_commit_ns FROM epochs ORDER BY epoch"
        )
        return [dict(r) for r in rows]

    def message_docs(self, keys: Iterable[int]) -> list[Doc]:
        keys = list(keys)
        if not keys:
            return []
        # The messages before and after it in its session are its context: a reply answers
        # in its own words what the question asked in others. In an agent's session those
        # are the nearest that say something: a bare tool call or an empty thought is passed
        # over, and has no context of its own (found by its context alone, it was noise on
        # a page). (A new message that says something re-queues the one before it, whose
        # context it completes: see `_insert_messages`.)
        says = says_something_sql("m.text")
        rows = self._in(
            f"SELECT m.id, m.project_id, m.role, m.text, m.created_at,"
            f" CASE WHEN {says} THEN {turns.nearest_sql('x.text', before=True)} END AS prev,"
            f" CASE WHEN {says} THEN {turns.nearest_sql('x.text', before=False)} END AS next"
            " FROM messages m WHERE m.id IN ({})",
            keys,
        )
        return [
            Doc(
                kind="messages",
                key=r["id"],
                project_id=r["project_id"],
                title=r["role"],
                body=r["text"],
                context=(r["prev"] or "")[:CONTEXT_CHARS] + "\n" + (r["next"] or "")[:CONTEXT_CHARS],
                day=day_number(r["created_at"]) or 0,
            )
            for r in rows
        ]

    def fact_docs(self, keys: Iterable[int]) -> list[Doc]:
        rows = self._in("SELECT id, project_id, subject, predicate, object FROM facts WHERE id IN ({})", list(keys))
        return [
            Doc(kind="facts", key=r[0], project_id=r[1], title=r[3], body=f"{r[2]} {r[3]} {r[4]}") for r in rows
        ]

    def fact_rows(self, keys: Iterable[int]) -> dict[int, sqlite3.Row]:
        rows = self._in(
            "SELECT f.*, p.root AS project_root FROM facts f JOIN projects p ON p.id=f.project_id"
            " WHERE f.id IN ({})",
            list(keys),
        )
        return {r["id"]: r for r in rows}

    def message_neighbours(self, keys: Iterable[int]) -> dict[int, Neighbours]:
        """Each message's place in its session (`store/turns.py`)."""
        return turns.neighbours(self.db.reader(), list(keys))

    def message_rows(self, keys: Iterable[int]) -> dict[int, sqlite3.Row]:
        """What ranking and a hit's address need, without the texts (a recall reads ~80
        candidates' rows and shows ten: `message_texts` reads those ten's texts)."""
        # From the covering index only (migration 0009): SQLite prefers the table's rowid,
        # where a long message's text lies between these columns.
        rows = self._in("SELECT id, session_id, msg_id, role, created_at FROM messages INDEXED BY messages_meta"
                        " WHERE id IN ({})", list(keys))
        return {r["id"]: r for r in rows}

    def messages_naming(self, keys: Iterable[int], names: Sequence[str]) -> dict[int, int]:
        """message id -> how many of `names` its text holds, exactly as written (those with none
        left out)."""
        if not names:
            return {}
        held = " + ".join("(instr(text, ?) > 0)" for _ in names)
        rows = select_in(self.db.reader(), f"SELECT id, {held} FROM messages WHERE id IN ({{}})", list(keys), lead=names)
        return {r[0]: r[1] for r in rows if r[1]}

    def message_texts(self, keys: Iterable[int]) -> dict[int, str]:
        return {r[0]: r[1] for r in self._in("SELECT id, text FROM messages WHERE id IN ({})", list(keys))}

    def tool_results(self, root: str, after_id: int, names: Sequence[str], limit: int = 200) -> list[tuple[int, str]]:
        """(id, content) of the project's tool results from tools named `names`, after `after_id`."""
        rows = self.db.reader().execute(
            f"SELECT m.id, m.content FROM messages m JOIN projects p ON p.id=m.project_id WHERE p.root=? AND m.id>?"
            f" AND lower(m.tool_name) IN ({','.join('?' * len(names))}) ORDER BY m.id LIMIT ?",
            (root, after_id, *names, limit)).fetchall()
        return [(r[0], r[1]) for r in rows]

    def last_message_id(self) -> int:
        return self.db.reader().execute("SELECT COALESCE(MAX(id), 0) FROM messages").fetchone()[0]

    def message_by_uri_parts(self, session_id: str, msg_id: str) -> sqlite3.Row | None:
        return (
            self.db.reader()
            .execute(
                "SELECT m.*, p.root AS project_root FROM messages m"
                " JOIN projects p ON p.id=m.project_id WHERE session_id=? AND msg_id=?",
                (session_id, msg_id),
            )
            .fetchone()
        )

    def all_keys(self, kind: str) -> list[tuple[int, int]]:
        """(key, project_id) of every row of an indexed kind, for rebuilds."""
        if kind == "messages":
            sql = "SELECT id, project_id FROM messages ORDER BY id"
        elif kind == "facts":
            sql = "SELECT id, project_id FROM facts ORDER BY id"
        elif kind in ("distillations", "entities"):
            return self.memory.all_keys(kind)
        elif kind == "knowledge":
            return self.nodes.all_keys()
        else:
            sql = "SELECT c.id, f.project_id FROM chunks c JOIN files f ON f.id=c.file_id ORDER BY c.id"
        return [(r[0], r[1]) for r in self.db.reader().execute(sql)]

    # -- counts ---------------------------------------------------------------------------
    def counts(self, project_id: int | None) -> dict[str, int]:
        r = self.db.reader()
        if project_id is None:
            msgs = r.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
            files = r.execute("SELECT COUNT(*) FROM files").fetchone()[0]
            chunks = r.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            facts = r.execute("SELECT COUNT(*) FROM facts").fetchone()[0]
            dists = r.execute("SELECT COUNT(*) FROM distillations").fetchone()[0]
            nodes = r.execute("SELECT COUNT(*) FROM nodes WHERE deleted_at IS NULL").fetchone()[0]
            ents = r.execute("SELECT COUNT(*) FROM entities").fetchone()[0]
        else:
            msgs = r.execute("SELECT COUNT(*) FROM messages WHERE project_id=?", (project_id,)).fetchone()[0]
            files = r.execute("SELECT COUNT(*) FROM files WHERE project_id=?", (project_id,)).fetchone()[0]
            chunks = r.execute(
                "SELECT COUNT(*) FROM chunks c JOIN files f ON f.id=c.file_id WHERE f.project_id=?",
                (project_id,),
            ).fetchone()[0]
            facts = r.execute("SELECT COUNT(*) FROM facts WHERE project_id=?", (project_id,)).fetchone()[0]
            dists = r.execute("SELECT COUNT(*) FROM distillations WHERE project_id=?", (project_id,)).fetchone()[0]
            nodes = r.execute("SELECT COUNT(*) FROM nodes WHERE deleted_at IS NULL AND (project_id=? OR scope='global')",
                              (project_id,)).fetchone()[0]
            ents = r.execute("SELECT COUNT(*) FROM entities WHERE project_id=?", (project_id,)).fetchone()[0]
        return {"messages": msgs, "files": files, "chunks": chunks, "facts": facts, "distillations": dists,
                "knowledge": nodes, "entities": ents}

    def _in(self, sql: str, keys: list[int]) -> list[sqlite3.Row]:
        return select_in(self.db.reader(), sql, keys)
