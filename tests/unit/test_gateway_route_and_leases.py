"""The gateway's way out and its lifetime, as pure parts: which proxy a request to the
provider goes through (gateway/upstream.py: loopback never proxied, whatever its address in
127/8), which leases still hold a gateway `run` started (gateway/leases.py: a dead run's
lease neither counted nor kept), and its quiet clock (renewed by every answer)."""

from __future__ import annotations

import base64
import os
import subprocess
import sys

from yarl import URL

from lore_sidecar.gateway import leases
from lore_sidecar.gateway.upstream import ProxyRoute


def _route(monkeypatch, **env: str) -> ProxyRoute:
    for k in list(os.environ):
        if k.lower().endswith("_proxy"):
            monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return ProxyRoute()


def test_no_loopback_address_is_sent_to_the_proxy_a_remote_provider_is(monkeypatch):
    # Reviewer round 2026-12-07-gateway-recall, gr-proxy-loopback-net-proxied: the whole of
    # 127/8 is this machine's loopback, which a proxy cannot reach.
    route = _route(monkeypatch, http_proxy="http://alice:s3cret@proxy.example:3128",
                   https_proxy="http://alice:s3cret@proxy.example:3128")
    for upstream in ("http://127.0.0.2:8080/v1/messages", "http://127.1.2.3:9/v1/models",
                     "http://127.0.0.1:9/v1/messages", "http://localhost:9/v1/messages", "http://[::1]:9/v1"):
        assert route(URL(upstream)) == (None, None), upstream
    # The control: a provider elsewhere goes through the proxy, its credentials apart.
    alice = {"Proxy-Authorization": "Basic " + base64.b64encode(b"alice:s3cret").decode()}
    assert route(URL("https://api.anthropic.com/v1/messages")) == (URL("http://proxy.example:3128"), alice)
    assert route(URL("http://128.0.0.1:9/v1")) == (URL("http://proxy.example:3128"), alice)


def test_the_proxys_credentials_are_sent_as_the_user_wrote_them_in_its_url(monkeypatch):
    """rev17: a proxy URL's name and password are %-escaped where they hold ':' '@' '/' or
    '%' (a password like p@ss:w/rd must be); the Basic credentials carry them decoded (RFC
    7617), and a name without a password is a name with an empty one, not no credentials."""
    def basic(pair: bytes) -> dict[str, str]:
        return {"Proxy-Authorization": "Basic " + base64.b64encode(pair).decode()}

    route = _route(monkeypatch, https_proxy="http://al%40corp:p%40ss%3Aw%2Frd%25@proxy.example:3128")
    assert route(URL("https://api.anthropic.com/v1/messages")) == (URL("http://proxy.example:3128"),
                                                                    basic(b"al@corp:p@ss:w/rd%"))
    route = _route(monkeypatch, https_proxy="http://token123@proxy.example:3128")
    assert route(URL("https://api.anthropic.com/v1/messages")) == (URL("http://proxy.example:3128"), basic(b"token123:"))
    route = _route(monkeypatch, https_proxy="http://proxy.example:3128")  # the control: none at all
    assert route(URL("https://api.anthropic.com/v1/messages")) == (URL("http://proxy.example:3128"), None)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_dead_runs_lease_is_removed_and_not_counted_a_live_one_is(tmp_path):
    # Reviewer round 2026-12-07-gateway-recall, gr-lease-of-a-dead-run-counted: a run that died
    # without removing its lease (killed) must not keep the gateway forever.
    held = tmp_path / leases.LEASES
    held.mkdir()
    dead = _dead_pid()
    (held / str(dead)).touch()
    (held / "notes").touch()  # not a pid: ignored
    assert leases.live_leases(tmp_path) == 0
    assert not (held / str(dead)).exists()
    # The control: this live process's lease counts (and stays), beside another dead one.
    dead = _dead_pid()
    (held / str(dead)).touch()
    with leases.lease(tmp_path):
        assert (held / str(os.getpid())).exists()
        assert leases.live_leases(tmp_path) == 1
        assert (held / str(os.getpid())).exists() and not (held / str(dead)).exists()
    assert leases.live_leases(tmp_path) == 0


def test_the_quiet_clock_is_zero_while_answering_and_starts_again_at_each_answer(monkeypatch):
    # Reviewer round 2026-12-07-gateway-recall, gr-quiet-not-renewed-by-answers: a gateway that
    # answered a moment ago has not been quiet for the linger, however long it has lived.
    clock = [1000.0]
    monkeypatch.setattr(leases.time, "monotonic", lambda: clock[0])
    quiet = leases.Quiet()
    clock[0] += 600
    assert quiet() == 600  # the control: nothing answered for ten minutes
    quiet.begin()
    clock[0] += 30
    assert quiet() == 0.0  # an answer in flight
    quiet.end()
    clock[0] += 5
    assert quiet() == 5


HOLDER = ("import pathlib, sys, time\n"
          "from lore_sidecar.gateway import leases\n"
          "with leases.lease(pathlib.Path(sys.argv[1])):\n"
          "    print('held', flush=True)\n"
          "    time.sleep(600)\n")


def _holder(store) -> subprocess.Popen:
    """A `run` holding its lease (until killed)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(store)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "held\n"
    return proc


def test_a_killed_runs_lease_whose_pid_now_names_an_unrelated_process_is_removed_and_not_counted(tmp_path):
    """A run SIGKILLed keeps its lease file; when the kernel gives its pid to an unrelated
    process, a lease judged by the pid alone was live for as long as that process lived (a
    long-lived daemon: for good), and the gateway with it. The pid reuse is made by renaming
    the dead run's lease to the pid of a live `sleep`."""
    held = tmp_path / leases.LEASES
    killed = _holder(tmp_path)
    killed.kill()
    killed.wait()
    assert (held / str(killed.pid)).exists()  # a SIGKILL removes nothing
    unrelated = subprocess.Popen(["sleep", "600"])
    live = None
    try:
        os.replace(held / str(killed.pid), held / str(unrelated.pid))
        assert leases.live_leases(tmp_path) == 0
        assert not (held / str(unrelated.pid)).exists()
        # The control: a live run's lease counts, and stays.
        live = _holder(tmp_path)
        assert leases.live_leases(tmp_path) == 1 and (held / str(live.pid)).exists()
    finally:
        unrelated.kill()
        if live is not None:
            live.kill()


def test_a_lease_without_a_start_time_is_judged_by_its_pid_alone(tmp_path):
    """Reviewer round rev22 (rev22-empty-lease-reused): a lease an older version took (an
    empty file) or one taken where the system gives no start time holds the gateway while its
    pid lives, and stays; it is not taken for a reused pid. The control: dead, it goes."""
    held = tmp_path / leases.LEASES
    held.mkdir()
    older = subprocess.Popen(["sleep", "600"])
    try:
        (held / str(older.pid)).touch()
        assert leases.live_leases(tmp_path) == 1
        assert (held / str(older.pid)).exists()
    finally:
        older.kill()
        older.wait()
    assert leases.live_leases(tmp_path) == 0
    assert not (held / str(older.pid)).exists()


GROWER = ("import ctypes, pathlib, sys\n"
          "from lore_sidecar.gateway import leases\n"
          "with leases.lease(pathlib.Path(sys.argv[1])):\n"
          "    ballast = bytearray(64 << 20)\n"
          "    for i in range(0, len(ballast), 4096):\n"
          "        ballast[i] = 1\n"
          "    if sys.argv[2]:\n"
          "        ctypes.CDLL(None).prctl(15, sys.argv[2].encode(), 0, 0, 0)  # PR_SET_NAME\n"
          "    print('held', flush=True)\n"
          "    sys.stdin.readline()\n")


def _grower(store, name: str) -> subprocess.Popen:
    """A `run` holding its lease, whose memory grows (64 MB touched) after it took it and whose
    command name is then `name` (if any); it holds the lease until its stdin closes."""
    proc = subprocess.Popen([sys.executable, "-c", GROWER, str(store), name], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "held\n"
    return proc


def test_a_live_runs_lease_still_counts_after_its_memory_grows(tmp_path):
    """Reviewer round rev22 (rev22-started-wrong-field): the start time is /proc/<pid>/stat's
    field 22, which never changes while the process lives; a neighbouring field (its size, its
    resident memory, its times) changes, and the live run's lease was taken for a reused pid and
    removed: its gateway left under it."""
    held = tmp_path / leases.LEASES
    run = _grower(tmp_path, "")
    try:
        assert leases.live_leases(tmp_path) == 1
        assert (held / str(run.pid)).exists()
    finally:
        run.stdin.close()
        run.wait()
    assert leases.live_leases(tmp_path) == 0


def test_a_live_runs_lease_still_counts_when_its_command_name_holds_a_parenthesis(tmp_path):
    """Reviewer round rev22 (rev22-started-first-paren): /proc/<pid>/stat puts the command
    name in parentheses and the name may hold ") " itself (any program's name, set freely):
    the fields are counted after the last ")", or a run named so reads another field as its
    start time once renamed, and its live lease is removed."""
    held = tmp_path / leases.LEASES
    run = _grower(tmp_path, "run) 1 2 3 4 5")
    try:
        assert ") 1 2 3" in open(f"/proc/{run.pid}/stat").read()  # the name did change
        assert leases.live_leases(tmp_path) == 1
        assert (held / str(run.pid)).exists()
    finally:
        run.stdin.close()
        run.wait()
