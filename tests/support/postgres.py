"""A real, throwaway PostgreSQL for the team backend's tests: Debian's `postgresql` package
(installed by the test set-up with apt-get when missing, as root, as on CI), a cluster made
by `initdb` in a temporary folder owned by the `postgres` user, listening on 127.0.0.1 only
at a free port with trust authentication, stopped (and deleted) when the test is done."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self) -> None:
        self.bin = bin_dir()
        self.root = Path(tempfile.mkdtemp(prefix="lore-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.root.chmod(0o755)
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        self._as_user([str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync",
                       "-E", "UTF8"], quiet=True)

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
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)
