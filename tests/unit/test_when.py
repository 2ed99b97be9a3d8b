"""The time a query names: which forms are read as dates, and which words are left alone."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from lore_sidecar.engine.recall.when import ANY_YEAR_SPAN, mentioned
from lore_sidecar.model import EPOCH_DATE, day_number

NOW = datetime(2026, 12, 2, 15, 0, tzinfo=UTC)  # a Wednesday


def days(ranges) -> list[tuple[str, str]]:
    """[first, last) day numbers as ISO dates, last inclusive: easier to read in a failure."""
    show = lambda n: str(EPOCH_DATE + timedelta(days=n))  # noqa: E731
    return [(show(a), show(b - 1)) for a, b in ranges]


@pytest.mark.parametrize("query, expected", [
    ("what did we decide on 2024-03-05", [("2024-03-04", "2024-03-06")]),
    ("the outage on 5 March 2024", [("2024-03-04", "2024-03-06")]),
    ("the outage on the 5th of March, 2024", [("2024-03-04", "2024-03-06")]),
    ("What painting did Mel show on October 13, 2023?", [("2023-10-12", "2023-10-14")]),
    ("the Jan 5, 2024 release", [("2024-01-04", "2024-01-06")]),
    ("what happened in December 2023?", [("2023-12-01", "2023-12-31")]),
    ("the 2024-02 migration", [("2024-02-01", "2024-02-29")]),
    ("how often did it fail in 2023", [("2023-01-01", "2023-12-31")]),
    ("what did we do yesterday", [("2026-11-30", "2026-12-02")]),
    ("what broke last week", [("2026-11-23", "2026-11-29")]),
    ("the plan this month", [("2026-12-01", "2026-12-02")]),
    ("the plan last month", [("2026-11-01", "2026-11-30")]),
    # "N units ago": that day, give or take a quarter of the distance (at least a day, two
    # for a week or more): people round.
    ("the bug from 5 days ago", [("2026-11-26", "2026-11-28")]),
    ("what I cooked a couple of days ago", [("2026-11-29", "2026-12-01")]),
    ("what I cooked a couple days ago", [("2026-11-29", "2026-12-01")]),
    ("the book I finished a week ago", [("2026-11-23", "2026-11-27")]),
    ("what did I plant two weeks ago?", [("2026-11-15", "2026-11-21")]),
    ("the trip 2 months ago", [("2026-09-18", "2026-10-18")]),
])
def test_a_named_time_becomes_its_days(query, expected):
    when = mentioned(query, NOW)
    assert when is not None, query
    assert days(when.ranges) == expected


def test_a_month_or_day_without_a_year_means_it_in_each_recent_year():
    june = mentioned("When did we go camping in June?", NOW)
    assert len(june.ranges) == ANY_YEAR_SPAN
    assert days(june.ranges)[-1] == ("2026-06-01", "2026-06-30")
    assert days(june.ranges)[0] == (f"{2026 - ANY_YEAR_SPAN + 1}-06-01", f"{2026 - ANY_YEAR_SPAN + 1}-06-30")
    third = mentioned("the March 3rd incident", NOW)
    assert days(third.ranges)[-1] == ("2026-03-02", "2026-03-04")


def test_the_longest_form_wins_and_each_date_counts_once():
    # "3 June 2023" is a day, not also the month "June 2023" and the year "2023".
    assert days(mentioned("on 3 June 2023", NOW).ranges) == [("2023-06-02", "2023-06-04")]
    both = mentioned("between 3 June 2023 and 2024-01-09", NOW)
    assert days(both.ranges) == [("2023-06-02", "2023-06-04"), ("2024-01-08", "2024-01-10")]


def test_an_absolute_date_wins_over_relative_words():
    when = mentioned("what did she do last weekend before April 10, 2023?", NOW)
    assert days(when.ranges) == [("2023-04-09", "2023-04-11")]


@pytest.mark.parametrize("query", [
    "May I ask how the writer is elected?",  # the modal verb, not the month
    "we march on with the refactor",
    "the cache keeps 2000000 entries",
    "error 404 on /v1/messages",
    "on 31 June 2023",  # no such day
    "version 3.2023.1",
    "How many days ago did I meet Emma?",  # asks how far back; names no day ("two days ago" does)
    "it broke an hour ago",
    "the build takes two weeks",  # a duration, not a day back  # within today's slack anyway: no window of its own
    "",
])
def test_words_that_only_look_like_dates_name_no_time(query):
    assert mentioned(query, NOW) is None


def test_relative_words_count_from_the_reference_time():
    then = datetime(2023, 5, 10, tzinfo=UTC)
    assert days(mentioned("yesterday", then).ranges) == [("2023-05-08", "2023-05-10")]
    # Control: the same word today points elsewhere.
    assert days(mentioned("yesterday", NOW).ranges) != days(mentioned("yesterday", then).ranges)


def test_holds_reads_the_utc_date_of_a_stored_time():
    when = mentioned("on 2024-03-05", NOW)
    assert when.holds("2024-03-05T23:59:59Z") and when.holds("2024-03-04T00:00:00Z")
    assert not when.holds("2024-03-07T00:00:00Z") and not when.holds("2024-03-03T23:59:59Z")
    assert not when.holds(None) and not when.holds("not a time")
    assert day_number("2024-03-05T10:00:00Z") == (date(2024, 3, 5) - EPOCH_DATE).days


def test_the_mcp_tool_result_says_which_days_the_query_was_read_as():
    from lore_sidecar.mcp_face.render import recall
    hit = {"uri": "session://s/m1", "source": "messages", "score": 0.02, "snippet": "rolled back", "cues": [],
           "path": None, "range": None, "createdAt": "2024-03-05T16:20:00Z"}
    base = {"queryId": "q", "hits": [hit], "total": 1, "truncated": False, "nextOffset": None}
    dated = recall({**base, "timeWindows": [{"from": "2024-03-04", "until": "2024-03-07"}]}, None)
    assert "Read as asking about 2024-03-04 to 2024-03-06" in dated
    many = [{"from": f"{y}-06-01", "until": f"{y}-07-01"} for y in range(2017, 2027)]
    assert "2026-06-01 to 2026-06-30, 2025-06-01 to 2025-06-30 and 8 more" in recall({**base, "timeWindows": many}, None)
    # Control: an undated query's result says nothing about time.
    assert "Read as asking" not in recall({**base, "timeWindows": []}, None)


def test_a_query_naming_many_days_is_read_by_its_first_ones():
    from lore_sidecar.engine.recall.when import MAX_RANGES
    named = [date(2023, 1, 1) + timedelta(days=i) for i in range(0, 600, 3)]  # 200 days, none adjacent
    when = mentioned(" and ".join(d.isoformat() for d in named), NOW)
    assert len(when.ranges) == MAX_RANGES
    firsts = [(EPOCH_DATE + timedelta(days=a + 1)) for a, _ in when.ranges]
    assert firsts == named[:MAX_RANGES]
    # Control: a few days are all kept.
    assert len(mentioned("2023-01-01 and 2023-01-10", NOW).ranges) == 2


@pytest.mark.parametrize("query", [
    "When did we move to Postgres?", "when was the cache added", "Since when does the build fail?",
    "How long ago did we pin numpy?", "On what date did the deploy break?", "Which year was the API v2 released?",
    "  What day did we ship it?",
])
def test_questions_that_ask_for_a_time(query):
    from lore_sidecar.engine.recall.when import asks_when
    assert asks_when(query)


@pytest.mark.parametrize("query", [
    "the import fails when the cache is cold", "What did we decide about the cache?", "whenever it retries",
    "What time zone does the server use", "deploy steps",
])
def test_questions_that_ask_no_time(query):
    from lore_sidecar.engine.recall.when import asks_when
    assert not asks_when(query)


@pytest.mark.parametrize("text,tells", [
    ("I went there yesterday", True), ("it broke last Friday", True), ("we moved it two weeks ago", True),
    ("back in 2022 we used MySQL", True), ("the meeting on the 5th", True), ("in June we shipped", True),
    ("Saturday was fun", True), ("this weekend I'm off", True),
    ("we may go later", False), ("the march of time", False), ("thanks, that works!", False),
    ("the function returns 42", False), ("see the 1st argument", True),
])
def test_messages_that_tell_a_time(text, tells):
    from lore_sidecar.engine.recall.when import says_when
    assert says_when(text) is tells


@pytest.mark.parametrize("query,test", [
    ("When did we move to Postgres?", "says_when"), ("How long ago did we pin numpy?", "says_when"),
    ("How long has the cache been on?", "says_how_long"), ("how long does the suite take", "says_how_long"),
    ("What did we decide about the cache?", None), ("the cache lives long when warm", None),
    # Which of two came first, or their order: the evidence tells when each happened.
    ("Which event happened first, the meeting with Rachel or the pride parade?", "says_when"),
    ("Who became a parent first, Rachel or Alex?", "says_when"),
    ("What is the order of the sports events I watched in January?", "says_when"),
    # Controls: "first" without a choice, or a choice without an order, asks no time.
    ("Which book did I read first?", None), ("What was the first car we bought?", None),
    ("Which do I prefer, tea or coffee?", None), ("the first release or the second", None),
])
def test_a_question_about_time_says_what_its_answer_must_tell(query, test):
    from lore_sidecar.engine.recall import when
    asked = when.time_asked(query)
    assert (asked.__name__ if asked else None) == test


@pytest.mark.parametrize("text,tells", [
    ("I've had them for four years now", True), ("the suite takes 10 minutes", True), ("builds in 3 hrs", True),
    ("we have used it since 2019", True), ("friends for a while", True), ("a couple of weeks of work", True), ("a couple weeks of work", True),
    ("the function returns four values", False), ("thanks, that works!", False), ("a long function", False),
])
def test_messages_that_tell_a_duration(text, tells):
    from lore_sidecar.engine.recall.when import says_how_long
    assert says_how_long(text) is tells
