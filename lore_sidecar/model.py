"""Plain domain records shared by the engine and the adapters (no I/O, no third-party types)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from lore_sidecar.sources import ALL_SOURCES  # a leaf the CLI imports cheaply

Role = Literal["user", "assistant", "tool", "system"]
Source = Literal["messages", "distillations", "knowledge", "facts", "files", "entities"]

# Sources with rows in the indexes (all of them).
INDEXED_SOURCES: tuple[str, ...] = ALL_SOURCES
# The project id global knowledge nodes carry in the indexes: searched with every project.
GLOBAL_PROJECT = 0
EPOCH_DATE = date(1970, 1, 1)


@dataclass(frozen=True, slots=True)
class Project:
    id: int
    root: str


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message as normalised by capture, before it has a row id."""

    session_id: str
    msg_id: str
    role: str
    content_json: str
    text: str
    created_at: str
    harness: str | None = None
    tool_name: str | None = None
    tool_call_id: str | None = None


def day_number(iso: str | None) -> int | None:
    """Days since 1970-01-01 of an ISO-8601 time or date (its UTC date), or None."""
    if not iso or len(iso) < 10:
        return None
    try:
        return (date.fromisoformat(iso[:10]) - EPOCH_DATE).days
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Doc:
    """One indexable unit (a message or a workspace chunk) as the indexes see it."""

    kind: str  # one of ALL_SOURCES
    key: int  # row id in its table
    project_id: int
    title: str
    body: str
    path: str = ""
    context: str = ""  # text around it that helps find it (for a message: the one before)
    day: int = 0  # a message's day (days since 1970-01-01, UTC), for searches in a time window; 0: none
    parts: str | None = None  # the parts of its compound names when already known (compound.py); None: not yet


# How a message's text shows a call the model made to a tool (capture renders a tool_use
# block so): a step of the agent's work, not something it said.
TOOL_CALL_MARK = "[tool call "
SIDES = ("user", "assistant")  # the two sides of a conversation: who asks, who answers (not a tool)
# A line that opens or closes a fenced block of code or output in markdown.
FENCES = ("```", "~~~")
_ASKS = re.compile(r"\?(?:\s|$)")  # a question mark that ends a sentence


@dataclass(frozen=True, slots=True)
class Neighbours:
    """A message's place in its session: the ids right before and after it (None at an
    end), whether it asks a question, and the message that answers it (`reply`: the first
    later one from the other side of the conversation that says something, before the
    asker speaks again; None when it does not ask, or nothing answered)."""

    before: int | None
    after: int | None
    asks: bool
    reply: int | None = None
    chars: int = 0  # the message's length


def says_nothing(text: str) -> bool:
    """A turn with no words of its own for a reader: empty (a redacted thought) or only a
    call to a tool."""
    text = text.lstrip()
    return not text or text.startswith(TOOL_CALL_MARK)


def says_something_sql(column: str) -> str:
    """`not says_nothing(column)` as an SQL condition, for texts whose leading white space is
    ASCII (the rule reads only the text's start: white space, then the tool-call mark)."""
    head = f"ltrim(substr({column}, 1, 64), ' ' || char(9, 10, 11, 12, 13))"
    return f"({head} <> '' AND substr({head}, 1, {len(TOOL_CALL_MARK)}) <> '{TOOL_CALL_MARK}')"


def asks_question(text: str) -> bool:
    """Whether a message ends by asking something: its text ends with '?', white space
    aside. A message that ends with pasted code or output in a fenced block asks when the
    last paragraph before the block does ("Why does this fail? The log:" and then the log)."""
    text = text.rstrip()
    if text.endswith("?"):
        return True
    if not text.endswith(FENCES):
        return False
    while text.endswith(FENCES):
        # The last line closes a block; the fence line before it opens it.
        close = max(text.rfind("\n" + f) for f in FENCES)
        opened = max(text.rfind("\n" + f, 0, close) for f in FENCES) if close > 0 else -1
        if opened < 0:
            return False  # a block that opens at the very start, or a stray fence: no prose before it
        text = text[:opened].rstrip()
    paragraph = text[text.rfind("\n\n") + 1 :]
    return _ASKS.search(paragraph[-2000:]) is not None


@dataclass(frozen=True, slots=True)
class Chunk:
    start_line: int  # 1-based, inclusive
    end_line: int
    kind: str  # "heading" | "definition" | "window"
    title: str
    text: str
    parts: str | None = None  # its title's and text's compound names cut into parts (compound.py), once prepared


@dataclass(frozen=True, slots=True)
class FileWrite:
    """One file's new record: what was read of it and the chunks cut from it. `after(conn)`
    runs in the transaction that writes it."""

    path: str
    sha256: str
    size: int
    mtime_ns: int
    chunks: tuple[Chunk, ...] | list[Chunk]
    after: Any = None


@dataclass(slots=True)
class Candidate:
    """A document reached by at least one retrieval leg."""

    kind: str
    key: int
    lex_rank: int | None = None
    lex_score: float = 0.0
    vec_rank: int | None = None
    vec_score: float = 0.0
    fused: float = 0.0


@dataclass(frozen=True, slots=True)
class Hit:
    uri: str
    source: str
    score: float
    snippet: str
    cues: list[str]
    title: str | None = None
    session_id: str | None = None
    path: str | None = None
    range: tuple[int, int] | None = None
    created_at: str | None = None
    category: str | None = None  # knowledge hits
    priority: int | None = None
    stale: dict[str, Any] | None = None  # a knowledge hit whose source file changed


@dataclass(frozen=True, slots=True)
class RecallResult:
    query_id: str
    hits: list[Hit]
    total: int
    truncated: bool
    took_ms: float
    next_offset: int | None = None
    # The vector leg had not yet embedded everything the words already find (it follows
    # the text index on its own thread): the ranking is lexical for the newest writes.
    dense_partial: bool = False
    # The days the query named ("on 3 June 2023"), as [first, last) ISO dates: messages
    # written then were preferred. Empty: the query named no time.
    time_windows: tuple[tuple[str, str], ...] = ()
    # What is still coming (engine/indexing/progress.py): the first scan, the meaning index.
    indexing: dict | None = None
    # A write of this instance's was not yet searchable by its words when the read-your-writes
    # wait (`readWaitMs`) ended: the hits may miss it (engine/service.py `fresh`).
    writes_pending: bool = False


@dataclass(frozen=True, slots=True)
class NodeContent:
    uri: str
    source: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FactFilter:
    """Which fact rows a query means, as keys (normalised) the store matches exactly."""

    project_ids: tuple[int, ...] | None = None  # None: every project
    subject_key: str | None = None
    predicate_key: str | None = None
    object_key: str | None = None
    words: tuple[str, ...] = ()  # each must occur in the subject, predicate or object
