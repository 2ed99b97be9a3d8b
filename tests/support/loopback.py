"""What the fake servers share: an HTTP server on 127.0.0.1 and a free port that stops itself
after `lifetime_s` even if a test forgets to, and a quiet handler that answers JSON."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class QuietHandler(BaseHTTPRequestHandler):
    # Headers and body go out in separate writes; with Nagle on, a client that keeps the
    # connection alive (as a proxy does) waits a delayed ACK (~40 ms) for the second one.
    # Real model APIs do not behave so; neither does this fake.
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def send_json(self, status: int, payload: dict[str, Any], **headers: str) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up mid-reply (a process shutting down during a call) is normal
        # here; anything else still prints.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class LoopbackServer:
    """Serve `handler` on 127.0.0.1 (a free port) as a context manager."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], *, lifetime_s: float):
        self.server = _Server(("127.0.0.1", 0), handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._timer = threading.Timer(lifetime_s, self.close)
        self._timer.daemon = True

    def __enter__(self):
        self._thread.start()
        self._timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._timer.cancel()
        self.server.shutdown()
        self.server.server_close()
