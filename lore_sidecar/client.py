"""A small synchronous JSON-RPC client over a child's stdio, with a strict framing parser.

Used by `lore-sidecar demo`, the tests and the benchmarks. Strict on purpose: any byte on
the child's stdout that is not part of a well-formed frame raises, as vscode-jsonrpc would.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from lore_sidecar.spawn import module_command


class ProtocolViolation(RuntimeError):
    pass


class RpcError(RuntimeError):
    def __init__(self, error: dict[str, Any]):
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.data = error.get("data")
        self.error = error


def read_frame(stream) -> dict[str, Any] | None:
    """One frame, strictly: headers `Name: value\\r\\n`, a blank `\\r\\n`, then exactly the body."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if not line.endswith(b"\r\n"):
            raise ProtocolViolation(f"header line without CRLF: {line[:80]!r}")
        if line == b"\r\n":
            break
        name, sep, value = line[:-2].partition(b":")
        if not sep:
            raise ProtocolViolation(f"not a header: {line[:80]!r}")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length is None:
        raise ProtocolViolation("frame without Content-Length")
    body = stream.read(length)
    if len(body) != length:
        raise ProtocolViolation("truncated body")
    return json.loads(body)


def sidecar_command(*extra: str) -> list[str]:
    return module_command("lore_sidecar", "--stdio", *extra)


class StdioClient:
    def __init__(self, cmd: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None):
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd
        )
        self._ids = itertools.count(1)
        self._pending: dict[Any, queue.Queue] = {}
        self._lock = threading.Lock()
        self.notifications: list[dict[str, Any]] = []
        self.unsolicited: list[dict[str, Any]] = []  # replies nobody waits for (e.g. id null)
        self._note_cond = threading.Condition()
        self.stderr_lines: list[str] = []
        self.violation: Exception | None = None
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr_lines.append(line.decode(errors="replace").rstrip())

    def _read(self) -> None:
        try:
            while True:
                msg = read_frame(self.proc.stdout)
                if msg is None:
                    break
                if "method" in msg and "id" in msg:  # a request from the server
                    self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                    continue
                if "method" in msg:
                    with self._note_cond:
                        self.notifications.append(msg)
                        self._note_cond.notify_all()
                    continue
                q = self._pending.pop(msg.get("id"), None)
                if q is not None:
                    q.put(msg)
                else:
                    with self._note_cond:
                        self.unsolicited.append(msg)
                        self._note_cond.notify_all()
        except Exception as exc:
            self.violation = exc
        finally:
            for q in list(self._pending.values()):
                q.put({"error": {"code": -1, "message": "connection closed"}})

    def _send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg).encode()
        with self._lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def send_raw(self, data: bytes) -> None:
        with self._lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def request_full(self, method: str, params: Any = None, *, timeout: float = 60.0, msg_id: Any = None) -> dict[str, Any]:
        msg_id = next(self._ids) if msg_id is None else msg_id
        q: queue.Queue = queue.Queue()
        self._pending[msg_id] = q
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)
        try:
            return q.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"{method} not answered in {timeout}s") from None

    def request(self, method: str, params: Any = None, *, timeout: float = 60.0) -> Any:
        reply = self.request_full(method, params, timeout=timeout)
        if "error" in reply:
            raise RpcError(reply["error"])
        return reply.get("result")

    def notify(self, method: str, params: Any = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def wait_notification(self, method: str, predicate=lambda p: True, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._note_cond:
            while True:
                for n in self.notifications:
                    if n["method"] == method and predicate(n.get("params")):
                        return n
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no {method} notification in {timeout}s")
                self._note_cond.wait(left)

    def wait_unsolicited(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self._note_cond:
            while len(self.unsolicited) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._note_cond.wait(left)
            return list(self.unsolicited)

    def initialize(self, folder: Path | None, *, options: dict[str, Any] | None = None, progress: bool = True) -> dict[str, Any]:
        params: dict[str, Any] = {
            "processId": os.getpid(),
            "capabilities": {"window": {"workDoneProgress": progress}},
            "initializationOptions": options or {},
        }
        if folder is not None:
            uri = Path(folder).resolve().as_uri()
            params["rootUri"] = uri
            params["workspaceFolders"] = [{"uri": uri, "name": Path(folder).name}]
        result = self.request("initialize", params)
        self.notify("initialized", {})
        return result

    def close(self, timeout: float = 10.0) -> int:
        try:
            if self.proc.poll() is None:
                self.request("shutdown", timeout=timeout)
                self.notify("exit")
        except Exception:
            pass
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
