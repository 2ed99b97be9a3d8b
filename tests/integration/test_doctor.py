"""`lore-sidecar doctor`: healthy set-up exits 0; a read-only store, a missing agent config
and a hung writer holding the lock are each named with a fix, and it exits non-zero."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest


def lore(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "LORE_")) and k != "ANTHROPIC_API_KEY"}
    return subprocess.run([sys.executable, "-m", "lore_sidecar", *args], env={**env, "HOME": str(home)}, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def read_only(path: Path) -> None:
    """No new file can be made in `path`: permissions for a user, the immutable flag for root
    (root ignores permission bits)."""
    if os.geteuid() != 0:
        path.chmod(0o555)
    else:
        subprocess.run(["chattr", "+i", str(path)], check=True)


def writable_again(path: Path) -> None:
    if os.geteuid() != 0:
        path.chmod(0o755)
    else:
        subprocess.run(["chattr", "-i", str(path)], check=False)


HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0); os.write(fd, str(os.getpid()).encode())
os.utime(sys.argv[1], (time.time() - 3600, time.time() - 3600))  # its last heartbeat: an hour ago
print("held", flush=True)
time.sleep(120)
"""


@pytest.fixture
def setup(tmp_path):
    home, project, store = tmp_path / "home", tmp_path / "proj", tmp_path / "store"
    home.mkdir()
    project.mkdir()
    assert lore(home, "install", "claude-code", "--project", str(project)).returncode == 0
    assert lore(home, "status", "--workspace", str(project), "--store-dir", str(store)).returncode == 0  # makes the store
    return home, project, store


def test_a_healthy_set_up_passes(setup):
    home, project, store = setup
    ok = lore(home, "doctor", "--store-dir", str(store), "--workspace", str(project))
    assert ok.returncode == 0, ok.stdout
    assert "✗" not in ok.stdout and "claude-code (project" in ok.stdout and "pointing at" in ok.stdout
    report = json.loads(lore(home, "doctor", "--json", "--store-dir", str(store), "--workspace", str(project)).stdout)
    assert report["healthy"] is True and {c["name"] for c in report["checks"]} >= {"store", "schema", "writer", "embedder"}


def test_a_warning_alone_is_named_and_doctor_still_exits_0(setup):
    """setup/doctor.py: exit 0 when nothing failed (warnings are fine), 1 otherwise. A store
    others may read is a warning: named with its fix, and the set-up is healthy; the control:
    the same set-up with a failure added (the agent's config gone) exits 1."""
    home, project, store = setup
    store.chmod(0o755)
    try:
        warned = lore(home, "doctor", "--store-dir", str(store), "--workspace", str(project))
        report = json.loads(lore(home, "doctor", "--json", "--store-dir", str(store), "--workspace", str(project)).stdout)
        (project / ".mcp.json").unlink()
        failed = lore(home, "doctor", "--store-dir", str(store), "--workspace", str(project))
    finally:
        store.chmod(0o700)
    assert "! privacy: other users can read the store" in warned.stdout and f"fix: chmod 700 {store}" in warned.stdout
    assert warned.returncode == 0 and "✗" not in warned.stdout, warned.stdout
    assert report["healthy"] is True and [c["name"] for c in report["checks"] if c["state"] == "warn"] == ["privacy"]
    assert failed.returncode == 1 and "✗" in failed.stdout, failed.stdout


def test_a_read_only_store_a_missing_config_and_a_hung_writer_are_each_named_with_a_fix(setup):
    home, project, store = setup
    (project / ".mcp.json").unlink()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(store / "writer.lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        read_only(store)
        try:
            sick = lore(home, "doctor", "--store-dir", str(store), "--workspace", str(project))
        finally:
            writable_again(store)
    finally:
        holder.kill()
        holder.wait()
    assert sick.returncode == 1, sick.stdout
    out = sick.stdout
    assert f"✗ store: {store} is not writable" in out and "fix: give this user write access" in out
    assert f"✗ writer: pid {holder.pid} holds the writer lock but its heartbeat is" in out and f"fix: kill {holder.pid}" in out
    assert f"missing: {project / '.mcp.json'}" in out and f"lore-sidecar install claude-code --project {project}" in out
    # Once each is fixed, it is healthy again.
    assert lore(home, "install", "claude-code", "--project", str(project)).returncode == 0
    time.sleep(0.1)
    assert lore(home, "doctor", "--store-dir", str(store), "--workspace", str(project)).returncode == 0
