"""Bitemporal facts: the journal line syntax, note extraction, and slot resolution.

Two time axes. *Valid time* (`valid_from`, `valid_until`): when the fact holds in the world;
it comes from the caller, the line, or the note's frontmatter date. *Record time*
(`recorded_at`, and the close time of a row): when this store learnt it; it comes from the
write clock only. Every time is kept as a fixed-width UTC string, so string order is time
order.

Resolution is a pure function of the rows and closes of one slot (subject + predicate,
normalised) and a record time `known_at`: it replays what was learnt, in record-time order,
up to `known_at`. Within a slot rows are ordered in valid time; the next row with a
different value supersedes the current one from its `valid_from`; the same value extends
it; an extracted row never supersedes a journal (stated or inferred) row. A close targets
the rows that were open at its `valid_until` *as known when the close was recorded*, so a
backdated close learnt later never rewrites what was believed before it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from lore_sidecar.errors import LoreError

JOURNAL_SOURCES = ("stated", "inferred")
EXTRACTED = "extracted"
MIN_TIME = ""  # sorts before every timestamp: "valid since forever"


# -- time ------------------------------------------------------------------------------------
def ts(value: str | datetime, *, field_name: str = "time") -> str:
    """Canonical fixed-width UTC time `YYYY-MM-DDTHH:MM:SS.ffffffZ`. Accepts a date or an
    ISO-8601 time (naive means UTC). Raises LoreError(invalidTime)."""
    if isinstance(value, datetime):
        dt = value
    else:
        text = str(value).strip()
        try:
            if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
                dt = datetime.strptime(text, "%Y-%m-%d")
            else:
                dt = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise LoreError("invalidTime", f"{field_name}: {value!r} is not a date or an ISO-8601 time", value=str(value)) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def show(t: str | None) -> str | None:
    """A canonical time as people write it: microseconds only when there are some."""
    if not t:
        return None
    return t.replace(".000000Z", "Z")


def now_ts() -> str:
    return ts(datetime.now(UTC))


# -- keys ------------------------------------------------------------------------------------
def norm_key(value: str) -> str:
    """Case-, accent- and punctuation-insensitive key: `Payments-Service` == `payments service`."""
    text = unicodedata.normalize("NFKD", value)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    return " ".join(re.findall(r"[^\W_]+", text))


def slot_of(subject_key: str, predicate_key: str) -> str:
    return f"{subject_key}\x1f{predicate_key}"


def require_key(value: str, name: str) -> str:
    key = norm_key(value)
    if not key:
        raise LoreError("invalidKey", f"{name} {value!r} has no letters or digits to key it by", field=name, value=value)
    return key


# -- journal lines ------------------------------------------------------------------------------
# Text fields escape what would end them; attribute values what would end an attribute.
_TEXT_ESC = {"\\": "\\\\", "{": "\\{", "}": "\\}", "\n": "\\n", "\r": "\\r"}
_ATTR_ESC = {**_TEXT_ESC, ",": "\\,", "=": "\\="}
_UNESC = {"n": "\n", "r": "\r"}


def escape(text: str) -> str:
    out = "".join(_TEXT_ESC.get(c, c) for c in text)
    return out.replace("::", "\\:\\:")


def escape_attr(text: str) -> str:
    return "".join(_ATTR_ESC.get(c, c) for c in text)


def _split_unescaped(text: str, sep: str) -> list[str]:
    """Split on `sep` where it is not escaped by a backslash (escapes are kept)."""
    if "\\" not in text:
        return text.split(sep)
    parts, start = [], 0
    for m in re.finditer(r"\\.|" + re.escape(sep), text, re.DOTALL):
        if m.group(0) == sep:
            parts.append(text[start : m.start()])
            start = m.end()
    parts.append(text[start:])
    return parts


_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


def unescape(text: str) -> str:
    if "\\" not in text:
        return text
    return _ESCAPED.sub(lambda m: _UNESC.get(m.group(1), m.group(1)), text)


_LINE = re.compile(r"^\s*[-*]\s+\[(fact|invalidate)\]\s+(.*?)\s*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ParsedLine:
    kind: str  # "fact" | "invalidate"
    subject: str
    predicate: str
    object: str | None
    attrs: dict[str, str]


def parse_line(line: str) -> ParsedLine | None:
    """`- [fact] S :: p :: O {k=v, ...}` or `- [invalidate] S :: p {k=v}`; None otherwise."""
    m = _LINE.match(line)
    if not m:
        return None
    kind, rest = m.group(1).lower(), m.group(2)
    attrs: dict[str, str] = {}
    if rest.endswith("}") and not rest.endswith("\\}"):
        body = _split_unescaped(rest, "{")
        if len(body) >= 2:
            rest = "{".join(body[:-1]).rstrip()
            for item in _split_unescaped(body[-1][:-1], ","):
                if "=" in item:
                    k, _, v = item.partition("=")
                    attrs[k.strip().lower()] = unescape(v.strip())
    parts = [unescape(p.strip()) for p in _split_unescaped(rest, "::")]
    if kind == "fact" and len(parts) == 3 and all(parts):
        return ParsedLine("fact", parts[0], parts[1], parts[2], attrs)
    if kind == "invalidate" and len(parts) == 2 and all(parts):
        return ParsedLine("invalidate", parts[0], parts[1], None, attrs)
    return None


def fact_line(subject: str, predicate: str, obj: str, attrs: dict[str, str | None]) -> str:
    return f"- [fact] {escape(subject)} :: {escape(predicate)} :: {escape(obj)} {_attrs(attrs)}"


def invalidate_line(subject: str, predicate: str, attrs: dict[str, str | None]) -> str:
    return f"- [invalidate] {escape(subject)} :: {escape(predicate)} {_attrs(attrs)}"


def _attrs(attrs: dict[str, str | None]) -> str:
    return "{" + ", ".join(f"{k}={escape_attr(str(v))}" for k, v in attrs.items() if v is not None) + "}"


# -- resolution ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Row:
    """One fact row as resolution sees it."""

    key: str  # fact id
    object_key: str
    valid_from: str | None
    valid_until: str | None  # as asserted
    recorded_at: str
    journal: bool  # stated/inferred (True) or extracted from a note (False)
    order: int = 0  # tie-break: origin order


@dataclass(frozen=True, slots=True)
class Close:
    valid_until: str
    recorded_at: str
    order: int = 0


@dataclass(slots=True)
class Effective:
    valid_from: str | None
    until: str | None  # effective end of validity (None: open)
    closed_at: str | None  # record time at which `until` became known
    superseded_by: str | None = None
    merged_into: str | None = None  # the same value, already held by this earlier row
    shadowed: bool = False  # an extracted row under a journal row: never in force
    closed_by: list[int] = field(default_factory=list)  # orders of the closes that applied

    @property
    def visible(self) -> bool:
        return self.merged_into is None and not self.shadowed


def _lt(a: str | None, b: str | None) -> bool:
    """a < b where None means +infinity."""
    if a is None:
        return False
    return b is None or a < b


def resolve(rows: Sequence[Row], closes: Sequence[Close], known_at: str | None = None) -> dict[str, Effective]:
    """What was believed about this slot at record time `known_at` (None: now)."""
    known_rows = [r for r in rows if known_at is None or r.recorded_at <= known_at]
    known_closes = [c for c in closes if known_at is None or c.recorded_at <= known_at]
    # Replay in record-time order: rows before closes recorded at the same instant.
    # The last element breaks every tie, so the result never depends on the order rows were
    # inserted in (a live store and its replay insert in different orders).
    events: list[tuple[str, int, int, str, Row | Close]] = [(r.recorded_at, 0, r.order, r.key, r) for r in known_rows]
    events += [(c.recorded_at, 1, c.order, c.valid_until, c) for c in known_closes]
    events.sort(key=lambda e: e[:4])
    present: list[Row] = []
    explicit: dict[str, tuple[str, str, int]] = {}  # key -> (until, closed_at, close order)
    for *_, ev in events:
        if isinstance(ev, Row):
            present.append(ev)
            continue
        state = _chain(present, explicit)
        for r in present:
            eff = state[r.key]
            # A restatement merged into the row in force carries the same value: the close
            # ends it too, or the merge would stretch the closed row past the close.
            if eff.shadowed:
                continue
            starts = eff.valid_from is None or eff.valid_from <= ev.valid_until
            if starts and _lt(ev.valid_until, eff.until):
                explicit[r.key] = (ev.valid_until, ev.recorded_at, ev.order)
    return _chain(present, explicit)


def _chain(rows: list[Row], explicit: dict[str, tuple[str, str, int]]) -> dict[str, Effective]:
    ordered = sorted(rows, key=lambda r: (r.valid_from or MIN_TIME, r.recorded_at, r.order, r.key))
    out: dict[str, Effective] = {}
    head: Row | None = None
    for r in ordered:
        own_until, own_closed = r.valid_until, (r.recorded_at if r.valid_until else None)
        closed_by: list[int] = []
        if r.key in explicit and _lt(explicit[r.key][0], own_until):
            own_until, own_closed, order = explicit[r.key]
            closed_by = [order]
        eff = Effective(r.valid_from, own_until, own_closed, closed_by=closed_by)
        out[r.key] = eff
        if head is None:
            head = r
            continue
        h = out[head.key]
        open_at_start = _lt(r.valid_from or MIN_TIME, h.until) if h.until is not None else True
        if r.object_key == head.object_key and open_at_start:
            # The same value again: the earlier row extends to cover it.
            eff.merged_into = head.key
            if h.until is not None and (eff.until is None or h.until < eff.until):
                h.until, h.closed_at = eff.until, eff.closed_at
            continue
        if open_at_start and not r.journal and head.journal:
            eff.shadowed = True  # a note never overrides what was stated
            continue
        if open_at_start:
            start = r.valid_from or MIN_TIME
            h.until = start
            h.closed_at = max(head.recorded_at, r.recorded_at)
            h.superseded_by = r.key
        head = r
    return out


def holds(valid_from: str | None, until: str | None, at: str) -> bool:
    """Valid at `at`: from is inclusive (None: always), until exclusive (None: open)."""
    return (valid_from is None or valid_from <= at) and (until is None or at < until)


def in_force(eff: Effective, at: str) -> bool:
    return eff.visible and holds(eff.valid_from, eff.until, at)


def current_row_start(rows: Iterable[Row], closes: Sequence[Close], at: str) -> list[tuple[str, str | None]]:
    """(key, valid_from) of the slot's rows that a close at valid time `at` would end."""
    state = resolve(list(rows), closes)
    return [(k, e.valid_from) for k, e in state.items() if e.visible and (e.until is None or at < e.until)]
