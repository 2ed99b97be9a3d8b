"""What a request may ask of facts: assert and invalidate (through the one write path, with
secrets redacted first), and the reads — each after the instance has caught up."""

from __future__ import annotations

from typing import Any

from lore_sidecar.engine.capture.redact import redact
from lore_sidecar.engine.facts import rules as F
from lore_sidecar.engine.facts.service import Facts, new_fact_id


class FactRequests:
    def __init__(self, instance: Any, store: Facts):
        self.i = instance  # the engine: projects, writes, fresh()
        self.store = store  # the journal and its rows

    def assert_fact(self, *, project: str | None, subject: str, predicate: str, object: str,
                    valid_from: str | None = None, valid_until: str | None = None, source: str | None = None,
                    confidence: float | None = None) -> dict[str, Any]:
        root = self.i.projects.root(project)
        s, p, o = redact(subject), redact(predicate), redact(object)
        times = {"valid_from": valid_from, "valid_until": valid_until, "source": source, "confidence": confidence}

        def check() -> dict[str, Any]:
            _, _, recorded = self.store.check_assert(s, p, o, valid_from, valid_until, source, confidence)
            return {"subject": s, "predicate": p, "object": o, **times, "fact_id": new_fact_id(), "recorded_at": recorded}

        return self.i.writes.submit(
            check=check,
            apply=lambda a: self.store.assert_fact(root, s, p, o, **times),
            op=lambda a: {"kind": "assertFact", "project": root, "args": a},
            unapplied=lambda a: {"factId": a["fact_id"], "recordedAt": F.show(a["recorded_at"]), "journal": None})

    def invalidate_fact(self, *, project: str | None, subject: str, predicate: str,
                        valid_until: str | None = None) -> dict[str, Any]:
        root = self.i.projects.root(project)
        s, p = redact(subject), redact(predicate)

        def check() -> dict[str, Any]:
            _, until, recorded = self.store.check_invalidate(root, s, p, valid_until)
            return {"subject": s, "predicate": p, "valid_until": until, "recorded_at": recorded}

        return self.i.writes.submit(
            check=check,
            apply=lambda a: self.store.invalidate_fact(root, s, p, valid_until=valid_until),
            op=lambda a: {"kind": "invalidateFact", "project": root, "args": a},
            unapplied=lambda a: {"closed": [], "recordedAt": F.show(a["recorded_at"]), "journal": None})

    def query(self, *, project: str | None = None, scope: str = "project", **kw: Any) -> dict[str, Any]:
        self.i.fresh()
        return self.store.query(self.i.projects.ids(project, scope), **kw)

    def timeline(self, *, subject: str, project: str | None = None, scope: str = "project", limit: int = 200,
                 offset: int = 0) -> dict[str, Any]:
        self.i.fresh()
        return self.store.timeline(self.i.projects.ids(project, scope), subject, limit=limit, offset=offset)

    def aggregate(self, *, project: str | None = None, scope: str = "project", **kw: Any) -> dict[str, Any]:
        self.i.fresh()
        return self.store.aggregate(self.i.projects.ids(project, scope), **kw)

    def replay(self) -> dict[str, int]:
        """Rebuild the fact rows from the journal and the notes (the writer's)."""
        self.i.require_writer()
        return self.store.replay()
