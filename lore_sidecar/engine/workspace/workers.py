"""Worker processes that prepare files for a big scan (read, hash, redact, chunk).

Why processes: preparing a file is pure Python (regexes over its text), and on the scan's
thread it holds the interpreter lock the index worker needs to make the same files
searchable. In another process it runs on another core instead.

Why not multiprocessing: its spawn start re-imports the parent's main module (the sidecar's
whole server) and its fork start copies a process with running native threads. A worker
here is `python -m lore_sidecar.engine.workspace.workers`: it imports only what `prepare`
needs (~60 ms), reads length-prefixed pickled batches on stdin and writes the prepared
files back on stdout, in order. Both ends are this package, spawned by this process; the
pipes are private to them. A worker exits at the end of its input, so it cannot outlive
the scan or the sidecar (a dead parent closes the pipe).
"""

from __future__ import annotations

import logging
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import BinaryIO

try:
    import fcntl
except ImportError:  # not on POSIX
    fcntl = None  # type: ignore[assignment]

from lore_sidecar.engine.facts.notes import NoteFact
from lore_sidecar.engine.workspace.prep import Prepared, prepare_all
from lore_sidecar.model import Chunk
from lore_sidecar.spawn import module_command

log = logging.getLogger(__name__)

BATCH_FILES = 32  # files per request: large enough to amortise the pipe, small enough to keep both cores busy
# Bytes a worker may write ahead of the scan reading them. A batch of prepared files is
# ~130 KB and a pipe holds 64 KB, so with the default a worker waited, idle, while the scan
# wrote its last batch to the record: the two took turns (a first scan of 2,000 files, alone,
# 1.0 s against 0.6-0.8 s with 1 MB, Linux's default ceiling for an unprivileged process).
PIPE_BYTES = 1 << 20
_HEADER = struct.Struct("<I")


class WorkerFailed(RuntimeError):
    pass


def worker_count() -> int:
    """One core is the scan's and the index worker's; the rest prepare (at most 4)."""
    return max(1, min(4, (os.cpu_count() or 1) - 1))


def worker_command() -> list[str]:
    return module_command(__name__)


def _widen(pipe: BinaryIO) -> None:
    """Let `pipe` hold PIPE_BYTES where the system allows it (Linux); elsewhere it keeps its size."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)  # fcntl is None off POSIX
    if setsize is not None:
        try:
            fcntl.fcntl(pipe.fileno(), setsize, PIPE_BYTES)
        except OSError:  # above /proc/sys/fs/pipe-max-size: the default size still works
            pass


def _send(stream: BinaryIO, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: BinaryIO):
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (n,) = _HEADER.unpack(head)
    data = stream.read(n)
    if len(data) < n:
        return None
    try:
        return pickle.loads(data)
    except Exception as exc:  # a worker that died mid-write, or wrote something else
        raise WorkerFailed(f"unreadable reply from a file preparation worker: {exc}") from exc


class Workers:
    """`n` worker processes; `map` prepares items on them and yields the results in order."""

    def __init__(self, n: int):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self._procs: list[subprocess.Popen] = []
        self._fed: threading.Thread | None = None
        self._finished = False  # every batch of the last `map` read back
        try:
            for _ in range(n):
                proc = subprocess.Popen(worker_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        env=env, close_fds=True)
                self._procs.append(proc)
                _widen(proc.stdout)
        except OSError:
            self.close()  # the ones that did start
            raise

    def map(self, items: Iterable[tuple]) -> Iterator:
        """Each item's `prepare_all` result, in order; raises WorkerFailed if a worker dies."""
        items = list(items)
        batches = [items[i : i + BATCH_FILES] for i in range(0, len(items), BATCH_FILES)]
        procs = self._procs
        failed: list[BaseException] = []

        def feed() -> None:
            # Requests go out on their own thread: a worker blocked writing a result the
            # reader has not reached yet must never stop the others being fed.
            try:
                for i, b in enumerate(batches):
                    _send(procs[i % len(procs)].stdin, b)
            except (OSError, ValueError) as exc:
                failed.append(exc)

        feeder = self._fed = threading.Thread(target=feed, name="lore-prep-feed", daemon=True)
        self._finished = False
        feeder.start()
        for i, b in enumerate(batches):
            got = _receive(procs[i % len(procs)].stdout)
            if got is None or len(got) != len(b):
                raise WorkerFailed(f"a file preparation worker stopped ({failed[0] if failed else 'no reply'})")
            if i == len(batches) - 1:  # every reply read: the feeder has sent its last request
                feeder.join()
                self._finished = True
            for kind, sha, chunks, text, error, facts in got:
                yield Prepared(kind, sha, tuple(Chunk(*c) for c in chunks), text, error,
                               None if facts is None else tuple(NoteFact(*f) for f in facts))
        if not batches:
            feeder.join()
            self._finished = True

    def close(self) -> None:
        if not self._finished:
            # Trigger: the results were not all read (the scan failed writing what it had, a
            # worker died). Why: the feeding thread may be blocked writing to a worker that is
            # itself blocked writing results nobody reads, and closing that worker's input
            # waits for the blocked write: forever. Outcome: the workers are killed first;
            # the blocked write fails and the feeding thread ends.
            for p in self._procs:
                p.kill()
            if self._fed is not None:
                self._fed.join(timeout=5)
        for p in self._procs:
            try:
                p.stdin.close()
            except OSError:
                pass
        for p in self._procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            p.stdout.close()


def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """The worker's loop: a batch in, its files prepared out (as plain tuples, which pickle
    several times faster than the dataclasses), until the input ends."""
    while (batch := _receive(stdin)) is not None:
        _send(stdout, [(p.kind, p.sha256, [(c.start_line, c.end_line, c.kind, c.title, c.text, c.parts) for c in p.chunks],
                        p.text, p.error, None if p.facts is None else [
                            (f.subject, f.predicate, f.object, f.valid_from, f.valid_until, f.line) for f in p.facts])
                       for p in prepare_all(batch)])


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    serve(sys.stdin.buffer, sys.stdout.buffer)
