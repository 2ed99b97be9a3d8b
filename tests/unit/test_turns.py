"""What a turn of a conversation says: whether it asks, and whether it says anything at all."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lore_sidecar.engine.capture.messages import render_content
from lore_sidecar.model import asks_question, says_nothing

LOG = "```\nTimeoutError: export exceeded 600 s\n```"


@pytest.mark.parametrize("text", [
    "Why does the export time out?",
    "Is it slow?  \n\t",
    f"Why does the export time out? The log:\n\n{LOG}",
    f"Why does it fail?\n{LOG}",
    f"What now?\n{LOG}\n\n~~~python\nexport()\n~~~\n",  # two pasted blocks after the question
    f"Intro.\n\nAny idea why this happens? Output below.\n{LOG}",
])
def test_a_question_asks_even_before_pasted_output(text):
    assert asks_question(text)


@pytest.mark.parametrize("text", [
    "Why? Because the export is slow.",  # a question answered in the same turn
    "Is it?\n\nno",
    f"The log:\n{LOG}",  # control: the same paste after a statement
    "Here:\n```\nwhy is this None?\n```",  # a question mark inside the block is not the turn's
    "```\nonly code?\n```",
    "See https://example.org/search?q=export\n```\nx\n```",  # not a sentence's end
    "Is this right?\n\nHere it is:\n```\nx\n```",  # the paragraph just before the paste says nothing asked
    "An unclosed block:\n```",
    "",
])
def test_a_statement_does_not_ask(text):
    assert not asks_question(text)


def test_a_tool_call_or_an_empty_thought_says_nothing():
    call = render_content([{"type": "tool_use", "name": "Read", "input": {"path": "a.py"}}])
    thought = render_content([{"type": "thinking", "thinking": ""}])
    said = render_content([{"type": "text", "text": "It holds the GIL."}, {"type": "tool_use", "name": "Read", "input": {}}])
    assert says_nothing(call) and says_nothing(thought) and says_nothing("  \n")
    assert not says_nothing(said)  # prose first: an answer that goes on to call a tool


@given(st.text(alphabet=" \t\n\r[]toolcal Read{}x", max_size=40)
       | st.builds(lambda ws, rest: ws + "[tool call " + rest, st.text(alphabet=" \t\n", max_size=5), st.text(max_size=20)))
@settings(max_examples=300, deadline=None)
def test_the_sql_form_of_says_nothing_agrees_with_it(text):
    import sqlite3

    from lore_sidecar.model import says_something_sql
    c = sqlite3.connect(":memory:")
    c.execute("CREATE TABLE m(text TEXT)")
    c.execute("INSERT INTO m VALUES (?)", (text,))
    assert bool(c.execute(f"SELECT {says_something_sql('text')} FROM m").fetchone()[0]) is (not says_nothing(text))
