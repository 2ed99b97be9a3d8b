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
from typing import Any

from aiohttp import ClientError, ClientSession, ClientTimeout, web

from lore_sidecar.gateway.sessions import API_OF_PATH, session_of, sse_events, usage_from_events

log = logging.getLogger(__name__)
HOP = {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "proxy-authenticate",
       "proxy-authorization", "te", "trailer", "upgrade", "accept-encoding", "content-encoding"}
DEFAULT_UPSTREAM = {"anthropic-messages": "https://api.anthropic.com", "openai-chat": "https://api.openai.com",
                    "openai-responses": "https://api.openai.com"}
LOOPBACK = ("127.0.0.1", "::1", "localhost")


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
    def __init__(self, host: Any, upstream: str | None):
        self.host = host  # engine_host.Host
        self.upstream = upstream.rstrip("/") if upstream else None
        self.client: ClientSession | None = None
        self.stats = {"requests": 0, "assembled": 0, "passthrough": 0}
        self.pending: set[asyncio.Task] = set()

    def app(self) -> web.Application:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_get("/lore/health", self.health)
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

    async def health(self, request: web.Request) -> web.Response:
        return web.json_response({"ok": True, "pid": os.getpid(), **self.stats})

    async def proxy(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        api = API_OF_PATH.get(request.path.rstrip("/")) if request.method == "POST" else None
        self.stats["requests"] += 1
        session, sent, stream = None, raw, False
        if api is not None:
            session, sent, stream = await self._assemble(api, request, raw)
        base = self.upstream or DEFAULT_UPSTREAM.get(api or "", DEFAULT_UPSTREAM["anthropic-messages"])
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        assert self.client is not None
        try:
            return await self._forward(request, api, base, headers, sent, session, stream)
        except (TimeoutError, ClientError, OSError) as exc:
            if request.get("lore_answering"):
                raise  # the answer had begun: the connection just ends, as the provider's did
            # The provider could not be reached: say so in the shape harnesses read (an API
            # error they retry), never a bare 500 from the proxy.
            log.warning("upstream %s unreachable: %s", base, type(exc).__name__)
            return web.json_response({"type": "error", "error": {"type": "api_error", "message":
                                      f"lore gateway: the upstream {base} could not be reached ({type(exc).__name__})"}},
                                     status=502)

    async def _forward(self, request: web.Request, api: str | None, base: str, headers: dict[str, str], sent: bytes,
                       session: str | None, stream: bool) -> web.StreamResponse:
        assert self.client is not None
        async with self.client.request(request.method, base + request.path_qs, headers=headers, data=sent) as up:
            reply = web.StreamResponse(status=up.status, headers={k: v for k, v in up.headers.items()
                                                                  if k.lower() not in HOP})
            await reply.prepare(request)
            request["lore_answering"] = True
            tail, events, whole = b"", [], bytearray()
            async for chunk in up.content.iter_any():
                await reply.write(chunk)
                if api is None:
                    continue
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
            body = json.loads(raw)
        except ValueError:
            return None, raw, False
        if not isinstance(body, dict):
            return None, raw, False
        session = session_of(api, request.headers, body)
        stream = bool(body.get("stream"))
        try:
            result = await self.host.call("lore/assembleContext", {
                "sessionId": session, "body": body, "api": api, "harness": harness_of(request.headers)})
        except Exception as exc:  # fail open: the harness's own body goes upstream
            self.stats["passthrough"] += 1
            log.warning("context assembly failed (%s); passing %s through", type(exc).__name__, request.path)
            return session, raw, stream
        self.stats["assembled"] += 1
        return session, json.dumps(result["body"], ensure_ascii=False).encode(), stream

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


def _usage_event(e: dict[str, Any]) -> bool:
    return e.get("type") in ("message_start", "message_delta", "response.completed") or bool(e.get("usage"))


def serve(gateway: Gateway, host: str, port: int, on_ready) -> None:
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
        try:
            await stop.wait()
        finally:
            await runner.cleanup()  # lets answers in flight finish and usage be recorded

    asyncio.run(main())
