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
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from lore_sidecar.errors import BadParams, LoreError

MAX_PATH_CHARS = 4096
MAX_COMPONENT_CHARS = 255


def outside(path: str) -> LoreError:
    shown = path if len(path) <= 200 else path[:200] + "…"
    return LoreError("outsideWorkspace", "the path is outside the workspace folders this server was opened on",
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
    """The real path (symlinks and `..` resolved); never raises for a missing file."""
    return Path(os.path.realpath(os.path.expanduser(str(path))))


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

    # -- reading -----------------------------------------------------------------------------
    def read_bytes(self, value: str | Path, *, max_bytes: int, transcripts: bool = False) -> bytes:
        """A regular file inside the jail, at most `max_bytes` (larger: `fileTooLarge`)."""
        p = self.resolve(value, transcripts=transcripts)
        shown = str(value)[:200]
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(p, flags)
        except FileNotFoundError:
            raise LoreError("notFound", f"no such file: {shown!r}", path=shown) from None
        except OSError as exc:
            raise LoreError("unreadable", f"cannot open {shown!r}: {exc.strerror}", path=shown) from None
        try:
            opened = _opened_path(fd)
            allowed = [*self.roots, *self.link_roots, *(self.transcript_roots if transcripts else ())]
            if opened is not None and not _within(opened, allowed):
                raise outside(str(value))  # swapped for a link between the check and the open
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise LoreError("notAFile", f"{shown!r} is a directory", path=shown)
            if not stat.S_ISREG(st.st_mode):
                raise LoreError("notAFile", f"{shown!r} is not a regular file", path=shown)
            if st.st_size > max_bytes:
                raise LoreError("fileTooLarge", f"{shown!r} is larger than {max_bytes} bytes",
                                path=shown, limit=max_bytes)
            chunks, left = [], max_bytes + 1
            while left > 0:
                data = os.read(fd, min(left, 1 << 20))
                if not data:
                    break
                chunks.append(data)
                left -= len(data)
            data = b"".join(chunks)
            if len(data) > max_bytes:
                raise LoreError("fileTooLarge", f"{shown!r} is larger than {max_bytes} bytes",
                                path=shown, limit=max_bytes)
            return data
        finally:
            os.close(fd)

    # -- writing -----------------------------------------------------------------------------
    def write_atomic(self, value: str | Path, data: bytes) -> Path:
        """Write `data` to `value` (inside a root, not a link root) by temporary file and
        rename, every directory opened without following links from the root down."""
        target = Path(os.path.abspath(os.path.expanduser(str(value))))
        check_path_text(str(target))
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
    return [str(r) for r in roots]
