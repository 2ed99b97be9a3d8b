"""The registry of `lore/*` methods: name -> parameter type. Read by the server, the docs
test and the test client; adding a method starts here."""

from __future__ import annotations

from lore_sidecar.wire import types as t

METHOD_TO_TYPES: dict[str, type] = {
    "lore/status": t.StatusParams,
    "lore/recordMessages": t.RecordMessagesParams,
    "lore/recall": t.RecallParams,
    "lore/getNode": t.GetNodeParams,
    "lore/reindex": t.ReindexParams,
    "lore/assertFact": t.AssertFactParams,
    "lore/invalidateFact": t.InvalidateFactParams,
    "lore/queryFacts": t.QueryFactsParams,
    "lore/timeline": t.TimelineParams,
    "lore/aggregateFacts": t.AggregateFactsParams,
    "lore/promptSubmit": t.PromptSubmitParams,
    "lore/sessionStart": t.SessionStartParams,
    "lore/sessionEnd": t.SessionEndParams,
    "lore/createNode": t.CreateNodeParams,
    "lore/updateNode": t.UpdateNodeParams,
    "lore/moveNode": t.MoveNodeParams,
    "lore/deleteNode": t.DeleteNodeParams,
    "lore/listDomains": t.ListDomainsParams,
    "lore/listNodes": t.ListNodesParams,
    "lore/nodeHistory": t.NodeHistoryParams,
    "lore/retain": t.RetainParams,
    "lore/forget": t.ForgetParams,
    "lore/distill": t.DistillParams,
    "lore/exportKnowledge": t.ExportKnowledgeParams,
    "lore/importKnowledge": t.ImportKnowledgeParams,
    "lore/assembleContext": t.AssembleContextParams,
    "lore/recordUsage": t.RecordUsageParams,
    "lore/ask": t.AskParams,
    "lore/askStats": t.AskStatsParams,
    "lore/review": t.ReviewParams,
    "lore/dream": t.DreamParams,
    "lore/dreamRollback": t.DreamRollbackParams,
}

NOTIFICATIONS: tuple[str, ...] = ("lore/indexUpdated", "lore/writerChanged")

# workspace/executeCommand twins for clients that cannot send custom requests (Helix).
COMMANDS: dict[str, str] = {
    "lore.status": "lore/status",
    "lore.recall": "lore/recall",
    "lore.getNode": "lore/getNode",
    "lore.reindex": "lore/reindex",
    "lore.assertFact": "lore/assertFact",
    "lore.invalidateFact": "lore/invalidateFact",
    "lore.queryFacts": "lore/queryFacts",
    "lore.timeline": "lore/timeline",
    "lore.retain": "lore/retain",
    "lore.forget": "lore/forget",
    "lore.distill": "lore/distill",
    "lore.exportKnowledge": "lore/exportKnowledge",
    "lore.ask": "lore/ask",
    "lore.review": "lore/review",
    "lore.dream": "lore/dream",
}
