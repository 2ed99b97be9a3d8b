"""stdio transport: fd-level stdout guard, a reader thread, and envelope validation in front
of pygls.

Only protocol frames may reach the client's stdout. At start-up fd 1 is duplicated to a
private descriptor used solely by the protocol writer, and fd 1 is pointed at stderr, so a
stray `print()` or a C library writing to stdout can never corrupt the stream.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from lore_sidecar.heap import release_memory
from lore_sidecar.rpc.framing import (
    MAX_DEPTH,
    Frame,
    FrameParser,
    Skipped,
    encode,
    too_deep,
    top_level_id,
)

log = logging.getLogger(__name__)

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


class StdoutGuard:
    """Owns the real stdout. `install()` must run before anything else can write to it."""

    def __init__(self, fd: int):
        self.fd = fd
        self._lock = threading.Lock()
        self.closed = False

    @classmethod
    def install(cls) -> StdoutGuard:
        sys.stdout.flush()
        private = os.dup(1)
        os.set_inheritable(private, False)
        os.dup2(2, 1)  # anything written to fd 1 from now on lands on stderr
        sys.stdout = sys.stderr
        return cls(private)

    def write(self, data: bytes) -> None:
        with self._lock:
            if self.closed:
                return
            view = memoryview(data)
            while view:
                n = os.write(self.fd, view)
                view = view[n:]

    def close(self) -> None:
        with self._lock:
            self.closed = True


class GuardedWriter:
    """pygls's writer interface over the guard."""

    def __init__(self, guard: StdoutGuard):
        self.guard = guard

    def write(self, data: bytes) -> None:
        self.guard.write(data)

    def close(self) -> None:
        self.guard.close()


def error_frame(msg_id: Any, code: int, message: str, data: Any = None) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return encode(json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": err}).encode())


BIG_FRAME = 1 << 20


def _schedule_release() -> None:
    """After a large request, hand freed memory back to the OS once it is likely done with
    (glibc keeps freed arenas otherwise, and a 50 MB message would pin hundreds of MB)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    for delay in (0.5, 2.0, 8.0):
        loop.call_later(delay, release_memory)


def clean_strings(value: Any) -> Any:
    """Lone UTF-16 surrogates (JSON `"\\ud800"` escapes) become U+FFFD in every string of a
    message, so nothing downstream (SQLite, the indexes, a model request) meets text it
    cannot encode. Depth is already bounded by `MAX_DEPTH`."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [clean_strings(v) for v in value]
    if isinstance(value, dict):
        return {clean_strings(k): clean_strings(v) for k, v in value.items()}
    return value


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class Dispatcher:
    """Validates each message's envelope, answers what pygls would leave unanswered, and
    hands the rest to the pygls protocol."""

    def __init__(self, protocol, send_raw: Callable[[bytes], None]):
        self.protocol = protocol
        self.send_raw = send_raw
        self.parser = FrameParser()
        self.shutdown_requested = False
        self.exit_requested = False
        self.exit_code = 0
        self.on_exit: Callable[[], None] = lambda: None
        # The ids of the client's requests handed to pygls: shutdown and exit wait for these,
        # not for notification handlers (pygls files `initialized`, which runs the first
        # scan, among the same futures under an id of its own) nor for our own requests.
        self.requests: set[Any] = set()

    def feed(self, data: bytes) -> None:
        for event in self.parser.feed(data):
            self._guarded(event)

    def finish(self) -> None:
        for event in self.parser.finish():
            self._guarded(event)

    def _guarded(self, event: Frame | Skipped) -> None:
        """One event's failure never costs the others read with it their replies."""
        try:
            self._event(event)
        except SystemExit:
            raise
        except Exception as exc:
            log.error("could not dispatch a message: %s: %s", type(exc).__name__, str(exc)[:200])

    def _error(self, msg_id: Any, code: int, message: str, data: Any = None) -> None:
        self.send_raw(error_frame(msg_id, code, message, data))

    def _event(self, event: Frame | Skipped) -> None:
        if isinstance(event, Skipped):
            log.warning("skipped input: %s", event.reason)
            self._error(event.request_id, INVALID_REQUEST if event.request_id is not None else PARSE_ERROR, f"Invalid frame: {event.reason}")
            return
        if len(event.body) > BIG_FRAME:
            _schedule_release()
        if too_deep(event.body):
            self._error(top_level_id(event.body), INVALID_REQUEST,
                        f"Invalid Request: nested deeper than {MAX_DEPTH} levels")
            return
        try:
            msg = json.loads(event.body)
        except (ValueError, UnicodeDecodeError) as exc:
            self._error(None, PARSE_ERROR, f"Parse error: {str(exc)[:200]}")
            return
        except RecursionError:
            self._error(top_level_id(event.body), INVALID_REQUEST, "Invalid Request: nested too deeply")
            return
        self.message(clean_strings(msg))

    def message(self, msg: Any) -> None:
        if not isinstance(msg, dict):
            what = "batch requests are not supported" if isinstance(msg, list) else "a message must be an object"
            self._error(None, INVALID_REQUEST, f"Invalid Request: {what}")
            return
        has_id = "id" in msg
        msg_id = msg.get("id")
        if has_id and not _valid_id(msg_id):
            # A fractional id is a number JSON-RPC discourages: refuse it, but to its sender.
            echo = msg_id if isinstance(msg_id, float) else None
            self._error(echo, INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
            return
        reply_id = msg_id if has_id else None
        if msg.get("jsonrpc") != "2.0":
            if has_id:
                self._error(reply_id, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
            return
        if "method" not in msg:
            if has_id and ("result" in msg or "error" in msg):
                self._dispatch(msg)  # a response to one of our requests
            elif has_id:
                self._error(reply_id, INVALID_REQUEST, "Invalid Request: no method")
            return
        method = msg["method"]
        if not isinstance(method, str) or not method:
            if has_id:
                self._error(reply_id, INVALID_REQUEST, "Invalid Request: method must be a non-empty string")
            return
        if "params" in msg and msg["params"] is not None and not isinstance(msg["params"], dict | list):
            if has_id:
                self._error(reply_id, INVALID_PARAMS, "Invalid params: must be an object or an array", {"errors": ["params: expected an object"]})
            return
        if msg_id is None and has_id:
            # JSON-RPC allows a null id but LSP never uses one; pygls would treat it as a
            # request it cannot answer. Refuse it plainly.
            self._error(None, INVALID_REQUEST, "Invalid Request: id must not be null")
            return
        if self.shutdown_requested and method != "exit":
            if has_id:
                self._error(reply_id, INVALID_REQUEST, "Invalid Request: the server is shutting down")
            return
        if method == "exit":
            self.exit_requested = True
            # Trigger: a client that pipes a whole transcript sends shutdown and exit right
            # behind its requests. Why: pygls cancels in-flight requests on shutdown and
            # exits at once on exit. Outcome: both wait until every earlier request is answered.
            asyncio.ensure_future(self._when_idle(lambda: self._dispatch(msg)))
            return
        if method == "shutdown" and has_id:
            self.shutdown_requested = True
            asyncio.ensure_future(self._when_idle(lambda: self._dispatch(msg)))
            return
        if has_id:
            if len(self.requests) > 256:
                self.requests &= self.protocol._request_futures.keys()  # the answered ones go
            self.requests.add(msg_id)
        self._dispatch(msg)

    async def _when_idle(self, then: Callable[[], None], timeout: float = 120.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            futures = self.protocol._request_futures
            pending = [f for i, f in list(futures.items()) if i in self.requests and not f.done()]
            if not pending:
                # A finished request is answered by its future's done-callback, which the
                # loop has queued but not yet run: yield once so every answer is written
                # before shutdown or exit proceeds (under load it otherwise was not).
                await asyncio.sleep(0)
                break
            await asyncio.sleep(0.01)
        try:
            then()
        except SystemExit as exc:
            self.exit_code = int(exc.code or 0)
            self.on_exit()

    def _dispatch(self, msg: dict) -> None:
        try:
            structured = self.protocol.structure_message(msg)
        except JsonRpcInvalidParams as exc:
            cause = exc.__cause__
            errors = _cattrs_errors(cause) if cause else [str(exc)]
            if "id" in msg and "method" in msg:
                self._error(msg["id"], INVALID_PARAMS, "Invalid params: " + "; ".join(errors[:5]), {"errors": errors})
            return
        except JsonRpcException as exc:
            if "id" in msg and "method" in msg:
                self._error(msg["id"], INVALID_PARAMS, f"Invalid params: {exc.message}", {"errors": [exc.message]})
            return
        self.protocol.handle_message(structured)


def _cattrs_errors(exc: BaseException) -> list[str]:
    try:
        import cattrs

        if isinstance(exc, cattrs.BaseValidationError):
            return cattrs.transform_error(exc, path="params")
    except Exception:  # pragma: no cover - defensive
        pass
    return [str(exc)]


def read_stdin_forever(loop: asyncio.AbstractEventLoop, on_data: Callable[[bytes], None], on_eof: Callable[[], None]) -> threading.Thread:
    """A dedicated reader thread: never shares a pool with request handlers, so a busy
    handler can never starve the reader (pygls reads on its handler pool)."""

    def run() -> None:
        fd = sys.stdin.fileno()
        try:
            while True:
                data = os.read(fd, 1 << 16)
                if not data:
                    break
                loop.call_soon_threadsafe(on_data, data)
        except OSError as exc:
            log.warning("stdin read failed: %s", exc)
        finally:
            try:
                loop.call_soon_threadsafe(on_eof)
            except RuntimeError:
                pass  # loop already closed

    t = threading.Thread(target=run, name="lore-stdin", daemon=True)
    t.start()
    return t
