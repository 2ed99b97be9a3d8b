"""Fact reads: current facts, facts as of a valid time and as known at a record time,
a subject's timeline, and counts by group. No SQL here: the rows come from the store's
fact repository (`store/fact_rows.py`), filtered by a `FactFilter`."""

from __future__ import annotations

from typing import Any

from lore_sidecar.engine.facts import rules as F
from lore_sidecar.engine.facts.resolve import resolve_slot
from lore_sidecar.errors import LoreError
from lore_sidecar.model import FactFilter

MAX_LIMIT = 200
GROUPS = ("predicate", "object", "subject")


def wire(r: dict, eff: dict | None = None) -> dict[str, Any]:
    e = eff or r
    return {
        "factId": r["fact_id"],
        "subject": r["subject"],
        "predicate": r["predicate"],
        "object": r["object"],
        "validFrom": F.show(r["valid_from"]),
        "validUntil": F.show(e["eff_until"]),
        "recordedAt": F.show(r["recorded_at"]),
        "supersededAt": F.show(e["closed_at"]),
        "supersededBy": e["superseded_by"],
        "source": r["source"],
        "confidence": r["confidence"],
        "origin": {"path": r["origin_path"], "line": r["origin_line"], "kind": r["origin"]},
        "project": r.get("project_root"),
    }


def fact_filter(project_ids: list[int] | None, subject: str | None, predicate: str | None, obj: str | None,
                text: str | None) -> FactFilter:
    return FactFilter(
        project_ids=None if project_ids is None else tuple(project_ids),
        subject_key=F.require_key(subject, "subject") if subject else None,
        predicate_key=F.require_key(predicate, "predicate") if predicate else None,
        object_key=F.require_key(obj, "object") if obj else None,
        words=tuple(F.norm_key(text).split()) if text and F.norm_key(text) else (),
    )


def query(rows, project_ids: list[int] | None, *, subject: str | None = None, predicate: str | None = None,
          object: str | None = None, text: str | None = None, as_of: str | None = None,
          as_known_at: str | None = None, history: bool = False, limit: int = 50, offset: int = 0) -> dict[str, Any]:
    f = fact_filter(project_ids, subject, predicate, object, text)
    known = F.ts(as_known_at, field_name="asKnownAt") if as_known_at else None
    at = F.ts(as_of, field_name="asOf") if as_of else (known or F.now_ts())
    limit = max(1, min(MAX_LIMIT, limit))
    if known is None:
        # Current knowledge: the resolution is materialised in the rows.
        holds = at if (not history or as_of) else None
        total = rows.count_matching(f, holds_at=holds, visible_only=not history)
        found = rows.matching(f, holds_at=holds, visible_only=not history, limit=limit + offset)
        items = [wire(r) for r in found[offset:]]
    else:
        items, total = _as_known(rows, f, project_ids, known, at, history, as_of, offset, limit)
    more = offset + len(items) < total
    return {"facts": items, "total": total, "truncated": more, **({"nextOffset": offset + len(items)} if more else {})}


def _as_known(rows, f: FactFilter, project_ids, known: str, at: str, history: bool, as_of: str | None,
              offset: int, limit: int) -> tuple[list[dict], int]:
    """As known at a past record time: the touched slots resolved with only what was
    recorded by then."""
    cands = rows.matching(f, recorded_by=known)
    slots = sorted({r["slot"] for r in cands})
    by_slot: dict[tuple[int, str], tuple[list[dict], list[dict]]] = {}
    for r in rows.rows_in_slots(project_ids, slots):
        by_slot.setdefault((r["project_id"], r["slot"]), ([], []))[0].append(r)
    for c in rows.closes_for(project_ids, slots):
        if (c["project_id"], c["slot"]) in by_slot:
            by_slot[(c["project_id"], c["slot"])][1].append(c)
    wanted = {r["fact_id"] for r in cands}
    found: list[tuple[tuple, dict]] = []
    for slot_rows, slot_closes in by_slot.values():
        eff = resolve_slot(slot_rows, slot_closes, known)
        for r in slot_rows:
            e = eff.get(r["fact_id"])
            if e is None or r["fact_id"] not in wanted:
                continue
            if not history or as_of:
                visible = e["merged_into"] is None and not e["shadowed"]
                if not (F.holds(r["valid_from"], e["eff_until"], at) and (visible or history)):
                    continue
            key = (r["subject_key"], r["predicate_key"], r["valid_from"] or "", r["recorded_at"], r["ord"], r["fact_id"])
            found.append((key, wire(r, e)))
    found.sort(key=lambda t: t[0])
    return [w for _, w in found[offset : offset + limit]], len(found)


def timeline(rows, project_ids: list[int] | None, subject: str, *, limit: int = 200, offset: int = 0) -> dict[str, Any]:
    f = fact_filter(project_ids, subject, None, None, None)
    found = rows.matching(f)
    slots = sorted({r["slot"] for r in found})
    events: list[tuple[tuple, dict]] = []
    for r in found:
        if r["merged_into"] is not None or r["shadowed"]:
            continue
        events.append(((r["valid_from"] or "", r["recorded_at"], 0, r["ord"], r["fact_id"]), {
            "event": "asserted", "at": F.show(r["valid_from"]), **wire(r)}))
    for c in rows.closes_for(project_ids, slots):
        if c["slot"].split("\x1f")[0] != f.subject_key:
            continue
        events.append(((c["valid_until"], c["recorded_at"], 1, c["ord"], c["origin_path"]), {
            "event": "closed", "at": F.show(c["valid_until"]), "subject": c["subject"], "predicate": c["predicate"],
            "recordedAt": F.show(c["recorded_at"]), "origin": {"path": c["origin_path"], "line": c["origin_line"], "kind": "journal"}}))
    events.sort(key=lambda t: t[0])
    limit = max(1, min(MAX_LIMIT, limit))
    page = [e for _, e in events[offset : offset + limit]]
    more = offset + len(page) < len(events)
    return {"events": page, "total": len(events), "truncated": more, **({"nextOffset": offset + len(page)} if more else {})}


def aggregate(rows, project_ids: list[int] | None, *, by: str = "predicate", subject: str | None = None,
              predicate: str | None = None, object: str | None = None, as_of: str | None = None,
              limit: int = 50) -> dict[str, Any]:
    if by not in GROUPS:
        raise LoreError("invalidGroup", f"by must be predicate, object or subject, got {by!r}", value=by)
    f = fact_filter(project_ids, subject, predicate, object, None)
    at = F.ts(as_of, field_name="asOf") if as_of else F.now_ts()
    groups = rows.groups(f, by, holds_at=at)
    limit = max(1, min(MAX_LIMIT, limit))
    return {"by": by, "groups": [{"key": label, "count": n} for label, n in groups[:limit]],
            "total": sum(n for _, n in groups), "groupsTotal": len(groups), "truncated": len(groups) > limit}
