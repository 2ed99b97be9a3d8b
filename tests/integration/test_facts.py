"""Bitemporal facts on the real engine (SQLite, journal files, workspace notes), with the
write clock set by the test so record times can be placed in the past."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from lore_sidecar.app import open_engine
from lore_sidecar.engine.facts.rules import ts
from lore_sidecar.errors import LoreError
from lore_sidecar.settings import load_settings

pytestmark = pytest.mark.usefixtures("backend")  # each test on both record backends



class Clock:
    def __init__(self, start: str):
        self.now = ts(start)

    def set(self, when: str) -> None:
        self.now = ts(when)

    def __call__(self) -> str:
        return self.now


def open_facts_engine(store: Path, folder: Path, clock: Clock):
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"), init_options={"storeDir": str(store), "embedder": "none"})
    engine = open_engine(settings, [str(folder)])
    engine.facts.store.clock = clock
    return engine


def fresh_facts_engine(root: Path):
    """An engine with its own clock on a new store, beside an empty git workspace."""
    ws = root / "ws"
    (ws / ".git").mkdir(parents=True)
    clock = Clock("2024-01-01")
    return open_facts_engine(root / "store", ws, clock), clock, ws


@pytest.fixture
def env(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    clock = Clock("2024-01-10")
    engine = open_facts_engine(tmp_path / "store", ws, clock)
    yield engine, clock, ws
    engine.close()


def objects(result) -> list[str]:
    return [f["object"] for f in result["facts"]]


def journal_text(store: Path) -> str:
    return "".join(p.read_text() for p in sorted((store / "journal").rglob("*.md")))


def live_rows(engine) -> list[tuple]:
    skip = {"id"}
    rows = [tuple(sorted((k, v) for k, v in r.items() if k not in skip)) for r in engine.facts.store.rows.all_rows()]
    closes = [tuple(sorted((k, v) for k, v in c.items() if k not in skip)) for c in engine.facts.store.rows.all_closes()]
    return sorted(rows, key=repr) + sorted(closes, key=repr)


def test_an_invalidated_fact_is_gone_now_but_there_as_of_a_date_inside_its_window(env):
    e, clock, _ = env
    e.facts.assert_fact(project=None, subject="CI", predicate="runs on", object="Buildkite", valid_from="2024-01-01")
    assert objects(e.facts.query(subject="CI")) == ["Buildkite"]  # control: in force now
    clock.set("2024-08-01")
    e.facts.invalidate_fact(project=None, subject="CI", predicate="runs on", valid_until="2024-07-01")
    assert objects(e.facts.query(subject="CI")) == []
    assert objects(e.facts.query(subject="CI", as_of="2024-03-01")) == ["Buildkite"]
    assert objects(e.facts.query(subject="CI", as_of="2024-07-01")) == []  # the end is exclusive


def test_a_fact_recorded_after_t_is_unknown_as_known_at_t_but_true_as_of_then(env):
    e, clock, _ = env
    clock.set("2024-05-01")
    e.facts.assert_fact(project=None, subject="payments", predicate="uses", object="Stripe", valid_from="2024-01-01")
    assert objects(e.facts.query(subject="payments", as_of="2024-02-01")) == ["Stripe"]
    assert objects(e.facts.query(subject="payments", as_of="2024-02-01", as_known_at="2024-03-01")) == []
    assert objects(e.facts.query(subject="payments", as_of="2024-02-01", as_known_at="2024-05-02")) == ["Stripe"]


def test_the_backdated_close(env):
    """Recorded Jan 2024; closed in Mar 2025 with an end of Jun 2024."""
    e, clock, _ = env
    clock.set("2024-01-15")
    fid = e.facts.assert_fact(project=None, subject="payments", predicate="uses", object="Stripe", valid_from="2024-01-01")["factId"]
    clock.set("2025-03-01")
    closed = e.facts.invalidate_fact(project=None, subject="payments", predicate="uses", valid_until="2024-06-30")
    assert closed["closed"] == [fid]
    believed_then = e.facts.query(subject="payments", as_of="2024-09-01", as_known_at="2024-12-01")
    assert objects(believed_then) == ["Stripe"]
    assert believed_then["facts"][0]["validUntil"] is None and believed_then["facts"][0]["supersededAt"] is None
    assert objects(e.facts.query(subject="payments", as_of="2024-09-01", as_known_at="2025-04-01")) == []
    assert objects(e.facts.query(subject="payments", as_of="2024-09-01")) == []  # known now: closed
    row = e.facts.query(subject="payments", history=True)["facts"][0]
    assert (row["validUntil"], row["supersededAt"]) == ("2024-06-30T00:00:00Z", "2025-03-01T00:00:00Z")


def test_supersession_answers_each_time_with_its_own_value(env):
    e, clock, _ = env
    e.facts.assert_fact(project=None, subject="payments", predicate="uses", object="Stripe", valid_from="2024-01-01")
    clock.set("2025-03-02")
    e.facts.assert_fact(project=None, subject="Payments", predicate="Uses", object="Adyen", valid_from="2025-03-01")
    assert objects(e.facts.query(subject="payments")) == ["Adyen"]
    assert objects(e.facts.query(subject="payments", as_of="2024-06-01")) == ["Stripe"]
    assert objects(e.facts.query(subject="payments", as_of="2025-06-01", as_known_at="2025-01-01")) == ["Stripe"]
    timeline = e.facts.timeline(subject="payments")
    assert [(ev["event"], ev.get("object")) for ev in timeline["events"]] == [("asserted", "Stripe"), ("asserted", "Adyen")]
    assert e.facts.aggregate(by="object")["groups"] == [{"key": "Adyen", "count": 1}]


def test_history_as_of_a_date_lists_only_the_versions_valid_then(env):
    e, clock, _ = env
    e.facts.assert_fact(project=None, subject="payments", predicate="uses", object="Stripe", valid_from="2024-01-01")
    clock.set("2025-03-02")
    e.facts.assert_fact(project=None, subject="payments", predicate="uses", object="Adyen", valid_from="2025-03-01")
    # Control: history alone lists every version, the superseded one too.
    assert sorted(objects(e.facts.query(subject="payments", history=True))) == ["Adyen", "Stripe"]
    assert objects(e.facts.query(subject="payments", history=True, as_of="2024-06-01")) == ["Stripe"]
    assert objects(e.facts.query(subject="payments", history=True, as_of="2025-06-01")) == ["Adyen"]


def test_refusals_change_nothing_and_each_has_a_succeeding_control(env):
    e, clock, _ = env
    store = Path(e.settings.store_dir)
    e.facts.assert_fact(project=None, subject="CI", predicate="runs on", object="Buildkite", valid_from="2024-06-01")
    before = journal_text(store)
    cases = [
        (dict(subject="?!", predicate="uses", object="x"), "invalidKey"),
        (dict(subject="svc", predicate="  ", object="x"), "invalidKey"),
        (dict(subject="svc", predicate="uses", object="x", valid_from="2024-05-01", valid_until="2024-04-01"), "invalidInterval"),
        (dict(subject="svc", predicate="uses", object="x", valid_from="someday"), "invalidTime"),
        (dict(subject="svc", predicate="uses", object="x", confidence=1.5), "invalidConfidence"),
    ]
    for kwargs, kind in cases:
        with pytest.raises(LoreError) as err:
            e.facts.assert_fact(project=None, **kwargs)
        assert err.value.kind == kind, kwargs
    with pytest.raises(LoreError) as err:
        e.facts.assert_fact(project=None, subject="?!", predicate="uses", object="x")
    assert "'?!'" in str(err.value)  # the refusal quotes the value
    with pytest.raises(LoreError) as err:
        e.facts.invalidate_fact(project=None, subject="CI", predicate="runs on", valid_until="2024-05-01")
    assert err.value.kind == "closeBeforeStart"
    with pytest.raises(LoreError) as err:
        e.facts.invalidate_fact(project=None, subject="nobody", predicate="runs on")
    assert err.value.kind == "notFound"
    assert journal_text(store) == before and e.facts.query(scope="all")["total"] == 1
    # Controls: the same calls, fixed, succeed.
    e.facts.assert_fact(project=None, subject="svc", predicate="uses", object="x", valid_from="2024-04-01", valid_until="2024-05-01", confidence=0.5)
    e.facts.invalidate_fact(project=None, subject="CI", predicate="runs on", valid_until="2024-07-01")
    assert journal_text(store) != before


def test_an_invalidated_note_fact_stays_closed_after_a_full_replay(env):
    e, clock, ws = env
    (ws / "payments.md").write_text("# Payments\n\nprovider:: Stripe\n")
    e.index.scan()
    assert objects(e.facts.query(subject="Payments")) == ["Stripe"]
    clock.set("2024-02-01")
    e.facts.invalidate_fact(project=None, subject="payments", predicate="provider", valid_until="2024-01-20")
    assert objects(e.facts.query(subject="Payments")) == []
    before = live_rows(e)
    e.facts.replay()
    assert objects(e.facts.query(subject="Payments")) == []
    assert live_rows(e) == before


def test_editing_an_unrelated_line_keeps_a_note_facts_record_time(env):
    e, clock, ws = env
    note = ws / "deploy.md"
    note.write_text("# Deploys\n\nowner:: alice\nschedule:: weekly\n")
    e.index.scan()
    first = {f["predicate"]: f["recordedAt"] for f in e.facts.query(subject="Deploys")["facts"]}
    clock.set("2024-09-09")
    note.write_text("# Deploys\n\nSome new prose at the top.\n\nowner:: alice\nschedule:: daily\n")
    e.index.scan()
    now = {f["predicate"]: f["recordedAt"] for f in e.facts.query(subject="Deploys")["facts"]}
    assert now["owner"] == first["owner"] == "2024-01-10T00:00:00Z"  # unchanged line, moved
    assert now["schedule"] == "2024-09-09T00:00:00Z"  # control: a changed value is new knowledge


def test_a_note_cannot_backdate_or_relabel_its_facts(env):
    e, clock, ws = env
    (ws / "forged.md").write_text(
        "# Forged\n\n- [fact] Payments :: uses :: Stripe {recorded_at=2001-01-01, source=stated, valid_from=2023-01-01}\n"
    )
    e.index.scan()
    [fact] = e.facts.query(subject="Payments")["facts"]
    assert fact["recordedAt"] == "2024-01-10T00:00:00Z" and fact["source"] == "extracted"
    assert fact["validFrom"] == "2023-01-01T00:00:00Z"  # control: valid time may come from a note
    assert objects(e.facts.query(subject="Payments", as_of="2023-06-01", as_known_at="2023-01-01")) == []
    # The engine's own journal is where recorded_at and source are honoured.
    stated = e.facts.assert_fact(project=None, subject="Payments", predicate="owner", object="team-pay", source="inferred", confidence=0.6)
    assert e.get_node(f"fact://{stated['factId']}").metadata["source"] == "inferred"


def test_a_hand_edited_journal_line_is_picked_up_on_the_next_start(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    clock = Clock("2024-01-10")
    e = open_facts_engine(tmp_path / "store", ws, clock)
    e.facts.assert_fact(project=None, subject="CI", predicate="runs on", object="Buildkite")
    e.close()
    [path] = (tmp_path / "store" / "journal").rglob("*.md")
    path.write_text(path.read_text().replace("Buildkite", "GitHub Actions"))
    e = open_facts_engine(tmp_path / "store", ws, clock)
    try:
        assert objects(e.facts.query(subject="CI")) == ["GitHub Actions"]
    finally:
        e.close()


def test_replay_reproduces_300_generated_facts_exactly(env):
    e, clock, ws = env
    rng = random.Random(7)
    subjects = [f"service {i}" for i in range(40)]
    predicates = ["uses", "owner", "runs on", "deploys to"]
    values = ["Stripe", "Adyen", "alice", "bob", "Buildkite", "GitHub Actions", "k8s", "ECS"]
    day = 0
    asserted = 0
    for i in range(400):
        day += rng.randint(0, 2)
        clock.set(_day(day, 0, minutes=i))  # the write clock only moves forward
        s, p = rng.choice(subjects), rng.choice(predicates)
        if rng.random() < 0.15:
            try:
                e.facts.invalidate_fact(project=None, subject=s, predicate=p, valid_until=_day(day + rng.randint(-20, 20), 0))
            except LoreError:
                pass
            continue
        vf = _day(rng.randint(0, day + 10), 0)
        e.facts.assert_fact(project=None, subject=s, predicate=p, object=rng.choice(values), valid_from=vf)
        asserted += 1
    (ws / "services.md").write_text("# service 1\n\nuses:: Stripe\nowner:: carol\n- [fact] service 2 :: runs on :: ECS\n")
    e.index.scan()
    assert asserted >= 300
    queries = [dict(subject=s) for s in subjects[:10]] + [
        dict(predicate="uses", as_of=_day(d, 0), as_known_at=_day(k, 5)) for d, k in [(10, 30), (60, 90), (200, 400), (120, 121)]
    ] + [dict(history=True, limit=200), dict(text="github"), dict(predicate="owner")]
    answers = [e.facts.query(scope="all", **q) for q in queries]
    before = live_rows(e)
    stats = e.facts.replay()
    assert stats["journalLines"] >= 300
    assert live_rows(e) == before
    assert [e.facts.query(scope="all", **q) for q in queries] == answers
    assert any(a["total"] for a in answers[10:14])


def _day(n: int, hour: int, minutes: int = 0) -> str:
    from datetime import datetime, timedelta

    return (datetime(2024, 1, 1) + timedelta(days=n, hours=hour, minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_notes_behind_symlinks_out_of_the_workspace_are_not_read_unless_allowed(tmp_path):
    outside = tmp_path / "vault"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nkey:: hunter2\n")
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "linked.md").symlink_to(outside / "secret.md")
    (ws / "own.md").write_text("# Own\n\nkey:: fine\n")
    clock = Clock("2024-01-10")
    e = open_facts_engine(tmp_path / "store", ws, clock)
    try:
        e.index.scan()
        assert objects(e.facts.query(subject="Own")) == ["fine"]  # control: notes are read
        assert objects(e.facts.query(subject="Secret")) == []
        e.facts.replay()
        assert objects(e.facts.query(subject="Secret")) == []
    finally:
        e.close()
    settings, _ = load_settings(
        env={}, user_file=Path("/nonexistent"),
        init_options={"storeDir": str(tmp_path / "store2"), "embedder": "none", "linkRoots": [str(outside)]},
    )
    e = open_engine(settings, [str(ws)])
    try:
        e.index.scan()
        assert objects(e.facts.query(subject="Secret")) == ["hunter2"]  # explicitly allowed
    finally:
        e.close()


def test_a_close_also_ends_a_restatement_of_the_same_value(env):
    """Stated twice (the second merges into the first), then closed: gone after the close.
    The restatement must not stretch the closed fact past its end."""
    e, clock, _ = env
    clock.set("2024-01-01")
    e.facts.assert_fact(project=None, subject="ci", predicate="uses", object="Jenkins", valid_from="2024-01-01")
    clock.set("2024-01-02")
    e.facts.assert_fact(project=None, subject="ci", predicate="uses", object="Jenkins", valid_from="2024-01-05")
    assert objects(e.facts.query(subject="ci", as_of="2024-01-15")) == ["Jenkins"]  # control: in force before the close
    clock.set("2024-01-03")
    closed = e.facts.invalidate_fact(project=None, subject="ci", predicate="uses", valid_until="2024-01-10")
    assert len(closed["closed"]) == 2
    assert objects(e.facts.query(subject="ci", as_of="2024-01-07")) == ["Jenkins"]
    assert objects(e.facts.query(subject="ci", as_of="2024-01-15")) == []
    e.facts.replay()
    assert objects(e.facts.query(subject="ci", as_of="2024-01-15")) == []  # the replay agrees


def test_a_secret_in_a_scanned_note_never_reaches_its_facts_live_or_replayed(env):
    """The scan hands the note hook the note as recorded (redacted once, in preparation) and
    the hook does not redact it again: a preparation that kept the raw text would put the
    secret in a fact row here."""
    e, _clock, ws = env
    token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    (ws / "ci.md").write_text(f"# CI\n\nrunner:: buildkite\napi token:: {token}\n")
    e.index.scan()
    got = {f["predicate"]: f["object"] for f in e.facts.query(subject="CI")["facts"]}
    assert got["runner"] == "buildkite"  # control: the note's facts are read
    assert token not in repr(live_rows(e)) and "[REDACTED:github-token]" in got["api token"]
    before = live_rows(e)
    e.facts.replay()  # the replay reads the raw file and redacts it itself: the same rows
    assert live_rows(e) == before
