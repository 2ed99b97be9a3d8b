"""A real, throwaway PostgreSQL for the team backend's tests: Debian's `postgresql` package
(installed by the test set-up with apt-get when missing, as root, as on CI), a cluster made
by `initdb` in a temporary folder owned by the `postgres` user, listening on 127.0.0.1 only
at a free port with trust authentication, stopped (and deleted) when the test is done — or,
if the test process dies first, by a small watchdog the cluster starts beside itself."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        if os.geteuid() != 0 or not shutil.which("apt-get"):
            raise RuntimeError("the team backend's tests need PostgreSQL: apt-get install -y postgresql")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, timeout=900, stdout=subprocess.DEVNULL)
        subprocess.run(["apt-get", "install", "-y", "-qq", "postgresql"], check=True, env=env, timeout=1800,
                       stdout=subprocess.DEVNULL)
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent


WATCHDOG = """
import os, shutil, subprocess, sys, time
parent, root, pg_ctl, data = int(sys.argv[1]), *sys.argv[2:]
while os.path.isdir(root) and os.getppid() == parent:
    time.sleep(1)
if os.path.isdir(root):
    stop = [pg_ctl, "-D", data, "-m", "immediate", "-w", "stop"]
    if os.geteuid() == 0:
        stop = ["runuser", "-u", "postgres", "--", *stop]
    subprocess.run(stop, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, cwd="/")
    shutil.rmtree(root, ignore_errors=True)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self) -> None:
        self.bin = bin_dir()
        # As root the server runs as `postgres`, which cannot enter root's 0700 pytest folders
        # (where TMPDIR points during the suite), so its folder is in the system temp dir; the
        # watchdog and the failure paths below make sure it leaves nothing there.
        self.root = Path(tempfile.mkdtemp(prefix="lore-pg-", dir="/tmp" if os.geteuid() == 0 else None))
        self.data = self.root / "data"
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        try:
            self.root.chmod(0o755)
            if os.geteuid() == 0:
                shutil.chown(self.root, "postgres", "postgres")
            self._watchdog()
            self._as_user([str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
                           "--no-sync", "-E", "UTF8"], quiet=True)
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise

    def _watchdog(self) -> None:
        """A process that outlives this one: once its parent (this test process) is gone with
        the folder still there, it stops the server and deletes the folder; once the folder
        is gone (the normal end), it exits. Its own session, so a ^C to the suite's group
        does not stop it before it has cleaned up."""
        subprocess.Popen([sys.executable, "-c", WATCHDOG, str(os.getpid()), str(self.root),
                          str(self.bin / "pg_ctl"), str(self.data)],
                         start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, cwd="/")

    def _as_user(self, args: list[str], quiet: bool = False) -> None:
        if os.geteuid() == 0:
            args = ["runuser", "-u", "postgres", "--", *args]
        subprocess.run(args, check=True, timeout=120, cwd=self.root,
                       stdout=subprocess.DEVNULL if quiet else None, stderr=subprocess.DEVNULL if quiet else None)

    def start(self) -> None:
        opts = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=off -c max_connections=200"
        self._as_user([str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", opts, "-l", str(self.root / "log"), "-w",
                       "start"], quiet=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.1)
        raise RuntimeError("PostgreSQL did not start")

    def stop(self) -> None:
        self._as_user([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"], quiet=True)

    def __enter__(self) -> Cluster:
        try:
            self.start()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)
