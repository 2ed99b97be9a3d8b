"""The gateway against an upstream that misbehaves as real ones do: every scenario sent once
straight to the fake upstream and once through the gateway, the harness-visible bytes
compared (status, body, the headers a client reads) — compressed answers, provider error
shapes with retry-after, a stream cut in the middle, SSE comments and pings, chunked
framing, a slow first byte; and what reaches the upstream (credentials, the body's own
bytes) compared with what the harness sent."""

from __future__ import annotations

import gzip
import http.client
import json
import os
import subprocess
import sys
import time
import zlib
from urllib.parse import urlsplit

import pytest

from tests.support.fake_models import FakeModels, Raw, encode

# Headers that belong to the hop, not the answer (each server writes its own).
HOP = {"date", "server", "connection", "keep-alive", "transfer-encoding"}


class Plan:
    """What the fake upstream answers next: a Raw reply, or the fake's own answer."""

    def __init__(self) -> None:
        self.raw: Raw | None = None

    def __call__(self, api: str, body: dict):
        return self.raw if self.raw is not None else "peer answer"


@pytest.fixture(scope="module")
def peers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gw-peers")
    ws = tmp / "ws"
    (ws / ".git").mkdir(parents=True)
    store = tmp / "store"
    plan = Plan()
    with FakeModels(plan) as fake:
        proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "gateway", "--store-dir", str(store),
                                 "--workspace", str(ws), "--upstream", fake.url], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, env={**os.environ, "LORE_DISTILLER": "off"})
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:"), url
            yield fake, plan, url, store
        finally:
            proc.terminate()
            proc.wait(10)


def call(base: str, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
         timeout: float = 30) -> tuple[int, list[tuple[str, str]], bytes, bool]:
    """(status, headers, body bytes exactly as they arrived, complete?) — no decompression."""
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request(method, u.path + path, body=body, headers=headers or {})
        r = conn.getresponse()
        try:
            data, complete = r.read(), True
        except http.client.IncompleteRead as exc:
            data, complete = exc.partial, False
        return r.status, r.getheaders(), data, complete
    finally:
        conn.close()


def visible(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted((k.lower(), v) for k, v in headers if k.lower() not in HOP)


def header(reply, name: str) -> str | None:
    return next((v for k, v in reply[1] if k.lower() == name), None)


def both(peers, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    fake, _, url, _ = peers
    direct = call(fake.url, method, path, body, headers)
    through = call(url, method, path, body, headers)
    return direct, through


def assert_same(direct, through) -> None:
    assert through[0] == direct[0]
    assert through[2] == direct[2]  # the body, byte for byte (compressed or not)
    assert through[3] == direct[3]  # complete, or cut at the same place
    assert visible(through[1]) == visible(direct[1])  # content-type, -encoding, -length, retry-after, ids


MSG = {"model": "claude-sonnet-4-5", "max_tokens": 50,
       "messages": [{"role": "user", "content": [{"type": "text", "text": "hello (marker peer7)"}]}]}
JSON = {"content-type": "application/json", "x-api-key": "sk-ant-peer", "anthropic-version": "2023-06-01"}


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_compressed_models_and_count_tokens_reach_the_harness_byte_for_byte(peers, encoding):
    fake, plan, _, _ = peers
    fake.compress, plan.raw = encoding, None
    try:
        asked = {**JSON, "accept-encoding": "gzip, deflate"}
        direct, through = both(peers, "GET", "/v1/models", headers=asked)
        assert header(direct, "content-encoding") == encoding  # control: the peer did compress
        assert_same(direct, through)
        body = json.dumps(MSG).encode()
        direct, through = both(peers, "POST", "/v1/messages/count_tokens", body, asked)
        assert header(direct, "content-encoding") == encoding
        assert_same(direct, through)
        # A harness that asks for no encoding gets none, through the gateway as directly.
        direct, through = both(peers, "GET", "/v1/models", headers=JSON)
        assert header(through, "content-encoding") is None and json.loads(through[2])["data"]
        assert_same(direct, through)
    finally:
        fake.compress = None


def test_a_compressed_non_streamed_answer_is_readable_by_the_harness_and_its_usage_is_read(peers):
    fake, plan, _, store = peers
    fake.compress, plan.raw = "gzip", None
    try:
        body = json.dumps({**MSG, "metadata": {"user_id": json.dumps({"session_id": "peer-gzip"})}}).encode()
        direct, through = both(peers, "POST", "/v1/messages", body, {**JSON, "accept-encoding": "gzip"})
    finally:
        fake.compress = None
    assert header(through, "content-encoding") == "gzip" == header(direct, "content-encoding")
    answer = json.loads(gzip.decompress(through[2]))  # what the harness's client decodes
    assert answer["content"][0]["text"] == "peer answer"
    assert {**answer, "id": "x"} == {**json.loads(gzip.decompress(direct[2])), "id": "x"}  # only the id differs
    same = [h for h in visible(direct[1]) if h[0] != "content-length"]  # the id's digits may differ
    assert [h for h in visible(through[1]) if h[0] != "content-length"] == same
    # The gateway read its own decoded copy: the usage reached the session's state.
    deadline = time.monotonic() + 15
    while not any(json.loads(p.read_text()).get("sessionId") == "peer-gzip" and json.loads(p.read_text()).get(
            "uncached_calls") for p in (store / "context").glob("*.json")):
        assert time.monotonic() < deadline, "usage of a gzip answer never recorded"
        time.sleep(0.2)


ANTHROPIC_ERR = {"type": "error", "error": {"type": "rate_limit_error", "message": "Number of requests has exceeded"}}
OPENAI_ERR = {"error": {"message": "Rate limit reached", "type": "requests", "param": None, "code": "rate_limit_exceeded"}}


@pytest.mark.parametrize(("status", "path", "shape"), [
    (400, "/v1/messages", {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: bad"}}),
    (413, "/v1/messages", {"type": "error", "error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}}),
    (429, "/v1/messages", ANTHROPIC_ERR),
    (529, "/v1/messages", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    (429, "/v1/chat/completions", OPENAI_ERR),
    (400, "/v1/responses", {"error": {"message": "Invalid 'input'", "type": "invalid_request_error", "param": "input",
                                      "code": None}}),
])
def test_provider_errors_with_retry_after_reach_the_harness_unchanged(peers, status, path, shape):
    _, plan, _, _ = peers
    headers = [("content-type", "application/json"), ("retry-after", "17"), ("request-id", "req_011peer"),
               ("x-request-id", "req_011peer"), ("anthropic-ratelimit-requests-remaining", "0"),
               ("x-should-retry", "true")]
    plan.raw = Raw(status, headers, [json.dumps(shape).encode()])
    try:
        body = json.dumps({**MSG, "input": "hi"} if "responses" in path else MSG).encode()
        direct, through = both(peers, "POST", path, body, JSON)
    finally:
        plan.raw = None
    assert direct[0] == status and json.loads(direct[2]) == shape  # control: the peer erred
    assert_same(direct, through)


def test_a_gzip_error_answer_is_passed_through_and_prompt_too_long_raises_the_floor(peers):
    fake, plan, _, store = peers
    shape = {"type": "error", "error": {"type": "invalid_request_error",
                                        "message": "prompt is too long: 215000 tokens > 200000 maximum"}}
    plan.raw = Raw(400, [("content-type", "application/json"), ("content-encoding", "gzip")],
                   [encode(json.dumps(shape).encode(), "gzip")])
    try:
        body = json.dumps({**MSG, "metadata": {"user_id": json.dumps({"session_id": "peer-too-long"})}}).encode()
        direct, through = both(peers, "POST", "/v1/messages", body, {**JSON, "accept-encoding": "gzip"})
    finally:
        plan.raw = None
    assert_same(direct, through)
    assert json.loads(gzip.decompress(through[2])) == shape

    def floor() -> int:
        for p in (store / "context").glob("*.json"):
            state = json.loads(p.read_text())
            if state.get("sessionId") == "peer-too-long":
                return int(state.get("force_min_layer") or 0)
        return 0

    deadline = time.monotonic() + 15
    while floor() < 1:
        assert time.monotonic() < deadline, "a prompt-too-long answer never raised the session's floor"
        time.sleep(0.2)


SSE = [b": keep-alive comment\n\n",
       b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_p","type":"message","role":'
       b'"assistant","model":"m","content":[],"usage":{"input_tokens":12,"output_tokens":1}}}\n\n',
       b"event: ping\ndata: {\"type\": \"ping\"}\n\n", b":\n\n",
       b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
       b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"he',
       b'llo"}}\n\n',  # an event split across two chunks
       b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}\n\n',
       b'event: message_stop\ndata: {"type":"message_stop"}\n\n']
STREAM = [("content-type", "text/event-stream"), ("cache-control", "no-cache"), ("request-id", "req_stream")]


@pytest.mark.parametrize("chunked", [True, False])
def test_sse_comments_pings_and_split_events_stream_through_unchanged(peers, chunked):
    _, plan, _, _ = peers
    plan.raw = Raw(200, STREAM, SSE, chunked=chunked, gap_s=0.02)
    try:
        direct, through = both(peers, "POST", "/v1/messages", json.dumps({**MSG, "stream": True}).encode(), JSON)
    finally:
        plan.raw = None
    assert direct[2] == b"".join(SSE)
    assert_same(direct, through)


@pytest.mark.parametrize("chunked", [True, False])
def test_a_stream_cut_in_the_middle_ends_the_same_way_through_the_gateway(peers, chunked):
    _, plan, _, _ = peers
    plan.raw = Raw(200, STREAM, SSE[:5], chunked=chunked, cut=True)
    try:
        direct, through = both(peers, "POST", "/v1/messages", json.dumps({**MSG, "stream": True}).encode(), JSON)
    finally:
        plan.raw = None
    assert direct[3] is False and direct[2] == b"".join(SSE[:5])  # control: the peer really cut it
    assert through[0] == 200 and through[3] is False
    assert through[2] == direct[2]  # every byte the peer sent, none invented


def test_a_slow_first_byte_is_waited_for(peers):
    _, plan, _, _ = peers
    plan.raw = Raw(200, [("content-type", "application/json")], [b'{"slow": true}'], delay_s=2.5)
    try:
        t = time.monotonic()
        direct, through = both(peers, "POST", "/v1/messages", json.dumps(MSG).encode(), JSON)
        assert time.monotonic() - t >= 5
    finally:
        plan.raw = None
    assert_same(direct, through)


def test_credentials_and_provider_headers_reach_the_upstream_unchanged(peers):
    fake, plan, url, _ = peers
    plan.raw = None
    sent = {"content-type": "application/json", "x-api-key": "sk-ant-api03-Peer", "authorization": "Bearer sk-proj-peer",
            "anthropic-version": "2023-06-01", "anthropic-beta": "prompt-caching-2024-07-31,oauth-2025-04-20",
            "user-agent": "claude-cli/2.1.197 (external, cli)", "x-stainless-retry-count": "0",
            "accept-encoding": "gzip, br"}
    call(url, "POST", "/v1/messages?beta=true", json.dumps(MSG).encode(), sent)
    method, path, got, _ = fake.seen[-1]
    got = {k.lower(): v for k, v in got}
    assert method == "POST" and path == "/v1/messages?beta=true"
    for name, value in sent.items():
        assert got.get(name) == value, name
    assert "x-lore-token" not in got and url.rsplit("/", 1)[1] not in json.dumps(got)  # our secret stays here


def test_a_header_the_harness_sends_twice_reaches_the_upstream_twice(peers):
    """Two `anthropic-beta` lines (each a flag) both go upstream, as they would directly.
    Control: the header sent once arrives once."""
    fake, plan, url, _ = peers
    plan.raw = None
    u = urlsplit(url)
    for betas in (["prompt-caching-2024-07-31"], ["prompt-caching-2024-07-31", "oauth-2025-04-20"]):
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        try:
            conn.putrequest("POST", u.path + "/v1/messages/count_tokens", skip_accept_encoding=True)
            data = json.dumps(MSG).encode()
            for k, v in {**JSON, "content-length": str(len(data))}.items():
                conn.putheader(k, v)
            for beta in betas:
                conn.putheader("anthropic-beta", beta)
            conn.endheaders(data)
            assert conn.getresponse().read()
        finally:
            conn.close()
        got = [v for k, v in fake.seen[-1][2] if k.lower() == "anthropic-beta"]
        assert got == betas


def test_a_streamed_call_answered_prompt_too_long_raises_the_floor(peers):
    """The error answer to a `stream: true` call is plain JSON, not events: it is still read
    as the error it is (docs: a 400 "prompt is too long" raises the session's floor)."""
    _, plan, _, store = peers
    shape = {"type": "error", "error": {"type": "invalid_request_error",
                                        "message": "prompt is too long: 215000 tokens > 200000 maximum"}}
    plan.raw = Raw(400, [("content-type", "application/json")], [json.dumps(shape).encode()])
    try:
        body = json.dumps({**MSG, "stream": True, "metadata": {"user_id": json.dumps({"session_id": "peer-stream-400"})}})
        direct, through = both(peers, "POST", "/v1/messages", body.encode(), JSON)
    finally:
        plan.raw = None
    assert_same(direct, through)

    def floor() -> int:
        for p in (store / "context").glob("*.json"):
            state = json.loads(p.read_text())
            if state.get("sessionId") == "peer-stream-400":
                return int(state.get("force_min_layer") or 0)
        return 0

    deadline = time.monotonic() + 15
    while floor() < 1:
        assert time.monotonic() < deadline, "a streamed call's prompt-too-long answer never raised the floor"
        time.sleep(0.2)


def test_a_body_lore_does_not_change_goes_upstream_as_its_own_bytes(peers):
    fake, plan, url, _ = peers
    plan.raw = None
    # count_tokens is not assembled; odd spacing, key order and escapes must survive as sent.
    raw = b'{ "model" : "m",\n  "messages":[{"role":"user","content":"caf\\u00e9 \\/ peer"}],  "max_tokens":5 }'
    call(url, "POST", "/v1/messages/count_tokens", raw, JSON)
    assert fake.seen[-1][3] == raw
    # A model call lore leaves as it is (an OpenAI chat body: no breakpoints to add) also goes as sent.
    chat = b'{"model":"gpt-x",   "messages":[{"role":"user","content":"only one \\u00e9"}]}'
    call(url, "POST", "/v1/chat/completions", chat, {"content-type": "application/json", "authorization": "Bearer k"})
    assert fake.seen[-1][3] == chat


def _deflate_raw(data: bytes) -> bytes:
    c = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


def test_raw_deflate_and_unknown_encodings_pass_through(peers):
    _, plan, _, _ = peers
    for enc, data in (("deflate", _deflate_raw(b'{"ok": 1}')), ("br", b"\x8b\x03\x80not-really-brotli\x03")):
        plan.raw = Raw(200, [("content-type", "application/json"), ("content-encoding", enc)], [data])
        try:
            direct, through = both(peers, "POST", "/v1/messages", json.dumps(MSG).encode(), {**JSON, "accept-encoding": enc})
        finally:
            plan.raw = None
        assert_same(direct, through)


def _uncached_calls(store, session: str) -> int:
    for p in (store / "context").glob("*.json"):
        state = json.loads(p.read_text())
        if state.get("sessionId") == session:
            return int(state.get("uncached_calls") or 0)
    return 0


@pytest.mark.parametrize("flavour", ["zlib", "raw"])
def test_the_usage_of_a_deflate_answer_is_read_whether_zlib_wrapped_or_raw(peers, flavour):
    """Both deflate flavours servers send are decoded for the private copy (docs: "a private
    decoded copy (gzip, deflate)"); the harness gets the peer's bytes either way. The zlib case
    is the control: the same check with the flavour RFC 9110 names."""
    _, plan, _, store = peers
    session = f"peer-deflate-{flavour}"
    answer = json.dumps({"id": "msg_d", "type": "message", "role": "assistant", "model": "m",
                         "content": [{"type": "text", "text": "deflated"}], "stop_reason": "end_turn",
                         "stop_sequence": None, "usage": {"input_tokens": 11, "output_tokens": 2}}).encode()
    data = zlib.compress(answer) if flavour == "zlib" else _deflate_raw(answer)
    assert (data[0] & 0x0F == 8) == (flavour == "zlib")  # control: the two flavours really differ
    plan.raw = Raw(200, [("content-type", "application/json"), ("content-encoding", "deflate")], [data])
    try:
        body = json.dumps({**MSG, "metadata": {"user_id": json.dumps({"session_id": session})}}).encode()
        direct, through = both(peers, "POST", "/v1/messages", body, {**JSON, "accept-encoding": "deflate"})
    finally:
        plan.raw = None
    assert_same(direct, through)
    deadline = time.monotonic() + 15
    while _uncached_calls(store, session) < 1:
        assert time.monotonic() < deadline, f"the usage of a {flavour} deflate answer was never recorded"
        time.sleep(0.2)


def test_health_without_the_secret_reveals_nothing(peers):
    _, _, url, _ = peers
    base = url.rsplit("/", 1)[0]
    status, _, data, _ = call(base, "GET", "/lore/health")
    assert status == 200 and json.loads(data) == {"ok": True}
    status, _, data, _ = call(url, "GET", "/lore/health")  # control: with it, the counts
    assert status == 200 and {"pid", "requests", "refused"} <= set(json.loads(data))


# Each body is one lore would otherwise change (a system block and block content: it adds
# breakpoints), so a body it parsed and re-encoded would not arrive as its own bytes.
HEAD = b'{"model":"m","max_tokens":5,"system":[{"type":"text","text":"sys"}],'


def _user(text: bytes) -> bytes:
    return b'"messages":[{"role":"user","content":[{"type":"text","text":"' + text + b'"}]}]'


def _nested(depth: int) -> bytes:
    return HEAD + _user(b"deep") + b',"x":' + b"[" * depth + b"]" * depth + b"}"


ODD = {
    "2000-deep": _nested(2000),
    "900-deep": _nested(900),  # parses, but deeper than any code after the parser should recurse
    "huge-int": HEAD + b'"n":' + b"9" * 5000 + b"," + _user(b"big") + b"}",
    "huge-float": HEAD + b'"t":1e400,' + _user(b"big") + b"}",
    "huge-negative-float": HEAD + b'"t":-1e400,' + _user(b"big") + b"}",  # -Infinity once re-encoded
    "invalid-utf8": HEAD + _user(b"caf\xe9 \xff") + b"}",
    "duplicate-keys": HEAD + _user(b"one") + b"," + _user(b"two") + b"}",
    "nan": HEAD + b'"temperature":NaN,' + _user(b"nan") + b"}",
    "top-level-array": b'[{"role":"user","content":"x"}]',
    "truncated": HEAD + b'"messages":[{"role":"user","content":"cut',
}
CONTROL = HEAD + _user(b"an ordinary body") + b"}"


def test_control_an_ordinary_body_of_the_same_shape_is_changed_by_lore(peers):
    fake, plan, url, _ = peers
    plan.raw = Raw(200, [("content-type", "application/json")], [b'{"odd": "answered"}'])
    try:
        call(url, "POST", "/v1/messages", CONTROL, JSON)
    finally:
        plan.raw = None
    assert fake.seen[-1][3] != CONTROL and b"cache_control" in fake.seen[-1][3]


@pytest.mark.parametrize("name", list(ODD))
def test_odd_json_fails_open_byte_for_byte_never_a_500(peers, name):
    fake, plan, url, _ = peers
    plan.raw = Raw(200, [("content-type", "application/json")], [b'{"odd": "answered"}'])
    raw = ODD[name]
    try:
        direct = call(fake.url, "POST", "/v1/messages", raw, JSON)
        assert fake.seen[-1][3] == raw
        through = call(url, "POST", "/v1/messages", raw, JSON)
    finally:
        plan.raw = None
    assert fake.seen[-1][3] == raw  # what the upstream got through the gateway: the very bytes
    assert through[0] != 500
    assert_same(direct, through)


def test_keep_alive_and_a_chunked_request_body_work_as_directly(peers):
    """One harness connection carries several calls (keep-alive), answers framed either way
    in between; a request body sent chunked reaches the upstream as the same bytes."""
    fake, plan, url, _ = peers
    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        replies = []
        for chunked in (True, False, True):
            plan.raw = Raw(200, [("content-type", "application/json")], [b'{"n": ', b"1}"], chunked=chunked)
            conn.request("POST", u.path + "/v1/messages", body=json.dumps(MSG).encode(), headers=JSON)
            r = conn.getresponse()
            replies.append((r.status, r.read()))
        assert replies == [(200, b'{"n": 1}')] * 3
        plan.raw = None
        raw = b'{"model":"m","max_tokens":5, "messages":[{"role":"user","content":"chunked in"}]}'
        conn.request("POST", u.path + "/v1/messages/count_tokens", body=iter([raw[:20], raw[20:]]),
                     headers={**JSON, "transfer-encoding": "chunked"}, encode_chunked=True)
        r = conn.getresponse()
        assert r.status == 200 and json.loads(r.read())["input_tokens"] > 0
        assert fake.seen[-1][3] == raw
    finally:
        plan.raw = None
        conn.close()


def test_the_usage_of_a_streamed_answer_is_read_from_its_events(peers):
    """Harnesses stream (`stream: true`): the usage the gateway feeds back comes from the SSE
    events (`message_start`, `message_delta`), split across chunks or not. The answer here
    reports no cache fields, which the session's state counts once the usage arrives. (Round 3,
    tools/rounds/2026-12-04-fresh3-context-gateway-ask.py; the non-streamed control is the
    deflate test above.)"""
    _, plan, _, store = peers
    session = "peer-stream-usage"
    plan.raw = Raw(200, STREAM, SSE, chunked=True)
    try:
        body = json.dumps({**MSG, "stream": True, "metadata": {"user_id": json.dumps({"session_id": session})}})
        direct, through = both(peers, "POST", "/v1/messages", body.encode(), JSON)
    finally:
        plan.raw = None
    assert_same(direct, through)
    deadline = time.monotonic() + 15
    while _uncached_calls(store, session) < 1:
        assert time.monotonic() < deadline, "the usage of a streamed answer was never recorded"
        time.sleep(0.2)


def test_the_upstream_sees_the_request_a_direct_call_makes_host_and_headers_alike(peers):
    """Each request sent once straight to the upstream and once through the gateway: the
    upstream sees the same method, path and headers (Host naming the upstream itself, not
    the gateway: a provider behind a CDN routes by it) - only the hop's framing may differ.
    Covers GET (no body) and a POST the gateway does not assemble (hunt7a)."""
    fake, plan, url, _ = peers
    plan.raw = None
    sent = {**JSON, "user-agent": "claude-cli/2.1.197 (external, cli)", "anthropic-beta": "oauth-2025-04-20"}
    # The hop's framing: aiohttp states an empty body's length (Content-Length: 0) on a GET.
    framing = {"connection", "keep-alive", "transfer-encoding", "content-length"}
    for method, path, body in (("GET", "/v1/models?limit=5", None),
                               ("POST", "/v1/messages/count_tokens", json.dumps(MSG).encode())):
        call(fake.url, method, path, body, sent)
        direct = fake.seen[-1]
        call(url, method, path, body, sent)
        through = fake.seen[-1]
        assert through[0] == direct[0] == method and through[1] == direct[1] == path
        assert through[3] == direct[3]  # the body's own bytes
        d = sorted((k.lower(), v) for k, v in direct[2] if k.lower() not in framing)
        t = sorted((k.lower(), v) for k, v in through[2] if k.lower() not in framing)
        assert dict(d)["host"] == urlsplit(fake.url).netloc  # control: what a direct call names
        assert t == d, (method, path)


def test_an_upstream_given_with_a_trailing_slash_gets_the_same_paths(peers, tmp_path):
    """`--upstream http://host:port/` (as users paste base URLs) must not make `//v1/...`
    paths, which providers and proxies answer 404. Control: the module's gateway, given the
    URL without the slash, forwards the same path (hunt7a)."""
    fake, plan, url, _ = peers
    plan.raw = None
    call(url, "GET", "/v1/models", headers=JSON)
    assert fake.seen[-1][1] == "/v1/models" and fake.request_lines[-1] == "GET /v1/models HTTP/1.1"  # control
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "gateway", "--store-dir", str(tmp_path / "store"),
                             "--workspace", str(tmp_path / "ws"), "--upstream", fake.url + "/"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env={**os.environ, "LORE_DISTILLER": "off"})
    try:
        assert proc.stdout is not None
        slashed = proc.stdout.readline().strip()
        status, _, body, _ = call(slashed, "GET", "/v1/models", headers=JSON)
        assert fake.request_lines[-1] == "GET /v1/models HTTP/1.1"
        assert status == 200 and json.loads(body)["data"]
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("members", ["one", "one per event"])
def test_the_usage_of_a_stream_gzipped_as_many_members_is_read(peers, members):
    """A server that compresses each flushed event sends a gzip body of many members (RFC
    1952 2.2); the private decoded copy reads past the first one, so the usage in the later
    events is recorded. The single-member stream is the control; the harness gets the
    peer's bytes either way."""
    _, plan, _, store = peers
    session = f"peer-gzip-members-{members.replace(' ', '-')}"
    chunks = [encode(b"".join(SSE), "gzip")] if members == "one" else [encode(e, "gzip") for e in SSE]
    assert gzip.decompress(b"".join(chunks)) == b"".join(SSE)  # control: a valid gzip body
    plan.raw = Raw(200, [*STREAM, ("content-encoding", "gzip")], chunks, gap_s=0.02)
    try:
        body = json.dumps({**MSG, "stream": True, "metadata": {"user_id": json.dumps({"session_id": session})}})
        direct, through = both(peers, "POST", "/v1/messages", body.encode(), {**JSON, "accept-encoding": "gzip"})
    finally:
        plan.raw = None
    assert_same(direct, through)
    deadline = time.monotonic() + 15
    while _uncached_calls(store, session) < 1:
        assert time.monotonic() < deadline, f"the usage of a stream gzipped as {members} member(s) was never recorded"
        time.sleep(0.2)


def test_a_request_without_a_body_reaches_the_upstream_without_one(peers):
    """GET /v1/models goes up with no Content-Length, as the harness sent it; a GET that does
    send `Content-Length: 0` keeps it (the framing is the harness's, whatever the method); the
    control, a POST with an empty body and its `Content-Length: 0`, keeps it."""
    fake, plan, url, _ = peers
    plan.raw = None
    u = urlsplit(url)
    for method, length in (("GET", None), ("GET", "0"), ("POST", "0")):
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        try:
            conn.putrequest(method, u.path + "/v1/models", skip_accept_encoding=True)
            for k, v in {"x-api-key": "sk-ant-peer", "anthropic-version": "2023-06-01",
                         **({"content-length": length} if length else {})}.items():
                conn.putheader(k, v)
            conn.endheaders()
            conn.getresponse().read()
        finally:
            conn.close()
        seen_method, _, got, _ = fake.seen[-1]
        got = {k.lower(): v for k, v in got}
        assert seen_method == method and got.get("content-length") == length, (method, got.get("content-length"))
