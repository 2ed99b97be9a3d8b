"""A gateway that `lore-sidecar run` started stops by itself once no run needs it.

Each `run` holds a lease — a file named by its pid under `<store>/gateway.leases/`, holding
the process's start time where the system tells it (Linux) — from before it looks for a
gateway until its harness exits. A lease counts while its pid names a live process started at
that time: a killed run's pid given to an unrelated process no longer holds the gateway. A leased gateway exits when no lease
names a live process and it has answered nothing for `gatewayLingerMs` (so a harness that
sits idle for hours keeps its gateway, and one started again within the linger finds it
warm). A gateway started by hand (`lore-sidecar gateway`) serves until it is stopped.

The race with a new run: the gateway first moves its registry (`gateway.json`) aside, so no
later run can find it, then looks at the leases once more; a run that found it before the
move had already taken its lease, and the gateway stays.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from lore_sidecar.store.filesystem import make_store_dir

LEASES = "gateway.leases"


@contextmanager
def lease(store: Path) -> Iterator[None]:
    """This process's lease on the store's gateway, for the duration of the block. A store
    that cannot hold one (read-only, full) runs without: the gateway then leaves once idle."""
    mine: Path | None = None
    try:
        make_store_dir(store)
        (store / LEASES).mkdir(mode=0o700, exist_ok=True)
        mine = store / LEASES / str(os.getpid())
        fd = os.open(mine, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, (started(os.getpid()) or "").encode())
        finally:
            os.close(fd)
    except OSError:
        mine = None
    try:
        yield
    finally:
        if mine is not None:
            mine.unlink(missing_ok=True)


def live_leases(store: Path) -> int:
    """How many leases name a live process; a dead one's file is removed."""
    live = 0
    try:
        names = os.listdir(store / LEASES)
    except OSError:
        return 0
    for name in names:
        if not name.isdigit():
            continue
        try:
            os.kill(int(name), 0)
        except ProcessLookupError:
            (store / LEASES / name).unlink(missing_ok=True)
            continue
        except PermissionError:
            pass  # alive, another user's pid (a store is private, so not expected)
        if _reused(store / LEASES / name, int(name)):
            (store / LEASES / name).unlink(missing_ok=True)
            continue
        live += 1
    return live


def started(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, Linux's /proc/<pid>/stat field
    22), or None where the system does not say."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # after the command name, which may hold spaces
    return fields[19] if len(fields) > 19 else None


def _reused(lease_file: Path, pid: int) -> bool:
    """The lease's pid now names another process than the one that took it (started at
    another time). A lease without a start time (an older version's, or a system without
    /proc) is judged by its pid alone."""
    try:
        taken = lease_file.read_text().strip()
    except OSError:
        return False
    now = started(pid)
    return bool(taken) and now is not None and now != taken


async def watch(store: Path, registry: Path, linger_s: float, quiet_for: Callable[[], float],
                stop: asyncio.Event) -> None:
    """Set `stop` once no live lease holds this gateway and it has been quiet for `linger_s`
    (`quiet_for()`: seconds since it last answered, 0 while a request is in flight)."""
    step = min(15.0, max(0.25, linger_s / 4))
    while not stop.is_set():
        await asyncio.sleep(step)
        if quiet_for() < linger_s or live_leases(store):
            continue
        aside = _move_aside(registry)
        if live_leases(store):  # a run found us before the move: keep serving it
            if aside is not None and not registry.exists():
                os.replace(aside, registry)
            continue
        if aside is not None:
            aside.unlink(missing_ok=True)
        stop.set()


def _move_aside(registry: Path) -> Path | None:
    """Our registry moved where no run looks; None when it is not ours (or not there)."""
    try:
        if json.loads(registry.read_text()).get("pid") != os.getpid():
            return None
        aside = registry.with_name(f"{registry.name}.closing.{os.getpid()}")
        os.replace(registry, aside)
        return aside
    except (OSError, ValueError):
        return None


class Quiet:
    """Seconds since the gateway last answered (0 while any request is in flight)."""

    def __init__(self) -> None:
        self.inflight = 0
        self.last = time.monotonic()

    def begin(self) -> None:
        self.inflight += 1

    def end(self) -> None:
        self.inflight -= 1
        self.last = time.monotonic()

    def __call__(self) -> float:
        return 0.0 if self.inflight else time.monotonic() - self.last
