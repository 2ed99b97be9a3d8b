"""A message's place in its session: its neighbours, whether it asks, and its reply."""

from __future__ import annotations

import sqlite3

from lore_sidecar.model import (
    FENCES,
    SIDES,
    Neighbours,
    asks_question,
    says_nothing,
    says_something_sql,
)
from lore_sidecar.store.db import select_in

# How far past a question its reply is looked for: an agent's tool calls and their results
# come between a prompt and the answer.
REPLY_LOOKAHEAD = 32


def nearest_sql(column: str, *, before: bool) -> str:
    """A subquery for `column` of the nearest message of message `m`'s session, before or
    after it, that says something: an agent's bare tool calls and empty thoughts are passed
    over (as a hit's neighbours, or a message's context, they were noise on the page)."""
    op, order = ("<", "DESC") if before else (">", "ASC")
    return (f"(SELECT {column} FROM messages x WHERE x.session_id=m.session_id AND x.id{op}m.id"
            f" AND {says_something_sql('x.text')} ORDER BY x.id {order} LIMIT 1)")


def neighbours(reader: sqlite3.Connection, keys: list[int]) -> dict[int, Neighbours]:
    """The messages right before and after each one in its session that say something (not
    a bare tool call, not an empty thought), whether it asks a question, and if so its
    reply. A message's end is read first (its last 64 characters), so a long one costs no
    more than a short one; only one that ends with a fenced block is read whole."""
    rows = select_in(
        reader,
        f"SELECT m.id, {nearest_sql('x.id', before=True)}, {nearest_sql('x.id', before=False)},"
        " m.session_id, m.role, substr(m.text, -64), length(m.text) FROM messages m WHERE m.id IN ({})",
        keys,
    )
    out: dict[int, Neighbours] = {}
    for key, before, after, session, role, tail, chars in rows:
        asks = False
        # Only the two sides of the conversation ask; a tool's output ending in "?" (a prompt
        # it printed) asks no one.
        if role in SIDES:
            asks = asks_question(tail)
            if not asks and tail.rstrip().endswith(FENCES):  # the block may open before the tail
                asks = asks_question(reader.execute("SELECT text FROM messages WHERE id=?", (key,)).fetchone()[0])
        reply = _reply(reader, key, session, role) if asks and after is not None else None
        out[key] = Neighbours(before=before, after=after, asks=asks, reply=reply, chars=chars)
    return out


def _reply(reader: sqlite3.Connection, key: int, session: str, role: str) -> int | None:
    """The first of the next REPLY_LOOKAHEAD messages of the session that answers message
    `key` (from `role`): one from another side that says something (in an agent's session
    the answer comes after its tool calls and their results), before `role` speaks again.
    Only the other side's texts are read: a tool result's, often long, never is."""
    later = reader.execute(
        "SELECT id, role, CASE WHEN role IN (?, ?) AND role<>? THEN substr(text, 1, 64) ELSE '' END"
        " FROM messages WHERE session_id=? AND id>? ORDER BY id LIMIT ?",
        (*SIDES, role, session, key, REPLY_LOOKAHEAD),
    )
    for rid, rrole, head in later:
        if rrole == role:
            return None  # asked again, or moved on: nothing answered it
        if not says_nothing(head):  # a tool's or the system's message reads as saying nothing
            return rid
    return None
