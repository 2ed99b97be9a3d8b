"""The time a query names ("on 3 June, 2023", "in March 2024", "yesterday"), as day ranges.

A question that names a date asks about what was said then: recall prefers messages written
in that window (a bonus, not a filter: a query whose date matches nothing keeps its plain
answer) and also searches inside it, so a turn of that day that BM25 ranks low still
surfaces. Pure: the reference time is given.

Days are counted from 1970-01-01 (UTC); a range is [first, last) in days.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from lore_sidecar.model import EPOCH_DATE, day_number

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")
_ABBR = {m[:3]: i for i, m in enumerate(MONTHS, 1)}  # every form the patterns take starts so
# A month or day named without a year means that month in any of the last this-many years.
ANY_YEAR_SPAN = 10
MAX_RANGES = 64  # a query naming more days than this is read by its first ones
DAY_SLACK = 1  # a named day also covers the days either side (time zones, "last night")

_MONTH = r"(?P<{0}>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DAY = r"(?P<{0}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{0}>(?:19|20)\d\d)"
# Longest forms first: a match consumes its text, so "3 June 2023" is not also "June 2023".
_FORMS = [
    ("day", re.compile(r"\b(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)\b")),
    ("day", re.compile(rf"\b{_DAY.format('d')}(?: of)? {_MONTH.format('m')}\.?,? {_YEAR.format('y')}\b", re.I)),
    ("day", re.compile(rf"\b{_MONTH.format('m')}\.? {_DAY.format('d')},? {_YEAR.format('y')}\b", re.I)),
    ("month", re.compile(r"\b(?P<y>(?:19|20)\d\d)-(?P<m>0[1-9]|1[0-2])\b(?!-)")),
    ("month", re.compile(rf"\b{_MONTH.format('m')}\.?,? (?:of )?{_YEAR.format('y')}\b", re.I)),
    ("any-day", re.compile(rf"\b{_DAY.format('d')}(?: of)? {_MONTH.format('m')}\b", re.I)),
    ("any-day", re.compile(rf"\b{_MONTH.format('m')}\.? {_DAY.format('d')}\b(?!:)", re.I)),
    ("year", re.compile(r"\b(?<![-/.])(?P<y>(?:19|20)\d\d)\b(?![-/.]\d)")),
    # A month alone only as a capitalised full name ("in June"): "may", "march" and "sept"
    # are ordinary words too, and "May" starts questions ("May I ...").
    ("any-month", re.compile(r"\b(?P<m>January|February|March|April|June|July|August|September|October"
                             r"|November|December)\b")),
]
# Every form above and below holds a digit, a month's first three letters or one of these
# words: a query without any of them names no time (most queries; ~1 us instead of ~18).
_MAYBE = re.compile(r"\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|today|yesterday|week|month|year|ago", re.I)
_RELATIVE = re.compile(r"\b(?P<w>today|yesterday|(?:this|last) (?:week|month|year))\b", re.I)
# "five days ago", "a week ago", "a couple (of) months ago": a day that far back, give or take.
_AGO = re.compile(r"\b(?P<n>\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few)"
                  r"\s+(?P<u>day|week|month)s?\s+ago\b", re.I)
_AGO_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "couple": 2, "few": 3}
_AGO_UNIT_DAYS = {"day": 1, "week": 7, "month": 30}


@dataclass(frozen=True, slots=True)
class When:
    """Where a query's time points: day ranges, and the query with the words that named
    them blanked (what else it asks about)."""

    ranges: tuple[tuple[int, int], ...]
    rest: str = ""

    def dates(self) -> tuple[tuple[str, str], ...]:
        """The ranges as ISO dates, [first, until)."""
        show = lambda n: (EPOCH_DATE + timedelta(days=n)).isoformat()  # noqa: E731
        return tuple((show(a), show(b)) for a, b in self.ranges)

    def holds(self, iso: str | None) -> bool:
        """Whether an ISO-8601 time falls in one of the ranges."""
        d = day_number(iso)
        return d is not None and any(a <= d < b for a, b in self.ranges)


def _n(d: date) -> int:
    return (d - EPOCH_DATE).days


def _month_range(y: int, m: int) -> tuple[int, int]:
    first = date(y, m, 1)
    nxt = date(y + (m == 12), m % 12 + 1, 1)
    return _n(first), _n(nxt)


def _day_range(y: int, m: int, d: int) -> tuple[int, int] | None:
    try:
        n = _n(date(y, m, d))
    except ValueError:
        return None  # 31 June: no such day
    return n - DAY_SLACK, n + 1 + DAY_SLACK


def _month_of(name: str) -> int:
    return _ABBR[name.lower()[:3]]


def _ranges(kind: str, m: re.Match, ref: date) -> list[tuple[int, int]]:
    g = m.groupdict()
    if kind == "year":
        y = int(g["y"])
        return [(_n(date(y, 1, 1)), _n(date(y + 1, 1, 1)))]
    month = int(g["m"]) if g["m"].isdigit() else _month_of(g["m"])
    years = [int(g["y"])] if g.get("y") else list(range(ref.year - ANY_YEAR_SPAN + 1, ref.year + 1))
    if kind in ("month", "any-month"):
        return [_month_range(y, month) for y in years]
    out = [_day_range(y, month, int(g["d"])) for y in years]
    return [r for r in out if r is not None]


def _ago(m: re.Match, ref: date) -> tuple[int, int]:
    """"N units ago": the day that far back, widened by a quarter of the distance (at least
    two days past a day's own slack for weeks and months) — people round: "a week ago" is
    said of eight days back, "two months ago" of seven weeks."""
    word = " ".join(m.group("n").lower().split()).removeprefix("a ") if not m.group("n").isdigit() else m.group("n")
    n = int(word) if word.isdigit() else _AGO_COUNTS[word]
    back = n * _AGO_UNIT_DAYS[m.group("u").lower()]
    slack = max(DAY_SLACK + (1 if back >= 7 else 0), back // 4)
    day = _n(ref) - back
    return day - slack, day + slack + 1


def _relative(word: str, ref: date) -> tuple[int, int]:
    word = " ".join(word.lower().split())
    today = _n(ref)
    if word == "today":
        return today - DAY_SLACK, today + 1
    if word == "yesterday":
        return today - 1 - DAY_SLACK, today + 1
    if word.endswith("week"):
        monday = today - ref.weekday()
        return (monday, today + 1) if word.startswith("this") else (monday - 7, monday)
    if word.endswith("month"):
        first = date(ref.year, ref.month, 1)
        if word.startswith("this"):
            return _n(first), today + 1
        prev = first - timedelta(days=1)
        return _month_range(prev.year, prev.month)
    if word.startswith("this"):
        return _n(date(ref.year, 1, 1)), today + 1
    return _n(date(ref.year - 1, 1, 1)), _n(date(ref.year, 1, 1))


def mentioned(query: str, now: datetime | None = None) -> When | None:
    """The time `query` names, or None. Absolute dates win over relative words ("last week
    before 10 April 2023" is about April 2023); relative words count from `now`. Linear in
    the query's length; at most MAX_RANGES distinct ranges, the first named."""
    if not _MAYBE.search(query):
        return None
    ref = (now or datetime.now(UTC)).astimezone(UTC).date()
    ranges: dict[tuple[int, int], None] = {}

    def claim(read: Callable[[re.Match], list[tuple[int, int]]]) -> Callable[[re.Match], str]:
        def blank(m: re.Match) -> str:
            try:
                found = read(m)
            except (KeyError, ValueError):
                return m.group(0)  # a near miss such as "13 Marching 2020": left to shorter forms
            for r in found:
                if len(ranges) < MAX_RANGES:
                    ranges.setdefault(r)
            return " " * len(m.group(0))
        return blank

    left = query  # what no longer form has claimed: "3 June 2023" is not also "June 2023"
    for kind, form in _FORMS:
        left = form.sub(claim(lambda m, kind=kind: _ranges(kind, m, ref)), left)
    if not ranges:
        left = _RELATIVE.sub(claim(lambda m: [_relative(m.group("w"), ref)]), left)
        left = _AGO.sub(claim(lambda m: [_ago(m, ref)]), left)
    return When(ranges=tuple(sorted(ranges)), rest=" ".join(left.split())) if ranges else None


# --- questions that ask for a time, and messages that tell one ---------------------------

# A question asking when: "When did ...", "Since when ...", "On what date ...", "Which year
# ...", "How long ago ...". Only at the start: "fails when the cache is cold" asks no time.
_ASKS_WHEN = re.compile(
    r"^\W*(?:since\s+when|when|how\s+long\s+ago|(?:(?:on|in|at|by|during|for)\s+)?(?:what|which)\s+"
    r"(?:date|day|month|year|week|weekend|time|season)s?)\b(?!\s+zones?\b)", re.I)  # "what time zone": no
_WEEKDAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_UNITS = r"day|days|week|weeks|weekend|month|months|year|years|night|morning|evening|summer|winter|spring|fall|autumn"
# A message that tells a time: a relative day or period, a weekday, a year, a day of the
# month ("the 5th"), a month's full name (only capitalised: "may" and "march" are ordinary
# words, so May is left out).
_SAYS_WHEN = re.compile(
    # Tried only where a word starts: every form does, and the alternation is then tried at
    # a sixth of the positions (~6 us a message of 150 characters instead of ~11).
    r"(?=[A-Za-z0-9])(?<![A-Za-z0-9_])(?:"
    rf"(?i:\b(?:yesterday|today|tonight|tomorrow|ago|(?:last|next|this|past|previous|coming)\s+(?:{_UNITS}|{_WEEKDAYS})"
    rf"|{_WEEKDAYS}|the\s+other\s+day|(?:19|20)\d\d|\d{{1,2}}(?:st|nd|rd|th))\b)"
    r"|\b(?:January|February|March|April|June|July|August|September|October|November|December)\b)")


# A question asking how long: "How long has the cache been on?" ("how long ago" asks when).
_ASKS_HOW_LONG = re.compile(r"^\W*how\s+long\b(?!\s+ago\b)", re.I)
_COUNT = r"\d+(?:\.\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|few|couple(?:\s+of)?|several"
# A message that tells a duration: a count of a unit ("four years", "10 minutes", "3 hrs"),
# "since ...", "for years/a while", or a year ("since 2019").
_SAYS_HOW_LONG = re.compile(
    r"(?=[A-Za-z0-9])(?<![A-Za-z0-9_])(?i:"
    rf"(?:{_COUNT})\s*(?:years?|months?|weeks?|days?|hours?|minutes?|seconds?|decades?|hrs?|mins?|secs?|ms)\b"
    r"|since\b|for\s+(?:years|months|weeks|days|hours|ages|a\s+while|long)\b|(?:19|20)\d\d\b)")


# A question asking which of two events came first, or their order: "Which did I start
# first, A or B?", "Who became a parent first, Rachel or Alex?", "What is the order of ...".
# Its evidence tells when each one happened (LongMemEval dev half: 82% of the evidence
# turns, 14% of all turns).
_ASKS_CHOICE = re.compile(r"\W*(?:which|who|what)\b", re.I)
_ORDER_WORD = re.compile(r"\b(?:first|earlier|earliest|later|latest)\b", re.I)
_OR = re.compile(r"\bor\b", re.I)
_ASKS_ORDER = re.compile(r"\W*what\s+(?:is|was)\s+the\s+order\b", re.I)


def _asks_order(query: str) -> bool:
    """"Which ... first, A or B?" (its first sentence holds an order word and "or"), or
    "What is the order of ...". Each test is one pass over the query, without backtracking."""
    if not _ASKS_CHOICE.match(query):
        return False
    if _ASKS_ORDER.match(query):
        return True
    end = query.find("?")
    end = len(query) if end < 0 else end
    return _ORDER_WORD.search(query, 0, end) is not None and _OR.search(query, 0, end) is not None


def asks_when(query: str) -> bool:
    """Whether the query asks for a time ("When did we move to Postgres?")."""
    return _ASKS_WHEN.search(query) is not None


def says_when(text: str) -> bool:
    """Whether a message tells a time ("yesterday", "last Friday", "in 2022", "two weeks ago")."""
    return _SAYS_WHEN.search(text) is not None


def says_how_long(text: str) -> bool:
    """Whether a message tells a duration ("for four years", "takes 10 minutes", "since 2019")."""
    return _SAYS_HOW_LONG.search(text) is not None


def time_asked(query: str) -> Callable[[str], bool] | None:
    """What a question about time needs an answer to tell, as the test to read a message
    with: a time for "When ...?" and "Which came first, A or B?", a duration for "How long
    ...?"; None for any other query."""
    if asks_when(query) or _asks_order(query):
        return says_when
    if _ASKS_HOW_LONG.search(query):
        return says_how_long
    return None


def parse_time(iso: str | None) -> datetime | None:
    """An ISO-8601 time, or None when there is none or it does not parse."""
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None


def age_days(iso: str | None, now: float) -> float:
    """Days from an ISO-8601 time to `now` (epoch seconds); NaN when it does not parse."""
    t = parse_time(iso)
    return float("nan") if t is None else (now - t.timestamp()) / 86400.0
