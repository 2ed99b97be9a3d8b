"""The vector index as a frozen part viewed from disk plus a loaded delta (issue 37 item 5).

Real usearch files under tmp_path; `fold_at` is set small so a handful of vectors make a
fold (the default folds at tens of thousands)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import onnxruntime  # noqa: F401  before usearch: imported after it, onnxruntime crashes (llm/embedders.py)
import pytest

from lore_sidecar.store.vector_index import META, VectorIndex

DIM = 16
SPACES = {"messages": ("m", DIM)}
VECS = np.random.default_rng(7).standard_normal((400, DIM)).astype(np.float32)


def index(d: Path, *, writable: bool = True, fold_at: int = 100, fold_dead: int = 50) -> VectorIndex:
    return VectorIndex(d, spaces=SPACES, writable=writable, fold_at=fold_at, fold_dead=fold_dead)


def top(v: VectorIndex, i: int, n: int = 1) -> list[int]:
    return [key for _, key, _ in v.search(["messages"], [1], VECS[i], n)]


def parts(d: Path) -> dict:
    return json.loads((d / META).read_text())["parts"]["messages-1"]


def index_files(d: Path) -> list[str]:
    """The frozen parts' and the deltas' files in `d`, sorted."""
    return sorted(n.name for n in d.iterdir() if n.name.endswith((".usearch", ".delta")))


def mapped(path: Path) -> bool:
    return any(line.rstrip().endswith(str(path)) for line in Path("/proc/self/maps").read_text().splitlines())


def test_a_search_after_a_fold_finds_vectors_from_both_parts(tmp_path):
    w = index(tmp_path)
    w.upsert("messages", 1, list(range(150)), VECS[:150])
    w.save(1)  # 150 >= fold_at: folded into the frozen part
    w.upsert("messages", 1, list(range(150, 200)), VECS[150:200])
    w.save(2)  # 50 < fold_at: stays in the delta
    p = parts(tmp_path)
    assert p["frozen"] and p["delta"] and p["gen"] == 1
    for v in (w, index(tmp_path, writable=False)):
        assert v.size() == 200
        assert top(v, 3) == [3] and top(v, 170) == [170]  # one from each part
        # merged by similarity: the best of both parts come back in one ranking, as an
        # exact search over all 200 ranks them (give or take the int8 rounding)
        q = VECS[3] + VECS[170]
        hits = v.search(["messages"], [1], q, 20)
        cos = VECS[:200] @ q / (np.linalg.norm(VECS[:200], axis=1) * np.linalg.norm(q))
        exact = set(np.argsort(-cos)[:20].tolist())
        keys = [k for _, k, _ in hits]
        assert len(set(keys) & exact) >= 18 and min(keys) < 150 <= max(keys)
        assert [h[2] for h in hits] == sorted((h[2] for h in hits), reverse=True)
    # The frozen part is memory-mapped, not read into the process.
    assert mapped(tmp_path / p["frozen"])


def test_a_small_index_stays_loaded_until_it_reaches_the_fold_size(tmp_path):
    w = index(tmp_path)
    w.upsert("messages", 1, list(range(99)), VECS[:99])
    w.save(1)
    assert parts(tmp_path)["frozen"] is None and parts(tmp_path)["delta"]
    w.upsert("messages", 1, [99], VECS[99:100])
    w.save(2)  # control: one more vector reaches fold_at
    p = parts(tmp_path)
    assert p["frozen"] and p["delta"] is None
    assert index_files(tmp_path) == [p["frozen"]]  # the delta's file went
    assert top(w, 99) == [99] and w.size() == 100


def test_a_follower_sees_a_fold_and_keeps_answering_from_the_file_it_views(tmp_path):
    w = index(tmp_path)
    w.upsert("messages", 1, list(range(120)), VECS[:120])
    w.save(1)
    r = index(tmp_path, writable=False)
    first = parts(tmp_path)["frozen"]
    w.upsert("messages", 1, list(range(120, 240)), VECS[120:240])
    w.save(2)  # a second fold: a new frozen file; the first is removed from the folder
    assert parts(tmp_path)["frozen"] != first and not (tmp_path / first).exists()
    # before it looks, the follower still answers from the (unlinked) file it maps
    assert r.size() == 120 and top(r, 5) == [5] and top(r, 200) != [200]
    assert r.refresh()
    assert r.size() == 240 and top(r, 5) == [5] and top(r, 200) == [200]
    assert not r.refresh()  # nothing newer


def test_a_removed_vector_is_not_returned_from_the_frozen_part(tmp_path):
    w = index(tmp_path)
    w.upsert("messages", 1, list(range(150)), VECS[:150])
    w.save(1)
    r = index(tmp_path, writable=False)
    assert top(w, 10) == [10] and top(r, 10) == [10]  # control: found while it is there
    w.remove("messages", 1, [10])
    assert 10 not in top(w, 10, 5) and w.size() == 149
    w.save(2)
    assert parts(tmp_path)["dead"] == [10]
    assert r.refresh() and 10 not in top(r, 10, 5) and r.size() == 149
    assert 10 not in w.contents()[("messages", 1)]
    # A fold drops it from the file for good (the dead list empties).
    w.upsert("messages", 1, list(range(150, 250)), VECS[150:250])
    w.save(3)
    assert parts(tmp_path)["dead"] == []
    assert 10 not in top(index(tmp_path, writable=False), 10, 5) and w.size() == 249


def test_one_removal_of_a_frozen_vector_and_a_delta_vector_removes_both(tmp_path):
    """The dense leg removes a step's deletes of one project in one call (a session's old,
    folded messages and its newest, still in the delta): every key goes, not only the frozen
    part's (rev19: `gone or delta.remove(...)` never asked the delta once a frozen key went)."""
    w = index(tmp_path)
    w.upsert("messages", 1, list(range(150)), VECS[:150])
    w.save(1)  # folded: 0-149 frozen
    w.upsert("messages", 1, [150, 151], VECS[150:152])  # in the delta
    w.remove("messages", 1, [10, 150])
    assert w.size() == 150 and 150 not in top(w, 150, 5) and 10 not in top(w, 10, 5)
    w.save(2)
    for v in (w, index(tmp_path, writable=False)):
        assert set(v.contents()[("messages", 1)]) == set(range(150)) - {10} | {151}
        assert 150 not in top(v, 150, 5) and v.size() == 150
    # Control: the delta's key alone in a call goes too.
    w.remove("messages", 1, [151])
    assert 151 not in top(w, 151, 5) and w.size() == 149


def test_a_vector_replaced_in_the_frozen_part_answers_once_with_its_new_value(tmp_path):
    w = index(tmp_path)
    w.upsert("messages", 1, list(range(150)), VECS[:150])
    w.save(1)
    w.upsert("messages", 1, [4], VECS[300:301])  # key 4 now means what row 300 means
    w.save(2)
    for v in (w, index(tmp_path, writable=False)):
        assert top(v, 300) == [4]
        assert 4 not in top(v, 4, 3)  # its old value is gone from the answers
        assert [k for _, k, _ in v.search(["messages"], [1], VECS[300], 150)].count(4) == 1
        assert v.size() == 150


def test_many_dead_keys_force_a_fold(tmp_path):
    w = index(tmp_path, fold_dead=20)
    w.upsert("messages", 1, list(range(150)), VECS[:150])
    w.save(1)
    first = parts(tmp_path)["frozen"]
    w.remove("messages", 1, list(range(19)))
    w.save(2)
    assert parts(tmp_path)["frozen"] == first and len(parts(tmp_path)["dead"]) == 19
    w.remove("messages", 1, [19])  # the 20th
    w.save(3)
    assert parts(tmp_path)["frozen"] != first and parts(tmp_path)["dead"] == []
    assert w.size() == 130 and top(w, 19) != [19] and top(w, 20) == [20]


def test_an_index_of_the_old_layout_is_viewed_as_its_frozen_part(tmp_path):
    from usearch.index import Index

    old = Index(ndim=DIM, metric="cos", dtype="i8", connectivity=16, expansion_add=64)
    old.add(np.arange(50, dtype=np.uint64), VECS[:50], threads=1)
    old.save(str(tmp_path / "messages-1.usearch"))
    (tmp_path / META).write_text(json.dumps({"seq": 9, "spaces": {"messages": f"m/{DIM}"}, "late": 1,
                                             "files": ["messages-1.usearch"]}))
    r = index(tmp_path, writable=False)
    assert r.saved_seq == 9 and r.size() == 50 and top(r, 7) == [7]
    assert mapped(tmp_path / "messages-1.usearch")
    w = index(tmp_path)
    w.upsert("messages", 1, list(range(50, 150)), VECS[50:150])
    w.save(10)
    assert not (tmp_path / "messages-1.usearch").exists()  # folded into the new layout
    assert index(tmp_path, writable=False).size() == 150 and top(w, 7) == [7] and top(w, 120) == [120]


def test_what_a_crash_mid_fold_leaves_is_ignored_and_swept(tmp_path):
    w = index(tmp_path)
    w.upsert("messages", 1, list(range(150)), VECS[:150])
    w.save(1)
    w.upsert("messages", 1, list(range(150, 180)), VECS[150:180])
    w.save(2)
    frozen = tmp_path / parts(tmp_path)["frozen"]
    # A fold that died: its file half written, and one renamed before vectors.json named it.
    (tmp_path / ".messages-1.f2-dead.usearch.tmp").write_bytes(frozen.read_bytes()[:1000])
    (tmp_path / "messages-1.f2-0rphan.usearch").write_bytes(frozen.read_bytes())
    r = index(tmp_path, writable=False)
    assert r.saved_seq == 2 and r.size() == 180 and top(r, 170) == [170]
    again = index(tmp_path)  # the next writer
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([frozen.name, parts(tmp_path)["delta"], META])
    again.upsert("messages", 1, list(range(180, 300)), VECS[180:300])
    again.save(3)
    assert index(tmp_path, writable=False).size() == 300


WRITER = textwrap.dedent("""
    import sys
    import numpy as np
    from pathlib import Path
    from lore_sidecar.store.vector_index import VectorIndex
    d, start = Path(sys.argv[1]), int(sys.argv[2])
    v = VectorIndex(d, spaces={"messages": ("m", 16)}, writable=True, fold_at=1000)
    rng = np.random.default_rng(start)
    seq = v.saved_seq
    while True:
        seq += 1
        v.upsert("messages", 1, list(range((seq - 1) * 500, seq * 500)), rng.standard_normal((500, 16)).astype(np.float32))
        v.save(seq)
        print(seq, flush=True)
""")


def _folding(d: Path) -> bool:
    return any(n.startswith(".messages-1.f") for n in os.listdir(d)) if d.is_dir() else False


@pytest.mark.parametrize("when", ["a fold's file half written", "after 0.1 s", "after 0.3 s"])
def test_a_writer_killed_at_any_moment_leaves_the_index_its_last_save_names(tmp_path, when):
    """SIGKILL a writer that folds every second save (500 vectors a save), at several
    moments: the files then hold exactly the vectors of the last recorded sequence, and the
    next writer goes on from there."""
    d = tmp_path / "vectors"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    for round_ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(d), str(round_)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        assert proc.stdout is not None
        for _ in range(2):  # a fold done
            assert proc.stdout.readline().strip(), proc.stderr.read() if proc.stderr else ""
        if when.startswith("after"):
            time.sleep(float(when.split()[1]))
        else:
            deadline = time.monotonic() + 20
            while not _folding(d) and time.monotonic() < deadline:
                pass
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        r = VectorIndex(d, spaces={"messages": ("m", 16)}, writable=False)
        assert r.saved_seq >= 2 and r.size() == r.saved_seq * 500
        probe = r.contents()[("messages", 1)]
        assert set(probe) == set(range(r.saved_seq * 500))
        last = r.saved_seq * 500 - 1
        q = np.frombuffer(probe[last], dtype=np.int8).astype(np.float32)
        assert [k for _, k, _ in r.search(["messages"], [1], q, 1)] == [last]


def test_a_search_whose_nearest_frozen_vectors_are_dead_still_fills_its_page(tmp_path):
    """More dead keys among a query's nearest than the first ask's spare answers: the
    search asks the frozen part again with room for every dead key, so the page is full
    with the nearest live vectors (rev10: only the first ask kept returned an empty page)."""
    w = index(tmp_path)  # fold_dead=50: ten dead keys stay dead keys, no fold
    w.upsert("messages", 1, list(range(150)), VECS[:150])
    w.save(1)
    before = top(w, 42, 13)  # the query's 13 nearest, as the frozen part ranks them
    assert before[0] == 42 and len(before) == 13
    w.remove("messages", 1, before[:10])
    w.save(2)
    assert sorted(parts(tmp_path)["dead"]) == sorted(before[:10])  # control: still dead keys, not folded
    for v in (w, index(tmp_path, writable=False)):
        assert top(v, 42, 3) == before[10:13]
        assert v.size() == 140


def test_a_follower_reads_the_writers_grown_delta_and_its_replacements(tmp_path):
    """Deltas are read anew at every refresh: vectors the writer added to the delta, or
    replaced in it, after the follower first looked are answered by the follower too (rev10:
    a follower reusing the delta it loaded first never saw them)."""
    w = index(tmp_path)
    w.upsert("messages", 1, list(range(20)), VECS[:20])
    w.save(1)
    r = index(tmp_path, writable=False)
    assert r.size() == 20 and top(r, 5) == [5]
    w.upsert("messages", 1, list(range(20, 40)), VECS[20:40])  # the delta grows, no fold
    w.upsert("messages", 1, [5], VECS[300:301])  # key 5 now means row 300, in the delta
    w.save(2)
    assert parts(tmp_path)["frozen"] is None  # control: still one loaded delta
    assert r.refresh()
    assert r.size() == 40 and top(r, 30) == [30]
    assert top(r, 300) == [5] and 5 not in top(r, 5, 3)
    assert r.contents() == w.contents()


class _SavesWhileReading(VectorIndex):
    """A follower during whose load the writer saves: after the follower has read
    `vectors.json` and before it reads the files named there (the interleaving a busy writer
    and a refreshing follower meet by chance)."""

    writer: VectorIndex | None = None
    then: tuple[int, int] | None = None  # key, row of VECS: the replacement the writer saves
    reads = 0

    def _read_meta(self):
        meta = super()._read_meta()
        self.reads += 1
        # The 1st read is refresh()'s look at the seq; the 2nd, load's list of files.
        if self.writer is not None and self.then is not None and meta and self.reads == 2:
            key, row = self.then
            self.then = None
            self.writer.upsert("messages", 1, [key], VECS[row:row + 1])
            self.writer.save(meta["seq"] + 1)
        return meta


def test_a_follower_never_holds_one_saves_list_with_the_next_saves_delta(tmp_path):
    """rev10's race: the follower read save N's list (which frozen key is dead), the writer
    then saved N+1 (a frozen key replaced: its new value in the delta, which keeps its name),
    and the follower read N+1's delta beside N's dead keys — the key answered twice, with its
    old and its new value, until the next refresh. A load must take one save whole."""
    w = index(tmp_path)
    w.upsert("messages", 1, list(range(150)), VECS[:150])
    w.save(1)  # 150 >= fold_at: a frozen part
    w.upsert("messages", 1, [150], VECS[150:151])
    w.save(2)  # and a delta beside it
    r = _SavesWhileReading(tmp_path, spaces=SPACES, writable=False, fold_at=100, fold_dead=50)
    assert r.size() == 151 and top(r, 4) == [4]  # control: a plain load
    w.upsert("messages", 1, [151], VECS[151:152])
    w.save(3)
    r.writer, r.then, r.reads = w, (4, 300), 0  # key 4 (frozen) becomes row 300 while the follower loads
    assert r.refresh()
    assert r.then is None  # the writer did save mid-load
    answers = [key for _, key, _ in r.search(["messages"], [1], VECS[300], 200)]
    assert answers.count(4) == 1 and top(r, 300) == [4]
    assert r.size() == w.size() == 152
    assert r.contents() == w.contents()
    # Each save's delta has a name of its own; the one a newer list replaced is gone.
    p = parts(tmp_path)
    assert index_files(tmp_path) == sorted([p["frozen"], p["delta"]])


def test_a_fold_whose_list_was_never_written_leaves_the_last_save_readable(tmp_path):
    """A fold removes the files it replaces only once `vectors.json` names the new one: a
    writer that dies between the new frozen file and the list (here the list cannot be
    written) leaves the previous save whole for the next reader (rev10's
    `rev10-fold-unlinks-before-meta` was caught only when a SIGKILL happened to land in that
    window)."""
    w = index(tmp_path)
    w.upsert("messages", 1, list(range(150)), VECS[:150])
    w.save(1)
    w.upsert("messages", 1, list(range(150, 180)), VECS[150:180])
    w.save(2)  # a frozen part and a delta
    assert index(tmp_path, writable=False).size() == 180  # control: the save reads back
    (tmp_path / f".{META}.tmp").mkdir()  # the next list cannot be written
    w.upsert("messages", 1, list(range(180, 300)), VECS[180:300])  # the delta reaches fold_at
    with pytest.raises(OSError):
        w.save(3)
    assert any(n.name.startswith("messages-1.f2-") for n in tmp_path.glob("*.usearch"))  # the fold's file was written
    r = index(tmp_path, writable=False)
    assert r.saved_seq == 2 and r.size() == 180 and top(r, 170) == [170] and top(r, 5) == [5]
