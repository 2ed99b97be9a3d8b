"""A fake Anthropic Messages API on 127.0.0.1 for tests: the real SDK talks to it over HTTP.

Deterministic: each reply comes from `responder(body)` (or a scripted error status): text, or
a dict `{"text"?, "tool_use"?: [(name, input), ...], "delay"?: seconds}` for tool calls and a
slow model. For a model that misbehaves, the dict may instead carry `"message"` (the answer's
fields as given: any content blocks, ids, inputs, `stop_reason`; the rest defaulted),
`"status"` (+ `"error_type"`: an error answer in the provider's shape) or `"raw"` (bytes sent
as the 200 body, JSON or not).
Every request body is recorded. Listens on loopback only, on a free port, and stops itself
after `lifetime_s` even if a test forgets to.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from tests.support.loopback import LoopbackServer, QuietHandler


class FakeAnthropic(LoopbackServer):
    def __init__(self, responder: Callable[[dict[str, Any]], str] | None = None, *, lifetime_s: float = 600):
        self.responder = responder or (lambda body: "ok")
        self.bodies: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []  # time.monotonic() of each request's arrival
        self.script: list[int] = []  # status codes to answer with before succeeding
        fake = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                fake.times.append(time.monotonic())
                fake.raw.append(raw)
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                body = json.loads(raw or b"{}")
                fake.bodies.append(body)
                if self.path.rstrip("/") != "/v1/messages":
                    return self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
                if fake.script:
                    status = fake.script.pop(0)
                    kind = {429: "rate_limit_error", 529: "overloaded_error", 401: "authentication_error"}.get(status, "api_error")
                    return self._send(status, {"type": "error", "error": {"type": kind, "message": f"scripted {status}"}})
                reply = fake.responder(body)
                calls: list = []
                if isinstance(reply, dict):
                    time.sleep(float(reply.get("delay") or 0))
                    if "status" in reply:
                        return self._send(int(reply["status"]), {"type": "error", "error": {
                            "type": reply.get("error_type", "api_error"), "message": f"scripted {reply['status']}"}})
                    if "raw" in reply:
                        return self._raw(reply["raw"])
                    if "message" in reply:
                        return self.send_json(200, {
                            "id": f"msg_fake_{len(fake.bodies):04d}", "type": "message", "role": "assistant",
                            "model": body.get("model", "fake"), "content": [], "stop_reason": "end_turn",
                            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
                            **reply["message"]})
                    calls = list(reply.get("tool_use") or [])
                    reply = reply.get("text") or ""
                text = str(reply)
                content = [{"type": "text", "text": text}] if text or not calls else []
                n = len(fake.bodies)
                content += [{"type": "tool_use", "id": f"toolu_{n:04d}_{i}", "name": name, "input": args}
                            for i, (name, args) in enumerate(calls)]
                n_in = len(json.dumps(body.get("messages", []))) // 4
                cached = sum(len(b.get("text", "")) // 4 for b in body.get("system", []) if isinstance(b, dict) and b.get("cache_control"))
                return self._send(200, {
                    "id": f"msg_fake_{len(fake.bodies):04d}",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "fake"),
                    "content": content,
                    "stop_reason": "tool_use" if calls else "end_turn",
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": n_in,
                        "output_tokens": max(1, len(text) // 4),
                        "cache_creation_input_tokens": cached if len(fake.bodies) == 1 else 0,
                        "cache_read_input_tokens": cached if len(fake.bodies) > 1 else 0,
                    },
                })

            def _raw(self, data: bytes) -> None:
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                self.send_json(status, payload, **({"retry_after": "0"} if status == 429 else {}))

        super().__init__(Handler, lifetime_s=lifetime_s)
