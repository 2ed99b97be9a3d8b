"""The turns joined around top message hits must not push direct matches out of the head.

With the default `neighbours`, only the best hit's turns before and after join: the
neighbours of the second and third hits took places of the first ten and pushed down the
hits the words found (LongMemEval dev turn recall; docs/benchmarks.md, 2026-12-07)."""

from __future__ import annotations

from lore_sidecar.engine.recall.neighbours import with_neighbours
from lore_sidecar.model import Candidate, Neighbours
from lore_sidecar.settings import RecallSettings

K = 60


class FakeRecords:
    """Each message `key` has turns key-1 before and key+1 after it, and asks nothing (no
    reply is brought)."""

    def message_neighbours(self, keys):
        return {k: Neighbours(before=k - 1, after=k + 1, asks=False) for k in keys}


def head(n: int) -> list[int]:
    """The first ten after joining, for ten direct hits with keys 0, 10, ..., 90 in RRF order."""
    hits = [Candidate("messages", 10 * r, lex_rank=r, fused=1.0 / (K + r + 1)) for r in range(10)]
    return [c.key for c in with_neighbours(hits, FakeRecords(), n)[:10]]


def test_by_default_only_the_best_hits_turns_join_the_head():
    top = head(RecallSettings().neighbours)
    assert sorted(k for k in top if k % 10) == [-1, 1]  # the best hit's turns, and no other's
    assert [k for k in top if k % 10 == 0] == [0, 10, 20, 30, 40, 50, 60, 70]


def test_joining_three_hits_turns_pushes_two_more_direct_hits_out():
    # Control: the former default. The second and third hits' turns take two more places.
    top = head(3)
    assert sorted(k for k in top if k % 10) == [-1, 1, 9, 11]
    assert [k for k in top if k % 10 == 0] == [0, 10, 20, 30, 40, 50]
