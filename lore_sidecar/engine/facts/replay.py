"""Replay: wipe the fact rows and rebuild them from the journal (the record) and the
workspace notes; closes apply only after every row source has inserted (DESIGN §2.7)."""

from __future__ import annotations

import hashlib
import logging
import time
from pathlib import Path

from lore_sidecar.engine.facts import rules as F
from lore_sidecar.engine.facts.resolve import journal_ord, resolve_slot
from lore_sidecar.engine.workspace.walk import inside, read_text
from lore_sidecar.errors import LoreError

log = logging.getLogger(__name__)
REPLAY_VERSION = "2"  # bump when replay rules change: stores replay on their next start


def replay_due(facts) -> bool:
    return facts.records.meta("facts_replay_version") != REPLAY_VERSION or facts.rows.journal_state_changed()

def replay(facts) -> dict[str, int]:
    """Wipe the fact rows and rebuild them from the journal and the workspace notes;
    closes are applied only after every row source has inserted."""
    t0 = time.perf_counter()
    journal_rows: dict[str, list[dict]] = {}
    journal_closes: dict[str, list[dict]] = {}
    n_lines = 0
    seen_ids: set[str] = set()
    for root, path in facts.rows.journal.files():
        rel = str(path.relative_to(facts.rows.journal.directory))
        with open(path, encoding="utf-8", errors="replace") as fh:
            for i, raw in enumerate(fh, start=1):
                parsed = F.parse_line(raw)
                if parsed is None:
                    continue
                n_lines += 1
                item = replayed(parsed, rel, i)
                if item is None:
                    continue
                if parsed.kind == "fact":
                    if item["fact_id"] in seen_ids:  # a line copied by hand: keep both, apart
                        item["fact_id"] = "j" + hashlib.sha1(f"{rel}:{i}".encode()).hexdigest()[:16]
                    seen_ids.add(item["fact_id"])
                (journal_rows if parsed.kind == "fact" else journal_closes).setdefault(root, []).append(item)
    with facts.records.db.write() as c:
        facts.rows.wipe(c)
        for root in sorted(set(journal_rows) | set(journal_closes)):
            pid = facts.records.ensure_project_in(c, root)
            facts.rows.insert_replayed(c, pid, journal_rows.get(root, []), [])
        n_notes = 0
        now = facts.clock()
        for project in facts.records.projects_in(c):
            for rel in facts.records.note_paths(c, project.id):
                try:
                    got = read_text(inside(Path(project.root), Path(project.root) / rel, facts.link_roots))
                except (LoreError, OSError, ValueError):
                    continue
                if got is None:
                    continue
                text = got[0]
                rows = facts.note_rows(c, project.id, rel, text, now)
                facts.rows.insert_replayed(c, project.id, [{**r, "origin": "note", "origin_path": rel} for r in rows], [])
                n_notes += 1
        for root in sorted(journal_closes):
            pid = facts.records.ensure_project_in(c, root)
            facts.rows.insert_replayed(c, pid, [], journal_closes[root])
        slots = facts.rows.resolve_all(c, resolve_slot)
        facts.records.set_meta(c, "facts_replay_version", REPLAY_VERSION)
    return {"journalLines": n_lines, "notes": n_notes, "slots": slots, "tookMs": round((time.perf_counter() - t0) * 1000, 1)}

def replayed(p: F.ParsedLine, rel: str, line: int) -> dict | None:
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
