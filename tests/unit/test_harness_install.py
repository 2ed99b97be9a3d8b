"""The harness installs the e2e tests share (tests/support/harness.py): two pytest processes on
one checkout install a harness once, and a failed install leaves no stamp (the next run
installs again instead of running a half-installed harness). npm is a fake on PATH here."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.support import harness

FAKE_NPM = """#!/bin/sh
# Each install appends a line; the first waits (bounded) for a second installer to show up.
echo run >> "$NPM_LOG"
[ -n "$NPM_FAIL" ] && exit 1
if [ "$(wc -l < "$NPM_LOG")" -eq 1 ]; then
  i=0
  while [ ! -e "$NPM_SECOND" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done
  i=0
  while [ "$(wc -l < "$NPM_LOG")" -lt 2 ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done
fi
exit 0
"""


@pytest.fixture
def fake_npm(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    npm = bindir / "npm"
    npm.write_text(FAKE_NPM)
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "npm.log"
    log.touch()
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("NPM_LOG", str(log))
    monkeypatch.setenv("NPM_SECOND", str(tmp_path / "second-started"))
    monkeypatch.setattr(harness, "CACHE", tmp_path / "cache")
    return log


def _runs(log: Path) -> int:
    return len(log.read_text().splitlines())


def test_two_installers_at_once_install_the_harness_once(fake_npm, tmp_path):
    errors: list[BaseException] = []

    def install() -> None:
        try:
            harness.install("claude")
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    first = threading.Thread(target=install)
    first.start()
    while _runs(fake_npm) == 0 and first.is_alive():
        time.sleep(0.01)
    # The first is inside npm, holding the lock, its stamp not yet written: a second arrives.
    (tmp_path / "second-started").touch()
    second = threading.Thread(target=install)
    second.start()
    first.join()
    second.join()
    assert errors == []
    assert _runs(fake_npm) == 1
    version = harness.PACKAGES["claude"][1]
    assert (harness.CACHE / "claude" / f".installed-{version}").exists()


def test_a_failed_npm_install_leaves_no_stamp_and_the_next_call_installs_again(fake_npm, tmp_path, monkeypatch):
    (tmp_path / "second-started").touch()  # nobody to wait for
    stamp = harness.CACHE / "claude" / f".installed-{harness.PACKAGES['claude'][1]}"
    monkeypatch.setenv("NPM_FAIL", "1")
    with pytest.raises(subprocess.CalledProcessError):
        harness.install("claude")
    assert not stamp.exists()
    monkeypatch.delenv("NPM_FAIL")
    harness.install("claude")
    assert _runs(fake_npm) == 2 and stamp.exists()


def test_a_failed_hermes_install_leaves_no_stamp(tmp_path, monkeypatch):
    monkeypatch.setattr(harness, "CACHE", tmp_path / "cache")
    calls: list[list[str]] = []

    def failing_run(cmd, **kwargs):
        calls.append(cmd)
        if "venv" in cmd:  # `venv --clear`: the directory emptied, then made again
            shutil.rmtree(cmd[-1], ignore_errors=True)
            Path(cmd[-1]).mkdir(parents=True)
            return subprocess.CompletedProcess(cmd, 0)
        raise subprocess.CalledProcessError(1, cmd)  # pip could not install

    monkeypatch.setattr(harness.subprocess, "run", failing_run)
    with pytest.raises(subprocess.CalledProcessError):
        harness.install_hermes()
    assert len(calls) == 2
    assert not (tmp_path / "cache" / "hermes" / "venv" / f".installed-{harness.HERMES[1]}").exists()
