"""The one way lore runs git: a repository is untrusted input, so git gets no say from it.

A cloned repository controls its tracked files, and a repository handed over as a folder or
an archive controls its `.git/` too. git reads programs to run from its config (pager,
external diff, text conversion, filters, fsmonitor, signature verifiers, credential helpers,
hooks, ssh), so every run here:

- starts from an empty environment (no inherited `GIT_*`, `PAGER`, `SSH_*`), with `HOME` and
  `XDG_CONFIG_HOME` an empty private folder, `GIT_CONFIG_GLOBAL` an empty file lore owns and
  `GIT_CONFIG_NOSYSTEM=1`: no user, system or tracked `.gitconfig` is read;
- names the repository itself (`GIT_DIR`, `GIT_WORK_TREE`): git discovers nothing, and a
  `.git` file (worktree, submodule) must lead to a git dir inside the jail;
- refuses a repository another user owns (they could rewrite its config between our check
  and git's read; git's own ownership check is skipped when `GIT_DIR` is given);
- reads the repository's own config files with git's parser (`--no-includes`) and refuses
  what cannot be overridden from the command line: includes (git has no switch to stop
  following them), filter drivers (`git status` runs `clean` on a touched file), and any
  other program-valued key lore does not override;
- overrides with `-c` (the command line beats the repository's single-valued keys) every
  program-valued key git may reach, and passes `--no-pager`, `--no-optional-locks`,
  `--no-ext-diff`, `--no-textconv`, `--no-show-signature`; no transport protocol is allowed;
- runs only built-in commands (an alias is never looked up for a built-in) from a `git`
  found on an absolute PATH entry outside the project.

A refusal is a `LoreError` (`notARepository`, `untrustedRepository`) the ask loop hands the
model as a tool error.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from pathlib import Path

from lore_sidecar.engine.jail import Jail, real
from lore_sidecar.errors import LoreError

COMMANDS = frozenset({"log", "status"})  # built-ins only: git never expands an alias for these
CONFIG_BYTES = 1024 * 1024
LIST_TIME_S = 2.0

# Every program-valued key git may reach, set from the command line (which wins over the
# repository's config for single-valued keys; an empty credential.helper empties the list).
# A program that cannot exist (under /dev/null, not a folder): git fails to start it before
# writing to it, where `false` would exit mid-write and git could die of SIGPIPE.
NO_PROGRAM = "/dev/null/lore-runs-no-program"
OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"), ("core.pager", "cat"), ("core.editor", NO_PROGRAM),
    ("sequence.editor", NO_PROGRAM), ("core.fsmonitor", "false"), ("core.sshCommand", NO_PROGRAM),
    ("core.askPass", ""), ("core.attributesFile", "/dev/null"), ("diff.external", ""),
    ("credential.helper", ""), ("gpg.program", NO_PROGRAM), ("gpg.openpgp.program", NO_PROGRAM),
    ("gpg.x509.program", NO_PROGRAM), ("gpg.ssh.program", NO_PROGRAM), ("gpg.ssh.defaultKeyCommand", NO_PROGRAM),
    ("log.showSignature", "false"), ("protocol.allow", "never"), ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"), ("diff.submodule", "short"),
)
OVERRIDDEN = frozenset(k.lower() for k, _ in OVERRIDES)
GLOBAL_OPTIONS = ["--no-pager", "--no-optional-locks", "--literal-pathspecs"]
# A key whose last part names one of these holds a program (or leads to one) in git's config.
PROGRAM_NAMES = frozenset({
    "command", "cmd", "program", "textconv", "helper", "driver", "process", "clean", "smudge",
    "sshcommand", "askpass", "editor", "gitproxy", "uploadpack", "receivepack", "fsmonitor",
    "hookspath", "external", "packobjectshook", "proxycommand"})
REFUSED_SECTIONS = {"include": "it includes another config file (git cannot be told not to follow it)",
                    "includeif": "it includes another config file (git cannot be told not to follow it)",
                    "filter": "it defines a filter driver (git status would run it)"}

HOME_PREFIX = "lore-git-home-"  # then the owning pid: a dead process's folder is swept
_home_lock = threading.Lock()
_home: Path | None = None


def untrusted(root: Path, why: str) -> LoreError:
    return LoreError("untrustedRepository", f"git is not run in {root.name or str(root)!r}: {why}", project=str(root))


def private_home() -> Path:
    """An empty folder only this process uses as git's HOME, with an empty global config
    file; re-made if anything in it changed."""
    global _home
    with _home_lock:
        if _home is None or not _pristine(_home):
            if _home is not None:
                shutil.rmtree(_home, ignore_errors=True)
            _sweep_dead_homes()
            _home = Path(tempfile.mkdtemp(prefix=f"{HOME_PREFIX}{os.getpid()}-"))
            (_home / "gitconfig").touch(mode=0o400)
            atexit.register(shutil.rmtree, _home, True)
        return _home


def _sweep_dead_homes() -> None:
    """Remove the private homes of this user's processes that are gone: `atexit` does not run
    for a process stopped by a signal, and each left one folder in the temp dir."""
    for folder in Path(tempfile.gettempdir()).glob(f"{HOME_PREFIX}*-*"):
        pid = folder.name[len(HOME_PREFIX):].split("-", 1)[0]
        try:
            if not pid.isascii() or not pid.isdigit() or folder.lstat().st_uid != os.geteuid():
                continue
            os.kill(int(pid), 0)  # alive (or another user's): its folder stays
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


def _pristine(home: Path) -> bool:
    try:
        st = os.lstat(home)
        entries = os.listdir(home)
        cfg = os.lstat(home / "gitconfig")
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700
            and entries == ["gitconfig"] and stat.S_ISREG(cfg.st_mode) and cfg.st_size == 0)


def clean_path(root: Path | None = None) -> str:
    """PATH without relative entries, entries inside the project, or entries inside any git
    repository (a `node_modules/.bin` of this or another opened folder): a program that came
    with a repository (its own `git`, `grep`, `sh`) is never the one that runs."""
    keep = []
    for entry in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        here = real(entry)
        if root is not None and (here == root or root in here.parents):
            continue
        if any(os.path.lexists(folder / ".git") for folder in (here, *here.parents)):
            continue
        keep.append(entry)
    return os.pathsep.join(keep) or "/usr/bin:/bin"


def base_env(root: Path | None = None) -> dict[str, str]:
    """The whole environment of a child lore starts for a tool: nothing inherited but PATH."""
    home = private_home()
    return {"PATH": clean_path(root), "LC_ALL": "C", "HOME": str(home), "XDG_CONFIG_HOME": str(home),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(home / "gitconfig"), "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0", "GIT_ATTR_NOSYSTEM": "1", "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_ALLOW_PROTOCOL": "lore-no-protocol", "GIT_PAGER": "cat", "PAGER": "cat",
            "GIT_CEILING_DIRECTORIES": str(home.parent)}


def command(root: Path, jail: Jail, subcommand: str, *args: str) -> tuple[list[str], dict[str, str]]:
    """(argv, env) for `git <subcommand> <args>` in the project at `root`, or a refusal."""
    if subcommand not in COMMANDS:
        raise ValueError(f"git {subcommand} is not one of the commands lore runs")
    root = real(root)
    env = base_env(root)
    git = shutil.which("git", path=env["PATH"])
    if git is None:
        raise LoreError("toolUnavailable", "git is not installed")
    try:
        git_dir, common_dir = locate(root, jail)
        for path in {root, git_dir, common_dir}:
            _owned(root, path)
        # config.worktree is vetted whenever it exists: extensions.worktreeConfig may be set anywhere.
        vet(root, [common_dir / "config", git_dir / "config.worktree"], env, git)
    except OSError as exc:  # a git dir that cannot be inspected is one that cannot be proven safe
        raise untrusted(root, f"its git dir cannot be inspected ({exc.strerror or exc})") from None
    env.update(GIT_DIR=str(git_dir), GIT_WORK_TREE=str(root))
    overrides = [part for key, value in OVERRIDES for part in ("-c", f"{key}={value}")]
    return [git, *GLOBAL_OPTIONS, *overrides, subcommand, *args], env


def locate(root: Path, jail: Jail) -> tuple[Path, Path]:
    """(git dir, common dir) of the project, both inside the jail; `.git` may be a folder or
    a `gitdir:` file (a worktree or a submodule)."""
    dot = root / ".git"
    try:
        os.lstat(dot)
    except FileNotFoundError:
        raise LoreError("notARepository", f"{root.name!r} is not a git repository", project=str(root)) from None
    git_dir = _inside(root, jail, dot, "its .git")
    if git_dir.is_file():  # a worktree's or a submodule's pointer to its git dir
        _owned(root, git_dir)
        text = _small(git_dir, 4096)
        if not text.startswith("gitdir: "):
            raise untrusted(root, "its .git file does not name a git dir")
        target = Path(text[len("gitdir: "):].strip())
        git_dir = _inside(root, jail, target if target.is_absolute() else dot.parent / target, "the git dir its .git file names")
    if not git_dir.is_dir():
        raise untrusted(root, "its .git is neither a folder nor a gitdir file")
    common = git_dir
    if (git_dir / "commondir").exists():
        named = Path(_small(git_dir / "commondir", 4096).strip())
        common = _inside(root, jail, named if named.is_absolute() else git_dir / named, "its common git dir")
    alternates = common / "objects" / "info" / "alternates"
    if alternates.exists():  # borrowed objects: git would read (and show) another repository's history
        for line in _small(alternates, 64 * 1024).splitlines():
            if line.strip() and not line.startswith("#"):
                named = Path(line.strip())
                _inside(root, jail, named if named.is_absolute() else common / "objects" / named, "an object store it borrows")
    return git_dir, common


def vet(root: Path, files: list[Path], env: dict[str, str], git: str) -> None:
    """Refuse a repository whose own config holds what the command line cannot override."""
    for path in files:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(st.st_mode):
            raise untrusted(root, f"{path.name} is not a regular file")
        if st.st_uid != os.geteuid():
            raise untrusted(root, f"its {path.name} belongs to another user")
        if st.st_size > CONFIG_BYTES:
            raise untrusted(root, f"its {path.name} is larger than {CONFIG_BYTES} bytes")
        for key in config_keys(root, path, env, git):
            why = refusal(key)
            if why:
                raise untrusted(root, f"its {path.name} sets {key} — {why}")


def config_keys(root: Path, path: Path, env: dict[str, str], git: str) -> list[str]:
    """The keys of one config file, as git itself parses them (includes listed, not followed)."""
    try:
        done = subprocess.run([git, "config", "--file", str(path), "--no-includes", "--null", "--list"],
                              cwd=env["HOME"], env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=LIST_TIME_S, check=False)
    except subprocess.TimeoutExpired:
        raise untrusted(root, f"its {path.name} took too long to read") from None
    if done.returncode != 0:
        raise untrusted(root, f"git cannot parse its {path.name}")
    return [entry.split(b"\n", 1)[0].decode("utf-8", "replace") for entry in done.stdout.split(b"\0") if entry]


def refusal(key: str) -> str | None:
    """Why a repository config key makes git unsafe to run, or None (pure)."""
    section = key.split(".", 1)[0].lower()
    name = key.rsplit(".", 1)[-1].lower()
    if section in REFUSED_SECTIONS:
        return REFUSED_SECTIONS[section]
    if section in ("pager", "alias"):
        return None  # --no-pager wins over every pager; built-in commands never expand an alias
    if key.lower() in OVERRIDDEN:
        return None
    if name in PROGRAM_NAMES or name.endswith(("command", "cmd", "program", "hook")):
        return "it names a program lore does not override"
    return None


def _inside(root: Path, jail: Jail, path: Path, what: str) -> Path:
    try:
        return jail.resolve(path)
    except LoreError:
        raise untrusted(root, f"{what} lies outside the project") from None


def _owned(root: Path, path: Path) -> None:
    if os.stat(path).st_uid != os.geteuid():
        raise untrusted(root, f"{path.name or path} belongs to another user (uid {os.stat(path).st_uid})")


def _small(path: Path, limit: int) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise LoreError("untrustedRepository", f"{path.name} is not a regular file")
        return os.read(fd, limit).decode("utf-8", "replace")
    finally:
        os.close(fd)
