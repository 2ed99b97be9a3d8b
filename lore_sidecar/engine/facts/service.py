"""Facts as the engine offers them: assert, invalidate, query, timeline, aggregate, replay.

The journal is the record; fact rows are its replay (plus what notes state). Every refusal
happens before anything is appended.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lore_sidecar.engine.capture.redact import redact
from lore_sidecar.engine.facts import queries, replay
from lore_sidecar.engine.facts import rules as F
from lore_sidecar.engine.facts.notes import NoteFact, extract_note_facts
from lore_sidecar.engine.facts.resolve import as_close, as_row, journal_ord, resolve_slot
from lore_sidecar.errors import LoreError

log = logging.getLogger(__name__)


def new_fact_id() -> str:
    return f"f{time.time_ns():x}{secrets.token_hex(3)}"


class Facts:
    def __init__(self, rows, records, *, clock=F.now_ts, link_roots: tuple[str, ...] = ()):
        self.rows = rows  # store.fact_rows.FactRows
        self.records = records
        self.clock = clock  # the write clock: the only source of record time
        self.link_roots = link_roots

    # -- validation -------------------------------------------------------------------------
    @staticmethod
    def validate_assert(subject: str, predicate: str, obj: str, valid_from: str | None, valid_until: str | None,
                        source: str | None, confidence: float | None) -> dict[str, Any]:
        sk = F.require_key(subject, "subject")
        pk = F.require_key(predicate, "predicate")
        ok = F.require_key(obj, "object")
        vf = F.ts(valid_from, field_name="validFrom") if valid_from else None
        vu = F.ts(valid_until, field_name="validUntil") if valid_until else None
        if source is not None and source not in F.JOURNAL_SOURCES:
            raise LoreError("invalidSource", f"source must be one of {', '.join(F.JOURNAL_SOURCES)}, got {source!r}", value=source)
        if confidence is not None and not 0.0 <= confidence <= 1.0:
            raise LoreError("invalidConfidence", f"confidence must be within 0..1, got {confidence}", value=confidence)
        return {"subject_key": sk, "predicate_key": pk, "object_key": ok, "valid_from": vf, "valid_until": vu}

    def check_assert(self, subject: str, predicate: str, obj: str, valid_from: str | None, valid_until: str | None,
                     source: str | None, confidence: float | None, recorded_at: str | None = None):
        """Every refusal of an assertion, before anything is written or spooled. Returns
        (validated keys and times, effective valid_from, record time)."""
        v = self.validate_assert(subject, predicate, obj, valid_from, valid_until, source, confidence)
        recorded = recorded_at or self.clock()
        # Valid time defaults to when it was stated: a documented choice, never a file's mtime.
        vf = v["valid_from"] or recorded
        if v["valid_until"] is not None and v["valid_until"] <= vf:
            raise LoreError(
                "invalidInterval",
                f"validUntil {F.show(v['valid_until'])} is not after validFrom {F.show(vf)}",
                validFrom=F.show(vf), validUntil=F.show(v["valid_until"]),
            )
        return v, vf, recorded

    # -- writes -------------------------------------------------------------------------------
    def assert_fact(self, root: str, subject: str, predicate: str, obj: str, *, valid_from: str | None = None,
                    valid_until: str | None = None, source: str | None = None, confidence: float | None = None,
                    fact_id: str | None = None, recorded_at: str | None = None, also=None) -> dict[str, Any]:
        v, vf, recorded = self.check_assert(subject, predicate, obj, valid_from, valid_until, source, confidence, recorded_at)
        fid = fact_id or new_fact_id()
        source = source or "stated"
        attrs = {"valid_from": F.show(vf), "valid_until": F.show(v["valid_until"]), "recorded_at": F.show(recorded),
                 "source": source, "confidence": confidence, "id": fid}
        line = F.fact_line(subject.strip(), predicate.strip(), obj.strip(), attrs)
        project = self.records.ensure_project(root)
        row = {
            "fact_id": fid, "slot": F.slot_of(v["subject_key"], v["predicate_key"]), "subject": subject.strip(),
            "predicate": predicate.strip(), "object": obj.strip(), "subject_key": v["subject_key"],
            "predicate_key": v["predicate_key"], "object_key": v["object_key"], "valid_from": vf,
            "valid_until": v["valid_until"], "recorded_at": recorded, "source": source, "confidence": confidence,
            "ord": 0,
        }
        def result(path: str, line_no: int) -> dict[str, Any]:
            return {"factId": fid, "recordedAt": F.show(recorded), "journal": {"path": path, "line": line_no}}

        hook = (lambda c, path, line_no, eff: also(c, result(path, line_no))) if also else None
        path, line_no, _ = self._append(root, project.id, recorded, line, row=row, also=hook)
        return result(path, line_no)

    def check_invalidate(self, root: str, subject: str, predicate: str, valid_until: str | None,
                         recorded_at: str | None = None) -> tuple[str, str, str]:
        """Refusals for a close, before anything is appended. Returns (slot, until, recorded)."""
        sk = F.require_key(subject, "subject")
        pk = F.require_key(predicate, "predicate")
        recorded = recorded_at or self.clock()
        until = F.ts(valid_until, field_name="validUntil") if valid_until else recorded
        slot = F.slot_of(sk, pk)
        project = self.records.find_project(root)
        rows, closes = (self.rows.slot_now(project.id, slot) if project else ([], []))
        open_rows = F.current_row_start([as_row(r) for r in rows], [as_close(c) for c in closes], until)
        if not open_rows:
            raise LoreError("notFound", f"no fact {subject} :: {predicate} is in force at {F.show(until)}", subject=subject, predicate=predicate)
        late = [vf for _, vf in open_rows if vf is not None and vf > until]
        if late:
            raise LoreError(
                "closeBeforeStart",
                f"validUntil {F.show(until)} is before the current fact's start {F.show(min(late))}",
                validUntil=F.show(until), validFrom=F.show(min(late)),
            )
        return slot, until, recorded

    def invalidate_fact(self, root: str, subject: str, predicate: str, *, valid_until: str | None = None,
                        recorded_at: str | None = None, also=None) -> dict[str, Any]:
        slot, until, recorded = self.check_invalidate(root, subject, predicate, valid_until, recorded_at)
        project = self.records.ensure_project(root)
        line = F.invalidate_line(subject.strip(), predicate.strip(), {"valid_until": F.show(until), "recorded_at": F.show(recorded)})
        close = {"slot": slot, "subject": subject.strip(), "predicate": predicate.strip(), "valid_until": until,
                 "recorded_at": recorded, "ord": 0}
        def result(path: str, line_no: int, eff: dict[str, dict]) -> dict[str, Any]:
            closed = sorted(k for k, e in eff.items() if e["eff_until"] == until and e["closed_at"] == recorded)
            return {"closed": closed, "recordedAt": F.show(recorded), "journal": {"path": path, "line": line_no}}

        hook = (lambda c, path, line_no, eff: also(c, result(path, line_no, eff))) if also else None
        path, line_no, eff = self._append(root, project.id, recorded, line, close=close, also=hook)
        return result(path, line_no, eff)

    def _append(self, root: str, project_id: int, recorded: str, line: str, *, row: dict | None = None,
                close: dict | None = None, also=None):
        return self.rows.append_and_insert(
            root, project_id, recorded[:10], line, row, close, resolve_slot, ord_of=journal_ord, also=also
        )

    def already_journaled(self, kind: str, root: str, args: dict) -> dict | None:
        """The outcome of a spooled fact operation whose line is already in the journal."""
        if kind == "assertFact":
            row = self.by_fact_id(args.get("fact_id") or "")
            if row is None:
                return None
            return {"factId": row["fact_id"], "recordedAt": F.show(row["recorded_at"]),
                    "journal": {"path": row["origin_path"], "line": row["origin_line"]}}
        project = self.records.find_project(root)
        if project is None or not args.get("recorded_at"):
            return None
        slot = F.slot_of(F.norm_key(args.get("subject", "")), F.norm_key(args.get("predicate", "")))
        _, closes = self.rows.slot_now(project.id, slot)
        for c in closes:
            if c["recorded_at"] == args["recorded_at"] and c["valid_until"] == args.get("valid_until"):
                return {"closed": [], "recordedAt": F.show(c["recorded_at"]),
                        "journal": {"path": c["origin_path"], "line": c["origin_line"]}}
        return None

    # -- reads (engine/facts/queries.py) -----------------------------------------------------
    def by_fact_id(self, fact_id: str) -> dict | None:
        return self.rows.by_fact_id(fact_id)

    wire = staticmethod(queries.wire)

    def query(self, project_ids: list[int] | None, **kw: Any) -> dict[str, Any]:
        return queries.query(self.rows, project_ids, **kw)

    def timeline(self, project_ids: list[int] | None, subject: str, **kw: Any) -> dict[str, Any]:
        return queries.timeline(self.rows, project_ids, subject, **kw)

    def aggregate(self, project_ids: list[int] | None, **kw: Any) -> dict[str, Any]:
        return queries.aggregate(self.rows, project_ids, **kw)

    # -- replay (engine/facts/replay.py) -----------------------------------------------------------
    def replay_due(self) -> bool:
        return replay.replay_due(self)

    def replay(self) -> dict[str, int]:
        return replay.replay(self)

    # -- notes --------------------------------------------------------------------------------
    def note_rows(self, c, project_id: int, rel: str, text: str | None, now: str, *, redacted: bool = False,
                  facts: Sequence[NoteFact] | None = None) -> list[dict]:
        """Fact rows stated by one note; record time = first sighting of each fact.
        `redacted`: `text` has been redacted already (a workspace scan's note: redacting it
        again cost ~40 us a note, an eighth of a notes folder's scan, and changes nothing).
        `facts`: what extract_note_facts found in the redacted text, when prep read them."""
        out: list[dict] = []
        seen: dict[str, int] = {}
        if facts is None:
            facts = extract_note_facts(text if redacted else redact(text), Path(rel).stem)
        for nf in facts:
            sk, pk, ok = F.norm_key(nf.subject), F.norm_key(nf.predicate), F.norm_key(nf.object)
            ident = "\x1f".join([rel, sk, pk, ok, nf.valid_from or "", nf.valid_until or ""])
            n = seen[ident] = seen.get(ident, -1) + 1
            key = hashlib.sha1(f"{ident}\x1f{n}".encode()).hexdigest()[:20]
            first_seen = self.rows.sighting(c, project_id, key, now)
            out.append({
                "fact_id": f"n{key}", "slot": F.slot_of(sk, pk), "subject": nf.subject, "predicate": nf.predicate,
                "object": nf.object, "subject_key": sk, "predicate_key": pk, "object_key": ok,
                "valid_from": nf.valid_from, "valid_until": nf.valid_until, "recorded_at": first_seen,
                "source": F.EXTRACTED, "confidence": None, "origin_line": nf.line, "ord": nf.line,
            })
        return out

    def update_note(self, c, project_id: int, rel: str, text: str | None, *,
                    facts: Sequence[NoteFact] | None = None) -> None:
        """Called inside the workspace write transaction for a markdown file (no text and no
        facts: gone); `text` is what the scan recorded, redacted, or `facts` what prep read
        from it (engine/workspace/prep.py)."""
        # A note prep found no facts in (most notes) asks no clock (~18 us a note).
        rows = (self.note_rows(c, project_id, rel, text, self.clock(), redacted=True, facts=facts)
                if facts or (facts is None and text is not None) else [])
        self.rows.replace_note(c, project_id, rel, rows, resolve_slot)

