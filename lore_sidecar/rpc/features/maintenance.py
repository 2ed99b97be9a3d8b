"""`lore/*` handlers for maintenance: review, dream, dream rollback."""

from __future__ import annotations

from typing import Any

from lore_sidecar.errors import BadParams
from lore_sidecar.rpc.calls import Calls
from lore_sidecar.wire import types as t
from lore_sidecar.wire.converter import structure


def handlers(c: Calls) -> dict[str, Any]:
    async def review(params: Any) -> dict[str, Any]:
        p = structure(params, t.ReviewParams)
        if p.threshold is not None and not 0.0 <= p.threshold <= 1.0:
            raise BadParams("bad params", ["params.threshold: expected 0..1"])
        return await c.read("maintenance.review", project=p.project, threshold=p.threshold, limit=p.limit,
                            offset=p.offset)

    async def dream(params: Any) -> dict[str, Any]:
        p = structure(params, t.DreamParams)
        return await c.write("maintenance.dream", project=p.project, dry_run=p.dry_run)

    async def dream_rollback(params: Any) -> dict[str, Any]:
        p = structure(params, t.DreamRollbackParams)
        return await c.write("maintenance.rollback", run_id=p.run_id)

    return {"lore/review": review, "lore/dream": dream, "lore/dreamRollback": dream_rollback}
