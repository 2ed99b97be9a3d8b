"""`sessionWeight`: a turn in a session whose other turns match the query rises over an
equal match alone in another session; with the weight at 0 it does not. On a real store."""

from __future__ import annotations

from tests.integration.test_recall_replies import engine_for, record

FILLER = [f"note {i}: lunch menu, parking passes, the printer on floor {i}" for i in range(8)]


def ranked_sessions(tmp_path, weight: float) -> list[str]:
    with engine_for(tmp_path / f"store-{weight}", sessionWeight=weight) as e:
        # The same weak match ("kafka") in two sessions; only "talk" says more about it elsewhere.
        record(e, "alone", [*FILLER[:4], "we might use kafka someday maybe", *FILLER[4:]])
        record(e, "talk", ["the kafka consumer lag grew all night", *FILLER[:3],
                           "we might use kafka someday maybe, or not", *FILLER[3:]])
        e.index.wait()
        hits = e.recall("kafka consumer lag", sources=["messages"], limit=10).hits
        return [f"{h.session_id}:{h.snippet[:12]}" for h in hits]


def test_a_session_that_matches_elsewhere_lifts_its_weaker_turn(tmp_path):
    top = ranked_sessions(tmp_path, 0.5)
    assert top[0] == "talk:the kafka co"
    assert top.index("talk:we might use") < top.index("alone:we might use")


def test_without_the_weight_the_weaker_turns_rank_by_their_words_alone(tmp_path):
    # Control: the shorter weak turn ("alone") wins on its words when sessions do not count.
    top = ranked_sessions(tmp_path, 0.0)
    assert top[0] == "talk:the kafka co"
    assert top.index("alone:we might use") < top.index("talk:we might use")
