"""Tier 3 by hand of the LLM: proposing knowledge nodes from recent distillations.

Runs after the distiller on the writer's memory thread, for a session once it has
`curate_every` distillations the curator has not read (or on `lore/distill`). The prompt is
query-neutral (durable knowledge, not answers) and shows the project's existing nodes so the
model updates rather than repeats; proposals are then deduplicated by rule before they are
written with history (runtime `curator`). Without an LLM the curator does nothing and says so.
"""

from __future__ import annotations

import logging
from pathlib import Path, PurePosixPath
from typing import Any

from lore_sidecar.engine.memory import nodes as rules
from lore_sidecar.engine.memory import prompts
from lore_sidecar.errors import FENCED, LoreError

log = logging.getLogger(__name__)
SAME_URI_SIMILAR = 0.9  # an update this close to the node's content changes nothing worth a version
RESTATEMENT = 0.75  # a new node this close to an existing one restates it
RETRY_AFTER_S = 30.0


class Curator:
    def __init__(self, distiller, knowledge):
        self.distiller = distiller  # its LLM, clock and call log
        self.knowledge = knowledge
        self.node_rows = knowledge.rows
        self.every = distiller.settings.curate_every
        self.counts = {"runs": 0, "created": 0, "updated": 0, "skipped": 0}
        self._retry_at = 0.0

    def status(self) -> dict[str, Any]:
        return {"mode": "llm", **self.counts}

    def run(self, *, force: bool, session_id: str | None) -> list[str]:
        d = self.distiller
        if d.monotonic() < self._retry_at and not force:
            return []
        changed: list[str] = []
        for due in d.rows.curation_due():
            if session_id is not None and due["session_id"] != session_id:
                continue
            if due["waiting"] < self.every and not force:
                continue
            logs = d.rows.uncurated(due["project_id"], due["session_id"], due["curated_upto"])
            gen0 = [r["text"] for r in logs if r["generation"] == 0]
            root = due["project_root"]
            existing = [self.knowledge.wire(r) for r in self.node_rows.listing([due["project_id"]], limit=60)]
            stable, prompt = prompts.curate(project_name(root), gen0, existing)
            out, call = d.complete("curate", prompts.CURATE_VERSION, stable, prompt) if gen0 else ("", None)
            if out is None:
                self._retry_at = d.monotonic() + RETRY_AFTER_S
                break
            self.counts["runs"] += 1
            with d.rows.write() as c:
                d.log_call(c, call)
                for proposal in prompts.parse_curation(out):
                    uri = self._apply(c, root, proposal, existing)
                    if uri:
                        changed.append(uri)
                d.rows.set_curated(c, due["project_id"], due["session_id"], logs[-1]["id"])
        return changed

    def _apply(self, c, root: str, p: dict[str, Any], existing: list[dict[str, Any]]) -> str | None:
        uri = own_project(p["uri"], root)
        sources = [{"path": s} for s in (relative_source(x, root) for x in p["sources"]) if s]
        try:
            live = self.node_rows.live(uri, c)
            if live is not None:
                if rules.similarity(live["content"], p["content"]) >= SAME_URI_SIMILAR:
                    self.counts["skipped"] += 1
                    return None
                changes = {"content": p["content"], **({"sources": sources} if sources else {})}
                self.knowledge.update_in(c, uri, changes, expected_version=None, runtime="curator")
                self.counts["updated"] += 1
                return uri
            if any(rules.similarity(n["content"], p["content"]) >= RESTATEMENT for n in existing):
                self.counts["skipped"] += 1
                return None
            category = p["category"] if p["category"] in rules.CATEGORIES else None
            priority = min(max(p["priority"] if p["priority"] is not None else rules.DEFAULT_PRIORITY, 1), 4)
            fields = self.knowledge.check_create(uri=uri, content=p["content"], category=category, priority=priority,
                                                 disclosure=p["disclosure"], scope=None, sources=sources)
            while True:
                try:
                    self.knowledge.create_in(c, root, fields, expires_at=None, runtime="curator")
                    break
                except LoreError as exc:
                    # Over budget at this priority: the curator demotes its own proposal
                    # rather than crowd out what people chose.
                    if exc.kind != "priorityBudget" or fields["priority"] >= 4:
                        raise
                    fields = {**fields, "priority": fields["priority"] + 1}
            existing.append({"uri": uri, "content": p["content"]})
            self.counts["created"] += 1
            return uri
        except LoreError as exc:
            if exc.kind in FENCED:
                raise
            log.info("curator proposal %s refused: %s", uri, exc.message)
            self.counts["skipped"] += 1
            return None


def project_name(root: str) -> str:
    return Path(root).name or "project"


def own_project(uri: str, root: str) -> str:
    """A project:// proposal always lands in the project it was learned in."""
    if uri.startswith("project://"):
        rest = uri[len("project://"):].partition("/")[2]
        return f"project://{project_name(root)}/{rest}"
    return uri


def relative_source(path: str, root: str) -> str | None:
    if "://" in path:
        return None
    p = PurePosixPath(path)
    if p.is_absolute():
        try:
            p = p.relative_to(root)
        except ValueError:
            return None
    if ".." in p.parts:
        return None
    return p.as_posix()
