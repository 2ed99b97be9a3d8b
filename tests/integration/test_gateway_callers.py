"""Who may use the gateway: only a caller presenting the store's secret, never a web page,
never another local user. Each refusal stands beside the same request succeeding when made
legitimately, and is counted where it matters: the store's messages and what reached the
upstream."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.fake_models import FakeModels

NOBODY = 65534


@pytest.fixture
def gw(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    store = tmp_path / "store"
    log = open(tmp_path / "gateway.log", "w")  # noqa: SIM115 (the child's stderr)
    with FakeModels(lambda api, body: "fine") as fake:
        proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "gateway", "-v", "--store-dir", str(store),
                                 "--workspace", str(ws), "--upstream", fake.url], stdout=subprocess.PIPE,
                                stderr=log, text=True, env={**os.environ, "LORE_DISTILLER": "off"})
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            yield fake, url, store
        finally:
            proc.terminate()
            proc.wait(10)
            log.close()


def body(marker: str, api: str = "anthropic") -> bytes:
    if api == "chat":
        return json.dumps({"model": "gpt-x", "messages": [{"role": "user", "content": f"hello {marker}"}]}).encode()
    return json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 20, "system": [{"type": "text", "text": "terse"}],
                       "messages": [{"role": "user", "content": [{"type": "text", "text": f"hello {marker}"}]}]}).encode()


def post(url: str, data: bytes, **headers: str) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=data, method="POST",
                                 headers={"content-type": "application/json", "x-api-key": "sk-ant-x", **headers})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, data = r.status, r.read()
    except urllib.error.HTTPError as exc:
        status, data = exc.code, exc.read()
    return status, (json.loads(data) if data.startswith(b"{") else {"raw": data.decode()})


def captured(store: Path, marker: str) -> int:
    if not (store / "lore.db").exists():
        return 0
    c = sqlite3.connect(store / "lore.db")
    try:
        return c.execute("SELECT COUNT(*) FROM messages WHERE text LIKE ?", (f"%{marker}%",)).fetchone()[0]
    finally:
        c.close()


def test_without_the_secret_nothing_is_forwarded_or_captured_and_the_error_is_the_providers(gw):
    fake, url, store = gw
    base, secret = url.rsplit("/", 1)
    assert len(secret) >= 32 and base.startswith("http://127.0.0.1:")
    status, err = post(base + "/v1/messages", body("nosecret1"))
    assert status == 401 and err["type"] == "error" and err["error"]["type"] == "authentication_error"
    status, err = post(base + "/v1/chat/completions", body("nosecret2", "chat"), authorization="Bearer sk-x")
    assert status == 401 and set(err) == {"error"} and "message" in err["error"]  # OpenAI's shape
    status, _ = post(f"{base}/{'0' * len(secret)}/v1/messages", body("nosecret3"))  # a wrong secret
    assert status == 401
    status, _ = post(base + "/v1/messages", body("nosecret4"), **{"x-lore-token": "f" * 48})
    assert status == 401
    assert fake.seen == []
    # Control: the same requests with the secret, in the path or in the header, go through.
    status, answer = post(url + "/v1/messages", body("withsecret1"))
    assert status == 200 and answer["content"][0]["text"] == "fine"
    status, _ = post(base + "/v1/chat/completions", body("withsecret2", "chat"), authorization="Bearer sk-x",
                     **{"x-lore-token": secret})
    assert status == 200
    assert len(fake.seen) == 2 and captured(store, "withsecret1") == 1 and captured(store, "withsecret2") == 1
    assert all(secret not in p for _, p, _, _ in fake.seen)  # the prefix is ours, not the provider's
    assert not [v for k, v in fake.seen[-1][2] if k.lower() == "x-lore-token" or secret in v]  # nor the header
    status, _ = post(url + "/v1/messages", b"{not json")  # a body that fails open
    assert status == 400
    status, _ = post(url + "/v1/messages", body("nosecret5"), origin="http://127.0.0.1:1")  # refused with the secret
    assert status == 403
    log = (store.parent / "gateway.log").read_text()
    assert "refused a request" in log and secret not in log
    assert all(captured(store, f"nosecret{i}") == 0 for i in range(1, 6))  # counted now the table exists


def ask(url: str, method: str = "GET", data: bytes | None = None, **headers: str) -> tuple[int, dict]:
    """Like post(), but with only the headers given (an SDK's own set)."""
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_every_path_needs_the_secret_and_the_refusal_is_in_the_callers_sdk_shape(gw):
    """Not only the model calls: listing models and counting tokens are refused without the
    secret too, nothing forwarded; the refusal is OpenAI's shape for a bearer key with no
    Anthropic header (OpenAI's SDK on /v1/models), Anthropic's for its SDK on the same path.
    Control: the same calls with the secret reach the upstream."""
    fake, url, _ = gw
    base, secret = url.rsplit("/", 1)
    anthropic = {"x-api-key": "sk-ant-x", "anthropic-version": "2023-06-01"}
    count = json.dumps({"model": "m", "messages": [{"role": "user", "content": "count me"}]}).encode()
    status, err = ask(base + "/v1/models", authorization="Bearer sk-x")
    assert status == 401 and set(err) == {"error"} and err["error"]["code"] == "lore_gateway_refused", err
    status, err = ask(base + "/v1/models", **anthropic)
    assert status == 401 and err["type"] == "error" and err["error"]["type"] == "authentication_error", err
    status, err = ask(base + "/v1/messages/count_tokens", "POST", count, **anthropic, **{"content-type": "application/json"})
    assert status == 401 and err["type"] == "error", err
    for wrong in (secret[:16] + "0" * (len(secret) - 16), secret + "0", secret[:-1]):  # close is not enough
        assert ask(f"{base}/{wrong}/v1/models", **anthropic)[0] == 401, wrong
    assert fake.seen == []
    assert ask(url + "/v1/models", authorization="Bearer sk-x")[0] == 200
    assert ask(url + "/v1/messages/count_tokens", "POST", count, **anthropic, **{"content-type": "application/json"})[0] == 200
    assert len(fake.seen) == 2


@pytest.mark.parametrize("headers", [
    {"origin": "http://127.0.0.1:9999"},
    {"origin": "null"},
    {"sec-fetch-site": "cross-site"},
    {"sec-fetch-site": "same-site"},  # a page on another loopback port is "same-site"
    {"content-type": "text/plain"},
    {"content-type": "application/x-www-form-urlencoded"},
    {"content-type": "multipart/form-data; boundary=x"},
], ids=lambda h: ":".join(next(iter(h.items()))))
def test_browser_originated_requests_are_refused_even_with_the_secret(gw, headers):
    fake, url, store = gw
    status, err = post(url + "/v1/messages", body("browser1"), **headers)
    assert status == 403 and err["error"]["type"] == "permission_error"
    assert fake.seen == []
    status, _ = post(url + "/v1/messages", body("browser2"))  # control: the harness's own request
    assert status == 200 and captured(store, "browser2") == 1 and captured(store, "browser1") == 0


@pytest.fixture
def reachable(tmp_path):
    """tmp_path's ancestors made traversable by other users for the test (pytest makes them
    0700), and the folders named (a store lore made is 0700 too: as if its user had opened
    it), so that only the files' own modes stand between another user and the store."""
    changed: dict[Path, int] = {}

    def traversable(p: Path) -> None:
        mode = stat.S_IMODE(p.stat().st_mode)
        if not mode & 0o001:
            changed.setdefault(p, mode)
            p.chmod(mode | 0o011)

    def open_up(*folders: Path) -> None:
        # Called again before each probe: a pytest starting elsewhere on the machine resets
        # its `pytest-of-<user>` folder to 0700.
        for folder in folders:
            traversable(folder)
        p = tmp_path
        while True:
            traversable(p)
            if p.name.startswith("pytest-of-") or p == p.parent:
                break
            p = p.parent

    open_up()
    yield open_up
    for p, mode in changed.items():
        p.chmod(mode)


def _python_for_anyone() -> str:
    """A Python another user may execute (this one may sit in root's home)."""
    for candidate in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        p = Path(candidate)
        if p.exists() and all(stat.S_IMODE(d.stat().st_mode) & 0o001 for d in p.resolve().parents):
            return candidate
    raise RuntimeError("no Python that uid 65534 can execute (install python3 in /usr/bin)")


def as_nobody(script: str) -> subprocess.CompletedProcess:
    def drop() -> None:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)

    return subprocess.run([_python_for_anyone(), "-I", "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=60, preexec_fn=drop, cwd="/", env={"PATH": os.environ.get("PATH", "")})


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to uid 65534 needs root (the CI machine runs as root)")
def test_another_local_user_cannot_read_the_secret_nor_use_the_gateway(gw, reachable):
    fake, url, store = gw
    base, secret = url.rsplit("/", 1)
    path = store / "gateway.secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_text().strip() == secret
    probe = f"""
        import json, urllib.request, urllib.error
        try:
            open({str(path)!r}).read(); print("read")
        except PermissionError:
            print("denied")
        import os; print("exists" if os.path.exists({str(path)!r}) else "unreachable")
        try:
            open({str(store / "gateway.json")!r}).read(); print("registry-read")
        except PermissionError:
            print("registry-denied")
        body = json.dumps({{"model": "m", "max_tokens": 5, "messages": [{{"role": "user", "content": "other user nob7"}}]}})
        req = urllib.request.Request({base + "/v1/messages"!r}, data=body.encode(), headers={{"content-type": "application/json"}})
        try:
            urllib.request.urlopen(req, timeout=20); print("status 200")
        except urllib.error.HTTPError as exc:
            print("status", exc.code)
    """
    for _ in range(3):
        reachable(store)
        r = as_nobody(probe)
        out = r.stdout.split("\n")
        if out[1:2] != ["unreachable"]:  # else the folder was closed again under us: once more
            break
    assert out[:4] == ["denied", "exists", "registry-denied", "status 401"], (r.stdout, r.stderr)
    assert fake.seen == []
    # Control: the owner, with the secret, makes the same call and it is captured.
    status, _ = post(url + "/v1/messages", json.dumps({"model": "m", "max_tokens": 5, "messages": [
        {"role": "user", "content": "owner call nob8"}]}).encode())
    assert status == 200 and captured(store, "nob8") == 1 and captured(store, "nob7") == 0
    # And the gateway's command line, which any user may read from /proc, holds no secret.
    deadline = time.monotonic() + 5
    while True:
        pid = json.loads((store / "gateway.json").read_text())["pid"]
        if Path(f"/proc/{pid}/cmdline").exists() or time.monotonic() > deadline:
            break
    assert secret.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to uid 65534 needs root (the CI machine runs as root)")
def test_another_local_user_cannot_connect_to_the_hook_daemon(tmp_path, reachable):
    from lore_sidecar.hook.events import socket_path

    store = tmp_path / "store"
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "LORE_STORE_DIR": str(store), "LORE_DISTILLER": "off"}
    event = json.dumps({"session_id": "sock-1", "hook_event_name": "SessionStart", "cwd": str(ws)})
    r = subprocess.run([sys.executable, "-m", "lore_sidecar", "hook", "SessionStart", "--store-dir", str(store)],
                       input=event, capture_output=True, text=True, timeout=60, env=env, cwd=ws)
    assert r.returncode == 0, r.stderr
    sock = socket_path(store)
    try:
        deadline = time.monotonic() + 20
        while not sock.exists():
            assert time.monotonic() < deadline, "the hook daemon never bound its socket"
            time.sleep(0.1)
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600
        reachable(sock.parent)
        assert stat.S_IMODE(sock.parent.stat().st_mode) & 0o001  # control: the folder lets others reach it
        probe = f"""
            import socket
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect({str(sock)!r}); print("connected")
            except PermissionError:
                print("denied")
        """
        reachable(sock.parent)
        assert as_nobody(probe).stdout.strip() == "denied"
        import socket as _socket

        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)  # control: the owner connects
        s.connect(str(sock))
        s.close()
    finally:
        from tests.support import harness

        harness.stop_hook_daemons(store)


def test_run_gives_every_harness_a_base_url_carrying_the_secret(tmp_path):
    """`lore-sidecar run` for each harness: the base URL it hands over (in the environment)
    reaches the upstream through the gateway; the same URL without the secret is refused.
    Codex takes its base URL in argv, which other local accounts can read: there the URL has
    no secret, which comes in the environment for Codex to send as `x-lore-token`."""
    import re

    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("claude", "codex", "pi", "opencode"):
        exe = bindir / name
        exe.write_text('#!/bin/sh\necho "A=$ANTHROPIC_BASE_URL"\necho "O=$OPENAI_BASE_URL"\necho "ARGS=$*"\necho "T=$LORE_GATEWAY_TOKEN"\n')
        exe.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "LORE_DISTILLER": "off"}
    store = tmp_path / "store"
    chat = json.dumps({"model": "m", "messages": [{"role": "user", "content": "via run"}]}).encode()
    with FakeModels(lambda api, body: "through run") as fake:
        try:
            for name in ("claude", "codex", "pi", "opencode"):
                r = subprocess.run([sys.executable, "-m", "lore_sidecar", "run", name, "--store-dir", str(store),
                                    "--upstream", fake.url], capture_output=True, text=True, timeout=60, env=env)
                assert r.returncode == 0, r.stderr
                got = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line[:5])
                secret = (store / "gateway.secret").read_text().strip()
                if name == "codex":
                    assert secret not in got["ARGS"] and got["T"] == secret  # environment, not argv
                    base = re.search(r'model_providers\.lore\.base_url="([^"]+)"', got["ARGS"]).group(1)
                    assert 'env_http_headers={"x-lore-token"="LORE_GATEWAY_TOKEN"}' in got["ARGS"]
                    payload = json.dumps({"model": "m", "input": "via run"}).encode()
                    assert post(base + "/responses", payload, **{"x-lore-token": got["T"]})[0] == 200
                    assert post(base + "/responses", payload)[0] == 401  # control: without the header
                    continue
                else:
                    targets = [(got["A"] + "/v1/messages", {"model": "m", "max_tokens": 5, "messages": [
                        {"role": "user", "content": "via run"}]})]
                    if name != "claude":
                        targets.append((got["O"] + "/chat/completions", json.loads(chat)))
                for target, payload in targets:
                    assert f"/{secret}/" in target, (name, target)
                    status, _ = post(target, json.dumps(payload).encode())
                    assert status == 200, (name, target)
                    status, _ = post(target.replace(f"/{secret}", ""), json.dumps(payload).encode())
                    assert status == 401, (name, target)  # control: without the secret, refused
        finally:
            # Read before the stop: a gateway that has stopped removes its registry entry.
            registry = (store / "gateway.json").read_text()
            registry_mode = stat.S_IMODE((store / "gateway.json").stat().st_mode)
            os.kill(json.loads(registry)["pid"], 15)
    assert registry_mode == 0o600
    assert secret not in registry


@pytest.fixture
def in_tmp():
    """A private folder directly in /tmp, where the hook socket's fallback folder lives (its
    checks apply only there), removed after the test."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="lore-test-", dir="/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _posing_listener(path: Path):
    """Something listening on `path` that answers every line as a daemon would."""
    import socket as _socket
    import threading

    server = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    server.settimeout(0.2)
    stop = threading.Event()

    def answer() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    conn.recv(65536)
                    conn.sendall(b'{"output": "posing"}\n')
                except OSError:
                    pass

    threading.Thread(target=answer, daemon=True).start()

    def close() -> None:
        stop.set()
        server.close()

    return close


def test_neither_end_of_the_hook_socket_uses_a_fallback_folder_others_can_enter(in_tmp):
    """The /tmp fallback folder must be closed to others: the hook client does not talk to
    whatever listens in an open one (it could pose as the daemon), and the daemon does not bind
    there. Control: the same folder made 0700 again, both ends use it."""
    from lore_sidecar.hook.command import ask_daemon
    from lore_sidecar.hook.daemon import HookDaemon
    from lore_sidecar.hook.events import private_socket_dir

    pose = in_tmp / "pose.sock"
    close = _posing_listener(pose)
    try:
        assert ask_daemon(pose, {"event": "x"}, 5.0) == {"output": "posing"}  # control: our own folder
        in_tmp.chmod(0o755)
        assert not private_socket_dir(pose, create=False)
        assert ask_daemon(pose, {"event": "x"}, 5.0) is None
    finally:
        close()
    daemon = HookDaemon(None, in_tmp)
    assert daemon.path.parent == in_tmp  # the store's own socket name, in a folder of /tmp
    daemon.path.write_text("planted")  # what sits at the name in a folder others can enter
    with pytest.raises(OSError):
        daemon.bind()
    assert daemon.path.read_text() == "planted"  # refused before anything there was touched
    in_tmp.chmod(0o700)  # control: closed to others, the daemon binds (a leftover replaced), 0600
    server = daemon.bind()
    try:
        assert server is not None and stat.S_IMODE(daemon.path.stat().st_mode) == 0o600
    finally:
        server.close()
    for p in in_tmp.iterdir():
        p.unlink()
    in_tmp.rmdir()  # gone: the daemon's side makes it again, closed
    assert private_socket_dir(pose, create=True)  # made again, 0700
    assert stat.S_IMODE(in_tmp.stat().st_mode) == 0o700


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to uid 65534 needs root (the CI machine runs as root)")
def test_a_hook_socket_folder_another_user_owns_is_not_used_even_closed(in_tmp):
    from lore_sidecar.hook.command import ask_daemon
    from lore_sidecar.hook.events import private_socket_dir

    pose = in_tmp / "pose.sock"
    close = _posing_listener(pose)
    try:
        assert private_socket_dir(pose, create=False)  # control: ours, 0700
        os.chown(in_tmp, NOBODY, NOBODY)  # the same folder, 0700, but another user's
        assert stat.S_IMODE(in_tmp.stat().st_mode) == 0o700
        assert not private_socket_dir(pose, create=False)
        assert ask_daemon(pose, {"event": "x"}, 5.0) is None
        os.chown(in_tmp, os.getuid(), os.getgid())
        assert ask_daemon(pose, {"event": "x"}, 5.0) == {"output": "posing"}  # control: ours again
    finally:
        close()


def test_a_loosened_secret_file_is_closed_again_and_keeps_its_secret(tmp_path):
    """security.md: the secret file is 0600, "a looser mode is tightened when read" (a copy or a
    chmod may have opened it to the group or to everyone). Control: the secret is the same one."""
    from lore_sidecar.gateway.guard import SECRET_FILE, gateway_secret

    store = tmp_path / "store"
    secret = gateway_secret(store)
    path = store / SECRET_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # control: made closed
    for loose in (0o644, 0o640, 0o604):
        path.chmod(loose)
        assert gateway_secret(store) == secret
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, oct(loose)
