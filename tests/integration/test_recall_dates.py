"""Recall of a query that names a time, on a real store (SQLite, Tantivy, usearch)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lore_sidecar.app import open_engine
from lore_sidecar.settings import load_settings
from lore_sidecar.wire.results import recall_to_wire

MARCH_5 = "we rolled back the deploy because the migration locked the orders table"


@contextmanager
def filled(store: Path, **options) -> Iterator:
    """An engine on a new store holding `fill`'s messages, closed afterwards."""
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"),
                                init_options={"storeDir": str(store), "indexWorkspace": False, "watch": False,
                                              "neighbours": 0, **options})
    engine = open_engine(settings, [])
    try:
        fill(engine)
        yield engine
    finally:
        engine.close()


def fill(engine) -> None:
    """One message of 5 March 2024 among thirty that say "deploy" more often, on other days."""
    def msg(i, text, when):
        return {"role": "user", "content": text, "msg_id": f"m{i}", "created_at": when,
                "tool_name": None, "tool_call_id": None}
    others = [msg(i, f"deploy deploy notes {i}: the deploy pipeline ran", f"2024-{4 + i % 8:02d}-{1 + i % 27:02d}T10:00:00Z")
              for i in range(30)]
    engine.capture.record_messages(project=None, session_id="later", harness="test", messages=others)
    engine.capture.record_messages(project=None, session_id="march", harness="test",
                                   messages=[msg(99, MARCH_5, "2024-03-05T16:20:00Z")])
    engine.index.wait()


def first_texts(engine, query: str, n: int = 3, **kw) -> list[str]:
    hits = engine.recall(query, sources=["messages"], limit=n, **kw).hits
    return [h.snippet for h in hits]


def test_a_query_naming_a_day_finds_that_days_message_beyond_the_candidate_pool(tmp_path):
    # Three candidates per leg: the whole store's word matches cannot reach the 5 March turn.
    with filled(tmp_path / "store", recallCandidates=3) as e:
        # Control: without a date the turn is not in the first three at all.
        assert MARCH_5 not in first_texts(e, "what happened with the deploy")
        for said in ("what happened with the deploy on 5 March 2024",
                     "what happened with the deploy on 2024-03-05",
                     "the deploy in March 2024"):
            assert first_texts(e, said)[0] == MARCH_5, said
        # The reply says which days it read the query as (`until` exclusive).
        dated = recall_to_wire(e.recall("the deploy on 5 March 2024", sources=["messages"]))
        assert dated["timeWindows"] == [{"from": "2024-03-04", "until": "2024-03-07"}]
        assert recall_to_wire(e.recall("the deploy", sources=["messages"]))["timeWindows"] == []
        # Relative words count from the recall's asOf.
        assert first_texts(e, "the deploy yesterday", as_of="2024-03-06T09:00:00Z")[0] == MARCH_5
        assert first_texts(e, "the deploy yesterday", as_of="2024-09-06T09:00:00Z")[0] != MARCH_5


def test_with_the_date_bonus_off_a_named_day_changes_nothing(tmp_path):
    with filled(tmp_path / "store", recallCandidates=3, dateWeight=0) as e:
        assert MARCH_5 not in first_texts(e, "what happened with the deploy on 5 March 2024")


def test_a_named_day_with_nothing_said_then_keeps_the_plain_answer(tmp_path):
    with filled(tmp_path / "store") as e:
        plain = first_texts(e, "orders table migration", n=5)
        assert plain[0] == MARCH_5  # control: the words alone find it
        assert first_texts(e, "orders table migration on 1 January 2020", n=5) == plain


def test_the_rebuilt_index_answers_dated_queries_like_the_live_one(tmp_path):
    with filled(tmp_path / "store", recallCandidates=3) as e:
        queries = ["the deploy on 5 March 2024", "deploy pipeline in 2024", "notes from June 2024", "deploy"]
        live = {q: [(h.uri, h.score) for h in e.recall(q, sources=["messages"], limit=10).hits] for q in queries}
        e.index.rebuild("all")
        rebuilt = {q: [(h.uri, h.score) for h in e.recall(q, sources=["messages"], limit=10).hits] for q in queries}
        assert rebuilt == live and all(live.values())


def test_a_query_about_a_day_alone_returns_that_days_messages_latest_first(tmp_path):
    with filled(tmp_path / "store") as e:
        def msg(i, text, when):
            return {"role": "user", "content": text, "msg_id": f"d{i}", "created_at": when,
                    "tool_name": None, "tool_call_id": None}
        e.capture.record_messages(project=None, session_id="next-day", harness="test", messages=[
            msg(1, "renamed the billing module", "2024-03-06T09:00:00Z"),
            msg(2, "the orders table is fine again", "2024-03-06T17:00:00Z"),
            msg(3, "yesterday the build was slow", "2024-06-20T10:00:00Z")])
        e.index.wait()
        # "yesterday" is all it asks: that day's messages, the latest first, though none of
        # them says "yesterday" (the day either side counts too: 5 March is there, last).
        hits = first_texts(e, "what did we do yesterday?", n=5, as_of="2024-03-07T08:00:00Z")
        assert hits == ["the orders table is fine again", "renamed the billing module", MARCH_5]
        # Control: a day on which nothing was said leaves the word matches as they were.
        assert first_texts(e, "what did we do yesterday?", as_of="2025-01-01T08:00:00Z")[0] == \
            "yesterday the build was slow"


TOLD = "We finally moved the orders service to Postgres last Friday."
PLAIN = "Moving the orders service to Postgres: the orders service runs on Postgres, orders and all."


@contextmanager
def told(store: Path, told_role: str = "assistant", **options) -> Iterator:
    """Two answers about one move: one with more of the words, one that tells when."""
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"),
                                init_options={"storeDir": str(store), "indexWorkspace": False, "watch": False,
                                              "neighbours": 0, **options})
    engine = open_engine(settings, [])
    try:
        rows = [("user", PLAIN, None), (told_role, TOLD, "t-1" if told_role == "tool" else None)]
        engine.capture.record_messages(project=None, session_id="move", harness="test", messages=[
            {"role": role, "content": text, "msg_id": f"m{i}", "created_at": "2024-03-08T10:00:00Z",
             "tool_name": "bash" if role == "tool" else None, "tool_call_id": call}
            for i, (role, text, call) in enumerate(rows)])
        engine.index.wait()
        yield engine
    finally:
        engine.close()


def test_a_question_asking_when_prefers_the_message_that_tells_a_time(tmp_path):
    with told(tmp_path / "store") as e:
        # Control: asked without "when", the message with more of the words leads.
        assert first_texts(e, "Did we move the orders service to Postgres?", n=2) == [PLAIN, TOLD]
        assert first_texts(e, "When did we move the orders service to Postgres?", n=2) == [TOLD, PLAIN]
        # "when" inside a sentence asks no time.
        assert first_texts(e, "the orders service to Postgres fails when moved", n=2) == [PLAIN, TOLD]
    with told(tmp_path / "off", whenWeight=0) as e:  # the setting turns it off
        assert first_texts(e, "When did we move the orders service to Postgres?", n=2) == [PLAIN, TOLD]


def test_a_question_asking_which_came_first_prefers_the_message_that_tells_a_time(tmp_path):
    with told(tmp_path / "store") as e:
        # Control: the same words without asking about time: the message with more of them leads.
        assert first_texts(e, "moving the orders service to Postgres or the billing rename", n=2) == [PLAIN, TOLD]
        assert first_texts(e, "Which happened first, moving the orders service to Postgres or the billing rename?",
                           n=2) == [TOLD, PLAIN]
        # Control: a choice that asks no order asks no time.
        assert first_texts(e, "Which is it, moving the orders service to Postgres or the billing rename?",
                           n=2) == [PLAIN, TOLD]


def test_a_question_asking_how_long_prefers_the_message_that_tells_a_duration(tmp_path):
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"), init_options={
        "storeDir": str(tmp_path / "store"), "indexWorkspace": False, "watch": False, "neighbours": 0})
    e = open_engine(settings, [])
    try:
        lasted = "The orders service has run on Postgres for four years."
        plain = "The orders service runs on Postgres: orders, the orders service and Postgres."
        for session, text in (("a", plain), ("b", lasted)):  # own sessions: no neighbour's words
            e.capture.record_messages(project=None, session_id=session, harness="test", messages=[
                {"role": "user", "content": text, "msg_id": "m", "created_at": None, "tool_name": None, "tool_call_id": None}])
        assert e.index.wait(60)
        # Control: asked without "how long", the message with more of the words leads.
        assert first_texts(e, "Has the orders service run on Postgres?", n=2) == [plain, lasted]
        assert first_texts(e, "How long has the orders service run on Postgres?", n=2) == [lasted, plain]
    finally:
        e.close()


def test_a_tools_output_that_tells_a_time_is_no_answer_to_when(tmp_path):
    with told(tmp_path / "store", told_role="tool") as e:
        assert first_texts(e, "When did we move the orders service to Postgres?", n=2) == [PLAIN, TOLD]


def test_the_dense_leg_is_skipped_only_when_no_vector_hit_could_reach_the_page(tmp_path):
    """A message that tells a time, found by its meaning alone, lifted onto a full page of
    word matches by a large `whenWeight`: deferring the dense leg must not hide it."""
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"), init_options={
        "storeDir": str(tmp_path / "store"), "indexWorkspace": False, "watch": False, "neighbours": 0,
        "vectorFloor": -1, "whenWeight": 2.0})
    e = open_engine(settings, [])
    try:
        friday = "We pushed the release to prod last Friday."
        def said(session, texts):  # its own session: a neighbour's words are indexed with a message
            e.capture.record_messages(project=None, session_id=session, harness="test", messages=[
                {"role": "user", "content": t, "msg_id": f"m{i}", "created_at": None, "tool_name": None,
                 "tool_call_id": None} for i, t in enumerate(texts)])
        said("notes", [f"deploy notes {i}: the deploy pipeline ran" for i in range(12)])
        said("release", [friday])
        assert e.index.wait(60)
        # Control: no word of the query is in it, so the words alone never find it.
        assert friday not in first_texts(e, "When did we deploy?", n=13, lexical_only=True)
        assert first_texts(e, "When did we deploy?", n=10)[0] == friday
    finally:
        e.close()
