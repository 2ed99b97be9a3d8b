"""The proxy: each model call's body through context assembly, then upstream with the
caller's own headers (credentials included; none are stored or logged), the answer streamed
back byte for byte, its usage fed back afterwards.

Fail open, always: a body that does not parse, an engine that errors or does not answer
within `gatewayTimeoutMs`, and the original bytes go upstream untouched. Only loopback
addresses are served.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
from collections.abc import Mapping
from typing import Any

from aiohttp import ClientError, ClientSession, ClientTimeout, web
from multidict import CIMultiDict
from yarl import URL

from lore_sidecar.gateway import guard
from lore_sidecar.gateway.decoding import Decoder
from lore_sidecar.gateway.leases import Quiet
from lore_sidecar.gateway.sessions import API_OF_PATH, session_of, sse_events, usage_from_events
from lore_sidecar.gateway.upstream import LOOPBACK, ProxyRoute

log = logging.getLogger(__name__)
# Not forwarded upstream: this hop's framing, and our own secret. The harness's
# Accept-Encoding and Content-Encoding are forwarded: it gets exactly what it asked for.
HOP = {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "proxy-authenticate",
       "proxy-authorization", "te", "trailer", "upgrade", guard.HEADER}
# Not copied from the answer: this hop's framing (aiohttp frames the reply itself; a
# Content-Length is kept, the bytes being the provider's own).
REPLY_HOP = {"transfer-encoding", "connection", "keep-alive", "proxy-authenticate", "te", "trailer", "upgrade"}
# Headers aiohttp would add of itself: a harness that sent none must not get them added (an
# Accept-Encoding the harness never asked for is how answers came back gzip it cannot read).
NO_AUTO = ("Accept", "Accept-Encoding", "User-Agent", "Content-Type")
DEFAULT_UPSTREAM = {"anthropic-messages": "https://api.anthropic.com", "openai-chat": "https://api.openai.com",
                    "openai-responses": "https://api.openai.com"}
# Codex signed in with ChatGPT (`run codex` gives it `<gateway>/v1/codex` as its base URL):
# the ChatGPT backend, where its `codex/...` calls go without the gateway.
CHATGPT_CODEX = ("/v1/codex", "https://chatgpt.com/backend-api")


def upstream_of(upstream: str | None, api: str | None, path: str,
                headers: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(base, path) a request to `path` is forwarded to: an explicit upstream takes every path
    as it came; else `/v1/codex/...` goes to the ChatGPT backend's `codex/...` (the `/v1`
    dropped), a model call to its API's provider, and any other call to the provider of the
    client that sent it (`guard.openai_caller`: an OpenAI key must never be sent to Anthropic,
    nor an Anthropic key to OpenAI — Codex lists `/v1/models` through the gateway). Pure."""
    if upstream:
        return upstream, path
    prefix, chatgpt = CHATGPT_CODEX
    if path == prefix or path.startswith(prefix + "/"):
        return chatgpt, path[len("/v1"):]
    if api is None and headers is not None and guard.openai_caller(path, headers):
        api = "openai-chat"
    return DEFAULT_UPSTREAM.get(api or "", DEFAULT_UPSTREAM["anthropic-messages"]), path


def harness_of(headers: Any) -> str:
    named = headers.get("x-lore-harness")
    if named:
        return str(named)[:40]
    agent = str(headers.get("user-agent", "")).lower()
    for needle, name in (("claude-cli", "claude-code"), ("claude-code", "claude-code"), ("codex", "codex"),
                         ("opencode", "opencode"), ("pi-coding-agent", "pi")):
        if needle in agent:
            return name
    return "gateway"


class Gateway:
    def __init__(self, host: Any, upstream: str | None, secret: str):
        self.host = host  # engine_host.Host
        self.upstream = upstream.rstrip("/") if upstream else None
        self.secret = secret
        self.client: ClientSession | None = None
        self.stats = {"requests": 0, "assembled": 0, "passthrough": 0, "refused": 0}
        self.pending: set[asyncio.Task] = set()
        self.route = ProxyRoute()  # the user's proxy settings, as the harness would have used them
        self.quiet = Quiet()  # how long since it last answered: a leased gateway exits when idle

    def app(self) -> web.Application:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self.proxy)
        app.on_startup.append(self._start)
        app.on_cleanup.append(self._stop)
        return app

    async def _start(self, app: web.Application) -> None:
        self.client = ClientSession(timeout=ClientTimeout(total=None, sock_connect=30), auto_decompress=False)

    async def _stop(self, app: web.Application) -> None:
        if self.pending:
            await asyncio.wait(self.pending, timeout=5)
        if self.client is not None:
            await self.client.close()

    async def proxy(self, request: web.Request) -> web.StreamResponse:
        self.quiet.begin()
        try:
            return await self._proxy(request)
        finally:
            self.quiet.end()

    async def _proxy(self, request: web.Request) -> web.StreamResponse:
        raw_path, _, query = request.raw_path.partition("?")
        presented, path = guard.split_secret(raw_path, request.headers, self.secret)
        if path.rstrip("/") == "/lore/health" and request.method == "GET":
            # Open, so a probe can tell a gateway listens; the counts and pid need the secret.
            return web.json_response({"ok": True, "pid": os.getpid(), **self.stats} if presented else {"ok": True})
        api = API_OF_PATH.get(path.rstrip("/")) if request.method == "POST" else None
        browser = guard.from_browser(request.headers, api is not None)
        if browser or not presented:
            # Trigger: a web page, another local user, anything without the store's secret.
            # Outcome: refused before the body is read; nothing forwarded, nothing captured.
            self.stats["refused"] += 1
            status, why = (403, f"requests from a web browser are refused ({browser})") if browser else \
                (401, "this gateway needs the store's secret in its base URL (use `lore-sidecar run`)")
            log.warning("refused a request to %s: %s", path[:80], browser or "no secret")
            return web.json_response(guard.refusal(path, request.headers, status, f"lore gateway: {why}"), status=status)
        raw = await request.read()
        self.stats["requests"] += 1
        session, sent, stream = None, raw, False
        if api is not None:
            session, sent, stream = await self._assemble(api, request, raw)
        base, forward = upstream_of(self.upstream, api, path, request.headers)
        headers = CIMultiDict((k, v) for k, v in request.headers.items() if k.lower() not in HOP)
        target = URL(base + forward + (f"?{query}" if query else ""), encoded=True)  # the caller's bytes, not requoted
        assert self.client is not None
        try:
            return await self._forward(request, api, target, headers, sent, session, stream)
        except (TimeoutError, ClientError, OSError) as exc:
            if request.get("lore_answering"):
                raise  # the answer had begun: the connection just ends, as the provider's did
            # The provider could not be reached: say so in the shape harnesses read (an API
            # error they retry), never a bare 500 from the proxy.
            log.warning("upstream %s unreachable: %s", base, type(exc).__name__)
            return web.json_response({"type": "error", "error": {"type": "api_error", "message":
                                      f"lore gateway: the upstream {base} could not be reached ({type(exc).__name__})"}},
                                     status=502)

    async def _forward(self, request: web.Request, api: str | None, target: URL, headers: CIMultiDict, sent: bytes,
                       session: str | None, stream: bool) -> web.StreamResponse:
        assert self.client is not None
        proxy, proxy_headers = self.route(target)
        if proxy_headers and target.scheme != "https":
            # Plain HTTP goes to the proxy as an absolute-URI request: its credentials ride on
            # that request (the proxy takes them off). HTTPS sends them on the CONNECT, which
            # `proxy_headers` stays for: a redirect to https opens a tunnel too.
            headers = CIMultiDict(headers)
            headers.extend(proxy_headers)
        # A request without a body (GET /v1/models) goes without one: no `Content-Length: 0` the
        # harness did not send (RFC 9110 8.6: a user agent should not send it there).
        framed = request.body_exists or "content-length" in request.headers
        async with self.client.request(request.method, target, headers=headers, data=sent if sent or framed else None,
                                       skip_auto_headers=NO_AUTO, proxy=proxy, proxy_headers=proxy_headers) as up:
            reply = web.StreamResponse(status=up.status, reason=up.reason, headers=CIMultiDict(
                (k, v) for k, v in up.headers.items() if k.lower() not in REPLY_HOP))
            await reply.prepare(request)
            request["lore_answering"] = True
            tail, events, whole = b"", [], bytearray()
            plain = Decoder(up.headers.get("content-encoding"))  # our private, decoded copy
            async for chunk in up.content.iter_any():
                await reply.write(chunk)
                if api is None:
                    continue
                chunk = plain.feed(chunk)
                if stream and up.status < 400:
                    found, tail = sse_events(tail + chunk)
                    events += [e for e in found if _usage_event(e)]
                elif len(whole) < 4 * 1024 * 1024:
                    whole += chunk
            await reply.write_eof()
        if session is not None:
            self._feedback(api, session, up.status, events, bytes(whole))
        return reply

    async def _assemble(self, api: str, request: web.Request, raw: bytes) -> tuple[str | None, bytes, bool]:
        try:
            body = strict_json(raw)
        except (ValueError, RecursionError):  # not JSON, or deeper than Python parses: as it came
            return None, raw, False
        if not isinstance(body, dict):
            return None, raw, False
        session, stream = None, False
        try:
            session = session_of(api, request.headers, body)
            stream = bool(body.get("stream"))
            result = await self.host.call("lore/assembleContext", {
                "sessionId": session, "body": body, "api": api, "harness": harness_of(request.headers)})
            out = result["body"]
            if result.get("delayMs"):  # the user's budget throttle: slower, still inside the cache TTL
                await asyncio.sleep(result["delayMs"] / 1000)
            # Unchanged: the harness's own bytes (its key order, spacing, escapes), never re-encoded.
            sent = raw if out == body else json.dumps(out, ensure_ascii=False).encode()
        except Exception as exc:  # fail open: the harness's own body goes upstream
            self.stats["passthrough"] += 1
            log.warning("context assembly failed (%s); passing the %s body through", type(exc).__name__, api)
            return session, raw, stream
        self.stats["assembled"] += 1
        return session, sent, stream

    def _feedback(self, api: str, session: str, status: int, events: list[dict], whole: bytes) -> None:
        params: dict[str, Any] = {"sessionId": session}
        if status >= 400:
            params["error"] = {"status": status, "message": whole[:2000].decode(errors="replace")}
        else:
            if not events and whole:
                try:
                    answer = json.loads(whole)
                    events = [{**answer, "type": answer.get("type") or "response"}]
                except ValueError:
                    events = []
            usage = usage_from_events(api, events)
            if not usage:
                return
            params["usage"] = {"inputTokens": usage.get("input_tokens", 0),
                               "cacheCreationInputTokens": usage.get("cache_creation_input_tokens", 0),
                               "cacheReadInputTokens": usage.get("cache_read_input_tokens", 0),
                               "outputTokens": usage.get("output_tokens", 0)}

        async def send() -> None:
            try:
                await self.host.call("lore/recordUsage", params)
            except Exception as exc:
                log.info("usage not recorded: %s", type(exc).__name__)

        task = asyncio.get_running_loop().create_task(send())
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)


def strict_json(raw: bytes) -> Any:
    """The body, only when re-encoding it could not change its meaning: duplicate keys (which
    one wins is the parser's choice), NaN/Infinity and numbers beyond a double (they would come
    back as invalid JSON or another number) raise ValueError, and such a body passes as it came."""
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) != len(items):
            raise ValueError("duplicate keys")
        return out

    def number(text: str) -> float:
        value = float(text)
        if value in (float("inf"), float("-inf")):
            raise ValueError("number out of range")
        return value

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(raw, object_pairs_hook=pairs, parse_float=number, parse_constant=constant)


def _usage_event(e: dict[str, Any]) -> bool:
    return e.get("type") in ("message_start", "message_delta", "response.completed") or bool(e.get("usage"))


def serve(gateway: Gateway, host: str, port: int, on_ready, until=None) -> None:
    """Serve until SIGTERM/SIGINT, or until `until(stop)` (a coroutine given the stop event)
    sets it."""
    if host not in LOOPBACK:
        raise ValueError(f"the gateway serves loopback only (127.0.0.1, ::1); got {host}")

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        runner = web.AppRunner(gateway.app(), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound = site._server.sockets[0].getsockname()[1]  # aiohttp does not expose the chosen port otherwise
        on_ready(bound)
        watcher = loop.create_task(until(stop)) if until is not None else None
        try:
            await stop.wait()
        finally:
            if watcher is not None:
                watcher.cancel()
            await runner.cleanup()  # lets answers in flight finish and usage be recorded

    asyncio.run(main())
