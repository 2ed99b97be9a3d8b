"""Wire types for what goes to a model: context assembly and codebase questions."""

from __future__ import annotations

from typing import Any, Literal

import attrs


@attrs.define(kw_only=True, frozen=True)
class AssembleContextParams:
    session_id: str
    """The harness's session (new messages in `body` are captured into it)."""
    body: dict[str, Any]
    """The request body exactly as the harness would send it upstream (the whole history)."""
    api: Literal["anthropic-messages", "openai-chat", "openai-responses"] = "anthropic-messages"
    """Which wire API `body` is for."""
    model: str | None = None
    """The model (default: `body.model`); prices and the window come from it."""
    harness: str | None = None
    """The runtime sending it (recorded with the captured messages)."""
    project: str | None = None
    """Project root path; default: the workspace root."""
    at: str | None = None
    """The time of the call (ISO-8601; default now), so a replay can use recorded times."""


@attrs.define(kw_only=True, frozen=True)
class UsageIn:
    input_tokens: int = 0
    """Uncached input tokens the provider billed."""
    cache_creation_input_tokens: int = 0
    """Input tokens written to the prompt cache."""
    cache_read_input_tokens: int = 0
    """Input tokens read from the prompt cache."""
    output_tokens: int = 0


@attrs.define(kw_only=True, frozen=True)
class UsageError:
    status: int | None = None
    message: str = ""
    """The provider's error text ("prompt is too long: ..." raises the session's floor layer)."""


@attrs.define(kw_only=True, frozen=True)
class RecordUsageParams:
    session_id: str
    model: str | None = None
    usage: UsageIn | None = None
    """What the provider reported for the last call (Anthropic's usage, in camelCase)."""
    error: UsageError | None = None
    """Or the error it answered with."""
    at: str | None = None


@attrs.define(kw_only=True, frozen=True)
class AskParams:
    question: str
    """A question about the codebase, in plain words."""
    project: str | None = None
    """Project root path; default: the workspace root."""
    deadline_ms: int | None = None
    """Answer (the best so far) before this many milliseconds."""
    harness: str | None = None
    """The runtime asking (usage is reported per runtime)."""


@attrs.define(kw_only=True, frozen=True)
class AskStatsParams:
    project: str | None = None
