"""A model of what survives a power cut, for crash-injection tests.

Inside `tracking(dirs)`, every `os.open`/`os.write`/`os.fsync`/`os.replace` on a path under
one of `dirs` is watched. A file's bytes are durable only once its descriptor was fsynced
after the last write; a name (a rename into place) is durable only once its directory was
fsynced after the rename. `crash()` then makes the disk look as it would after the machine
died at that instant: names never made durable vanish, files whose data was never synced
lose it. Nothing is faked in the code under test: it runs unchanged, with real files.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path


class Disk:
    def __init__(self, dirs: list[Path]):
        self.dirs = [str(Path(d).resolve()) for d in dirs]
        self.fds: dict[int, str] = {}
        self.unsynced_data: set[str] = set()  # paths written since their last fsync
        self.unsynced_names: dict[str, str] = {}  # final name -> directory awaiting fsync

    def watched(self, path: str) -> bool:
        return any(path == d or path.startswith(d + os.sep) for d in self.dirs)

    def crash(self) -> list[str]:
        """Undo what a power cut would have lost; returns the paths it took away."""
        lost = []
        for name in list(self.unsynced_names):
            if os.path.exists(name):
                os.unlink(name)
                lost.append(name)
        for path in self.unsynced_data:
            if os.path.exists(path):
                os.truncate(path, 0)
                lost.append(path)
        return lost


@contextmanager
def tracking(dirs: list[Path]):
    disk = Disk(dirs)
    real_open, real_write, real_fsync, real_replace, real_close = os.open, os.write, os.fsync, os.replace, os.close

    def open_(path, flags, mode=0o777, *, dir_fd=None):
        fd = real_open(path, flags, mode, dir_fd=dir_fd)
        full = os.path.realpath(os.fspath(path))
        if disk.watched(full):
            disk.fds[fd] = full
        return fd

    def write_(fd, data):
        n = real_write(fd, data)
        if fd in disk.fds:
            disk.unsynced_data.add(disk.fds[fd])
        return n

    def fsync_(fd):
        real_fsync(fd)
        path = disk.fds.get(fd if isinstance(fd, int) else fd.fileno())
        if path is None:
            return
        disk.unsynced_data.discard(path)
        for name, d in list(disk.unsynced_names.items()):
            if d == path:
                del disk.unsynced_names[name]

    def replace_(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
        real_replace(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
        s, d = os.path.realpath(os.fspath(src)), os.path.realpath(os.fspath(dst))
        if disk.watched(d):
            if s in disk.unsynced_data:
                disk.unsynced_data.discard(s)
                disk.unsynced_data.add(d)
            disk.unsynced_names[d] = os.path.dirname(d)

    def close_(fd):
        disk.fds.pop(fd, None)
        real_close(fd)

    os.open, os.write, os.fsync, os.replace, os.close = open_, write_, fsync_, replace_, close_
    try:
        yield disk
    finally:
        os.open, os.write, os.fsync, os.replace, os.close = real_open, real_write, real_fsync, real_replace, real_close
