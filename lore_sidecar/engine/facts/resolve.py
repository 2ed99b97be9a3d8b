"""Resolution of one slot's stored rows (dicts from the fact repository) with the pure
rules of `rules.resolve`, in the shape the repository materialises."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lore_sidecar.engine.facts import rules as F


def as_row(d: dict) -> F.Row:
    return F.Row(
        key=d["fact_id"],
        object_key=d["object_key"],
        valid_from=d["valid_from"],
        valid_until=d["valid_until"],
        recorded_at=d["recorded_at"],
        journal=d["origin"] == "journal",
        order=d["ord"],
    )


def as_close(d: dict) -> F.Close:
    return F.Close(valid_until=d["valid_until"], recorded_at=d["recorded_at"], order=d["ord"])


def resolve_slot(rows: list[dict], closes: list[dict], known_at: str | None = None) -> dict[str, dict[str, Any]]:
    eff = F.resolve([as_row(r) for r in rows], [as_close(c) for c in closes], known_at)
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


def journal_ord(path: str, line: int) -> int:
    """Tie-break order of a journal line: its day, then its line (`…/2026-11-30.md`, 12)."""
    day = Path(path).stem.replace("-", "")
    return (int(day) if day.isdigit() else 0) * 10_000_000 + line
