"""The shared record on PostgreSQL (psycopg 3): append an operation after arbitrating it, pull
operations by sequence, wait for a NOTIFY.

Arbitration happens inside the appending transaction, under one advisory lock per team, so
concurrent writers are serialised exactly where it matters: a node's `expectedVersion`, a URI
already taken, the priority budget (counted over `lore_nodes`, the team's live nodes). An
operation id already in the log is not appended again (a push retried after a lost answer).
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from lore_sidecar.engine.memory import nodes as rules
from lore_sidecar.errors import LoreError
from lore_sidecar.shared import schema

log = logging.getLogger(__name__)
CHANNEL = "lore_ops"


TEAM_EXTRA = "install lore-sidecar[team] (pip install 'lore-sidecar[team]')"


def driver() -> Any:
    """psycopg, or a clear error: the team backend's driver ships in the `team` extra only
    (a default install stays small), so `sharedUrl` without it says what to install."""
    try:
        import psycopg
    except ImportError as exc:
        raise LoreError("sharedDriverMissing", f"sharedUrl is set but psycopg cannot be imported ({exc}): "
                        f"{TEAM_EXTRA}") from None
    return psycopg


def driver_problem() -> str | None:
    """What `driver()` would refuse with, in words (lore/status, doctor), or None."""
    try:
        driver()
    except LoreError as exc:
        return exc.message
    return None


def unreachable(exc: Exception) -> LoreError:
    return LoreError("sharedUnreachable", f"the shared record cannot be reached: {exc}", retryable=True)


class SharedRecord:
    def __init__(self, url: str, team: str, origin: str, *, connect_timeout_s: float = 3.0):
        self.url = url
        self.team = team
        self.origin = origin
        self.connect_timeout_s = connect_timeout_s
        self._conn: Any = None
        self._lock = threading.Lock()

    # -- connections ----------------------------------------------------------------------------------
    def _connect(self, autocommit: bool = True) -> Any:
        psycopg = driver()

        try:
            return psycopg.connect(self.url, autocommit=autocommit, connect_timeout=max(1, int(self.connect_timeout_s)))
        except psycopg.Error as exc:
            raise unreachable(exc) from None

    def _use(self) -> Any:
        if self._conn is None or self._conn.closed:
            self._conn = self._connect()
            have = schema.version(self._conn)
            if have != schema.VERSION:  # DDL only when needed: a least-privilege role never runs it
                schema.migrate(self._conn)
        return self._conn

    def _run(self, work):
        """`work(conn)` on the shared connection; a dropped connection becomes sharedUnreachable."""
        psycopg = driver()

        with self._lock:
            try:
                return work(self._use())
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                self.close()
                raise unreachable(exc) from None
            except psycopg.errors.InsufficientPrivilege as exc:
                raise LoreError("sharedReadOnly", f"this machine's role may only read the team's record ({exc}); "
                                "writes need the writer role") from None

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001 (closing a broken connection)
                pass
            self._conn = None

    # -- the log ----------------------------------------------------------------------------------------
    def append(self, op: dict[str, Any], project: str) -> int:
        """Arbitrate and append `op` (carrying its `opId`); returns its sequence number.
        Refusals (versionConflict, nodeExists, notFound, priorityBudget) append nothing."""
        def work(conn) -> int:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"lore:{self.team}",))
                seen = conn.execute("SELECT seq FROM lore_ops WHERE op_id=%s", (op["opId"],)).fetchone()
                if seen:
                    return int(seen[0])
                if op.get("kind") == "nodeOp" and op.get("method") not in ("countUse", "logRecall"):
                    arbitrate(conn, self.team, project, op["method"], op["args"])  # usage changes no node
                seq = conn.execute(
                    "INSERT INTO lore_ops(op_id, team, project, kind, op, origin) VALUES (%s,%s,%s,%s,%s,%s) RETURNING seq",
                    (op["opId"], self.team, project, op["kind"], json.dumps(op), self.origin)).fetchone()[0]
                conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, self.team))
                return int(seq)
        return self._run(work)

    def pull(self, project: str, after: int, limit: int = 2000) -> list[tuple[int, dict[str, Any]]]:
        def work(conn):
            rows = conn.execute("SELECT seq, op FROM lore_ops WHERE team=%s AND project=%s AND seq>%s ORDER BY seq LIMIT %s",
                                (self.team, project, after, limit)).fetchall()
            return [(int(s), o if isinstance(o, dict) else json.loads(o)) for s, o in rows]
        return self._run(work)

    def head(self, project: str) -> tuple[int, float | None]:
        """(latest sequence, its age in seconds) of a project's log."""
        def work(conn):
            row = conn.execute("SELECT seq, EXTRACT(EPOCH FROM now() - at) FROM lore_ops WHERE team=%s AND project=%s"
                               " ORDER BY seq DESC LIMIT 1", (self.team, project)).fetchone()
            return (int(row[0]), float(row[1])) if row else (0, None)
        return self._run(work)

    def listener(self) -> Any:
        conn = self._connect()
        conn.execute(f"LISTEN {CHANNEL}")
        return conn


def arbitrate(conn: Any, team: str, project: str, method: str, args: dict[str, Any]) -> None:
    """Check a node operation against the team's live nodes and record its effect."""
    uri = args.get("uri")
    row = conn.execute("SELECT version, priority, scope, project FROM lore_nodes WHERE team=%s AND uri=%s",
                       (team, uri)).fetchone() if uri else None
    if method in ("createNode", "retain") and row is None:
        scheme, _ = rules.parse_uri(uri)
        scope = args.get("scope") or rules.default_scope(scheme)
        priority = rules.DEFAULT_PRIORITY if args.get("priority") is None else int(args["priority"])
        budget(conn, team, project, scope, priority, None)
        conn.execute("INSERT INTO lore_nodes(team, uri, project, scope, priority, version) VALUES (%s,%s,%s,%s,%s,1)",
                     (team, uri, project if scope == "project" else "", scope, priority))
        return
    if method == "createNode":
        raise LoreError("nodeExists", f"a node already lives at {uri}; update it or move it", uri=uri)
    if row is None:
        raise LoreError("notFound", f"no node at {uri}", uri=uri)
    version, priority, scope, where = row
    if method in ("updateNode", "retain"):
        changes = args.get("changes", {}) if method == "updateNode" else args
        expected = args.get("expected_version")
        if expected is not None and expected != version:
            raise LoreError("versionConflict", f"{uri} is at version {version}, not {expected}", uri=uri, version=version)
        new_priority = priority if changes.get("priority") is None else int(changes["priority"])
        new_scope = changes.get("scope") or scope
        if (new_priority, new_scope) != (priority, scope):
            budget(conn, team, project, new_scope, new_priority, uri)
        # A scope move files the node where the budget counts it now: global nodes under no
        # project, a node moved into project scope under the project that moved it.
        where = where if new_scope == scope else (project if new_scope == "project" else "")
        conn.execute("UPDATE lore_nodes SET version=version+1, priority=%s, scope=%s, project=%s WHERE team=%s AND uri=%s",
                     (new_priority, new_scope, where, team, uri))
    elif method in ("deleteNode", "forget"):
        conn.execute("DELETE FROM lore_nodes WHERE team=%s AND uri=%s", (team, uri))
    elif method == "moveNode":
        if conn.execute("SELECT 1 FROM lore_nodes WHERE team=%s AND uri=%s", (team, args["new_uri"])).fetchone():
            raise LoreError("nodeExists", f"a node already lives at {args['new_uri']}", uri=args["new_uri"])
        conn.execute("UPDATE lore_nodes SET uri=%s, version=version+1 WHERE team=%s AND uri=%s", (args["new_uri"], team, uri))


def budget(conn: Any, team: str, project: str, scope: str, priority: int, exclude: str | None) -> None:
    if priority not in rules.PRIORITY_BUDGET:
        return
    live = conn.execute("SELECT COUNT(*) FROM lore_nodes WHERE team=%s AND scope=%s AND project=%s AND priority=%s"
                        " AND uri IS DISTINCT FROM %s",
                        (team, scope, project if scope == "project" else "", priority, exclude)).fetchone()[0]
    refusal = rules.budget_refusal(priority, live, f"project {project}" if scope == "project" else "the global scope")
    if refusal:
        raise refusal
