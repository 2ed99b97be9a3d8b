"""The MCP handshake answered before the SDK has loaded.

Importing the MCP SDK takes over a second here, and some agents do not wait for their MCP
servers: Codex sends the first model request without a server that has not answered
`initialize` and `tools/list` within about a second (measured with a server delaying its
handshake by 1.5 s: its tools were missing from the first request). So the handshake a
server answered before is kept (`<store>/mcp/handshake-<key>.json`, the key a hash of this
package's MCP face source, the SDK's version and the harness; `initialize` kept per protocol
version asked), and a later start answers the same two requests from it at once while the
SDK loads on another thread; `lore-sidecar install` keeps one for the usual versions. The
SDK still reads every line, `initialize` included, so its session state is its own; its
replies to the requests answered early are dropped on the way out. With no (or another)
kept handshake, nothing is answered early, and the SDK's own replies are kept for the next
start.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
EARLY = ("initialize", "server/discover", "tools/list")
# MCP 2026-07-28 clients (Copilot CLI 1.0.102) open with `server/discover` and name the
# protocol in every request's `_meta`; one that gets no answer within ~9 s falls back to
# `initialize`, which the SDK then refuses (it already serves 2026-07-28): so a slow start
# cost Copilot all of lore's tools. Both openings are kept, per protocol version.
META_PROTOCOL = "io.modelcontextprotocol/protocolVersion"


def _key(harness: str | None) -> str:
    h = hashlib.sha256()
    for f in sorted(Path(__file__).parent.glob("*.py")):
        h.update(f.read_bytes())
    try:
        h.update(version("mcp").encode())
    except PackageNotFoundError:
        pass
    h.update(f"\0{harness}".encode())
    return h.hexdigest()[:24]


class Handshake:
    """Reads the first lines from the client's pipe; answers what a kept handshake covers."""

    def __init__(self, folder: Path, harness: str | None, wire_in: int, wire_out: int):
        self.folder = folder
        self.path = folder / f"handshake-{_key(harness)}.json"  # the key hashes source files: once
        self.wire_in = wire_in
        self.wire_out = wire_out
        self.lines: list[bytes] = []  # every line read here, for the SDK to read again
        self.rest = b""  # bytes past the last whole line
        self.answered: set[Any] = set()  # request ids answered here: the SDK's reply is dropped
        self.pending: dict[Any, str] = {}  # early request id -> method, until the SDK replies
        self.kept: dict[str, Any] = {}  # the SDK's results, kept for the next start
        self.protocol = ""
        self.discovered = False  # opened with server/discover (MCP 2026-07-28), not initialize
        self.over = False  # the handshake is over: later lines are not looked at

    def run(self) -> None:
        """Until a line it cannot answer, or both early requests are answered, or EOF."""
        kept: dict[str, Any] | None = None
        while (line := self._line()) is not None:
            self.lines.append(line)
            msg = self._request(line)
            if msg is None:
                return
            if msg["method"] == "notifications/initialized":
                continue
            if msg["method"] in ("initialize", "server/discover"):
                kept = self._load()
            result = self._answer(kept, msg["method"])
            if result is None:
                return
            os.write(self.wire_out, (json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n").encode())
            self.answered.add(msg["id"])
            self.pending.pop(msg["id"], None)
            if msg["method"] == "tools/list":
                self.over = True
                return

    def _answer(self, kept: dict[str, Any] | None, method: str) -> Any:
        """The kept reply: `initialize` is kept per protocol version asked (the SDK answers
        each with the version it settles on), `tools/list` once."""
        if kept is None:
            return None
        if method in ("initialize", "server/discover"):
            return (kept.get(method) or {}).get(self.protocol)
        if self.discovered:  # a 2026-07-28 tools/list result has fields of its own
            return (kept.get("tools/list@") or {}).get(self.protocol)
        return kept.get(method)

    def incoming(self, line: bytes) -> None:
        """A line the SDK reads (those read above come again): early requests are noted."""
        if not self.over:
            self._request(line)

    def _request(self, line: bytes) -> dict[str, Any] | None:
        """The line as a handshake message (noting an early request), or None — which ends
        the handshake: anything else means the client is past it."""
        try:
            msg = json.loads(line)
        except ValueError:
            msg = None
        method = msg.get("method") if isinstance(msg, dict) else None
        if method == "notifications/initialized":
            return msg
        if method not in EARLY or "id" not in msg:
            self.over = True
            return None
        if method == "initialize":
            self.protocol = str((msg.get("params") or {}).get("protocolVersion", ""))
        elif method == "server/discover":
            self.discovered = True
            self.protocol = str(((msg.get("params") or {}).get("_meta") or {}).get(META_PROTOCOL, ""))
        if msg["id"] not in self.answered:
            self.pending.setdefault(msg["id"], method)
        return msg

    def _line(self) -> bytes | None:
        while b"\n" not in self.rest:
            chunk = os.read(self.wire_in, 65536)
            if not chunk:
                return None
            self.rest += chunk
        line, _, self.rest = self.rest.partition(b"\n")
        return line + b"\n"

    def _load(self) -> dict[str, Any] | None:
        try:
            kept = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return None
        return kept if isinstance(kept, dict) else None

    def outgoing(self, text: str) -> str:
        """What the SDK writes, less its replies to requests answered here; its replies to
        the early requests are kept for the next start."""
        if not self.pending and not self.answered:
            return text
        try:
            msg = json.loads(text)
        except ValueError:
            return text
        if not isinstance(msg, dict) or "id" not in msg or "method" in msg:
            return text
        rid = msg["id"]
        if rid in self.answered:
            self.answered.discard(rid)
            return ""
        method = self.pending.pop(rid, None)
        if method is not None and "result" in msg:
            self.kept[method] = msg["result"]
            if "tools/list" in self.kept and ("initialize" in self.kept or "server/discover" in self.kept):
                self._save()
        return text

    def _save(self) -> None:
        """Merged into what is kept (other protocol versions' `initialize` stay), under a
        lock: servers started together each add their own."""
        import fcntl

        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with open(self.folder / ".lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                kept = self._load() or {}
                out = {k: kept[k] if isinstance(kept.get(k), dict) else {} for k in ("initialize", "server/discover",
                                                                                     "tools/list@")}
                out["tools/list"] = kept.get("tools/list")
                opening = "server/discover" if self.discovered else "initialize"
                out[opening][self.protocol] = self.kept[opening]
                if self.discovered:
                    out["tools/list@"][self.protocol] = self.kept["tools/list"]
                else:
                    out["tools/list"] = self.kept["tools/list"]
                tmp = self.path.with_suffix(".tmp")
                tmp.write_text(json.dumps(out))
                os.replace(tmp, self.path)
        except OSError as exc:
            log.info("MCP handshake not kept: %s", exc)


# The protocol versions MCP clients ask for (a newer client asks a newer one; a version not
# kept is answered by the SDK, and kept from then on).
USUAL_PROTOCOLS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
DISCOVER_PROTOCOLS = ("2026-07-28",)  # opened with server/discover


def keep(command: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None, timeout_s: float = 20,
         protocols: tuple[str, ...] | None = None) -> int:
    """Start `command` (an MCP server on stdio) once per protocol version (the usual ones
    unless the host's own are named), all at once, and run the handshake with each (waiting
    for each reply, as a client does), so the kept handshake covers them. How many completed."""
    import selectors
    import subprocess
    import time

    def send(proc, *msgs) -> None:
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in msgs))
        proc.stdin.flush()

    protocols = protocols or (*USUAL_PROTOCOLS, *DISCOVER_PROTOCOLS)
    procs = [subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL) for _ in protocols]
    stage = {}
    metas: dict[Any, dict[str, Any]] = {}
    sel = selectors.DefaultSelector()
    for proc, protocol in zip(procs, protocols, strict=True):
        if protocol in DISCOVER_PROTOCOLS:
            metas[proc] = {"_meta": {META_PROTOCOL: protocol, "io.modelcontextprotocol/clientInfo": {
                "name": "lore-install", "version": "1"}, "io.modelcontextprotocol/clientCapabilities": {}}}
            send(proc, {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": metas[proc]})
        else:
            send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": protocol, "capabilities": {}, "clientInfo": {"name": "lore-install", "version": "1"}}})
        sel.register(proc.stdout, selectors.EVENT_READ, proc)
        stage[proc] = 1
    done = 0
    deadline = time.monotonic() + timeout_s
    try:
        while stage and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=max(0.0, deadline - time.monotonic())):
                proc = key.data
                line = proc.stdout.readline()
                if not line:  # the server ended (an unsupported version is refused, say)
                    sel.unregister(proc.stdout)
                    stage.pop(proc, None)
                elif stage.get(proc) == 1 and proc in metas:  # stateless: no initialized notification
                    send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": metas[proc]})
                    stage[proc] = 2
                elif stage.get(proc) == 1:
                    send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                         {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
                    stage[proc] = 2
                elif stage.get(proc) == 2:
                    done += 1
                    sel.unregister(proc.stdout)
                    stage.pop(proc)
    finally:
        for proc in procs:
            try:
                proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
    return done
