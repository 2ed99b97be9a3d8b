"""Wire types of maintenance: review, dream and its rollback."""

from __future__ import annotations

import attrs


@attrs.define(kw_only=True, frozen=True)
class ReviewParams:
    project: str | None = None
    """Project root path; default: the workspace root."""
    threshold: float | None = None
    """List what fell below this retrievability (0..1; default 0.3)."""
    limit: int = 50
    """At most this many items."""
    offset: int = 0
    """Skip this many (the rest of a truncated list)."""


@attrs.define(kw_only=True, frozen=True)
class DreamParams:
    project: str | None = None
    """Project root path; default: the workspace root."""
    dry_run: bool = False
    """Advisory: propose changes, apply none."""


@attrs.define(kw_only=True, frozen=True)
class DreamRollbackParams:
    run_id: str | None = None
    """The dream run to undo; default: the latest applied run."""
