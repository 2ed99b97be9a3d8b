"""`lore/*` handlers for context assembly: the body to send instead, and usage fed back."""

from __future__ import annotations

from typing import Any

from lore_sidecar.rpc.calls import Calls
from lore_sidecar.wire import types as t
from lore_sidecar.wire.converter import structure


def handlers(c: Calls) -> dict[str, Any]:
    async def assemble_context(params: Any) -> dict[str, Any]:
        p = structure(params, t.AssembleContextParams)
        return await c.write("context.assemble", session_id=p.session_id, body=p.body, api=p.api, model=p.model,
                             harness=p.harness, project=p.project, at=p.at)

    async def record_usage(params: Any) -> dict[str, Any]:
        p = structure(params, t.RecordUsageParams)
        usage = None
        if p.usage is not None:
            u = p.usage
            usage = {"input_tokens": u.input_tokens, "cache_creation_input_tokens": u.cache_creation_input_tokens,
                     "cache_read_input_tokens": u.cache_read_input_tokens, "output_tokens": u.output_tokens}
        error = {"status": p.error.status, "message": p.error.message} if p.error is not None else None
        return await c.write("context.record_usage", session_id=p.session_id, model=p.model, usage=usage, error=error,
                             at=p.at)

    return {"lore/assembleContext": assemble_context, "lore/recordUsage": record_usage}
