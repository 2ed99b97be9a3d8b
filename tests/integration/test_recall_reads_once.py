"""One recall reads each message candidate's row once (engine/recall/reads.py), and the page
it gives is the page of a recall that reads everything again on its second pass."""

from __future__ import annotations

from lore_sidecar.engine.recall import recaller
from tests.integration.test_recall_replies import engine_for, record

SAID = [
    "we deploy the billing service with a canary on Fridays",
    "the canary for billing failed because of a stale config map",
    "rollouts of the payments stack go region by region",
    "shipping a new build of the invoice worker takes twenty minutes",
    "release trains leave every Tuesday; hotfixes may ship any day",
    "production pushes need a second reviewer on the change",
    "the staging cluster mirrors production every night",
    "a rollback of the ledger service is one helm command",
    "we watch error budgets before promoting a release",
    "blue green switches for the checkout app happen at noon",
]
QUERY = "how do we deploy billing"


def _reading(e, asked: list[list[int]]):
    rows = e.records.message_rows

    def spy(keys):
        keys = list(keys)
        asked.append(keys)
        return rows(keys)

    return spy


def test_a_second_pass_reads_only_the_new_candidates_and_gives_the_same_page(tmp_path, monkeypatch):
    with engine_for(tmp_path / "store", vectorFloor=-1) as e:  # every vector a candidate: a second pass brings some
        record(e, "s1", SAID)
        e.index.wait()
        calls: list[int] = []
        dense = recaller.Recaller._dense
        monkeypatch.setattr(recaller.Recaller, "_dense", lambda self, *a, **k: calls.append(1) or dense(self, *a, **k))
        asked: list[list[int]] = []
        monkeypatch.setattr(e.records, "message_rows", _reading(e, asked))
        once = [(h.uri, h.score) for h in e.recall(QUERY, sources=["messages"], limit=10).hits]
        # The control that a second pass happened: the page was not full by words, the vector
        # leg ran after the first ranking and brought candidates the words did not.
        assert calls == [1] and len(asked) == 2 and asked[1], asked
        assert not set(asked[0]) & set(asked[1])  # nothing read twice
        assert len(once) > 2  # the words alone match two messages

        class Again:  # every pass reads everything, as before RowsOnce
            def __new__(cls, records):
                return records

        monkeypatch.setattr(recaller, "RowsOnce", Again)
        asked.clear()
        again = [(h.uri, h.score) for h in e.recall(QUERY, sources=["messages"], limit=10).hits]
        assert len(asked) == 2 and set(asked[0]) <= set(asked[1])  # the second pass read the first's again
        assert once == again


def test_a_candidate_whose_row_is_gone_is_left_out_of_both_passes_and_never_read_again(tmp_path, monkeypatch):
    """A message the index still holds but the record no longer does (deleted since the index
    saw it) is remembered as missing: the recall answers without it, and the second pass does
    not ask for it again. The control: the same recall with its row there shows it."""
    with engine_for(tmp_path / "store", vectorFloor=-1) as e:
        record(e, "s1", SAID)
        e.index.wait()
        full = [h.uri for h in e.recall(QUERY, sources=["messages"], limit=10).hits]
        rows, gone, asked = e.records.message_rows, [], []

        def without_one(keys):  # the first lexical candidate's row is gone from the record
            keys = list(keys)
            asked.append(keys)
            gone[:] = gone or keys[:1]
            return {k: r for k, r in rows(keys).items() if k != gone[0]}

        monkeypatch.setattr(e.records, "message_rows", without_one)
        once = [h.uri for h in e.recall(QUERY, sources=["messages"], limit=10).hits]
        row = rows(gone)[gone[0]]
        missing = f"session://{row['session_id']}/{row['msg_id']}"
        assert len(asked) == 2 and gone[0] in asked[0] and gone[0] not in asked[1], asked  # a second pass, not re-read
        assert missing in full and once == [u for u in full if u != missing]
