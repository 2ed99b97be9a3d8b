"""A big scan prepares its files (read, hash, redact, chunk) in worker processes. What it
records is exactly what the same scan records preparing them in process: first scan,
rescan after edits, touches, deletions, binaries, notes with facts, secrets; and a worker
that dies mid-scan costs nothing but speed."""

from __future__ import annotations

import array
import fcntl
import os
import sqlite3
import sys
import termios
import threading
import time

from lore_sidecar.compound import compound_parts
from lore_sidecar.engine.workspace import index as workspace_index
from lore_sidecar.engine.workspace import workers as W
from tests.integration.test_store_and_index import engine_for

N = workspace_index.PARALLEL_MIN_FILES + 100
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _tree(root, n: int, edit: str = "") -> None:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for i in range(n):
        p = root / "src" / f"m{i % 7}" / f"mod_{i}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f'"""module {i}{edit}"""\n\n\ndef handle_{i}(request):\n    return request.get("id_{i}")\n\n\n'
                     f"class Worker{i}:\n    token = \"{SECRET}\"\n")
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "team.md").write_text(f"# Team\n\nowner:: Ada{edit}\ndeploy key:: {SECRET}\n")
    (root / "logo.dat").write_bytes(b"\x00\x01" * 100)


def _record(store) -> list[tuple]:
    with sqlite3.connect(store / "lore.db") as c:
        files = c.execute("SELECT path, sha256, size FROM files ORDER BY path").fetchall()
        chunks = c.execute("SELECT f.path, c.start_line, c.end_line, c.kind, c.title, c.text, c.parts FROM chunks c"
                           " JOIN files f ON f.id = c.file_id ORDER BY f.path, c.start_line").fetchall()
        facts = c.execute("SELECT subject, predicate, object FROM facts ORDER BY 1, 2, 3").fetchall()
    return [files, chunks, facts]


def _engine(store, ws):
    return engine_for(store, [str(ws)], watch=False, distiller="off", filesEmbedder="none")


def _files_after_a_scan(store, ws) -> int:
    e = _engine(store, ws)
    try:
        e.index.scan()
        return e.records.counts(None)["files"]
    finally:
        e.close()


def _scan_twice(tmp_path, name: str, parallel: bool, used: list[int]):
    ws = tmp_path / f"ws-{name}"
    _tree(ws, N)
    e = _engine(tmp_path / f"store-{name}", ws)
    try:
        e.view.workspace.parallel = parallel
        e.index.scan()
        first = _record(tmp_path / f"store-{name}")
        _tree(ws, N - 60, edit=" v2")  # edited; the last 60 keep their bytes
        for i in range(N - 60, N - 40):
            p = ws / "src" / f"m{i % 7}" / f"mod_{i}.py"
            os.utime(p, ns=(1, 1))  # a new mtime, the same bytes
        for i in range(N - 5, N):
            (ws / "src" / f"m{i % 7}" / f"mod_{i}.py").unlink()
        e.index.scan()
        assert e.index.wait(60)
        found = [h.path for h in e.recall("handle_3 request", sources=["files"]).hits]
        return first, _record(tmp_path / f"store-{name}"), found
    finally:
        e.close()


def test_a_scan_prepared_by_workers_records_what_one_prepared_in_process_records(tmp_path, monkeypatch):
    used: list[int] = []
    real_map = W.Workers.map

    def counting_map(self, items):
        items = list(items)
        used.append(len(items))
        return real_map(self, items)

    monkeypatch.setattr(W.Workers, "map", counting_map)
    by_workers = _scan_twice(tmp_path, "workers", True, used)
    # First every file; then the edited, the touched (read, found the same) and the note and
    # the binary (rewritten), not the untouched.
    assert used == [N + 2, N - 60 + 20 + 2]
    in_process = _scan_twice(tmp_path, "here", False, used)
    assert len(used) == 2  # the control never started a worker
    assert by_workers[:2] == in_process[:2]
    first, second, found = by_workers
    assert len(first[0]) == N + 1 and len(second[0]) == N - 5 + 1  # the binary is never recorded
    assert all(SECRET not in text for *_, text, _ in first[1] + second[1])
    # Each chunk's compound names were cut where it was prepared, exactly as the index would.
    assert all(parts == compound_parts(f"{title} {text}") for *_, title, text, parts in first[1] + second[1])
    assert any("handle" in parts.split() for *_, parts in first[1])
    assert any("[REDACTED:github-token]" in text for *_, text, _ in second[1])
    assert ("Team", "owner", "Ada v2") in second[2]  # the note's facts, from the worker's redacted text
    assert not any(SECRET in obj for *_, obj in first[2] + second[2])
    assert found and found[0].endswith("mod_3.py")


def test_a_worker_that_dies_mid_scan_leaves_the_rest_to_this_process(tmp_path, monkeypatch, caplog):
    # The worker reads a little of its first request and exits: the scan must still record every file.
    dying = [sys.executable, "-c", "import sys; sys.stdin.buffer.read(64); sys.exit(3)"]
    monkeypatch.setattr(W, "worker_command", lambda: dying)
    ws = tmp_path / "ws"
    _tree(ws, N)
    assert _files_after_a_scan(tmp_path / "store", ws) == N + 1
    assert "preparing the rest here" in caplog.text  # the worker did die, and was noticed
    # Control: the same tree with working workers records the same files.
    monkeypatch.undo()
    assert _files_after_a_scan(tmp_path / "store2", ws) == N + 1
    assert _record(tmp_path / "store") == _record(tmp_path / "store2")


def test_a_scan_that_stops_reading_its_workers_half_way_still_closes_them(tmp_path):
    # The scan reads one prepared file and gives up (as when writing the record fails): the
    # worker is then blocked writing results nobody reads, and the feeding thread blocked
    # writing it more requests. Closing must not wait on them.

    body = "def handler_{0}(request):\n    return request.get('key_{0}')\n" * 60
    items = []
    for i in range(3000):
        path = tmp_path / f"m{i}.py"
        path.write_text(body.format(i))
        items.append((path.name, str(path), None, False))
    pool = W.Workers(1)
    results = pool.map(items)
    assert next(results).kind == "text"  # control: the workers do answer
    # Wait until the worker has filled the pipe of results it writes (it then stops reading
    # requests, and the feeding thread soon blocks writing them).
    out = pool._procs[0].stdout.fileno()
    waiting = array.array("i", [0])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        fcntl.ioctl(out, termios.FIONREAD, waiting)
        if waiting[0] >= W.PIPE_BYTES - 256 * 1024:
            break
        time.sleep(0.05)
    time.sleep(0.5)
    closer = threading.Thread(target=pool.close, daemon=True)
    closer.start()
    closer.join(30)
    assert not closer.is_alive(), "closing the workers hung"
    # Control: workers whose every result was read end on their own, at the end of their input.
    pool = W.Workers(1)
    assert len(list(pool.map(items[:100]))) == 100
    pool.close()
    assert [p.returncode for p in pool._procs] == [0]
