"""A memory pass stopped between segments (an exit) after distilling a session's last
segment, before consolidating: the next start consolidates what was distilled. (It used to
see the session distilled up to its newest message and never touch it again until it grew:
for an ended session, never; its gen-0 rows stayed above the threshold for good.)"""

from __future__ import annotations

import time

import pytest

from lore_sidecar.engine.project import canonical_root
from tests.integration.test_store_and_index import engine_for, record

OPTIONS = {"watch": False, "distiller": "extractive", "distillIdleMs": 0, "distillMaxMessages": 5,
           "metaThreshold": 2, "metaKeep": 1}
SEGMENTS = 4


def _generation(e, workspace, generation: int) -> list:
    pid = e.records.find_project(canonical_root(str(workspace))).id
    return e.memory_worker.distiller.rows.open_generation(pid, "s", generation)


def test_a_memory_pass_stopped_after_distilling_consolidates_at_the_next_start(tmp_path, workspace):
    store = tmp_path / "store"
    e = engine_for(store, [str(workspace)], **OPTIONS)
    try:
        worker = e.memory_worker
        calls, real = [], worker._words_first

        def between() -> None:
            calls.append(1)
            if len(calls) == SEGMENTS + 1:  # every segment distilled: the exit arrives here
                worker._stop.set()
            real()

        worker.distiller.between = between
        record(e, "s", [f"We decided to keep the cache in SQLite, reason {i}: it survives restarts of the box."
                        for i in range(5 * SEGMENTS)])
        worker.notify()
        worker._thread.join(60)
        assert not worker._thread.is_alive()
        assert len(_generation(e, workspace, 0)) == SEGMENTS  # distilled, none consolidated
        assert _generation(e, workspace, 1) == []
    finally:
        e.close()

    again = engine_for(store, [str(workspace)], **OPTIONS)
    try:
        again.memory_worker.notify()
        deadline = time.monotonic() + 60
        while not _generation(again, workspace, 1):
            assert time.monotonic() < deadline, "what the stopped pass distilled was never consolidated"
            time.sleep(0.1)
        assert len(_generation(again, workspace, 0)) == OPTIONS["metaKeep"]  # the newest kept open
    finally:
        again.close()


def test_an_instance_that_takes_the_writer_role_again_looks_for_owed_consolidation_again(tmp_path, workspace):
    """Reviewer round rev22 (rev22-due-reset-kept): `reset` (an instance that takes the writer
    role again, app.py writer_duties) forgets what it knew of the sessions, and that it had
    looked for consolidation owed: meanwhile a pass stopped between segments (here this
    distiller's own, standing for the other writer's) left some, which its next pass does. The
    control: without the reset the instance does not look again (once per instance)."""
    e = engine_for(tmp_path / "store", [str(workspace)], **OPTIONS)
    try:
        e.memory_worker.stop()  # the passes are driven by the test
        distiller = e.memory_worker.distiller
        distiller.between = lambda: None
        assert distiller.tick() == []  # the instance's first pass: nothing owed yet
        record(e, "s", [f"We decided to keep the cache in SQLite, reason {i}: it survives restarts of the box."
                        for i in range(5 * SEGMENTS)])
        calls: list[int] = []

        def between() -> None:
            calls.append(1)
            if len(calls) == SEGMENTS + 1:  # every segment distilled: the exit arrives here
                raise RuntimeError("exiting")

        distiller.between = between
        try:
            distiller.tick()
        except RuntimeError:
            pass
        distiller.between = lambda: None
        assert len(_generation(e, workspace, 0)) == SEGMENTS  # distilled, none consolidated
        distiller.tick()
        assert _generation(e, workspace, 1) == []  # the control: looked for once per instance

        distiller.reset()
        distiller.tick()
        assert len(_generation(e, workspace, 1)) == 1
        assert len(_generation(e, workspace, 0)) == OPTIONS["metaKeep"]
    finally:
        e.close()


def test_a_meta_keep_above_the_threshold_keeps_that_many_open_and_the_pass_goes_on(tmp_path, workspace):
    """metaKeep (0-10,000) and metaThreshold (2-10,000) are set independently: with metaKeep 10
    and metaThreshold 2, a session's 4 gen-0 rows are over the threshold but all among the
    newest 10: none is consolidated, and the pass (the curator after it) goes on. It raised
    IndexError instead, on every memory pass, for good."""
    e = engine_for(tmp_path / "store", [str(workspace)], **{**OPTIONS, "metaKeep": 10})
    try:
        e.memory_worker.stop()  # the passes are driven by the test
        distiller = e.memory_worker.distiller
        distiller.between = lambda: None
        record(e, "s", [f"We decided to keep the cache in SQLite, reason {i}: it survives restarts of the box."
                        for i in range(5 * SEGMENTS)])
        distiller.tick()
        assert len(_generation(e, workspace, 0)) == SEGMENTS
        assert _generation(e, workspace, 1) == []
    finally:
        e.close()


def test_a_distill_asked_for_one_session_leaves_the_consolidation_owed_elsewhere_to_the_next_whole_pass(
        tmp_path, workspace):
    """Reviewer round rev22 (rev22-due-any-session): `lore/distill {sessionId}` runs the
    pipeline for that session: the first such call of an instance neither consolidates the
    other sessions a stopped pass left owed nor returns their URIs, and it does not use up the
    instance's look for them: the next whole pass consolidates them (the control)."""
    e = engine_for(tmp_path / "store", [str(workspace)], **OPTIONS)
    try:
        e.memory_worker.stop()  # the passes are driven by the test
        distiller = e.memory_worker.distiller
        calls: list[int] = []

        def between() -> None:
            calls.append(1)
            if len(calls) == SEGMENTS + 1:  # every segment of "a" distilled: the exit arrives here
                raise RuntimeError("exiting")

        distiller.between = between
        record(e, "a", [f"We decided to keep the cache in SQLite, reason {i}: it survives restarts of the box."
                        for i in range(5 * SEGMENTS)])
        try:
            distiller.tick()
        except RuntimeError:
            pass
        distiller.between = lambda: None
        pid = e.records.find_project(canonical_root(str(workspace))).id
        assert len(distiller.rows.open_generation(pid, "a", 0)) == SEGMENTS  # owed
        distiller.reset()  # an instance's first pass is still to come

        record(e, "b", [f"We decided to deploy from the release branch, step {i}: never from main." for i in range(5)])
        created = e.memory.distill(session_id="b")["created"]
        assert len(created) == 1, created  # b's one segment, nothing of a's
        assert distiller.rows.open_generation(pid, "a", 1) == []
        e.memory.distill()
        assert len(distiller.rows.open_generation(pid, "a", 1)) == 1
    finally:
        e.close()


def test_a_meta_keep_equal_to_a_generation_over_the_threshold_keeps_it_all_open(tmp_path, workspace):
    """Reviewer round rev24 (rev24-consolidate-keep-boundary): a generation over the threshold
    that holds exactly `metaKeep` rows has nothing to consolidate (all are among the newest
    kept): none is, and the pass goes on (an empty consolidation raised IndexError)."""
    e = engine_for(tmp_path / "store", [str(workspace)], **{**OPTIONS, "metaKeep": SEGMENTS})
    try:
        e.memory_worker.stop()  # the passes are driven by the test
        distiller = e.memory_worker.distiller
        distiller.between = lambda: None
        record(e, "s", [f"We decided to keep the cache in SQLite, reason {i}: it survives restarts of the box."
                        for i in range(5 * SEGMENTS)])
        distiller.tick()
        assert len(_generation(e, workspace, 0)) == SEGMENTS > OPTIONS["metaThreshold"]
        assert _generation(e, workspace, 1) == []
    finally:
        e.close()


@pytest.mark.parametrize("generation", [1, 3])
def test_a_generation_owed_alone_consolidates_its_oldest_rows_and_keeps_the_newest_open(tmp_path, workspace,
                                                                                         generation):
    """An exit between two generations' transactions of the meta pass (the memory thread is
    not waited for past 10 s) can leave a later generation over the threshold alone; the next
    instance's first pass finds the session owed and consolidates it (rev22). Reviewer round
    rev24 (rev24-consolidate-no-gen-3, rev24-consolidate-newest): every generation up to 3
    (the last one lifted, into gen 4) is looked at, and what becomes the
    next generation's row is all but the newest `metaKeep`: the oldest rows, which then point
    at it; the newest stay open."""
    e = engine_for(tmp_path / "store", [str(workspace)], **OPTIONS)
    try:
        e.memory_worker.stop()  # the passes are driven by the test
        distiller = e.memory_worker.distiller
        distiller.between = lambda: None
        record(e, "s", ["We decided to keep the cache in SQLite: it survives restarts of the box."])
        pid = e.records.find_project(canonical_root(str(workspace))).id
        first = int(e.records.db.reader().execute("SELECT MIN(id) FROM messages").fetchone()[0])
        owed = [f"g{generation}-{i}" for i in range(OPTIONS["metaThreshold"] + 1)]  # oldest first
        with distiller.rows.write() as c:
            for i, did in enumerate(owed):
                distiller.rows.add_distillation(c, {
                    "dist_id": did, "session_id": "s", "generation": generation, "covers": 5,
                    "text": f"decided: cache {i}", "mode": "extractive", "model": None,
                    "prompt_version": "extractive-1", "created_at": "2026-12-07T00:00:00Z",
                    "project_id": pid, "first_msg": first, "last_msg": first})
        distiller.reset()  # the next instance's first pass
        distiller.tick()
        kept = len(owed) - OPTIONS["metaKeep"]
        assert [r["dist_id"] for r in distiller.rows.open_generation(pid, "s", generation)] == owed[kept:]
        (into,) = distiller.rows.open_generation(pid, "s", generation + 1)
        assert into["covers"] == 5 * kept
        pointing = dict(e.records.db.reader().execute(
            "SELECT dist_id, consolidated_into FROM distillations WHERE generation=?", (generation,)).fetchall())
        assert pointing == {**{d: into["id"] for d in owed[:kept]}, **{d: None for d in owed[kept:]}}
    finally:
        e.close()
