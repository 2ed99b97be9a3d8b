"""Property: the engine's fact answers equal an independent reference model's.

The model below is written from the prose rules in docs/architecture.md ("Resolution"),
in plain Python over a list of statements — no SQL, no code shared with the engine. It is
asked the same questions as the engine, at random times and at every boundary the
statements name (where an off-by-one in "valid until is exclusive" would show).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lore_sidecar.errors import LoreError
from tests.integration.test_facts import fresh_facts_engine
from tests.integration.test_facts_property import day

SUBJECTS = ["payments", "ci"]
PREDICATES = ["uses", "owner"]
VALUES = ["stripe", "adyen", "alice"]
FOREVER = "9999-12-31T00:00:00Z"


@dataclass
class Statement:
    value: str
    start: str
    end: str  # exclusive; FOREVER when open
    recorded: str
    seq: int


@dataclass
class Slot:
    statements: list[Statement] = field(default_factory=list)
    closes: list[tuple[str, str, int]] = field(default_factory=list)  # (until, recorded, seq)


def segments(statements: list[Statement]) -> list[tuple[str, str, str]]:
    """(start, end, value) runs: in valid-time order, a different value ends the run in
    progress where it starts; the same value again extends the run."""
    runs: list[list[str]] = []
    for s in sorted(statements, key=lambda s: (s.start, s.recorded, s.seq)):
        if runs and s.start < runs[-1][1]:
            if runs[-1][2] == s.value:
                runs[-1][1] = max(runs[-1][1], s.end)
                continue
            runs[-1][1] = s.start
        runs.append([s.start, s.end, s.value])
    return [(a, b, v) for a, b, v in runs if a < b]


def believed(slot: Slot, known: str) -> list[tuple[str, str, str]]:
    """The runs as known at record time `known`: statements join as recorded; a close ends
    the run in force at its time, among the statements known when it was recorded."""
    events = [(s.recorded, 0, s.seq, s) for s in slot.statements if s.recorded <= known]
    events += [(rec, 1, seq, until) for until, rec, seq in slot.closes if rec <= known]
    present: list[Statement] = []
    for _, kind, _, ev in sorted(events, key=lambda e: e[:3]):
        if kind == 0:
            present.append(Statement(ev.value, ev.start, ev.end, ev.recorded, ev.seq))
            continue
        run = next(((a, b, v) for a, b, v in segments(present) if a <= ev < b), None)
        if run is None:
            continue
        for s in present:
            if s.value == run[2] and s.start <= ev < s.end:
                s.end = ev
    return segments(present)


def expected(model: dict[tuple[str, str], Slot], subject: str, at: str, known: str) -> list[tuple[str, str]]:
    return sorted((p, v) for (s, p), slot in model.items() if s == subject
                  for a, b, v in believed(slot, known) if a <= at < b)


statement_op = st.tuples(st.just("assert"), st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES),
                         st.sampled_from(VALUES), st.integers(0, 40), st.one_of(st.none(), st.integers(1, 30)))
close_op = st.tuples(st.just("invalidate"), st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), st.integers(0, 60))
ops = st.lists(st.tuples(st.one_of(statement_op, statement_op, close_op), st.integers(0, 3)), min_size=1, max_size=20)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops, extra=st.lists(st.integers(0, 80), min_size=2, max_size=6))
# Stated, restated, closed: the close must end the restatement too.
@example(ops=[(("assert", "ci", "uses", "stripe", 0, None), 0), (("assert", "ci", "uses", "stripe", 4, None), 1),
              (("invalidate", "ci", "uses", 9), 1)], extra=[14, 20])
def test_fact_answers_match_the_reference_model_at_every_boundary(tmp_path_factory, ops, extra):
    e, clock, _ = fresh_facts_engine(tmp_path_factory.mktemp("oracle"))
    model: dict[tuple[str, str], Slot] = {}
    record_times, valid_times = set(), {day(n) for n in extra}
    try:
        t = 0
        for seq, (op, advance) in enumerate(ops):
            t += advance
            now = day(t)
            clock.set(now)
            try:
                if op[0] == "assert":
                    _, s, p, v, start, length = op
                    end = day(start + length) if length else None
                    e.facts.assert_fact(project=None, subject=s, predicate=p, object=v, valid_from=day(start), valid_until=end)
                    model.setdefault((s, p), Slot()).statements.append(Statement(v, day(start), end or FOREVER, now, seq))
                    valid_times |= {day(start), *([end] if end else [])}
                else:
                    _, s, p, until = op
                    e.facts.invalidate_fact(project=None, subject=s, predicate=p, valid_until=day(until))
                    model.setdefault((s, p), Slot()).closes.append((day(until), now, seq))
                    valid_times.add(day(until))
            except LoreError:
                continue  # refused: nothing was written, and the model is not told either
            record_times.add(now)
        for subject in SUBJECTS:
            for at in sorted(valid_times):
                for known in [None, *sorted(record_times)]:
                    kwargs = {"as_of": at} if known is None else {"as_of": at, "as_known_at": known}
                    got = sorted((f["predicate"], f["object"]) for f in
                                 e.facts.query(scope="all", subject=subject, limit=200, **kwargs)["facts"])
                    want = expected(model, subject, at, known or FOREVER)
                    assert got == want, (subject, at, known)
    finally:
        e.close()
