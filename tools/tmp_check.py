"""Run a command and print what it left in the system temp dir and in the home dir.

    python tools/tmp_check.py -- python -m pytest tests/e2e/test_neovim.py

The suite promises to leave nothing outside its own temp dirs (pytest's basetemp, which pytest
itself prunes to the last three runs) and to write nothing into the real home dir. This lists
the system temp dir's entries (and those one level inside the folders already there: a JVM
or an editor adds files to a shared `hsperfdata_<user>` or `nvim.<user>` folder) and the home
dir's (three levels deep, npm's and pip's download caches aside) before and after the command, and prints
those added, with their owner and size, so a leak shows up whichever process made it (a
harness, Chromium, PostgreSQL, a sidecar, git). It reports and does not judge: other users of
a shared machine add entries too, so read the names. Exit status is the command's.

    python tools/tmp_check.py --private -- python -m pytest tests/e2e/test_neovim.py

runs the command (as root) in its own mount namespace with an empty folder mounted on /tmp and
an overlay on $HOME, so what it lists is the command's alone, not also that of a suite running
beside it: every file it wrote in the home dir, changed ones too (the download caches aside), and all
of its /tmp. Its writes to both are thrown away afterwards. The real /tmp is out of its
sight: a virtualenv kept there is run without --private.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

# The system temp dir, not the caller's TMPDIR: a leak is what lands where every process
# falls back to when nobody told it otherwise.
SYSTEM_TMP = Path("/tmp")
IGNORED = ("pytest-of-",)  # pytest's basetemp root: the suite's own temp dirs, pruned by pytest
HOME = Path(os.path.expanduser("~"))
# Not looked into: npm's and pip's download caches (the suite keeps them in the real home on
# purpose, see tests/conftest.py), and toolchains too big to walk each time.
DOWNLOAD_CACHES = (".npm", ".cache/pip")
HOME_UNWALKED = (*DOWNLOAD_CACHES, ".pyenv", ".cargo", ".rustup")


def unwalked(rel: str) -> bool:
    """A download cache, or inside a folder of HOME_UNWALKED (a toolchain itself is listed)."""
    return rel in DOWNLOAD_CACHES or any(rel.startswith(folder + "/") for folder in HOME_UNWALKED)


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
    return listing(HOME, 3, unwalked)


def added(before: set[str], after: set[str]) -> list[str]:
    """New paths, a new folder standing for everything in it."""
    new = after - before
    return sorted(p for p in new if not any(p.startswith(q + "/") for q in new))


def overlay_changes(upper: Path) -> list[str]:
    """What an overlay's upper layer holds over $HOME: new and changed files, new folders and
    removals (a folder the home dir has is only the way to what changed inside it)."""
    changed = []
    for folder, dirs, files in os.walk(upper):
        rel = Path(folder).relative_to(upper)
        for name in list(dirs):
            if str(rel / name) in DOWNLOAD_CACHES:
                dirs.remove(name)  # allowed (the upper layer is small: toolchains are looked into)
                continue
            if not (HOME / rel / name).is_dir() or (HOME / rel / name).is_symlink():
                changed.append(str(rel / name))
                dirs.remove(name)  # new: it stands for everything in it
        changed += [str(rel / name) for name in files]
    return sorted(changed)


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
    if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:  # an overlay's whiteout
        return f"{name}  (removed)"
    kind = "dir" if path.is_dir() and not path.is_symlink() else f"{st.st_size} bytes"
    return f"{name}  ({owner}, {kind})"


def report(root: Path, names: list[str], shown: Path | None = None, verb: str = "added to") -> None:
    print(f"tmp_check: {len(names)} entr{'y' if len(names) == 1 else 'ies'} {verb} {shown or root}"
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
    if private:
        # The command's own /tmp: a folder (world-writable and sticky, as /tmp is, so the
        # `postgres` user of the team backend's tests can use it too) bind-mounted over it;
        # and $HOME as an overlay whose upper layer collects what the command writes there.
        own = Path(tempfile.mkdtemp(prefix="tmp-check-", dir=SYSTEM_TMP))
        try:
            tmp, upper, work = own / "tmp", own / "home", own / "work"
            for folder in (tmp, upper, work):
                folder.mkdir()
            tmp.chmod(0o1777)
            script = ('mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$1" '
                      '&& mount --bind "$0" /tmp && shift 3 && exec "$@"')
            code = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, str(tmp),
                                   str(HOME), str(upper), str(work), *command]).returncode
            report(tmp, added(set(), tmp_entries(tmp)), SYSTEM_TMP)
            report(upper, overlay_changes(upper), HOME, "written in")
        finally:
            shutil.rmtree(own, ignore_errors=True)
        return code
    else:
        before, home_before = tmp_entries(), home_entries()
        code = subprocess.run(command).returncode
        report(SYSTEM_TMP, added(before, tmp_entries()))
        report(HOME, added(home_before, home_entries()))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
