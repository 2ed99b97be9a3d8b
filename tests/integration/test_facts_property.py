"""Property: any sequence of asserts, invalidates and note edits, then a full replay, leaves
the same fact rows and the same answers to random asOf/asKnownAt queries."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lore_sidecar.errors import LoreError
from tests.integration.test_facts import fresh_facts_engine, live_rows

SUBJECTS = ["payments", "CI", "search"]
PREDICATES = ["uses", "owner"]
VALUES = ["Stripe", "Adyen", "alice", "bob", "Tantivy"]
BASE = datetime(2024, 1, 1)


def day(n: int) -> str:
    return (BASE + timedelta(days=n)).strftime("%Y-%m-%dT%H:%M:%SZ")


assert_op = st.tuples(
    st.just("assert"), st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), st.sampled_from(VALUES),
    st.integers(0, 60), st.one_of(st.none(), st.integers(1, 40)),
)
invalidate_op = st.tuples(st.just("invalidate"), st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), st.integers(0, 80))
note_op = st.tuples(
    st.just("note"), st.sampled_from(["a.md", "b.md"]), st.sampled_from(SUBJECTS),
    st.lists(st.tuples(st.sampled_from(PREDICATES), st.sampled_from(VALUES)), max_size=3),
    st.one_of(st.none(), st.integers(0, 60)),
)
ops = st.lists(st.tuples(st.one_of(assert_op, invalidate_op, note_op), st.integers(0, 5)), min_size=1, max_size=25)
queries = st.lists(
    st.tuples(st.one_of(st.none(), st.sampled_from(SUBJECTS)), st.integers(0, 90), st.one_of(st.none(), st.integers(0, 120))),
    min_size=3, max_size=8,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops, qs=queries)
def test_replay_gives_the_same_rows_and_answers(tmp_path_factory, ops, qs):
    e, clock, ws = fresh_facts_engine(tmp_path_factory.mktemp("prop"))
    try:
        t = 0
        for op, advance in ops:
            t += advance
            clock.set(day(t))
            kind = op[0]
            try:
                if kind == "assert":
                    _, s, p, o, vf, length = op
                    e.facts.assert_fact(project=None, subject=s, predicate=p, object=o, valid_from=day(vf),
                                  valid_until=day(vf + length) if length else None)
                elif kind == "invalidate":
                    _, s, p, until = op
                    e.facts.invalidate_fact(project=None, subject=s, predicate=p, valid_until=day(until))
                else:
                    _, name, subject, fields, date = op
                    front = f"---\ntitle: {subject}\ndate: {day(date)[:10]}\n---\n" if date is not None else f"# {subject}\n"
                    body = "".join(f"{p}:: {v}\n" for p, v in fields)
                    path = Path(ws / name)
                    path.write_text(front + "\n" + body)
                    e.view.workspace.apply_changes(str(ws), [str(path)])
            except LoreError:
                pass  # a refusal writes nothing; both sides see the same
        def answers():
            out = []
            for subject, as_of, known in qs:
                kwargs = {"as_of": day(as_of)}
                if known is not None:
                    kwargs["as_known_at"] = day(known)
                out.append(e.facts.query(scope="all", subject=subject, **kwargs))
            out.append(e.facts.query(scope="all", history=True, limit=200))
            return out

        before_rows, before_answers = live_rows(e), answers()
        e.facts.replay()
        assert live_rows(e) == before_rows
        assert answers() == before_answers
    finally:
        e.close()
