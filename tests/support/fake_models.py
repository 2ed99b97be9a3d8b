"""A fake model server on 127.0.0.1 for running real agent harnesses offline.

It speaks, streaming (SSE) and not, the three wire APIs the harnesses use: OpenAI Chat
Completions (OpenCode, Pi), Anthropic Messages (Claude Code) and OpenAI Responses (Codex);
plus `GET /v1/models` and Anthropic's `count_tokens`. Every request body is recorded so a
test can assert what reached "the model". Replies come from `responder(api, body)`. Loopback
only, a free port, and it stops itself after `lifetime_s`.

Real peers misbehave, and so can this one (all off by default): `compress="gzip"|"deflate"`
compresses the non-streamed JSON answers (messages, chat, `count_tokens`, `/v1/models`) when
the client's Accept-Encoding allows it, as real servers and proxies do; a responder may return
a `Raw` reply (any status, headers and bytes, chunked or not, a slow first byte, a stream cut
in the middle). `seen` keeps every request as it arrived (method, path, headers, raw bytes).
"""

from __future__ import annotations

import gzip
import json
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.loopback import LoopbackServer, QuietHandler

# A reply is text, or (streaming: Chat Completions, Anthropic Messages, Responses) a tool call:
# {"tool_call": {"name": ..., "arguments": {...}}} (Responses: also "namespace"); not streaming,
# Chat Completions also takes {"tool_calls": [{"name": ..., "arguments": {...}}, ...]}.
Responder = Callable[[str, dict[str, Any]], Any]


@dataclass
class Raw:
    """A reply written as given: `chunks` sent one by one (flushed), framed by Content-Length
    (their total) or `chunked`; `delay_s` before the first byte; `cut` closes the connection
    before the reply is complete (a Content-Length larger than what was sent, or no final
    chunk)."""
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)
    chunked: bool = False
    delay_s: float = 0.0
    gap_s: float = 0.0
    cut: bool = False


def encode(data: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip.compress(data, mtime=0)  # mtime 0: the same bytes each time
    if encoding == "deflate":
        return zlib.compress(data)
    raise ValueError(encoding)


def _sse(events: list[tuple[str | None, dict[str, Any] | str]]) -> bytes:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(out).encode()


class FakeModels(LoopbackServer):
    def __init__(self, responder: Responder | None = None, *, lifetime_s: float = 900, compress: str | None = None):
        self.responder = responder or (lambda api, body: "OK.")
        self.compress = compress
        self.requests: list[tuple[str, str, dict[str, Any]]] = []  # (api, path, body)
        self.seen: list[tuple[str, str, list[tuple[str, str]], bytes]] = []  # (method, path, headers, raw body)
        # Each request line as it arrived: http.server folds a leading "//" of the path into
        # "/" (an open-redirect guard), so `seen` cannot show a doubled slash; real providers 404 it.
        self.request_lines: list[str] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def send_json(self, status: int, payload: dict[str, Any], **headers: str) -> None:
                wanted = str(self.headers.get("accept-encoding") or "").lower()
                if not fake.compress or fake.compress not in wanted:
                    return super().send_json(status, payload, **headers)
                data = encode(json.dumps(payload).encode(), fake.compress)
                self._raw(Raw(status, [("content-type", "application/json"), ("content-encoding", fake.compress),
                                       ("request-id", "req_fake"), ("vary", "accept-encoding"),
                                       *((k.replace("_", "-"), v) for k, v in headers.items())], [data]))

            def _raw(self, r: Raw) -> None:
                time.sleep(r.delay_s)
                self.send_response(r.status)
                for name, value in r.headers:
                    self.send_header(name, value)
                total = sum(len(c) for c in r.chunks)
                if r.chunked:
                    self.send_header("transfer-encoding", "chunked")
                else:
                    self.send_header("content-length", str(total + (10 if r.cut else 0)))
                if r.cut:
                    self.send_header("connection", "close")
                self.end_headers()
                for i, c in enumerate(r.chunks):
                    if i and r.gap_s:
                        time.sleep(r.gap_s)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(c), c) if r.chunked else c)
                    self.wfile.flush()
                if r.chunked and not r.cut:
                    self.wfile.write(b"0\r\n\r\n")
                if r.cut:
                    self.close_connection = True

            def do_GET(self) -> None:  # noqa: N802
                with fake._lock:
                    fake.seen.append(("GET", self.path, list(self.headers.items()), b""))
                    fake.request_lines.append(self.requestline)
                if self.path.rstrip("/").endswith("/models"):
                    return self.send_json(200, {"object": "list", "data": [
                        {"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}]})
                self.send_json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                with fake._lock:
                    fake.seen.append(("POST", self.path, list(self.headers.items()), raw))
                    fake.request_lines.append(self.requestline)
                try:
                    body = json.loads(raw or b"{}")
                    assert isinstance(body, dict)
                except (ValueError, RecursionError, AssertionError):  # as the real API answers such a body
                    return self.send_json(400, {"type": "error", "error": {
                        "type": "invalid_request_error", "message": "The request body is not valid JSON."}})
                path = self.path.split("?")[0].rstrip("/")
                if path.endswith("/messages/count_tokens"):
                    return self.send_json(200, {"input_tokens": len(json.dumps(body)) // 4})
                api = ("anthropic" if path.endswith("/messages") else "chat" if path.endswith("/chat/completions")
                       else "responses" if path.endswith("/responses") else None)
                if api is None:
                    return self.send_json(404, {"error": {"message": f"no route {self.path}"}})
                with fake._lock:
                    fake.requests.append((api, path, body))
                text = fake.responder(api, body)
                if isinstance(text, Raw):
                    return self._raw(text)
                stream = bool(body.get("stream"))
                if api == "chat":
                    return self._chat(body, text, stream)
                if api == "anthropic":
                    return self._anthropic(body, text, stream)
                return self._responses(body, text)

            # -- OpenAI Chat Completions --------------------------------------------------------
            def _chat(self, body: dict, text: str, stream: bool) -> None:
                rid, model, now = f"chatcmpl-{len(fake.requests)}", body.get("model", "fake-model"), int(time.time())
                usage = {"prompt_tokens": 10, "completion_tokens": max(1, len(text) // 4), "total_tokens": 10 + len(text) // 4}
                if not stream:
                    message: dict[str, Any] = {"role": "assistant", "content": text}
                    if isinstance(text, dict) and "tool_calls" in text:  # non-streaming tool calls
                        message = {"role": "assistant", "content": None, "tool_calls": [
                            {"id": f"call_{len(fake.requests)}_{i}", "type": "function",
                             "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                            for i, c in enumerate(text["tool_calls"])]}
                    return self.send_json(200, {"id": rid, "object": "chat.completion", "created": now, "model": model,
                                       "choices": [{"index": 0, "message": message,
                                                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
                                       "usage": usage})
                base = {"id": rid, "object": "chat.completion.chunk", "created": now, "model": model}
                if isinstance(text, dict) and "tool_call" in text:
                    call = text["tool_call"]
                    delta = {"role": "assistant", "content": None, "tool_calls": [{
                        "index": 0, "id": f"call_{len(fake.requests)}", "type": "function",
                        "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}]}
                    self._stream(_sse([
                        (None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
                        (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
                        (None, "[DONE]"),
                    ]))
                    return
                events: list = [
                    (None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}),
                    (None, {**base, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}),
                    (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
                ]
                if (body.get("stream_options") or {}).get("include_usage"):
                    events.append((None, {**base, "choices": [], "usage": usage}))
                events.append((None, "[DONE]"))
                self._stream(_sse(events))

            # -- Anthropic Messages -------------------------------------------------------------
            def _anthropic(self, body: dict, text: str, stream: bool) -> None:
                mid, model = f"msg_fake_{len(fake.requests)}", body.get("model", "fake-model")
                usage = {"input_tokens": 10, "output_tokens": max(1, len(text) // 4)}
                if isinstance(text, dict) and "tool_call" in text and stream:
                    call = text["tool_call"]
                    start = {"id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
                             "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
                    self._stream(_sse([
                        ("message_start", {"type": "message_start", "message": start}),
                        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
                            "type": "tool_use", "id": f"toolu_fake_{len(fake.requests)}", "name": call["name"], "input": {}}}),
                        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                            "type": "input_json_delta", "partial_json": json.dumps(call["arguments"])}}),
                        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                                           "usage": {"output_tokens": 5}}),
                        ("message_stop", {"type": "message_stop"}),
                    ]))
                    return
                if not stream:
                    return self.send_json(200, {"id": mid, "type": "message", "role": "assistant", "model": model,
                                       "content": [{"type": "text", "text": str(text)}], "stop_reason": "end_turn",
                                       "stop_sequence": None, "usage": usage})
                self._stream(_sse([
                    ("message_start", {"type": "message_start", "message": {
                        "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
                        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
                    ("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": {"type": "text", "text": ""}}),
                    ("ping", {"type": "ping"}),
                    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": {"type": "text_delta", "text": text}}),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                       "usage": {"output_tokens": usage["output_tokens"]}}),
                    ("message_stop", {"type": "message_stop"}),
                ]))

            # -- OpenAI Responses ---------------------------------------------------------------
            def _responses(self, body: dict, text: Any) -> None:
                rid, iid, model = f"resp_{len(fake.requests)}", f"msg_{len(fake.requests)}", body.get("model", "fake-model")
                if isinstance(text, dict) and "tool_call" in text:
                    return self._responses_call(rid, model, text["tool_call"])
                item = {"id": iid, "type": "message", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}
                response = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model,
                            "status": "in_progress", "output": []}
                usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                         "output_tokens": max(1, len(text) // 4), "output_tokens_details": {"reasoning_tokens": 0},
                         "total_tokens": 10 + len(text) // 4}
                self._stream(_sse([
                    ("response.created", {"type": "response.created", "response": response}),
                    ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                                    "item": {**item, "status": "in_progress", "content": []}}),
                    ("response.content_part.added", {"type": "response.content_part.added", "item_id": iid,
                                                     "output_index": 0, "content_index": 0,
                                                     "part": {"type": "output_text", "text": "", "annotations": []}}),
                    ("response.output_text.delta", {"type": "response.output_text.delta", "item_id": iid,
                                                    "output_index": 0, "content_index": 0, "delta": text}),
                    ("response.output_text.done", {"type": "response.output_text.done", "item_id": iid,
                                                   "output_index": 0, "content_index": 0, "text": text}),
                    ("response.content_part.done", {"type": "response.content_part.done", "item_id": iid,
                                                    "output_index": 0, "content_index": 0,
                                                    "part": {"type": "output_text", "text": text, "annotations": []}}),
                    ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
                    ("response.completed", {"type": "response.completed",
                                            "response": {**response, "status": "completed", "output": [item], "usage": usage}}),
                ]))

            def _responses_call(self, rid: str, model: str, call: dict) -> None:
                n = len(fake.requests)
                args = json.dumps(call["arguments"])
                item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": call["name"],
                        "arguments": args, "status": "completed",
                        # A tool inside a `namespace` tool (Codex groups an MCP server's tools so).
                        **({"namespace": call["namespace"]} if call.get("namespace") else {})}
                response = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model,
                            "status": "in_progress", "output": []}
                usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                         "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
                self._stream(_sse([
                    ("response.created", {"type": "response.created", "response": response}),
                    ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                                    "item": {**item, "arguments": "", "status": "in_progress"}}),
                    ("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta",
                                                                "item_id": item["id"], "output_index": 0, "delta": args}),
                    ("response.function_call_arguments.done", {"type": "response.function_call_arguments.done",
                                                               "item_id": item["id"], "output_index": 0, "arguments": args}),
                    ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
                    ("response.completed", {"type": "response.completed",
                                            "response": {**response, "status": "completed", "output": [item], "usage": usage}}),
                ]))

            def _stream(self, data: bytes) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        super().__init__(Handler, lifetime_s=lifetime_s)

    def bodies(self, api: str | None = None) -> list[str]:
        """Every recorded request body of `api` (all when None), as JSON text."""
        return [json.dumps(b) for a, _, b in self.requests if api is None or a == api]
