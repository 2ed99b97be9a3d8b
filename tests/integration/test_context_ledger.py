"""The call ledger (store/context_ledger.py) under several writing processes at once: every
line each process appended is read back whole, none torn or lost - lines longer than a pipe's
atomic write included - and a reader that comes back reads only what was added since."""

from __future__ import annotations

import json
import subprocess
import sys

from lore_sidecar.store.context_ledger import store_ledger

WRITER = """
import sys
from pathlib import Path
from lore_sidecar.store.context_ledger import store_ledger
ledger, me, n = store_ledger(Path(sys.argv[1])), sys.argv[2], int(sys.argv[3])
for k in range(n):
    ledger.append("2026-12-04", {"k": "call", "id": f"{me}-{k}", "session": me, "pad": me[0] * (700 + 9 * (k % 700))})
"""


def test_processes_appending_at_once_lose_no_line_and_tear_none(tmp_path):
    store, n = tmp_path / "store", 400
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(store), name, str(n)])
             for name in ("alpha", "bravo", "charlie", "delta")]
    assert [p.wait(120) for p in procs] == [0, 0, 0, 0]
    ledger = store_ledger(store)
    rows = ledger.rows(ledger.days())
    assert len(rows) == 4 * n  # every line parsed: none torn, none overwritten
    for name in ("alpha", "bravo", "charlie", "delta"):
        mine = [r for r in rows if r["session"] == name]
        assert [r["id"] for r in mine] == [f"{name}-{k}" for k in range(n)]  # each process's own order kept
        assert all(set(r["pad"]) == {name[0]} for r in mine)
    # A longer line than PIPE_BUF was written whole too (the control that the test can see one)
    assert max(len(json.dumps(r)) for r in rows) > 4096


def test_a_reader_coming_back_reads_what_was_appended_and_skips_a_half_written_line(tmp_path):
    ledger = store_ledger(tmp_path / "store")
    ledger.append("2026-12-04", {"k": "call", "id": "a"})
    assert [r["id"] for r in ledger.rows(["2026-12-04"])] == ["a"]
    path = tmp_path / "store" / "context" / "calls" / "2026-12-04.jsonl"
    with open(path, "ab") as fh:
        fh.write(b'{"k": "call", "id": "b"}\n{"k": "call", "id": "c"')  # c: still being written
    assert [r["id"] for r in ledger.rows(["2026-12-04"])] == ["a", "b"]
    with open(path, "ab") as fh:
        fh.write(b"}\n")
    assert [r["id"] for r in ledger.rows(["2026-12-04"])] == ["a", "b", "c"]
    assert [r["id"] for r in store_ledger(tmp_path / "store").rows(["2026-12-04"])] == ["a", "b", "c"]  # a fresh reader
