"""A question the query matches brings its reply with it, first: on a real store."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lore_sidecar.app import open_engine
from lore_sidecar.settings import load_settings

REPLY = "Move the gzip step into a process pool; it holds the GIL for minutes."
FILLER = [f"the nightly job log {i}: nightly export ran, export finished, nightly ok" for i in range(12)]


@contextmanager
def engine_for(store: Path, **options) -> Iterator:
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"),
                                init_options={"storeDir": str(store), "indexWorkspace": False, "watch": False, **options})
    engine = open_engine(settings, [])
    try:
        yield engine
    finally:
        engine.close()


def record(engine, session: str, texts: list[str]) -> None:
    engine.capture.record_messages(project=None, session_id=session, harness="test", messages=[
        {"role": "user" if i % 2 == 0 else "assistant", "content": t, "msg_id": f"{session}-{i}", "created_at": None,
         "tool_name": None, "tool_call_id": None} for i, t in enumerate(texts)])


def snippets(engine, query: str, n: int = 5) -> list[str]:
    return [h.snippet for h in engine.recall(query, sources=["messages"], limit=n).hits]


def reply_is_below(engine, said: str) -> bool:
    """Whether, for the query, REPLY ranks nowhere above the turn that starts with `said`."""
    top = snippets(engine, "why does the nightly export time out", n=10)
    turn = next(i for i, s in enumerate(top) if s.startswith(said))
    return REPLY not in top[: turn + 1]


def conversation(question: str) -> list[str]:
    # The question is said once among turns that share its words; its reply shares none of
    # the query's words (it matches only through its context, at half weight).
    return [*FILLER[:6], question, REPLY, "ok, thanks", *FILLER[6:]]


def test_a_question_hit_brings_its_reply_in_just_ahead_of_it(tmp_path):
    with engine_for(tmp_path / "store") as e:
        record(e, "s", conversation("Why does the nightly export time out?"))
        e.index.wait()
        top = snippets(e, "why does the nightly export time out", n=10)
        question = next(i for i, s in enumerate(top) if s.startswith("Why does"))
        assert top[question - 1] == REPLY  # right ahead of the question it answers


def test_a_statement_hit_keeps_its_next_turn_below_it(tmp_path):
    # Control: the same words as a statement. Its next turn still joins (a top hit's
    # neighbours do), but below it: only a question's reply is brought ahead.
    with engine_for(tmp_path / "store") as e:
        record(e, "s", conversation("The nightly export does time out."))
        e.index.wait()
        assert reply_is_below(e, "The nightly export does")


def test_a_reply_is_the_next_turn_of_the_same_session_only(tmp_path):
    with engine_for(tmp_path / "store") as e:
        record(e, "a", ["Why does the nightly export time out?"])  # asked, never answered here
        for session, role, text in (("b", "assistant", REPLY), ("a", "user", "never mind")):
            # Next in time: another session's answer to something else, then this one moves on.
            e.capture.record_messages(project=None, session_id=session, harness="test", messages=[
                {"role": role, "content": text, "msg_id": f"{session}-later", "created_at": None, "tool_name": None,
                 "tool_call_id": None}])
        e.index.wait()
        top = snippets(e, "why does the nightly export time out")
        assert top[0] == "Why does the nightly export time out?" and REPLY not in top


def test_the_reply_rule_is_off_with_neighbours_off(tmp_path):
    with engine_for(tmp_path / "store", neighbours=0) as e:
        record(e, "s", conversation("Why does the nightly export time out?"))
        e.index.wait()
        # The reply still matches the question's words as its context, but below the question.
        assert reply_is_below(e, "Why does")


def test_asking_is_read_from_the_end_of_the_text(tmp_path):
    with engine_for(tmp_path / "store") as e:
        record(e, "s", ["Why? Because the export is slow.", "Is it slow?  \n\t", "Is it?\n\nno"])
        ids = [r[0] for r in e.records.db.reader().execute("SELECT id FROM messages ORDER BY id")]
        places = e.records.message_neighbours(ids)
        assert [places[i].asks for i in ids] == [False, True, False]
        assert places[ids[0]].before is None and places[ids[0]].after == ids[1]
        assert places[ids[2]].after is None


def agent_session(question: str, *, answered: bool = True) -> list[dict]:
    """An agent's turn as a harness records it: the prompt, a tool call, its (long) result,
    an empty redacted thought, then the answer in prose (or, unanswered, the next prompt)."""
    def msg(i: int, role: str, content) -> dict:
        return {"role": role, "content": content, "msg_id": f"a-{i}", "created_at": None, "tool_name": None,
                "tool_call_id": None}
    turns = [(("user" if i % 2 == 0 else "assistant"), t) for i, t in enumerate(FILLER[:6])]
    turns += [
        ("user", question),
        ("assistant", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "jobs/nightly.py"}}]),
        ("tool", [{"type": "tool_result", "tool_use_id": "t1", "content": "def export():\n    gzip(all_rows)\n" * 400}]),
        ("assistant", [{"type": "thinking", "thinking": ""}]),
        ("assistant", REPLY) if answered else ("user", "never mind, something else"),
        *((("user" if i % 2 == 0 else "assistant"), t) for i, t in enumerate(FILLER[6:])),
    ]
    return [msg(i, role, content) for i, (role, content) in enumerate(turns)]


def top_after(engine, question_start: str) -> tuple[list[str], int]:
    top = snippets(engine, "why does the nightly export time out", n=10)
    return top, next(i for i, s in enumerate(top) if s.startswith(question_start))


def test_in_an_agent_session_the_reply_is_the_answer_past_the_tool_calls(tmp_path):
    with engine_for(tmp_path / "store") as e:
        e.capture.record_messages(project=None, session_id="s", harness="test",
                                  messages=agent_session("Why does the nightly export time out?"))
        e.index.wait()
        top, question = top_after(e, "Why does")
        assert top[question - 1] == REPLY  # the answer, not the Read call right after the prompt
        assert not any(s.startswith("[tool call") for s in top[:question])


def test_a_hits_neighbours_in_an_agent_session_are_messages_that_say_something(tmp_path):
    """A top hit brings the turns around it; in an agent's session the turn right after a
    prompt is a bare tool call, and the one before an answer an empty thought: the nearest
    turn on each side that says something comes instead."""
    with engine_for(tmp_path / "store") as e:
        e.capture.record_messages(project=None, session_id="s", harness="test",
                                  messages=agent_session("Why does the nightly export time out?"))
        e.index.wait()
        ids = [r[0] for r in e.records.db.reader().execute("SELECT id FROM messages ORDER BY id")]
        prompt, call, result, thought, answer = ids[6:11]
        places = e.records.message_neighbours([prompt, result, answer])
        assert places[prompt].after == result and places[result].before == prompt
        assert places[result].after == answer and places[answer].before == result
        top = snippets(e, "why does the nightly export time out", n=10)
        assert not any(s.startswith("[tool call") for s in top), top
        # Control: a turn next to one that says something keeps it as its neighbour.
        assert places[prompt].before == ids[5]


def test_an_unanswered_question_in_an_agent_session_brings_nothing_ahead(tmp_path):
    # Control: the same session where the user moved on before any answer. The tool call
    # that followed the prompt must not stand in for a reply.
    with engine_for(tmp_path / "store") as e:
        e.capture.record_messages(project=None, session_id="s", harness="test",
                                  messages=agent_session("Why does the nightly export time out?", answered=False))
        e.index.wait()
        top, question = top_after(e, "Why does")
        assert question == 0, top


def test_a_question_before_a_pasted_log_still_asks(tmp_path):
    # The log is longer than the end of a message read first (64 characters): the question
    # is only seen by reading the message whole.
    log = "\n".join(f"worker {i}: TimeoutError: export exceeded 600 s" for i in range(4))
    asked = f"Why does the nightly export time out? The log:\n\n```\n{log}\n```"
    with engine_for(tmp_path / "store") as e:
        record(e, "s", conversation(asked))
        e.index.wait()
        top, question = top_after(e, "Why does")
        assert top[question - 1] == REPLY


def test_a_tools_output_ending_in_a_question_mark_asks_no_one(tmp_path):
    with engine_for(tmp_path / "store") as e:
        e.capture.record_messages(project=None, session_id="s", harness="test", messages=[
            {"role": role, "content": text, "msg_id": f"s-{i}", "created_at": None, "tool_name": None,
             "tool_call_id": None}
            for i, (role, text) in enumerate([("tool", "export.csv exists. Overwrite it?"), ("assistant", "It asked; I said no."),
                                              ("user", "Overwrite export.csv?"), ("assistant", "No.")])])
        ids = [r[0] for r in e.records.db.reader().execute("SELECT id FROM messages ORDER BY id")]
        places = e.records.message_neighbours(ids)
        assert not places[ids[0]].asks and places[ids[0]].reply is None
        assert places[ids[2]].asks and places[ids[2]].reply == ids[3]  # control: the user's same words ask


def test_an_agent_sessions_context_passes_over_bare_tool_calls_live_and_rebuilt(tmp_path):
    """Each message is indexed with the nearest turns that say something as its context; a
    bare tool call has none (found by its context alone it was noise). Recorded over several
    calls, as a harness's hook records them, the live index must answer as one rebuilt from
    the record: each new turn that says something re-indexes the one its context completes."""
    turns = agent_session("Why does the nightly export time out?")
    turns[7]["content"] = [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "jobs/zanzibar.py"}}]
    # "gzip" is said in the tool's result and the answer, never in the prompt.
    queries = ["why does the nightly export time out", "gzip", "zanzibar", "process pool GIL"]
    with engine_for(tmp_path / "store", neighbours=0) as e:  # the words' own matches, nothing joined
        # Three calls, each indexed before the next arrives: up to the prompt; the tool call,
        # its result (the prompt, from the call before, now has its next turn that says
        # something) and the empty thought; the answer and the rest (the result's, likewise).
        for part in (turns[:7], turns[7:10], turns[10:]):
            e.capture.record_messages(project=None, session_id="s", harness="test", messages=part)
            e.index.wait()

        def found() -> dict[str, list]:
            return {q: [(h.uri, h.score) for h in e.recall(q, sources=["messages"], limit=20, lexical_only=True).hits]
                    for q in queries}

        live = found()
        # The prompt holds the tool's result as its context, past the bare call between them.
        assert "session://s/a-6" in [u for u, _ in live["gzip"]]
        top = [h.snippet for h in e.recall(queries[0], sources=["messages"], limit=10).hits]
        assert not any(s.startswith("[tool call") for s in top), top
        # Control: the tool call is still found by its own words.
        assert [h.snippet for h in e.recall("zanzibar", sources=["messages"], limit=3).hits][0].startswith("[tool call Read]")
        e.index.rebuild("all")
        assert found() == live


def test_a_long_turn_that_ends_asking_keeps_its_place_ahead_of_its_reply(tmp_path):
    """A turn that tells at length and then asks holds its own answer: its reply is not
    brought ahead of it (it still joins below, as a top hit's next turn). The short
    question's reply is brought ahead: test_a_question_hit_brings_its_reply_in_just_ahead_of_it."""
    long_question = ("I moved the nightly export to the new cluster last month, split the tables into four "
                     "batches, turned on compression for the largest ones and raised the worker count from "
                     "four to sixteen, and the export still takes the whole night and then stops half way "
                     "through the third batch every time. Why does the nightly export time out?")
    assert len(long_question) > 300
    with engine_for(tmp_path / "store") as e:
        record(e, "s", conversation(long_question))
        e.index.wait()
        assert reply_is_below(e, long_question[:40])
