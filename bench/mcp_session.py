"""The official MCP client (the `mcp` SDK) driving `lore-sidecar mcp` over stdio; used by
bench/mcp.py and the tests."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_types import Implementation

PASSED_ON = ("PATH", "PYTHONPATH", "HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "TMPDIR", "TMP", "TEMP")


@asynccontextmanager
async def mcp_session(store: Path, workspace: Path, *args: str, client_name: str = "lore-tests",
                      env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lore_sidecar", "mcp", "--store-dir", str(store), *args],
        cwd=str(workspace),
        # The SDK passes only a few variables on; PYTHONPATH too, so a scratch tree (tools/
        # mutations.py) runs its own code; and the home and temp dirs the caller chose (the
        # suite's own): without them the server fell back to the account's real home and /tmp.
        env={k: os.environ[k] for k in PASSED_ON if k in os.environ} | (env or {}))
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write, client_info=Implementation(name=client_name, version="1")) as session:
                await session.initialize()
                yield session


class LineClient:
    """A lean synchronous MCP client (newline-delimited JSON-RPC over the server's pipes), the
    counterpart of the strict LSP client in lore_sidecar/client.py: what the server costs,
    without a client library's own overhead."""

    def __init__(self, store: Path, workspace: Path, *args: str, env: dict[str, str] | None = None):
        import subprocess

        self.proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "mcp", "--store-dir", str(store), *args],
                                     cwd=str(workspace), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "lore-bench", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise ConnectionError("the MCP server closed its output")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(reply["error"])
                return reply["result"]

    def call(self, tool: str, arguments: dict) -> str:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        return "\n".join(c.get("text", "") for c in result["content"])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
