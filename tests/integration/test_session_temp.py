"""The suite's promise to leave nothing in the system temp dir or the real home dir rests on
settings made in tests/conftest.py: TMPDIR (and TMP, TEMP) and HOME (and the XDG folders) point
inside pytest's basetemp for the whole session, so every child inherits them. These tests hold
those settings and show they reach a child started the way the suite starts sidecars and
harnesses (the environment copied from os.environ), even from a module-scoped fixture, which
runs before a test's own HOME is set."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

SHOW_GIT_HOME = "from lore_sidecar.engine import gitsafe; print(gitsafe.private_home())"


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def test_the_session_temp_dir_is_inside_basetemp_for_this_process(tmp_path_factory):
    sys_tmp = tmp_path_factory.getbasetemp() / "sys-tmp"
    assert sys_tmp.is_dir()
    assert {os.environ.get(k) for k in ("TMPDIR", "TMP", "TEMP")} == {str(sys_tmp)}
    assert Path(tempfile.gettempdir()) == sys_tmp
    made = Path(tempfile.mkdtemp())
    try:
        assert made.parent == sys_tmp
    finally:
        made.rmdir()


def test_a_child_lore_process_makes_its_temp_folders_inside_basetemp(tmp_path_factory):
    """A lore process started with the suite's environment puts its private git home (a real
    temp folder lore makes, removed at exit) under basetemp; the control, the same child with
    the temp variables taken away, puts it outside, so the check can fail."""
    basetemp = tmp_path_factory.getbasetemp()
    child = subprocess.run([sys.executable, "-c", SHOW_GIT_HOME], env=dict(os.environ), capture_output=True,
                           text=True, timeout=60)
    assert child.returncode == 0, child.stderr
    home = Path(child.stdout.strip())
    assert home.name.startswith("lore-git-home-") and _inside(home, basetemp / "sys-tmp")
    assert not home.exists()  # removed by the child at exit: nothing left even in basetemp

    bare = {k: v for k, v in os.environ.items() if k not in ("TMPDIR", "TMP", "TEMP")}
    control = subprocess.run([sys.executable, "-c", SHOW_GIT_HOME], env=bare, capture_output=True, text=True,
                             timeout=60)
    assert control.returncode == 0, control.stderr
    outside = Path(control.stdout.strip())
    assert outside.name.startswith("lore-git-home-") and not _inside(outside, basetemp)
    assert not outside.exists()


SHOW_HOMES = ("import os, sys; print(os.path.expanduser('~')); "
              "print(os.environ.get('XDG_CONFIG_HOME', '')); print(os.environ.get('XDG_CACHE_HOME', '-'))")


@pytest.fixture(scope="module")
def homes_seen_by_a_module_fixture():
    """What a child started by a module-scoped fixture (as a shared sidecar or dashboard is)
    takes for its home: such a fixture runs before the per-test HOME is set."""
    child = subprocess.run([sys.executable, "-c", SHOW_HOMES], env=dict(os.environ), capture_output=True, text=True,
                           timeout=60)
    assert child.returncode == 0, child.stderr
    return child.stdout.splitlines()


def test_a_child_of_a_module_fixture_has_its_home_inside_basetemp(homes_seen_by_a_module_fixture,
                                                                   tmp_path_factory):
    basetemp = tmp_path_factory.getbasetemp()
    home, config, cache = homes_seen_by_a_module_fixture
    assert Path(home) == basetemp / "sys-home"
    assert Path(config) == basetemp / "sys-home" / ".config"
    assert cache == "-"  # unset: follows HOME
    real = Path(pwd.getpwuid(os.getuid()).pw_dir)  # control: the account's own home is elsewhere
    assert not _inside(real, basetemp)
    assert Path(os.environ["HOME"]) != basetemp / "sys-home"  # and a test's own HOME is its own
    assert _inside(Path(os.environ["HOME"]), basetemp)


def _environ_of_child_running(needle: str) -> dict[str, str]:
    """The environment of this process's child whose command line holds `needle` (from /proc)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if needle.encode() not in argv:
                continue
            pairs = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        return dict(p.decode().split("=", 1) for p in pairs if b"=" in p)
    raise AssertionError(f"no process runs with {needle!r}")


async def test_an_mcp_server_the_sdk_starts_keeps_the_suites_home_and_temp_dir(tmp_path, tmp_path_factory):
    """The MCP SDK hands its server only the variables it is given (else a handful, neither
    HOME nor TMPDIR): the tests' session passes the suite's own on. Control: a server given
    another temp dir runs with that one, so the environment read here is the server's own."""
    from tests.support.mcp_client import mcp_session

    ws = tmp_path / "ws"
    ws.mkdir()
    store = tmp_path / "store"
    async with mcp_session(store, ws):
        seen = _environ_of_child_running(str(store))
    assert seen.get("TMPDIR") == str(tmp_path_factory.getbasetemp() / "sys-tmp")
    assert seen.get("HOME") == os.environ["HOME"]
    elsewhere = tmp_path / "elsewhere"
    async with mcp_session(store, ws, env={"TMPDIR": str(elsewhere)}):
        assert _environ_of_child_running(str(store)).get("TMPDIR") == str(elsewhere)
