"""The turns around a top message hit join the candidates: the turn before and after it
(often the rest of the answer) just below it, and the reply to a hit that asks a question
just ahead of it."""

from __future__ import annotations

from lore_sidecar.model import Candidate

NEIGHBOUR_FACTOR = 0.95
REPLY_DEPTH = 10  # a question among the top this-many message hits brings its reply with it
REPLY_LEAD = 1e-9  # ... just ahead of it: the reply holds the answer, the question only its topic
# ... when the question is short: a turn that tells at length and ends with a question
# ("I keep my old sneakers under the bed, ... any tips?") holds its own answer; the reply
# put ahead of it pushed the teller's other turns out of the top 10 (measured on
# LongMemEval: turn recall_all@10 +0.03; no LoCoMo turn is this long: the same figures).
REPLY_MAX_CHARS = 300


def with_neighbours(cands: list[Candidate], records, n: int) -> list[Candidate]:
    """The turns right around a top message hit are often the rest of the answer (the
    question it replies to, the detail that follows): they join just below it. A hit
    that asks a question brings its reply (the other side's next message that says
    something: past an agent's tool calls and results) in right ahead of it: the words
    the query shares with the question are the topic, the reply holds the answer
    (measured on a public conversation benchmark: R@5 +0.03 over joining below).
    `records.message_neighbours` gives each hit's place in its session."""
    depth = max(n, REPLY_DEPTH if n else 0)
    top = [(i, c, c.fused) for i, c in enumerate(cands[:depth]) if c.kind == "messages"]
    if not top:
        return cands
    by_id = {(c.kind, c.key): c for c in cands}
    around = records.message_neighbours([c.key for _, c, _ in top])

    def join(key: int, score: float) -> None:
        have = by_id.get(("messages", key))
        if have is None:
            by_id[("messages", key)] = Candidate("messages", key, fused=score)
        elif have.fused < score:
            have.fused = score

    for rank, c, fused in top:
        place = around.get(c.key)
        if place is None:
            continue
        if rank < n:
            for key in (place.before, place.after):
                if key is not None:
                    join(key, fused * NEIGHBOUR_FACTOR)
        if place.reply is not None and place.chars <= REPLY_MAX_CHARS:
            # Ties are ordered by key, and the reply's is the larger: it follows the question.
            join(place.reply, fused + REPLY_LEAD)
    return sorted(by_id.values(), key=lambda c: (-c.fused, c.kind, c.key))
