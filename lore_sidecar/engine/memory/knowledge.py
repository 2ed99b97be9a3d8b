"""Knowledge nodes: create, update, move, soft-delete, history, staleness, usage.

Every change is one fenced transaction that writes the node row, a history entry naming the
runtime that made it, and an outbox row for the indexes. Checks that depend on the store
(the priority budget, version conflicts, a taken URI) run inside that transaction, so two
writers of the same store cannot both squeeze under a budget. `also(conn, result)` lets a
caller commit something in the same transaction (the spool marks an operation applied).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from lore_sidecar.engine.memory import nodes as rules
from lore_sidecar.errors import LoreError, not_found

Also = Callable[[Any, dict], None] | None
UNSET: Any = object()


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Knowledge:
    def __init__(self, rows, records, *, clock: Callable[[], str] = now_iso):
        self.rows = rows
        self.records = records
        self.clock = clock

    # -- writes -----------------------------------------------------------------------------------
    def create(self, root: str, *, uri: str, content: str, category: str | None = None, priority: int | None = None,
               disclosure: str | None = None, scope: str | None = None, sources: Any = None,
               expires_at: str | None = None, runtime: str = "client", also: Also = None,
               review: Mapping[str, Any] | None = None) -> dict[str, Any]:
        fields = self.check_create(uri=uri, content=content, category=category, priority=priority,
                                   disclosure=disclosure, scope=scope, sources=sources)
        with self.rows.write() as c:
            return self.create_in(c, root, fields, expires_at=expires_at, runtime=runtime, also=also, review=review)

    def check_create(self, *, uri: str, content: str, category: str | None, priority: int | None,
                     disclosure: str | None, scope: str | None, sources: Any) -> dict[str, Any]:
        """Every refusal that does not need the store (a follower runs it before spooling)."""
        scheme, domain = rules.parse_uri(uri)
        rules.check_fields(category=category, priority=priority, scope=scope)
        return {
            "uri": uri, "domain": domain, "scope": scope or rules.default_scope(scheme),
            "content": rules.check_content(content), "category": category,
            "priority": rules.DEFAULT_PRIORITY if priority is None else priority,
            "disclosure": disclosure or None, "sources": rules.normalise_sources(sources),
        }

    def create_in(self, c, root: str, fields: dict[str, Any], *, expires_at: str | None, runtime: str,
                  also: Also = None, review: Mapping[str, Any] | None = None) -> dict[str, Any]:
        uri = fields["uri"]
        if self.rows.live(uri, c) is not None:
            raise LoreError("nodeExists", f"a node already lives at {uri}; update it or move it", uri=uri)
        project_id = self.records.ensure_project_in(c, root) if fields["scope"] == "project" else None
        self._check_budget(c, fields["scope"], project_id, fields["priority"], root)
        now = self.clock()
        row = {**fields, "project_id": project_id, "expires_at": expires_at, "suppressed": 0,
               "sources": json.dumps(self._hashed(c, project_id, fields["sources"])), "stale": None,
               "version": 1, "created_at": now, "updated_at": now}
        node_id = self.rows.insert(c, row)
        self.rows.add_history(c, node_id, uri, 1, "create", _marked(rules.snapshot(row), review), runtime, now)
        self.rows.queue(c, "upsert", node_id, project_id)
        result = {"uri": uri, "version": 1, "warnings": rules.disclosure_warnings(fields["disclosure"])}
        if also:
            also(c, result)
        return result

    def update(self, uri: str, *, changes: Mapping[str, Any], expected_version: int | None = None,
               runtime: str = "client", also: Also = None, review: Mapping[str, Any] | None = None) -> dict[str, Any]:
        self.check_update(changes)
        with self.rows.write() as c:
            return self.update_in(c, uri, changes, expected_version=expected_version, runtime=runtime, also=also,
                                  review=review)

    def check_update(self, changes: Mapping[str, Any]) -> None:
        rules.check_fields(category=changes.get("category"), priority=changes.get("priority"), scope=changes.get("scope"))
        if "content" in changes:
            rules.check_content(changes["content"])
        if "sources" in changes:
            rules.normalise_sources(changes["sources"])

    def update_in(self, c, uri: str, changes: Mapping[str, Any], *, expected_version: int | None, runtime: str,
                  also: Also = None, action: str = "update", review: Mapping[str, Any] | None = None) -> dict[str, Any]:
        row = self._live(c, uri)
        if expected_version is not None and expected_version != row["version"]:
            raise LoreError("versionConflict", f"{uri} is at version {row['version']}, not {expected_version}",
                            uri=uri, version=row["version"])
        new = {k: v for k, v in changes.items() if k in ("content", "category", "priority", "disclosure",
                                                         "expires_at", "suppressed", "scope")}
        if "content" in new:
            new["content"] = rules.check_content(new["content"])
        if "sources" in changes:
            new["sources"] = json.dumps(self._hashed(c, row["project_id"], rules.normalise_sources(changes["sources"])))
        if "stale" in changes:
            # Trigger: a dream rollback (never the wire: UpdateNodeParams has no stale). Why: the
            # node it demoted for a stale source must come back flagged, as it was. Outcome: the
            # flag is written as given.
            new["stale"] = json.dumps(changes["stale"]) if changes["stale"] else None
        else:
            if row["stale"] and "sources" not in changes:
                # Trigger: an update of a node flagged stale. Why: whoever updates it has looked
                # at it again. Outcome: its sources are re-hashed as they are now; the flag clears.
                new["sources"] = json.dumps(self._hashed(c, row["project_id"], [
                    {"path": s["path"], "sha256": None} for s in json.loads(row["sources"])]))
            new["stale"] = None
        scope = new.get("scope", row["scope"])
        priority = new.get("priority", row["priority"])
        if (scope, priority) != (row["scope"], row["priority"]):
            self._check_budget(c, scope, row["project_id"], priority, row["project_root"] or "global", exclude=row["id"])
        version = row["version"] + 1
        now = self.clock()
        new.update(version=version, updated_at=now)
        self.rows.update(c, row["id"], new)
        merged = {**dict(row), **new}
        self.rows.add_history(c, row["id"], uri, version, action, _marked(rules.snapshot(merged), review), runtime, now)
        self.rows.queue(c, "upsert", row["id"], row["project_id"])
        result = {"uri": uri, "version": version, "warnings": rules.disclosure_warnings(merged["disclosure"])}
        if also:
            also(c, result)
        return result

    def move(self, uri: str, new_uri: str, *, runtime: str = "client", also: Also = None) -> dict[str, Any]:
        _, domain = rules.parse_uri(new_uri)
        with self.rows.write() as c:
            row = self._live(c, uri)
            if self.rows.live(new_uri, c) is not None:
                raise LoreError("nodeExists", f"a node already lives at {new_uri}", uri=new_uri)
            version = row["version"] + 1
            now = self.clock()
            self.rows.update(c, row["id"], {"uri": new_uri, "domain": domain, "version": version, "updated_at": now})
            self.rows.add_history(c, row["id"], new_uri, version, "move",
                                  {**rules.snapshot(dict(row)), "uri": new_uri, "from": uri}, runtime, now)
            self.rows.queue(c, "upsert", row["id"], row["project_id"])
            result = {"uri": new_uri, "version": version}
            if also:
                also(c, result)
            return result

    def delete(self, uri: str, *, runtime: str = "client", reason: str | None = None, also: Also = None,
               review: Mapping[str, Any] | None = None) -> dict[str, Any]:
        with self.rows.write() as c:
            row = self._live(c, uri)
            version = row["version"] + 1
            now = self.clock()
            self.rows.update(c, row["id"], {"deleted_at": now, "version": version, "updated_at": now})
            snap = {**rules.snapshot(dict(row)), **({"reason": reason} if reason else {})}
            self.rows.add_history(c, row["id"], uri, version, "delete", _marked(snap, review), runtime, now)
            self.rows.queue(c, "delete", row["id"], row["project_id"])
            result = {"uri": uri, "version": version, "deleted": True}
            if also:
                also(c, result)
            return result

    # -- staleness --------------------------------------------------------------------------------
    def files_changed(self, c, project_id: int, changes: Sequence[tuple[str, str | None]]) -> int:
        """Inside the transaction that records the files: flag every node citing one of the
        changed paths whose recorded hash no longer matches (changed, or gone when its sha is
        None). `changes`: (path, new sha or None). Returns how many were flagged."""
        shas = dict(changes)
        flagged = 0
        for row in self.rows.citing(c, project_id, list(shas)):
            sources = json.loads(row["sources"])
            for cited in sources:
                rel = cited.get("path")
                if rel not in shas:
                    continue
                sha = shas[rel]
                if sha is not None and cited.get("sha256") in (None, sha):
                    continue
                stale = {"path": rel, "reason": "missing" if sha is None else "changed", "since": self.clock()}
                self.rows.update(c, row["id"], {"stale": json.dumps(stale)})
                self.rows.queue(c, "upsert", row["id"], row["project_id"])
                flagged += 1
                break
        return flagged

    # -- reads ------------------------------------------------------------------------------------
    def get(self, uri: str) -> dict[str, Any]:
        row = self.rows.live(uri)
        if row is None:
            raise not_found(uri)
        return self.wire(row)

    def history(self, uri: str) -> dict[str, Any]:
        entries = self.rows.history(uri)
        if not entries:
            raise not_found(uri)
        return {"uri": uri, "entries": [
            {"version": h["version"], "action": h["action"], "uri": h["uri"], "runtime": h["runtime"], "at": h["at"],
             "node": json.loads(h["snapshot"])} for h in entries]}

    def wire(self, row: Mapping[str, Any]) -> dict[str, Any]:
        stale = json.loads(row["stale"]) if row["stale"] else None
        return {
            "uri": row["uri"], "content": row["content"], "category": row["category"], "priority": row["priority"],
            "scope": row["scope"], "disclosure": row["disclosure"], "expiresAt": row["expires_at"],
            "suppressed": bool(row["suppressed"]), "sources": json.loads(row["sources"]), "stale": stale,
            "version": row["version"], "uses": row["uses"], "createdAt": row["created_at"],
            "updatedAt": row["updated_at"], "project": row["project_root"],
        }

    # -- internals --------------------------------------------------------------------------------
    def _live(self, c, uri: str):
        row = self.rows.live(uri, c)
        if row is None:
            raise not_found(uri)
        return row

    def _check_budget(self, c, scope: str, project_id: int | None, priority: int, label: str,
                      exclude: int | None = None) -> None:
        if priority not in rules.PRIORITY_BUDGET:
            return  # no budget at this priority: nothing to count (counting is a scan)
        live = self.rows.count_at_priority(c, scope, project_id, priority, exclude)
        refusal = rules.budget_refusal(priority, live, f"project {label}" if scope == "project" else "the global scope")
        if refusal:
            raise refusal

    def _hashed(self, c, project_id: int | None, sources: list[dict]) -> list[dict]:
        """Sources as recorded: a path without a hash takes the indexed file's current one."""
        out = []
        for s in sources:
            sha = s.get("sha256")
            if sha is None and project_id is not None:
                sha = self.rows.file_sha(c, project_id, s["path"])
            out.append({"path": s["path"], "sha256": sha})
        return out


def _marked(snapshot: dict[str, Any], review: Mapping[str, Any] | None) -> dict[str, Any]:
    """A history entry of a change made by a maintenance pass carries its review mark
    (`{runId, reason, before}`), so the history says who changed what, why, and from what."""
    return {**snapshot, "review": dict(review)} if review else snapshot
