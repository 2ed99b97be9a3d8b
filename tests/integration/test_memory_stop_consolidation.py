"""A memory pass stopped between segments (an exit) after distilling a session's last
segment, before consolidating: the next start consolidates what was distilled. (It used to
see the session distilled up to its newest message and never touch it again until it grew:
for an ended session, never; its gen-0 rows stayed above the threshold for good.)"""

from __future__ import annotations

import time

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
