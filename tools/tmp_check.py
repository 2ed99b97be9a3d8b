"""Run a command and print what it left in the system temp dir.

    python tools/tmp_check.py -- python -m pytest tests/e2e/test_neovim.py

The suite promises to leave nothing outside its own temp dirs (pytest's basetemp, which pytest
itself prunes to the last three runs). This lists the system temp dir's entries before and
after the command and prints those added, with their owner and size, so a leak shows up
whichever process made it (a harness, Chromium, PostgreSQL, a sidecar, git). It reports and
does not judge: other users of a shared machine add entries too, so read the names.
Exit status is the command's.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

# The system temp dir, not the caller's TMPDIR: a leak is what lands where every process
# falls back to when nobody told it otherwise.
SYSTEM_TMP = Path("/tmp")
IGNORED = ("pytest-of-",)  # pytest's basetemp root: the suite's own temp dirs, pruned by pytest


def entries() -> set[str]:
    return {name for name in os.listdir(SYSTEM_TMP) if not name.startswith(IGNORED)}


def describe(name: str) -> str:
    path = SYSTEM_TMP / name
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


def main(argv: list[str]) -> int:
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    before = entries()
    code = subprocess.run(command).returncode
    added = sorted(entries() - before)
    print(f"tmp_check: {len(added)} entr{'y' if len(added) == 1 else 'ies'} added to {SYSTEM_TMP}"
          + (":" if added else ""), file=sys.stderr)
    for name in added:
        print(f"  {describe(name)}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
