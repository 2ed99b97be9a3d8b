"""`lore-sidecar shared init|status|migrate`: set up, inspect and upgrade a team's record."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from lore_sidecar.errors import LoreError
from lore_sidecar.shared import schema
from lore_sidecar.shared.record import SharedRecord, driver, unreachable


def shown(url: str) -> str:
    """The URL without its password."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def run_shared(args: Any) -> int:
    from lore_sidecar.settings import load_settings

    settings, _ = load_settings(workspace_root=Path(args.workspace).resolve(),
                                cli={"storeDir": args.store_dir} if args.store_dir else {})
    s = settings.store
    if not s.shared_url:
        raise LoreError("noSharedUrl", "no shared record is configured: set sharedUrl in the user config "
                        "(or LORE_SHARED_URL) to a postgresql:// URL")
    record = SharedRecord(s.shared_url, s.shared_team, origin="cli")
    psycopg = driver()

    try:
        conn = psycopg.connect(s.shared_url, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        raise unreachable(exc) from None
    with conn:
        if args.shared_verb in ("init", "migrate"):
            before = schema.version(conn)
            after = schema.migrate(conn)
            out: dict[str, Any] = {"url": shown(s.shared_url), "team": s.shared_team, "schemaVersion": after,
                                   "migratedFrom": before}
        else:
            rows = conn.execute("SELECT project, COUNT(*), MAX(seq), MAX(at)::text FROM lore_ops WHERE team=%s"
                                " GROUP BY project ORDER BY project", (s.shared_team,)).fetchall() \
                if schema.version(conn) else []
            nodes = conn.execute("SELECT COUNT(*) FROM lore_nodes WHERE team=%s", (s.shared_team,)).fetchone()[0] \
                if schema.version(conn) else 0
            out = {"url": shown(s.shared_url), "team": s.shared_team, "schemaVersion": schema.version(conn),
                   "supported": schema.VERSION, "liveNodes": nodes,
                   "projects": [{"project": p, "operations": n, "head": h, "last": at} for p, n, h, at in rows]}
    record.close()
    print(json.dumps(out, indent=2))
    return 0
