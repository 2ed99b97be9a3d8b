"""The writer election lock: `flock` on a dedicated file in the store, plus a heartbeat.

Never a lock on the SQLite files (closing any descriptor of a file drops a process's POSIX
locks on it). The holder writes its pid into the file and touches it every heartbeat.

The OS releases a flock when its holder dies, so a crashed writer is replaced at once. A
*hung* writer (SIGSTOP, a stuck disk) keeps its flock; when its heartbeat is older than the
stale limit a follower breaks the lock by renaming a fresh, already-locked file over the
path. The hung process then holds a lock on a file nobody can open any more; when it wakes
it notices (`lost()`), and the store's epoch fence refuses anything it tries to commit in
the meantime. Breaking is serialised by a second lock so two followers never both break.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from lore_sidecar.store.filesystem import make_store_dir

_open_fds: set[int] = set()


def _close_in_child() -> None:
    # A forked child shares our open file description, and with it the flock: if the child
    # outlived us the lock would never be released. Children never write the store.
    for fd in list(_open_fds):
        try:
            os.close(fd)
        except OSError:
            pass
    _open_fds.clear()


os.register_at_fork(after_in_child=_close_in_child)


class WriterLock:
    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None
        self._ino: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        if self._fd is not None:
            return True
        make_store_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        # The file may have been replaced between our open and our flock (a break): a lock
        # on an unlinked inode elects nobody.
        try:
            same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)
            return False
        self._own(fd)
        return True

    def acquire(self, stale_s: float) -> bool:
        """Held already, free, or held by a writer silent for longer than `stale_s`."""
        return self.try_acquire() or (self.heartbeat_age() > stale_s and self.break_stale(stale_s))

    def _own(self, fd: int) -> None:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        os.fsync(fd)
        self._fd = fd
        self._ino = os.fstat(fd).st_ino
        _open_fds.add(fd)

    # -- liveness --------------------------------------------------------------------------
    def heartbeat(self) -> None:
        if self._fd is not None:
            os.utime(self._fd)

    def heartbeat_age(self) -> float:
        """Seconds since the holder last touched the lock file (inf if there is none)."""
        try:
            return max(0.0, time.time() - os.stat(self.path).st_mtime)
        except FileNotFoundError:
            return float("inf")

    def lost(self) -> bool:
        """True if we held the lock but the path now names another file (we were broken)."""
        if self._fd is None:
            return False
        try:
            return os.stat(self.path).st_ino != self._ino
        except FileNotFoundError:
            return True

    def break_stale(self, stale_s: float) -> bool:
        """Take the lock from a holder whose heartbeat is older than `stale_s`. True if taken."""
        if self._fd is not None:
            return True
        guard = os.open(self.path.with_suffix(".break"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            try:
                fcntl.flock(guard, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False  # another follower is breaking it right now
            # Re-check under the guard: the holder may have come back, or died and been
            # replaced by a live writer, since we looked.
            if self.heartbeat_age() <= stale_s:
                return False
            if self.try_acquire():
                return True
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new inode: nobody else has it
            os.replace(tmp, self.path)
            self._own(fd)
            return True
        finally:
            os.close(guard)

    def holder_pid(self) -> int | None:
        try:
            text = self.path.read_text().strip()
            return int(text) if text else None
        except (OSError, ValueError):
            return None

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd, self._ino = self._fd, None, None
            _open_fds.discard(fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
