"""The gateway on its own: loopback only, streaming passthrough with breakpoints added,
usage fed back, fail-open on a wedged store, sessions told apart, and `run` starting (then
reusing) a gateway for a harness."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from lore_sidecar.gateway.sessions import session_of, sse_events, usage_from_events
from tests.support.fake_models import FakeModels


def start(store: Path, ws: Path, upstream: str, **env: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "gateway", "--store-dir", str(store), "--workspace",
                             str(ws), "--upstream", upstream], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env={**os.environ, "LORE_DISTILLER": "off", **env})
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def post(url: str, body: dict, **headers: str) -> str:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={
        "content-type": "application/json", "x-api-key": "sk-test", **headers})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read().decode()


BODY = {"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": True,
        "system": [{"type": "text", "text": "You are terse."}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "say hi (marker gwq1)"}]}]}


def test_the_gateway_streams_answers_through_adds_breakpoints_and_records_the_conversation(tmp_path, workspace):
    store = tmp_path / "store"
    with FakeModels(lambda api, body: "hi there") as fake:
        proc, url = start(store, workspace, fake.url)
        try:
            assert url.startswith("http://127.0.0.1:")
            direct = post(fake.url + "/v1/messages", BODY)
            through = post(url + "/v1/messages?beta=true", BODY)
            assert through.replace("msg_fake_2", "msg_fake_1") == direct  # the stream, byte for byte
            sent = fake.requests[-1]
            assert sent[1] == "/v1/messages"
            assert "cache_control" in json.dumps(sent[2]) and "cache_control" not in json.dumps(BODY)
            models = urllib.request.urlopen(url + "/v1/models", timeout=10).read()  # any other path: proxied
            assert json.loads(models)["data"][0]["id"] == "fake-model"
            health = json.loads(urllib.request.urlopen(url + "/lore/health", timeout=10).read())
            assert health["assembled"] == 1
        finally:
            proc.terminate()
            proc.wait(10)
    c = sqlite3.connect(store / "lore.db")
    assert c.execute("SELECT COUNT(*) FROM messages WHERE text LIKE '%gwq1%'").fetchone()[0] == 1


def test_a_wedged_store_sends_the_original_body_upstream_within_the_bound(tmp_path, workspace):
    store = tmp_path / "store"
    with FakeModels(lambda api, body: "ok") as fake:
        proc, url = start(store, workspace, fake.url, LORE_GATEWAY_TIMEOUT_MS="300")
        try:
            post(url + "/v1/messages", BODY)  # opens the store
            lock = sqlite3.connect(store / "lore.db", timeout=10, isolation_level=None)
            lock.execute("BEGIN EXCLUSIVE")
            try:
                other = {**BODY, "messages": [*BODY["messages"], {"role": "assistant", "content": "hi"},
                                              {"role": "user", "content": [{"type": "text", "text": "again"}]}]}
                t = time.monotonic()
                assert "ok" in post(url + "/v1/messages", other)
                assert time.monotonic() - t < 5
                assert fake.requests[-1][2] == other  # untouched: not even a breakpoint
            finally:
                lock.execute("ROLLBACK")
                lock.close()
            health = json.loads(urllib.request.urlopen(url + "/lore/health", timeout=10).read())
            assert health["passthrough"] >= 1
        finally:
            proc.terminate()
            proc.wait(10)


def test_the_gateway_binds_loopback_only(tmp_path, workspace):
    r = subprocess.run([sys.executable, "-m", "lore_sidecar", "gateway", "--host", "0.0.0.0", "--store-dir",
                        str(tmp_path / "s")], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "loopback only" in r.stderr


def test_sessions_are_told_apart_and_usage_is_read_from_each_dialect():
    claude = {"metadata": {"user_id": json.dumps({"device_id": "d", "session_id": "abc-123"})}, "messages": []}
    assert session_of("anthropic-messages", {}, claude) == "abc-123"
    assert session_of("openai-responses", {}, {"prompt_cache_key": "conv-9", "input": []}) == "conv-9"
    one = session_of("openai-chat", {}, {"messages": [{"role": "user", "content": "first"}]})
    two = session_of("openai-chat", {}, {"messages": [{"role": "user", "content": "other"}]})
    assert one != two and one == session_of("openai-chat", {}, {"messages": [{"role": "user", "content": "first"}, {}]})
    events, rest = sse_events(b'event: message_start\ndata: {"type":"message_start","message":{"usage":'
                              b'{"input_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":7}}}\n\n'
                              b'data: {"type":"message_delta","usage":{"output_tokens":9}}\n\ndata: {"partial')
    assert rest == b'data: {"partial'
    assert usage_from_events("anthropic-messages", events) == {
        "input_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 7, "output_tokens": 9}
    chat = [{"usage": {"prompt_tokens": 50, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 40}}}]
    assert usage_from_events("openai-chat", chat)["cache_read_input_tokens"] == 40
    resp = [{"type": "response.completed", "response": {"usage": {"input_tokens": 30, "output_tokens": 2}}}]
    assert usage_from_events("openai-responses", resp)["input_tokens"] == 30


def test_run_starts_a_gateway_once_and_points_the_harness_at_it(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "claude"
    fake.write_text("#!/bin/sh\necho \"$ANTHROPIC_BASE_URL $*\"\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "LORE_DISTILLER": "off"}
    store = tmp_path / "store"
    runs = [subprocess.run([sys.executable, "-m", "lore_sidecar", "run", "claude", "--store-dir", str(store), "--",
                            "-p", f"hello {i}", "--store-dir", "x"], capture_output=True, text=True, timeout=60, env=env)
            for i in range(2)]
    try:
        urls = [r.stdout.split()[0] for r in runs]
        assert all(r.returncode == 0 for r in runs) and urls[0] == urls[1] and urls[0].startswith("http://127.0.0.1:")
        # The agent's own arguments first, untouched (lore's MCP tools follow: test_run_tools.py).
        assert runs[0].stdout.split()[1:6] == ["-p", "hello", "0", "--store-dir", "x"]
        assert json.loads(urllib.request.urlopen(urls[0] + "/lore/health", timeout=10).read())["ok"] is True
    finally:
        pid = json.loads((store / "gateway.json").read_text())["pid"]
        os.kill(pid, 15)


def test_an_unreachable_upstream_is_an_api_error_the_harness_can_read(tmp_path, workspace):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    s.close()  # nothing listens there now
    proc, url = start(tmp_path / "store", workspace, dead)
    try:
        try:
            post(url + "/v1/messages", BODY)
            raise AssertionError("expected an error status")
        except urllib.error.HTTPError as exc:
            assert exc.code == 502
            body = json.loads(exc.read())
            assert body["type"] == "error" and "could not be reached" in body["error"]["message"]
    finally:
        proc.terminate()
        proc.wait(10)


def _marks(obj) -> int:
    if isinstance(obj, dict):
        return ("cache_control" in obj) + sum(_marks(v) for v in obj.values())
    return sum(_marks(v) for v in obj) if isinstance(obj, list) else 0


def test_never_more_than_four_breakpoints_go_upstream_even_beside_the_harness_own(tmp_path, workspace):
    """Anthropic refuses a request with more than four `cache_control` blocks: whether lore
    passes the body at layer 0 or compacts it, the harness's own markers plus lore's stay <= 4."""
    mark = {"type": "ephemeral"}
    own = {"model": "claude-sonnet-4-5", "max_tokens": 50,
           "tools": [{"name": "Read", "description": "read", "input_schema": {"type": "object"}, "cache_control": mark}],
           "system": [{"type": "text", "text": "a", "cache_control": mark}, {"type": "text", "text": "b", "cache_control": mark}]}
    filler = "lorem ipsum dolor sit amet " * 1200  # ~8k tokens a turn
    turns = []
    for i in range(40):
        turns += [{"role": "user", "content": [{"type": "text", "text": f"turn {i} {filler}"}]},
                  {"role": "assistant", "content": [{"type": "text", "text": f"ok {i}"}]}]
    turns[-1]["content"][0]["cache_control"] = mark  # the harness's fourth
    turns.append({"role": "user", "content": [{"type": "text", "text": "last (marker bp4)", "cache_control": mark}]})
    small = {**own, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": mark}]}]}
    with FakeModels(lambda api, body: "fine") as fake:
        proc, url = start(tmp_path / "store", workspace, fake.url, LORE_GATEWAY_TIMEOUT_MS="120000")
        try:
            post(url + "/v1/messages", {**small, "stream": False})
            assert _marks(fake.requests[-1][2]) == 4  # layer 0: the harness's own four, none added
            big = {**own, "messages": turns, "metadata": {"user_id": json.dumps({"session_id": "bp-big"})}}
            assert _marks(big) == 5  # control: the harness itself placed five
            post(url + "/v1/messages", big)
            sent = fake.requests[-1][2]
            assert len(sent["messages"]) < len(turns)  # compacted: lore placed its markers
            assert _marks(sent) <= 4
        finally:
            proc.terminate()
            proc.wait(10)


def test_breakpoints_the_harness_put_only_on_tools_and_system_are_left_alone(tmp_path, workspace):
    """Layer 0 adds lore's markers only to a body with none anywhere: a harness that spent all
    four on tools and system (none in its messages) gets its body forwarded as it was, not a
    fifth marker on its last message. Control: the same body without markers gets lore's two."""
    mark = {"type": "ephemeral"}
    own = {"model": "claude-sonnet-4-5", "max_tokens": 50,
           "tools": [{"name": "Read", "description": "read", "input_schema": {"type": "object"}, "cache_control": mark}],
           "system": [{"type": "text", "text": t, "cache_control": mark} for t in ("a", "b", "c")],
           "messages": [{"role": "user", "content": [{"type": "text", "text": "hi (marker bpts)"}]}]}
    bare = json.loads(json.dumps(own).replace(', "cache_control": {"type": "ephemeral"}', ""))
    assert _marks(own) == 4 and _marks(bare) == 0
    with FakeModels(lambda api, body: "fine") as fake:
        proc, url = start(tmp_path / "store", workspace, fake.url, LORE_GATEWAY_TIMEOUT_MS="120000")
        try:
            post(url + "/v1/messages", own)
            assert fake.requests[-1][2] == own  # the harness's four, none added, none moved
            post(url + "/v1/messages", bare)
            assert _marks(fake.requests[-1][2]) == 2  # control: lore marks a body that has none
        finally:
            proc.terminate()
            proc.wait(10)


def test_the_x_lore_session_header_names_the_session(tmp_path, workspace):
    store = tmp_path / "store"
    first = {**BODY, "stream": False, "messages": [{"role": "user", "content": [{"type": "text", "text": "one xls1"}]}]}
    other = {**BODY, "stream": False, "messages": [{"role": "user", "content": [{"type": "text", "text": "two xls2"}]}]}
    with FakeModels(lambda api, body: "ok") as fake:
        proc, url = start(store, workspace, fake.url)
        try:
            post(url + "/v1/messages", first, **{"x-lore-session": "my-named-session"})
            post(url + "/v1/messages", other, **{"x-lore-session": "my-named-session"})
            post(url + "/v1/messages", {**first, "messages": [{"role": "user", "content": "three xls3"}]})
        finally:
            proc.terminate()
            proc.wait(10)
    c = sqlite3.connect(store / "lore.db")
    sessions = dict(c.execute("SELECT substr(text, instr(text, 'xls'), 4), session_id FROM messages WHERE text LIKE '%xls%'"))
    assert sessions["xls1"] == sessions["xls2"] == "my-named-session"
    assert sessions["xls3"] != "my-named-session"  # control: without the header, a session of its own


# -- independent review round 2026-12-03 (tools/rounds/2026-12-03-fresh-gateway-ask-wire.py) ---------

def test_openai_usage_counts_cached_prompt_tokens_once_as_cache_reads_not_again_as_input():
    """OpenAI's prompt_tokens / input_tokens include the cached ones: the usage fed back to
    lore/recordUsage splits them, so calibration sees 10 uncached + 40 read, not 50 + 40."""
    chat = [{"usage": {"prompt_tokens": 50, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 40}}}]
    assert usage_from_events("openai-chat", chat) == {
        "input_tokens": 10, "cache_read_input_tokens": 40, "cache_creation_input_tokens": 0, "output_tokens": 3}
    resp = [{"type": "response.completed", "response": {"usage": {
        "input_tokens": 30, "output_tokens": 2, "input_tokens_details": {"cached_tokens": 24}}}}]
    assert usage_from_events("openai-responses", resp) == {
        "input_tokens": 6, "cache_read_input_tokens": 24, "cache_creation_input_tokens": 0, "output_tokens": 2}
    # Control: with nothing cached every prompt token is uncached input.
    plain = [{"usage": {"prompt_tokens": 50, "completion_tokens": 3}}]
    assert usage_from_events("openai-chat", plain)["input_tokens"] == 50


def test_run_asks_its_gateway_directly_never_through_an_http_proxy_of_the_environment(tmp_path, workspace):
    """`run` probes the store's gateway at its loopback base URL, secret included: with
    HTTP_PROXY set (a corporate proxy) that probe must not go to the proxy, which would learn
    the secret and answer for a gateway it cannot reach (so `run` would start gateway after
    gateway). The proxy here records what reaches it; the control is the same probe answered."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[str] = []

    class Proxy(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            seen.append(self.path)
            self.send_response(502)
            self.end_headers()

        def log_message(self, *args):
            pass

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    with FakeModels(lambda api, body: "ok") as fake:
        proc, url = start(tmp_path / "store", workspace, fake.url)
        try:
            # A process of its own, as `lore-sidecar run` is (urllib reads the proxy settings once).
            probe = [sys.executable, "-c", "import sys; from lore_sidecar.gateway.run import alive; "
                     "sys.exit(0 if alive(sys.argv[1]) else 3)", url]
            plain = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "no_proxy", "all_proxy")}
            assert subprocess.run(probe, env=plain, timeout=30).returncode == 0  # the control: no proxy set
            proxied = {**plain, "http_proxy": f"http://127.0.0.1:{proxy.server_address[1]}",
                       "HTTP_PROXY": f"http://127.0.0.1:{proxy.server_address[1]}"}
            assert subprocess.run(probe, env=proxied, timeout=30).returncode == 0
            assert seen == []
        finally:
            proc.terminate()
            proc.wait(10)
            proxy.shutdown()
            proxy.server_close()



def test_the_gateway_reaches_the_provider_through_the_users_proxy_and_only_there(tmp_path, workspace):
    """A user behind a corporate proxy (HTTPS_PROXY / HTTP_PROXY, NO_PROXY) reaches the provider
    through it when the harness calls directly; through the gateway too. The provider's name
    here resolves nowhere (`.invalid`): only the proxy, which forwards to the fake provider,
    can reach it. The proxy's credentials go to the proxy alone, never upstream; NO_PROXY naming
    the provider sends it direct (where it cannot be reached: a 502, the proxy untouched)."""
    import base64
    import http.client
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[tuple[str, str, str | None]] = []

    with FakeModels(lambda api, body: "via the proxy") as fake:
        fake_port = int(fake.url.rsplit(":", 1)[1])

        class Proxy(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _relay(self) -> None:
                seen.append((self.command, self.path, self.headers.get("Proxy-Authorization")))
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                split = urllib.parse.urlsplit(self.path)  # an absolute URI: this is a proxy
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("proxy-authorization", "host")}
                conn = http.client.HTTPConnection("127.0.0.1", fake_port, timeout=30)
                conn.request(self.command, split.path + (f"?{split.query}" if split.query else ""), body=body or None,
                             headers={**headers, "Host": split.netloc})
                r = conn.getresponse()
                data = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _relay  # noqa: N815 (http.server's names)

            def log_message(self, *args):
                pass

        proxy = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        port = proxy.server_address[1]
        provider = f"http://lore-provider.invalid:{fake_port}"
        plain = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
        body = {**BODY, "stream": False}
        try:
            via = {"HTTP_PROXY": f"http://alice:s3cret@127.0.0.1:{port}", "http_proxy": f"http://alice:s3cret@127.0.0.1:{port}"}
            proc, url = start(tmp_path / "store", workspace, provider, **{**plain, **via})
            try:
                assert "via the proxy" in post(url + "/v1/messages", body)
                assert json.loads(urllib.request.urlopen(url + "/v1/models", timeout=30).read())["data"]
            finally:
                proc.terminate()
                proc.wait(10)
            assert [(m, path) for m, path, _ in seen] == [("POST", f"{provider}/v1/messages"), ("GET", f"{provider}/v1/models")]
            assert all(auth == "Basic " + base64.b64encode(b"alice:s3cret").decode() for _, _, auth in seen)
            assert not any(k.lower() == "proxy-authorization" for _, _, hdrs, _ in fake.seen for k, _ in hdrs)

            seen.clear()  # NO_PROXY names the provider: straight there, which nothing can reach
            bypass = {**via, "NO_PROXY": "lore-provider.invalid", "no_proxy": "lore-provider.invalid"}
            proc, url = start(tmp_path / "store2", workspace, provider, **{**plain, **bypass})
            try:
                with pytest.raises(urllib.error.HTTPError) as refused:
                    post(url + "/v1/messages", body)
                assert refused.value.code == 502
            finally:
                proc.terminate()
                proc.wait(10)
            assert seen == []
        finally:
            proxy.shutdown()
            proxy.server_close()


def _running(pid: int) -> bool:
    """The process exists and is not a zombie (its parent `run` is gone; init may reap late)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_a_gateway_run_started_stays_while_its_run_lasts_then_stops_by_itself(tmp_path):
    """`run` leaves its gateway running in the background for the next run; it must not stay
    forever. It stays while a run's agent lives, idle or not (a lease), and exits once none
    does and the linger has passed. The control: a gateway started by hand, with the same
    linger, serves on until it is stopped."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    release = tmp_path / "release"
    (bindir / "claude").write_text(f"#!/bin/sh\necho \"$ANTHROPIC_BASE_URL\" > {tmp_path}/url\n"
                                   f"i=0; while [ ! -e {release} ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n")
    (bindir / "claude").chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "LORE_DISTILLER": "off",
           "LORE_GATEWAY_LINGER_MS": "1000"}
    store = tmp_path / "store"
    run = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "run", "claude", "--store-dir", str(store)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    by_hand = None
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "url").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        pid = json.loads((store / "gateway.json").read_text())["pid"]
        by_hand, _ = start(tmp_path / "store2", tmp_path, "http://127.0.0.1:9", LORE_GATEWAY_LINGER_MS="1000")
        time.sleep(4)  # four lingers, idle: the lease holds it
        assert _running(pid)
        assert by_hand.poll() is None
        release.write_text("")
        assert run.wait(60) == 0
        deadline = time.monotonic() + 60
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _running(pid)
        assert not (store / "gateway.json").exists()
        assert by_hand.poll() is None  # the control: not leased, still serving
    finally:
        release.write_text("")
        run.wait(60)
        if by_hand is not None:
            by_hand.terminate()
            by_hand.wait(10)
        try:
            os.kill(json.loads((store / "gateway.json").read_text())["pid"], 15)
        except (OSError, ValueError):
            pass

def test_run_tells_where_the_gateway_is_without_printing_its_secret(tmp_path):
    """`run`'s line on stderr (a terminal, a CI log) names the gateway's address, not the
    store's secret; the harness itself gets the secret in its base URL (the control)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "claude").write_text("#!/bin/sh\necho \"$ANTHROPIC_BASE_URL\"\n")
    (bindir / "claude").chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "LORE_DISTILLER": "off"}
    store = tmp_path / "store"
    done = subprocess.run([sys.executable, "-m", "lore_sidecar", "run", "claude", "--store-dir", str(store)],
                          capture_output=True, text=True, timeout=60, env=env)
    try:
        secret = (store / "gateway.secret").read_text().strip()
        assert done.returncode == 0 and done.stdout.strip().endswith("/" + secret)  # the harness has it
        assert "through the gateway at http://127.0.0.1:" in done.stderr and secret not in done.stderr
    finally:
        os.kill(json.loads((store / "gateway.json").read_text())["pid"], 15)


# -- independent review round 3 (tools/rounds/2026-12-04-fresh3-context-gateway-ask.py) ------------

def test_a_message_delta_without_cache_counts_keeps_those_of_message_start():
    """A stream's `message_start` carries the call's input and cache counts; a `message_delta`
    that repeats them as zeros (only its output count is news) must not erase them, or the
    usage fed back says nothing was read from the cache and a healthy session counts busts.
    The control: a delta with counts of its own (cumulative, as the API sends them) wins."""
    start = {"type": "message_start", "message": {"usage": {
        "input_tokens": 5, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 40, "output_tokens": 1}}}
    zeros = {"type": "message_delta", "usage": {
        "input_tokens": 0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 12}}
    assert usage_from_events("anthropic-messages", [start, zeros]) == {
        "input_tokens": 5, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 40, "output_tokens": 12}
    counted = {"type": "message_delta", "usage": {"input_tokens": 6, "cache_read_input_tokens": 950, "output_tokens": 12}}
    assert usage_from_events("anthropic-messages", [start, counted]) == {
        "input_tokens": 6, "cache_read_input_tokens": 950, "cache_creation_input_tokens": 40, "output_tokens": 12}


@pytest.mark.parametrize("provider", ["https://lore-provider.invalid", "http://lore-provider.invalid"],
                         ids=["https", "http-redirected-to-https"])
def test_an_https_provider_behind_the_users_proxy_gets_the_credentials_on_the_connect_alone(tmp_path, workspace,
                                                                                           provider):
    """HTTPS through a proxy is a CONNECT tunnel: the proxy's credentials ride on the CONNECT
    (which the proxy reads) and never inside the tunnel. The proxy here records the CONNECT and
    refuses it, so the request goes no further (a 502 to the harness); the plain-HTTP case,
    where the credentials ride on the request itself, is the test above. A plain-HTTP
    provider that redirects to https (the proxy answers its request with a 307 here) opens a
    tunnel too, and its CONNECT carries them as well."""
    import base64
    import socket
    import threading

    seen: list[bytes] = []
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                head = b""
                while b"\r\n\r\n" not in head:
                    part = conn.recv(4096)
                    if not part:
                        break
                    head += part
                seen.append(head)
                if not head.startswith(b"CONNECT"):
                    conn.sendall(b"HTTP/1.1 307 Temporary Redirect\r\nlocation: https://lore-provider.invalid/v1/messages"
                                 b"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    continue
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")

    threading.Thread(target=serve, daemon=True).start()
    port = listener.getsockname()[1]
    plain = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    proxied = f"http://alice:s3cret@127.0.0.1:{port}"
    via = {"HTTPS_PROXY": proxied, "https_proxy": proxied, "HTTP_PROXY": proxied, "http_proxy": proxied}
    try:
        proc, url = start(tmp_path / "store", workspace, provider, **{**plain, **via})
        try:
            with pytest.raises(urllib.error.HTTPError) as refused:
                post(url + "/v1/messages", {**BODY, "stream": False})
            assert refused.value.code == 502
        finally:
            proc.terminate()
            proc.wait(10)
    finally:
        listener.close()
    connects = [h for h in seen if h.startswith(b"CONNECT")]
    assert connects, ("the gateway never opened a tunnel", seen)
    lines = connects[0].decode("latin-1").split("\r\n")
    assert lines[0].startswith("CONNECT lore-provider.invalid:443 ")
    credentials = "Basic " + base64.b64encode(b"alice:s3cret").decode()
    assert any(line.lower() == f"proxy-authorization: {credentials}".lower() for line in lines[1:])
