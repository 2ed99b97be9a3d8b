"""Facts as the engine offers them: assert, invalidate, query, timeline, aggregate, replay.

The journal is the record; fact rows are its replay (plus what notes state). Every refusal
happens before anything is appended.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from pathlib import Path
from typing import Any

from lore_sidecar.engine.capture.redact import redact
from lore_sidecar.engine.facts import rules as F
from lore_sidecar.engine.workspace.walk import inside, read_text
from lore_sidecar.errors import LoreError

log = logging.getLogger(__name__)
REPLAY_VERSION = "1"  # bump when replay rules change: stores replay on their next start
MAX_LIMIT = 200
# A row is in force at `at` (two parameters: at, at) when it holds then and is visible: the
# SQL twin of `facts.holds` over the materialised resolution.
HOLDS_SQL = "(f.valid_from IS NULL OR f.valid_from <= ?) AND (f.eff_until IS NULL OR ? < f.eff_until)"
VISIBLE_SQL = "f.merged_into IS NULL AND f.shadowed=0"


def _row(d: dict) -> F.Row:
    return F.Row(
        key=d["fact_id"],
        object_key=d["object_key"],
        valid_from=d["valid_from"],
        valid_until=d["valid_until"],
        recorded_at=d["recorded_at"],
        journal=d["origin"] == "journal",
        order=d["ord"],
    )


def _close(d: dict) -> F.Close:
    return F.Close(valid_until=d["valid_until"], recorded_at=d["recorded_at"], order=d["ord"])


def resolve_slot(rows: list[dict], closes: list[dict], known_at: str | None = None) -> dict[str, dict[str, Any]]:
    eff = F.resolve([_row(r) for r in rows], [_close(c) for c in closes], known_at)
    return {
        k: {
            "eff_until": e.until,
            "closed_at": e.closed_at,
            "superseded_by": e.superseded_by,
            "merged_into": e.merged_into,
            "shadowed": int(e.shadowed),
        }
        for k, e in eff.items()
    }


def new_fact_id() -> str:
    return f"f{time.time_ns():x}{secrets.token_hex(3)}"


def journal_ord(path: str, line: int) -> int:
    """Tie-break order of a journal line: its day, then its line (`…/2026-11-30.md`, 12)."""
    day = Path(path).stem.replace("-", "")
    return (int(day) if day.isdigit() else 0) * 10_000_000 + line


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
        rows, closes = (self.rows.slot(self.rows.conn(), project.id, slot) if project else ([], []))
        open_rows = F.current_row_start([_row(r) for r in rows], [_close(c) for c in closes], until)
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
        _, closes = self.rows.slot(self.rows.conn(), project.id, slot)
        for c in closes:
            if c["recorded_at"] == args["recorded_at"] and c["valid_until"] == args.get("valid_until"):
                return {"closed": [], "recordedAt": F.show(c["recorded_at"]),
                        "journal": {"path": c["origin_path"], "line": c["origin_line"]}}
        return None

    # -- reads --------------------------------------------------------------------------------
    @staticmethod
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

    def by_fact_id(self, fact_id: str) -> dict | None:
        rows = self.rows.select("f.fact_id=?", [fact_id])
        return rows[0] if rows else None

    def query(self, project_ids: list[int] | None, *, subject: str | None = None, predicate: str | None = None,
              object: str | None = None, text: str | None = None, as_of: str | None = None,
              as_known_at: str | None = None, history: bool = False, limit: int = 50, offset: int = 0) -> dict[str, Any]:
        where, params = self._filters(project_ids, subject, predicate, object, text)
        known = F.ts(as_known_at, field_name="asKnownAt") if as_known_at else None
        at = F.ts(as_of, field_name="asOf") if as_of else (known or F.now_ts())
        limit = max(1, min(MAX_LIMIT, limit))
        if known is None:
            # Current knowledge: the resolution is materialised in the rows.
            if not history:
                where += f" AND {VISIBLE_SQL} AND {HOLDS_SQL}"
                params += [at, at]
            elif as_of:
                where += f" AND {HOLDS_SQL}"
                params += [at, at]
            total = self.rows.count(where, params)
            rows = self.rows.select(where, params, order="f.subject_key, f.predicate_key, f.valid_from, f.recorded_at, f.ord, f.fact_id",
                                    limit=limit + offset)
            items = [self.wire(r) for r in rows[offset:]]
        else:
            # As known at a past record time: resolve the touched slots with only what was
            # recorded by then.
            cands = self.rows.select(where + " AND f.recorded_at <= ?", params + [known])
            slots = sorted({r["slot"] for r in cands})
            everything = self.rows.rows_in_slots(project_ids, slots)
            closes = self.rows.closes_for(project_ids, slots)
            by_slot: dict[tuple[int, str], tuple[list[dict], list[dict]]] = {}
            for r in everything:
                by_slot.setdefault((r["project_id"], r["slot"]), ([], []))[0].append(r)
            for c in closes:
                if (c["project_id"], c["slot"]) in by_slot:
                    by_slot[(c["project_id"], c["slot"])][1].append(c)
            wanted = {r["fact_id"] for r in cands}
            found: list[tuple[tuple, dict]] = []
            for (_, _), (rows, cl) in by_slot.items():
                eff = resolve_slot(rows, cl, known)
                for r in rows:
                    e = eff.get(r["fact_id"])
                    if e is None or r["fact_id"] not in wanted:
                        continue
                    if not history or as_of:
                        visible = e["merged_into"] is None and not e["shadowed"]
                        in_window = F.holds(r["valid_from"], e["eff_until"], at)
                        if not (in_window and (visible or history)):
                            continue
                    key = (r["subject_key"], r["predicate_key"], r["valid_from"] or "", r["recorded_at"], r["ord"], r["fact_id"])
                    found.append((key, self.wire(r, e)))
            found.sort(key=lambda t: t[0])
            total = len(found)
            items = [w for _, w in found[offset : offset + limit]]
        return {"facts": items, "total": total, "truncated": offset + len(items) < total,
                **({"nextOffset": offset + len(items)} if offset + len(items) < total else {})}

    def timeline(self, project_ids: list[int] | None, subject: str, *, limit: int = 200, offset: int = 0) -> dict[str, Any]:
        sk = F.require_key(subject, "subject")
        where, params = self._filters(project_ids, subject, None, None, None)
        rows = self.rows.select(where, params)
        slots = sorted({r["slot"] for r in rows})
        closes = self.rows.closes_for(project_ids, slots)
        events: list[tuple[tuple, dict]] = []
        for r in rows:
            if r["merged_into"] is not None or r["shadowed"]:
                continue
            events.append(((r["valid_from"] or "", r["recorded_at"], 0, r["ord"], r["fact_id"]), {
                "event": "asserted", "at": F.show(r["valid_from"]), **self.wire(r)}))
        for c in closes:
            if c["slot"].split("\x1f")[0] != sk:
                continue
            events.append(((c["valid_until"], c["recorded_at"], 1, c["ord"], c["origin_path"]), {
                "event": "closed", "at": F.show(c["valid_until"]), "subject": c["subject"], "predicate": c["predicate"],
                "recordedAt": F.show(c["recorded_at"]), "origin": {"path": c["origin_path"], "line": c["origin_line"], "kind": "journal"}}))
        events.sort(key=lambda t: t[0])
        limit = max(1, min(MAX_LIMIT, limit))
        page = [e for _, e in events[offset : offset + limit]]
        return {"events": page, "total": len(events), "truncated": offset + len(page) < len(events)}

    def aggregate(self, project_ids: list[int] | None, *, by: str = "predicate", subject: str | None = None,
                  predicate: str | None = None, object: str | None = None, as_of: str | None = None,
                  limit: int = 50) -> dict[str, Any]:
        column = {"predicate": "f.predicate_key", "object": "f.object_key", "subject": "f.subject_key"}.get(by)
        if column is None:
            raise LoreError("invalidGroup", f"by must be predicate, object or subject, got {by!r}", value=by)
        where, params = self._filters(project_ids, subject, predicate, object, None)
        at = F.ts(as_of, field_name="asOf") if as_of else F.now_ts()
        where += f" AND {VISIBLE_SQL} AND {HOLDS_SQL}"
        params += [at, at]
        label = {"predicate": "f.predicate", "object": "f.object", "subject": "f.subject"}[by]
        rows = self.rows.conn().execute(
            f"SELECT {column}, MIN({label}), COUNT(*) FROM facts f WHERE {where} GROUP BY {column} ORDER BY COUNT(*) DESC, {column}",
            params,
        ).fetchall()
        limit = max(1, min(MAX_LIMIT, limit))
        groups = [{"key": r[1], "count": r[2]} for r in rows[:limit]]
        return {"by": by, "groups": groups, "total": sum(r[2] for r in rows), "groupsTotal": len(rows),
                "truncated": len(rows) > limit}

    def _filters(self, project_ids, subject, predicate, obj, text) -> tuple[str, list[Any]]:
        where, params = ["1=1"], []
        if project_ids is not None:
            if not project_ids:
                return "0=1", []
            if len(project_ids) == 1:
                where.append("f.project_id=?")
            else:
                where.append(f"f.project_id IN ({','.join('?' * len(project_ids))})")
            params += list(project_ids)
        if subject:
            where.append("f.subject_key=?")
            params.append(F.require_key(subject, "subject"))
        if predicate:
            where.append("f.predicate_key=?")
            params.append(F.require_key(predicate, "predicate"))
        if obj:
            where.append("f.object_key=?")
            params.append(F.require_key(obj, "object"))
        if text and F.norm_key(text):
            clause, extra = self.rows.text_filter(F.norm_key(text).split())
            where.append(clause)
            params += extra
        return " AND ".join(where), params

    # -- notes --------------------------------------------------------------------------------
    def note_rows(self, c, project_id: int, rel: str, text: str, now: str) -> list[dict]:
        """Fact rows stated by one note; record time = first sighting of each fact."""
        out: list[dict] = []
        seen: dict[str, int] = {}
        for nf in F.extract_note_facts(redact(text), Path(rel).stem):
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

    def update_note(self, c, project_id: int, rel: str, text: str | None) -> None:
        """Called inside the workspace write transaction for a markdown file (None: gone)."""
        rows = self.note_rows(c, project_id, rel, text, self.clock()) if text is not None else []
        self.rows.replace_note(c, project_id, rel, rows, resolve_slot)

    # -- replay -------------------------------------------------------------------------------
    def replay_due(self) -> bool:
        return self.records.meta("facts_replay_version") != REPLAY_VERSION or self.rows.journal_state_changed()

    def replay(self) -> dict[str, int]:
        """Wipe the fact rows and rebuild them from the journal and the workspace notes;
        closes are applied only after every row source has inserted."""
        t0 = time.perf_counter()
        journal_rows: dict[str, list[dict]] = {}
        journal_closes: dict[str, list[dict]] = {}
        n_lines = 0
        seen_ids: set[str] = set()
        for root, path in self.rows.journal.files():
            rel = str(path.relative_to(self.rows.journal.directory))
            with open(path, encoding="utf-8", errors="replace") as fh:
                for i, raw in enumerate(fh, start=1):
                    parsed = F.parse_line(raw)
                    if parsed is None:
                        continue
                    n_lines += 1
                    item = self._replayed(parsed, rel, i)
                    if item is None:
                        continue
                    if parsed.kind == "fact":
                        if item["fact_id"] in seen_ids:  # a line copied by hand: keep both, apart
                            item["fact_id"] = "j" + hashlib.sha1(f"{rel}:{i}".encode()).hexdigest()[:16]
                        seen_ids.add(item["fact_id"])
                    (journal_rows if parsed.kind == "fact" else journal_closes).setdefault(root, []).append(item)
        with self.records.db.write() as c:
            self.rows.wipe(c)
            for root in sorted(set(journal_rows) | set(journal_closes)):
                pid = self.records.ensure_project_in(c, root)
                self.rows.insert_replayed(c, pid, journal_rows.get(root, []), [])
            n_notes = 0
            now = self.clock()
            for project in self.records.projects_in(c):
                for rel in self.records.note_paths(c, project.id):
                    try:
                        got = read_text(inside(Path(project.root), Path(project.root) / rel, self.link_roots))
                    except (LoreError, OSError, ValueError):
                        continue
                    if got is None:
                        continue
                    text = got[0]
                    rows = self.note_rows(c, project.id, rel, text, now)
                    self.rows.insert_replayed(c, project.id, [{**r, "origin": "note", "origin_path": rel} for r in rows], [])
                    n_notes += 1
            for root in sorted(journal_closes):
                pid = self.records.ensure_project_in(c, root)
                self.rows.insert_replayed(c, pid, [], journal_closes[root])
            slots = self.rows.resolve_all(c, resolve_slot)
            self.records.set_meta(c, "facts_replay_version", REPLAY_VERSION)
        return {"journalLines": n_lines, "notes": n_notes, "slots": slots, "tookMs": round((time.perf_counter() - t0) * 1000, 1)}

    def _replayed(self, p: F.ParsedLine, rel: str, line: int) -> dict | None:
        """A journal line as a row or close. `source=` and `recorded_at=` are honoured here,
        in the engine's own journal, and nowhere else. A line a person broke is skipped."""
        try:
            sk, pk = F.require_key(p.subject, "subject"), F.require_key(p.predicate, "predicate")
            recorded = F.ts(p.attrs["recorded_at"])
            common = {"slot": F.slot_of(sk, pk), "subject": p.subject, "predicate": p.predicate, "recorded_at": recorded,
                      "origin_path": rel, "origin_line": line, "ord": journal_ord(rel, line)}
            if p.kind == "invalidate":
                return {**common, "valid_until": F.ts(p.attrs["valid_until"])}
            ok = F.require_key(p.object or "", "object")
            vf = F.ts(p.attrs["valid_from"]) if p.attrs.get("valid_from") else None
            vu = F.ts(p.attrs["valid_until"]) if p.attrs.get("valid_until") else None
            conf = float(p.attrs["confidence"]) if p.attrs.get("confidence") else None
            source = p.attrs.get("source", "stated")
            if source not in F.JOURNAL_SOURCES:
                source = "stated"
            fid = p.attrs.get("id") or "j" + hashlib.sha1(f"{rel}:{line}".encode()).hexdigest()[:16]
            return {**common, "fact_id": fid, "object": p.object, "subject_key": sk, "predicate_key": pk, "object_key": ok,
                    "valid_from": vf, "valid_until": vu, "source": source, "confidence": conf, "origin": "journal"}
        except (LoreError, KeyError, ValueError) as exc:
            log.warning("journal %s:%s skipped: %s", rel, line, exc)
            return None
