"""The one path jail: every path or URI that enters from a client, a hook or a repository is
resolved here and refused unless it lies inside a root the user or the client opened.

Roots are the workspace folders the client opened (initialize, didChangeWorkspaceFolders),
the folder a hook host runs in, or folders the user configured (`linkRoots`, the harnesses'
own transcript folders) — never a `project` named in a request. A refusal is the same
`outsideWorkspace` whether or not the file exists, and nothing is opened to decide it.

Reads open the resolved path with `O_NOFOLLOW` and then check what was really opened
(`/proc/self/fd`) and that it is a regular file, so a symlink swapped in between the check
and the open is caught. Writes walk from the root one directory at a time with
`O_NOFOLLOW | O_DIRECTORY`, create a temporary file inside the final directory's descriptor
and rename it there: a component swapped for a symlink mid-write cannot redirect it.

Credential files (engine/never_read.py: `.env*`, `id_rsa`, `*.pem`, `.npmrc` ...) are refused
with `secretFile`, judged on the path as given and on the real path it resolves to (a link
named `notes.txt` that leads to `.env` is refused too), for reads and for writes alike.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from lore_sidecar.engine.never_read import KIND as SECRET_KIND
from lore_sidecar.engine.never_read import never_read
from lore_sidecar.errors import BadParams, LoreError

MAX_PATH_CHARS = 4096
MAX_COMPONENT_CHARS = 255


def outside(path: str) -> LoreError:
    shown = path if len(path) <= 200 else path[:200] + "…"
    return LoreError("outsideWorkspace", "the path is outside the workspace folders this server was opened on",
                     path=shown)


def secret(path: str) -> LoreError:
    shown = path if len(path) <= 200 else path[:200] + "…"
    return LoreError(SECRET_KIND, "the file is on the never-read list (credential files are never read or written)",
                     path=shown)


def check_path_text(value: str, name: str = "path") -> str:
    """A path string fit to resolve (no NUL, bounded lengths); BadParams otherwise."""
    if not isinstance(value, str) or not value.strip():
        raise BadParams(f"invalid params: {name} must be a non-empty path", [f"params.{name}: must be a non-empty path"])
    problems = []
    if "\x00" in value:
        problems.append(f"params.{name}: must not contain NUL")
    if len(value) > MAX_PATH_CHARS:
        problems.append(f"params.{name}: longer than {MAX_PATH_CHARS} characters")
    if any(len(part) > MAX_COMPONENT_CHARS for part in value.split("/")):
        problems.append(f"params.{name}: a path component is longer than {MAX_COMPONENT_CHARS} characters")
    if problems:
        raise BadParams("invalid params: " + "; ".join(problems), problems)
    return value


def real(path: str | Path) -> Path:
    """The real path (symlinks and `..` resolved); never raises for a missing file. A link
    swapped while it is resolved can make `realpath` itself fail (the link it found is gone
    when it reads it): resolved again, and a path that keeps changing is `notFound`."""
    expanded = os.path.expanduser(str(path))
    for _ in range(3):
        try:
            return Path(os.path.realpath(expanded))
        except OSError:
            continue
    raise LoreError("notFound", f"{str(path)[:200]!r} changed while it was being resolved", path=str(path)[:200],
                    retryable=True)


def _within(candidate: Path, roots: Iterable[Path]) -> bool:
    return any(candidate == r or r in candidate.parents for r in roots)


@dataclass(frozen=True)
class Jail:
    """Immutable: a change of workspace folders builds a new one, swapped in atomically."""

    roots: tuple[Path, ...] = ()
    link_roots: tuple[Path, ...] = ()  # folders symlinks inside a root may lead into (user-set)
    transcript_roots: tuple[Path, ...] = ()  # harness transcript folders (read-only)

    @classmethod
    def of(cls, roots: Iterable[str | Path], *, link_roots: Iterable[str | Path] = (),
           transcript_roots: Iterable[str | Path] = ()) -> Jail:
        return cls(_unique(real(r) for r in roots), _unique(real(r) for r in link_roots),
                   _unique(real(r) for r in transcript_roots))

    def with_roots(self, roots: Iterable[str | Path]) -> Jail:
        return Jail(_unique(real(r) for r in roots), self.link_roots, self.transcript_roots)

    def adding(self, root: str | Path) -> Jail:
        return self.with_roots([*self.roots, root])

    # -- checks ------------------------------------------------------------------------------
    def project(self, value: str, name: str = "project") -> Path:
        """A project named in a request: it must lie inside an opened root."""
        check_path_text(value, name)
        p = real(value)
        if not _within(p, self.roots):
            raise outside(value)
        return p

    def resolve(self, value: str | Path, *, links: bool = True, transcripts: bool = False) -> Path:
        """The real path of `value` if it lies inside a root (or a link root, or a transcript
        root when asked); `outsideWorkspace` otherwise, without looking at the file."""
        text = str(value)
        check_path_text(text)
        p = real(text)
        allowed = [*self.roots, *(self.link_roots if links else ()), *(self.transcript_roots if transcripts else ())]
        if not _within(p, allowed):
            raise outside(text)
        return p

    def readable(self, value: str | Path, *, transcripts: bool = False) -> Path:
        """`resolve`, and `secretFile` if the path as given or as resolved is never read."""
        p = self.resolve(value, transcripts=transcripts)
        self._refuse_secret(value, p)
        return p

    def _refuse_secret(self, value: str | Path, p: Path) -> None:
        roots = [*self.roots, *self.link_roots, *self.transcript_roots]
        given = Path(os.path.abspath(os.path.expanduser(str(value))))
        if any(never_read(_relative(candidate, roots)) for candidate in (given, p)):
            raise secret(str(value))

    # -- reading -----------------------------------------------------------------------------
    def read_bytes(self, value: str | Path, *, max_bytes: int, transcripts: bool = False) -> bytes:
        """A regular file inside the jail, at most `max_bytes` (larger: `fileTooLarge`);
        never a file on the never-read list (`secretFile`)."""
        p = self.readable(value, transcripts=transcripts)
        allowed = [*self.roots, *self.link_roots, *(self.transcript_roots if transcripts else ())]
        return read_regular(p, max_bytes=max_bytes, shown=str(value)[:200], allowed=allowed)

    # -- writing -----------------------------------------------------------------------------
    def write_atomic(self, value: str | Path, data: bytes) -> Path:
        """Write `data` to `value` (inside a root, not a link root) by temporary file and
        rename, every directory opened without following links from the root down."""
        target = Path(os.path.abspath(os.path.expanduser(str(value))))
        check_path_text(str(target))
        self._refuse_secret(value, real(target))  # an export never overwrites `.env`
        root = next((r for r in sorted(self.roots, key=lambda r: -len(r.parts)) if _lexically_within(target, r)), None)
        if root is None:
            # The path as written is outside every root; one that only *resolves* inside
            # (through a link) is refused too: writes never follow links.
            raise outside(str(value))
        rel = target.relative_to(root).parts
        if not rel:
            raise outside(str(value))
        dir_flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        try:
            for part in rel[:-1]:
                if part in ("..", "."):
                    raise outside(str(value))
                try:
                    nxt = os.open(part, dir_flags, dir_fd=fd)
                except FileNotFoundError:
                    raise LoreError("notFound", f"no such folder for {str(value)[:200]!r}", path=str(value)[:200]) from None
                except OSError:
                    raise outside(str(value)) from None  # a link (ELOOP) or not a directory
                os.close(fd)
                fd = nxt
            name = rel[-1]
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode):
                    raise outside(str(value))  # never replace a link, a FIFO or a device
            except FileNotFoundError:
                pass
            tmp = f".{name}.{secrets.token_hex(6)}.tmp"
            wfd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                          | getattr(os, "O_CLOEXEC", 0), 0o644, dir_fd=fd)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(wfd, view):]
                os.fsync(wfd)
            except BaseException:
                os.close(wfd)
                os.unlink(tmp, dir_fd=fd)
                raise
            os.close(wfd)
            os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            os.fsync(fd)
        finally:
            os.close(fd)
        return target


def read_regular(path: str | Path, *, max_bytes: int, shown: str | None = None,
                 allowed: Iterable[Path] | None = None) -> bytes:
    """The one way a workspace file is opened: `path` (already resolved and checked against
    the roots by the caller) opened with `O_NOFOLLOW`; what was really opened must lie inside
    `allowed` (when given), be a regular file of at most `max_bytes`, and not be on the
    never-read list (by name: the indexer's workers know no roots)."""
    shown = shown if shown is not None else str(path)[:200]
    if never_read(Path(path).name):
        raise secret(shown)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise LoreError("notFound", f"no such file: {shown!r}", path=shown) from None
    except OSError as exc:
        raise LoreError("unreadable", f"cannot open {shown!r}: {exc.strerror}", path=shown) from None
    try:
        opened = _opened_path(fd)
        if opened is not None and allowed is not None and not _within(opened, list(allowed)):
            raise outside(shown)  # swapped for a link between the check and the open
        if opened is not None and never_read(opened.name):
            raise secret(shown)
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise LoreError("notAFile", f"{shown!r} is a directory", path=shown)
        if not stat.S_ISREG(st.st_mode):
            raise LoreError("notAFile", f"{shown!r} is not a regular file", path=shown)
        if st.st_size > max_bytes:
            raise LoreError("fileTooLarge", f"{shown!r} is larger than {max_bytes} bytes", path=shown, limit=max_bytes)
        chunks, left = [], max_bytes + 1
        while left > 0:
            data = os.read(fd, min(left, 1 << 20))
            if not data:
                break
            chunks.append(data)
            left -= len(data)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            raise LoreError("fileTooLarge", f"{shown!r} is larger than {max_bytes} bytes", path=shown, limit=max_bytes)
        return data
    finally:
        os.close(fd)


def _relative(p: Path, roots: Iterable[Path]) -> str:
    """`p` relative to the deepest root holding it (posix), else `p` itself (judged by name)."""
    best = max((r for r in roots if p == r or r in p.parents), key=lambda r: len(r.parts), default=None)
    return p.relative_to(best).as_posix() if best is not None else p.as_posix()


def _lexically_within(p: Path, root: Path) -> bool:
    return p == root or root in p.parents


def _opened_path(fd: int) -> Path | None:
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None  # no procfs: the O_NOFOLLOW open and the prior check stand alone


def _unique(paths: Iterable[Path]) -> tuple[Path, ...]:
    out: list[Path] = []
    for p in paths:
        if p not in out:
            out.append(p)
    return tuple(out)


def default_transcript_roots(env: dict[str, str] | os._Environ) -> list[str]:
    """Where the harnesses keep their own transcripts (user-level: from the environment)."""
    home = Path(env.get("HOME") or Path.home())
    roots = [home / ".claude" / "projects", home / ".codex" / "sessions", home / ".pi" / "agent" / "sessions",
             home / ".local" / "share" / "opencode"]
    if env.get("CLAUDE_CONFIG_DIR"):
        roots.append(Path(env["CLAUDE_CONFIG_DIR"]) / "projects")
    if env.get("CODEX_HOME"):
        roots.append(Path(env["CODEX_HOME"]) / "sessions")
    if env.get("PI_CODING_AGENT_DIR"):
        roots.append(Path(env["PI_CODING_AGENT_DIR"]) / "sessions")
    # Copilot CLI: $COPILOT_HOME/session-state/<id>/events.jsonl (default ~/.copilot).
    roots.append((Path(env["COPILOT_HOME"]) if env.get("COPILOT_HOME") else home / ".copilot") / "session-state")
    return [str(r) for r in roots]
