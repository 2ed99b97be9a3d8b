"""The command line as people and scripts see it: progress on a terminal (a pseudo-terminal
here), none when piped, JSON that parses; completion scripts; tables on a terminal."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

ENV = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "110", "LINES": "40"}
# The reindex test's files go into the default model's space (`filesEmbedder = "same"`):
# the bar is drawn by the workspace scan, and what came after it was a 16 s MiniLM wait per
# run, drawing nothing (3 of every 4 seconds of the test). MiniLM through the CLI reindex is
# test_cli's and test_dense_leg's.
QUICK_DENSE = {**ENV, "LORE_FILES_EMBEDDER": "same"}


def on_a_terminal(args: list[str], timeout: float = 180, env: dict[str, str] = ENV) -> tuple[int, str]:
    """Run with stdout and stderr on a pseudo-terminal; everything it wrote, and its exit code."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", *args], stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, env=env, close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=30), b"".join(chunks).decode(errors="replace")


@pytest.fixture(scope="module")
def notes(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("notes")
    for i in range(2000):
        (ws / f"note-{i:04d}.md").write_text(f"# note {i}\n\nThe ledger entry {i} mentions walrus-{i % 37}.\n")
    return ws


def test_a_reindex_of_2000_files_shows_progress_on_a_terminal_and_none_when_piped(notes, tmp_path):
    store = tmp_path / "store"
    code, out = on_a_terminal(["reindex", "--workspace", str(notes), "--store-dir", str(store)], env=QUICK_DENSE)
    assert code == 0, out[-2000:]
    assert "reindexing" in out
    seen = {int(p) for p in re.findall(r"(\d{1,3})%", out)}
    assert len(seen) >= 2 and max(seen) == 100, seen  # drawn while it ran, not once at the end
    assert re.search(r"reindexed: 2000 files", out)

    piped = subprocess.run([sys.executable, "-m", "lore_sidecar", "reindex", "--workspace", str(notes), "--store-dir",
                            str(store)], capture_output=True, text=True, env=QUICK_DENSE, timeout=180)
    assert piped.returncode == 0
    assert "reindexing" not in piped.stderr and "%" not in piped.stderr  # no progress for a pipe
    assert json.loads(piped.stdout)["files"] == 2000

    code, out = on_a_terminal(["reindex", "--json", "--workspace", str(notes), "--store-dir", str(store)],
                              env=QUICK_DENSE)
    assert code == 0 and "reindexing" not in out  # --json: quiet, even on a terminal
    assert json.loads(out.replace("\r\n", "\n"))["files"] == 2000


def test_status_is_a_table_on_a_terminal_and_json_when_piped(tmp_path):
    store = tmp_path / "store"
    code, out = on_a_terminal(["status", "--workspace", str(tmp_path), "--store-dir", str(store)], timeout=60)
    assert code == 0 and "lore-sidecar status" in out and "embedder" in out and not out.lstrip().startswith("{")
    piped = subprocess.run([sys.executable, "-m", "lore_sidecar", "status", "--workspace", str(tmp_path), "--store-dir",
                            str(store)], capture_output=True, text=True, timeout=60)
    assert json.loads(piped.stdout)["role"] in ("writer", "follower")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_name_the_verbs_and_their_options(shell):
    out = subprocess.run([sys.executable, "-m", "lore_sidecar", "completion", shell], capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0
    for word in ("install", "doctor", "recall", "claude-code", "--dry-run", "--scope"):
        assert (word.removeprefix("--") if shell == "fish" else word) in out.stdout, word  # fish: `-l dry-run`


def test_the_bash_completion_completes_for_real(tmp_path):
    script = subprocess.run([sys.executable, "-m", "lore_sidecar", "completion", "bash"], capture_output=True,
                            text=True, timeout=30).stdout
    probe = tmp_path / "probe.sh"
    probe.write_text(script + '\nCOMP_WORDS=(lore-sidecar install cl); COMP_CWORD=2; _lore_sidecar; echo "${COMPREPLY[@]}"\n'
                     'COMP_WORDS=(lore-sidecar doc); COMP_CWORD=1; _lore_sidecar; echo "${COMPREPLY[@]}"\n')
    out = subprocess.run(["bash", str(probe)], capture_output=True, text=True, timeout=30).stdout.splitlines()
    assert out == ["claude-code", "doctor"]
