"""Parameter types of every `lore/*` method. camelCase on the wire, snake_case here.

Unknown keys are ignored (clients may be newer than the server); wrong types, missing
required keys and out-of-range values are refused with -32602 and a list of what is wrong.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

Scope = Literal["project", "all"]
SourceName = Literal["messages", "distillations", "knowledge", "facts", "files", "entities"]
RoleName = Literal["user", "assistant", "tool", "system"]


@attrs.define(kw_only=True, frozen=True)
class StatusParams:
    project: str | None = None
    """Root path of the project to report counts for; default: the workspace root."""


@attrs.define(kw_only=True, frozen=True)
class MessageIn:
    role: RoleName
    """Who spoke: user, assistant, tool or system."""
    content: Any
    """A string, or a list of content blocks as Anthropic or OpenAI send them."""
    id: str | None = None
    """The client's message id; a second message with a stored id is a duplicate."""
    created_at: str | None = None
    """ISO-8601 time the message was written; default: when it is recorded."""
    tool_name: str | None = None
    """For tool calls and results: the tool's name."""
    tool_call_id: str | None = None
    """For tool results: the id of the call they answer."""


@attrs.define(kw_only=True, frozen=True)
class RecordMessagesParams:
    session_id: str
    """The conversation these messages belong to."""
    messages: list[MessageIn]
    """Messages in order (at most 10,000 per call)."""
    harness: str | None = None
    """The client that captured them (pi, opencode, claude-code, codex, nvim, ...)."""
    project: str | None = None
    """Project root path; default: the workspace root."""


@attrs.define(kw_only=True, frozen=True)
class RecallParams:
    query: str
    """What to look for, in plain words."""
    project: str | None = None
    """Project root path; default: the workspace root."""
    scope: Scope = "project"
    """`project` (default) searches this project; `all` searches every project."""
    sources: list[SourceName] | None = None
    """Which tiers to search; default: all."""
    limit: int = 10
    """Hits to return, 1..200."""
    offset: int = 0
    """Skip this many hits (to page through a truncated result)."""
    session_id: str | None = None
    """The asking session (for usage accounting)."""
    as_of: str | None = None
    """Only messages created at or before this ISO-8601 time."""
    now: str | None = None
    """The ISO-8601 time the question is asked at: relative words ("last month",
    "yesterday") count from it and messages age from it. Unlike `asOf` it hides nothing.
    Default: `asOf`, else the clock."""
    lexical_only: bool = False
    """Skip the vector leg (diagnostics and benchmarks)."""
    harness: str | None = None
    """The runtime the leads are shown to (usage is reported per runtime)."""


@attrs.define(kw_only=True, frozen=True)
class GetNodeParams:
    uri: str
    """A hit's uri."""
    session_id: str | None = None
    """The asking session."""
    query_id: str | None = None
    """The recall that produced this uri; counts the hit as used."""
    harness: str | None = None
    """The runtime opening it (usage is reported per runtime)."""


@attrs.define(kw_only=True, frozen=True)
class ReindexParams:
    scope: Literal["workspace", "facts", "all"] = "all"
    """`workspace` re-reads every workspace file; `facts` replays the fact rows from the
    journal and notes; `all` does both and rebuilds every index from the record."""


@attrs.define(kw_only=True, frozen=True)
class AssertFactParams:
    subject: str
    """What the fact is about ("payments service")."""
    predicate: str
    """The relation ("uses")."""
    object: str
    """The value ("Stripe")."""
    valid_from: str | None = None
    """When it became true (date or ISO-8601 time); default: when it is recorded."""
    valid_until: str | None = None
    """When it stops being true, if known."""
    source: Literal["stated", "inferred"] | None = None
    """`stated` (default: someone said so) or `inferred` (an agent concluded it)."""
    confidence: float | None = None
    """0..1, for inferred facts."""
    project: str | None = None
    """Project root path; default: the workspace root."""


@attrs.define(kw_only=True, frozen=True)
class InvalidateFactParams:
    subject: str
    predicate: str
    valid_until: str | None = None
    """When the fact stopped being true; default: now. Not before the current fact's start."""
    project: str | None = None


@attrs.define(kw_only=True, frozen=True)
class QueryFactsParams:
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    text: str | None = None
    """Words that must all appear in subject, predicate or object."""
    as_of: str | None = None
    """Valid time: what was true at this time (default: now, or asKnownAt when given)."""
    as_known_at: str | None = None
    """Record time: answer with only what the store knew at this time."""
    history: bool = False
    """Every row, superseded and closed ones included."""
    limit: int = 50
    """1..200."""
    offset: int = 0
    project: str | None = None
    scope: Scope = "project"


@attrs.define(kw_only=True, frozen=True)
class TimelineParams:
    subject: str
    limit: int = 200
    offset: int = 0
    project: str | None = None
    scope: Scope = "project"


@attrs.define(kw_only=True, frozen=True)
class AggregateFactsParams:
    by: Literal["predicate", "object", "subject"] = "predicate"
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    as_of: str | None = None
    limit: int = 50
    project: str | None = None
    scope: Scope = "project"





@attrs.define(kw_only=True, frozen=True)
class PromptSubmitParams:
    session_id: str
    prompt: str
    harness: str | None = None
    project: str | None = None
    budget_tokens: int = 400
    """Upper bound on the size of the recall block (about 4 characters per token)."""


@attrs.define(kw_only=True, frozen=True)
class SessionStartParams:
    session_id: str
    harness: str | None = None
    cwd: str | None = None
    repo: str | None = None
    budget_tokens: int = 400


@attrs.define(kw_only=True, frozen=True)
class SessionEndParams:
    session_id: str
    transcript: list[dict[str, Any]] | None = None
    """Messages (as recordMessages takes them, or the host's transcript items)."""
    transcript_path: str | None = None
    """A JSONL transcript file (Claude Code's or Codex's) to capture."""
    harness: str | None = None
    project: str | None = None


Category = Literal["decision", "pattern", "preference", "architecture", "gotcha"]
NodeScope = Literal["project", "global"]


@attrs.define(kw_only=True, frozen=True)
class SourceRef:
    path: str
    """A file the knowledge was learned from (relative to the project root, or absolute inside it)."""
    sha256: str | None = None
    """Its content hash when learned; default: the indexed file's current hash."""


@attrs.define(kw_only=True, frozen=True)
class CreateNodeParams:
    uri: str
    """`project://<project>/<path>`, `preferences://user`, or another `<scheme>://<authority>/<path>`."""
    content: str
    """The knowledge itself, self-contained."""
    category: Category | None = None
    priority: int | None = None
    """0 (always surfaced) .. 4 (trivia); default 2. Budget: 5 at 0 and 15 at 1 per scope."""
    disclosure: str | None = None
    """When to surface it (one situation)."""
    scope: NodeScope | None = None
    """`project` (default for project:// URIs) or `global`."""
    sources: list[SourceRef] | None = None
    expires_at: str | None = None
    """ISO-8601 time after which recall no longer surfaces it."""
    project: str | None = None
    harness: str | None = None
    """The runtime making the change (recorded in the node's history)."""


@attrs.define(kw_only=True, frozen=True)
class UpdateNodeParams:
    uri: str
    content: str | None = None
    category: Category | None = None
    priority: int | None = None
    disclosure: str | None = None
    scope: NodeScope | None = None
    sources: list[SourceRef] | None = None
    expires_at: str | None = None
    suppressed: bool | None = None
    """A suppressed node is kept but never surfaced by recall."""
    expected_version: int | None = None
    """Refuse (versionConflict) unless the node is at this version."""
    harness: str | None = None


@attrs.define(kw_only=True, frozen=True)
class MoveNodeParams:
    uri: str
    new_uri: str
    harness: str | None = None


@attrs.define(kw_only=True, frozen=True)
class DeleteNodeParams:
    uri: str
    harness: str | None = None


@attrs.define(kw_only=True, frozen=True)
class ForgetParams:
    uri: str
    reason: str | None = None
    """Why it no longer holds (kept in the history)."""
    harness: str | None = None


@attrs.define(kw_only=True, frozen=True)
class RetainParams:
    content: str
    """What to remember."""
    title: str | None = None
    """A few words naming it (used for the URI when none is given)."""
    category: Category | None = None
    priority: int | None = None
    disclosure: str | None = None
    scope: NodeScope | None = None
    sources: list[SourceRef] | None = None
    uri: str | None = None
    """Where to keep it; default: project://<project>/<category>/<slug of the title>."""
    expires_at: str | None = None
    project: str | None = None
    harness: str | None = None


@attrs.define(kw_only=True, frozen=True)
class ListDomainsParams:
    project: str | None = None
    scope: Scope = "project"


@attrs.define(kw_only=True, frozen=True)
class ListNodesParams:
    project: str | None = None
    scope: Scope = "project"
    """`project`: this project's nodes and the global ones; `all`: every project's."""
    domain: str | None = None
    """Only nodes whose URI starts with this (e.g. `project://shop`)."""
    limit: int = 200
    """1..10000."""
    offset: int = 0


@attrs.define(kw_only=True, frozen=True)
class NodeHistoryParams:
    uri: str


@attrs.define(kw_only=True, frozen=True)
class DistillParams:
    session_id: str | None = None
    """Only this session; default: every session with undistilled messages."""


@attrs.define(kw_only=True, frozen=True)
class ExportKnowledgeParams:
    project: str | None = None
    path: str | None = None
    """Where to write; default: `<project root>/.lore.md`."""


@attrs.define(kw_only=True, frozen=True)
class ImportKnowledgeParams:
    project: str | None = None


# Context assembly and codebase questions (wire/model_types.py), re-exported here.
from lore_sidecar.wire.maintenance_types import (  # noqa: E402, F401
    DreamParams,
    DreamRollbackParams,
    ReviewParams,
)
from lore_sidecar.wire.model_types import (  # noqa: E402, F401
    AskParams,
    AskStatsParams,
    AssembleContextParams,
    RecordUsageParams,
    UsageError,
    UsageIn,
)

LIMITS: dict[tuple[type, str], tuple[int, int]] = {
    (ReviewParams, "limit"): (1, 500),
    (ReviewParams, "offset"): (0, 1_000_000),
    (RecallParams, "limit"): (1, 200),
    (RecallParams, "offset"): (0, 100_000),
    (QueryFactsParams, "limit"): (1, 200),
    (QueryFactsParams, "offset"): (0, 1_000_000),
    (TimelineParams, "limit"): (1, 200),
    (TimelineParams, "offset"): (0, 1_000_000),
    (AggregateFactsParams, "limit"): (1, 200),
    (ListNodesParams, "limit"): (1, 10_000),
    (AskParams, "deadline_ms"): (100, 600_000),
    (ListNodesParams, "offset"): (0, 1_000_000),
    (PromptSubmitParams, "budget_tokens"): (50, 20_000),
    (SessionStartParams, "budget_tokens"): (50, 20_000),
    (CreateNodeParams, "priority"): (0, 4),
    (UpdateNodeParams, "priority"): (0, 4),
    (RetainParams, "priority"): (0, 4),
}
MAX_MESSAGES_PER_CALL = 10_000
