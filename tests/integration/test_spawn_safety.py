"""A process this package starts runs the installed package, never a `lore_sidecar/` folder
that happens to lie in the current folder (a repository just cloned, where an editor or an
agent's hook starts us): `python -m` would import that one first and run it with the user's
rights and keys."""

from __future__ import annotations

import subprocess
import sys

from lore_sidecar.client import sidecar_command
from lore_sidecar.engine.workspace import workers as W
from lore_sidecar.setup.hosts import this_executable
from lore_sidecar.spawn import module_command

PLANTED = "import pathlib; pathlib.Path('HIJACKED').write_text('ran the planted package')\n"


def planted_repo(root):
    """A folder shaped like a hostile checkout: its own `lore_sidecar` package that leaves
    a mark when imported."""
    pkg = root / "lore_sidecar"
    (pkg / "engine" / "workspace").mkdir(parents=True)
    for rel in ("__init__.py", "__main__.py", "engine/__init__.py", "engine/workspace/__init__.py",
                "engine/workspace/workers.py"):
        (pkg / rel).write_text(PLANTED)
    return root


def test_the_sidecar_started_from_a_hostile_checkout_runs_the_installed_package(tmp_path):
    repo = planted_repo(tmp_path / "repo")
    safe = subprocess.run([*module_command("lore_sidecar"), "--version"], cwd=repo, capture_output=True, text=True,
                          timeout=60)
    assert safe.returncode == 0 and safe.stdout.startswith("lore-sidecar ")
    assert not (repo / "HIJACKED").exists()
    # Control: plain `python -m` from the same folder does run the planted package.
    subprocess.run([sys.executable, "-m", "lore_sidecar", "--version"], cwd=repo, capture_output=True, timeout=60)
    assert (repo / "HIJACKED").exists()


def test_every_command_that_starts_this_package_leaves_the_current_folder_off_the_path():
    for cmd in (sidecar_command(), W.worker_command()):
        assert cmd[:4] == [sys.executable, "-P", "-m", cmd[3]]
    host = this_executable()
    assert len(host) == 1 or host[:3] == (sys.executable, "-P", "-m")  # a console script, or the safe form


def test_file_preparation_workers_started_in_a_hostile_checkout_run_the_installed_code(tmp_path, monkeypatch):
    repo = planted_repo(tmp_path / "repo")
    src = tmp_path / "src.py"
    src.write_text("def dates_in_range(start):\n    return start\n")
    monkeypatch.chdir(repo)
    pool = W.Workers(1)
    try:
        (got,) = list(pool.map([("src.py", str(src), None, False)]))
    finally:
        pool.close()
    assert got.kind == "text" and got.chunks and "dates in range" in got.chunks[0].parts
    assert not (repo / "HIJACKED").exists()
    # Control: the same worker started the unsafe way imports the planted module.
    monkeypatch.setattr(W, "worker_command", lambda: [sys.executable, "-m", W.__name__])
    pool = W.Workers(1)
    try:
        list(pool.map([("src.py", str(src), None, False)]))
    except W.WorkerFailed:
        pass  # the planted module answers nothing
    finally:
        pool.close()
    assert (repo / "HIJACKED").exists()
