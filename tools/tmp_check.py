"""Run a command and print what it left in the system temp dir and in the home dir.

    python tools/tmp_check.py -- python -m pytest tests/e2e/test_neovim.py

The suite promises to leave nothing outside its own temp dirs (pytest's basetemp, which pytest
itself prunes to the last three runs) and to write nothing into the real home dir. This lists
the system temp dir's entries (and those one level inside the folders already there: a JVM
or an editor adds files to a shared `hsperfdata_<user>` or `nvim.<user>` folder) and the home
dir's (three levels deep, npm's download cache aside) before and after the command, and prints
those added, with their owner and size, so a leak shows up whichever process made it (a
harness, Chromium, PostgreSQL, a sidecar, git). It reports and does not judge: other users of
a shared machine add entries too, so read the names. Exit status is the command's.

    python tools/tmp_check.py --private -- python -m pytest tests/e2e/test_neovim.py

runs the command (as root) in its own mount namespace with an empty folder mounted on /tmp, so
what it lists is the command's alone, not also that of a suite running beside it; the folder
is deleted afterwards. $HOME is still the shared one.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The system temp dir, not the caller's TMPDIR: a leak is what lands where every process
# falls back to when nobody told it otherwise.
SYSTEM_TMP = Path("/tmp")
IGNORED = ("pytest-of-",)  # pytest's basetemp root: the suite's own temp dirs, pruned by pytest
HOME = Path(os.path.expanduser("~"))
# Not looked into: npm's download cache (allowed), and toolchains too big to walk each time.
HOME_UNWALKED = {".npm", ".pyenv", ".cargo", ".rustup"}


def listing(root: Path, depth: int, skip=lambda rel: False) -> set[str]:
    """Paths under `root` down to `depth` levels, relative to it."""
    found: set[str] = set()
    level = [""]
    for _ in range(depth):
        below = []
        for rel in level:
            try:
                names = os.listdir(root / rel) if rel or root.is_dir() else []
            except OSError:  # not a folder, or not ours to read
                continue
            for name in names:
                child = f"{rel}/{name}" if rel else name
                if skip(child):
                    continue
                found.add(child)
                if (root / child).is_dir() and not (root / child).is_symlink():
                    below.append(child)
        level = below
    return found


def tmp_entries(root: Path = SYSTEM_TMP) -> set[str]:
    return listing(root, 2, lambda rel: rel.startswith(IGNORED))


def home_entries() -> set[str]:
    return listing(HOME, 3, lambda rel: rel.split("/")[0] in HOME_UNWALKED and "/" in rel)


def added(before: set[str], after: set[str]) -> list[str]:
    """New paths, a new folder standing for everything in it."""
    new = after - before
    return sorted(p for p in new if not any(p.startswith(q + "/") for q in new))


def describe(root: Path, name: str) -> str:
    path = root / name
    try:
        st = path.lstat()
    except OSError:
        return f"{name} (gone again)"
    try:
        owner = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        owner = str(st.st_uid)
    kind = "dir" if path.is_dir() and not path.is_symlink() else f"{st.st_size} bytes"
    return f"{name}  ({owner}, {kind})"


def report(root: Path, names: list[str], shown: Path | None = None) -> None:
    print(f"tmp_check: {len(names)} entr{'y' if len(names) == 1 else 'ies'} added to {shown or root}"
          + (":" if names else ""), file=sys.stderr)
    for name in names:
        print(f"  {describe(root, name)}", file=sys.stderr)


def main(argv: list[str]) -> int:
    private = argv[:1] == ["--private"]
    argv = argv[1:] if private else argv
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    home_before = home_entries()
    if private:
        # The command's own /tmp: a folder (world-writable and sticky, as /tmp is, so the
        # `postgres` user of the team backend's tests can use it too) bind-mounted over it.
        own = Path(tempfile.mkdtemp(prefix="tmp-check-", dir=SYSTEM_TMP))
        try:
            own.chmod(0o1777)
            code = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                   'mount --bind "$0" /tmp && exec "$@"', str(own), *command]).returncode
            report(own, added(set(), tmp_entries(own)), SYSTEM_TMP)
        finally:
            shutil.rmtree(own, ignore_errors=True)
    else:
        before = tmp_entries()
        code = subprocess.run(command).returncode
        report(SYSTEM_TMP, added(before, tmp_entries()))
    report(HOME, added(home_before, home_entries()))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
