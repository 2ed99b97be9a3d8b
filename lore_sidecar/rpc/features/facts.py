"""`lore/*` handlers for bitemporal facts: assert, invalidate, query, timeline, aggregate."""

from __future__ import annotations

from typing import Any

from lore_sidecar.rpc.calls import Calls
from lore_sidecar.wire import types as t
from lore_sidecar.wire.converter import structure


def handlers(c: Calls) -> dict[str, Any]:
    async def assert_fact(params: Any) -> dict[str, Any]:
        p = structure(params, t.AssertFactParams)
        return await c.write("facts.assert_fact", project=p.project, subject=p.subject, predicate=p.predicate, object=p.object,
                           valid_from=p.valid_from, valid_until=p.valid_until, source=p.source, confidence=p.confidence)

    async def invalidate_fact(params: Any) -> dict[str, Any]:
        p = structure(params, t.InvalidateFactParams)
        return await c.write("facts.invalidate_fact", project=p.project, subject=p.subject, predicate=p.predicate,
                           valid_until=p.valid_until)

    async def query_facts(params: Any) -> dict[str, Any]:
        p = structure(params, t.QueryFactsParams)
        return await c.read("facts.query", project=p.project, scope=p.scope, subject=p.subject, predicate=p.predicate,
                          object=p.object, text=p.text, as_of=p.as_of, as_known_at=p.as_known_at, history=p.history,
                          limit=p.limit, offset=p.offset)

    async def timeline(params: Any) -> dict[str, Any]:
        p = structure(params, t.TimelineParams)
        return await c.read("facts.timeline", subject=p.subject, project=p.project, scope=p.scope, limit=p.limit, offset=p.offset)

    async def aggregate_facts(params: Any) -> dict[str, Any]:
        p = structure(params, t.AggregateFactsParams)
        return await c.read("facts.aggregate", project=p.project, scope=p.scope, by=p.by, subject=p.subject,
                          predicate=p.predicate, object=p.object, as_of=p.as_of, limit=p.limit)

    return {
        "lore/assertFact": assert_fact,
        "lore/invalidateFact": invalidate_fact,
        "lore/queryFacts": query_facts,
        "lore/timeline": timeline,
        "lore/aggregateFacts": aggregate_facts,
    }
