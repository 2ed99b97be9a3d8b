"""The suite's promise to leave nothing in the system temp dir rests on one setting made in
tests/conftest.py: TMPDIR (and TMP, TEMP) point inside pytest's basetemp for the whole session,
so every child inherits it. These tests hold that setting and show it reaches a child started
the way the suite starts sidecars and harnesses (the environment copied from os.environ)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

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
