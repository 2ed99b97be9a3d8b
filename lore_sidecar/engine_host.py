"""The engine behind a face that is not the language server (the MCP server, the gateway).

The engine opens on a background thread, so the face answers at once and an agent starts
even when the store is slow to open. Calls run the `lore/*` handlers on this host's
executor, in order (rpc/calls.py), each bounded by the face's timeout (`mcpTimeoutMs`,
`gatewayTimeoutMs`): a hung or unusable store becomes an error the face turns into a tool
error or a passthrough, never a hang.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from lore_sidecar.rpc.calls import Calls
from lore_sidecar.rpc.features import ask, capture, context, facts, maintenance, memory, recall
from lore_sidecar.settings import Settings

log = logging.getLogger(__name__)


class Host:
    def __init__(self, settings: Settings, folders: list[str], open_engine: Callable[..., Any],
                 warnings: list[str] | None = None, *, timeout_ms: int | None = None):
        self.settings = settings
        self.folders = folders
        self.settings_warnings = list(warnings or [])
        self.timeout_s = (timeout_ms if timeout_ms is not None else settings.mcp_timeout_ms) / 1000
        self.executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="lore-mcp")
        self._open_engine = open_engine
        self._reopen = threading.Lock()
        self._engine: Future = self.executor.submit(self._open)
        calls = Calls(self)
        self.handlers: dict[str, Any] = {}
        for feature in (recall, capture, facts, memory, context, ask, maintenance):
            self.handlers.update(feature.handlers(calls))

    def _open(self) -> Any:
        engine = self._open_engine(self.settings, self.folders)
        if engine.role.writer and self.settings.index.index_workspace and engine.projects.folders:
            # The writer keeps the workspace searchable; the engine answers while it scans.
            self.executor.submit(self._scan, engine)
        return engine

    @staticmethod
    def _scan(engine: Any) -> None:
        try:
            engine.index.scan()
        except Exception as exc:  # a scan that fails leaves the last index; tools still answer
            log.warning("indexing the workspace failed: %s", exc)

    # -- what rpc/calls.py asks of a host -----------------------------------------------------------
    async def engine(self) -> Any:
        attempt = self._engine
        if attempt.done() and attempt.exception() is None:
            return attempt.result()  # the common case: opened
        # Trigger: the last attempt to open failed (a locked or half-made store, a full disk).
        # Why: this process lives as long as the agent; a passing fault must not disable it.
        # Outcome: each call after a failure tries once more; the error is the call's answer.
        with self._reopen:
            if self._engine.done() and self._engine.exception() is not None:
                self._engine = self.executor.submit(self._open)
            attempt = self._engine
        # shield: a call that times out must not cancel the opening every later call needs.
        return await asyncio.shield(asyncio.wrap_future(attempt))

    async def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, lambda: fn(*args, **kwargs))

    async def with_progress(self, title: str, work: Callable[[Callable[[str, int | None], None]], Any]) -> Any:
        return await self.run(work, lambda message, pct: None)

    # -- the face's one entrance ----------------------------------------------------------------------
    async def call(self, method: str, params: dict[str, Any], *, timeout_s: float | None = None) -> dict[str, Any]:
        """`lore/<method>` with these wire params; TimeoutError past `mcpTimeoutMs` (or `timeout_s`)."""
        async with asyncio.timeout(timeout_s or self.timeout_s):  # no task per call, unlike wait_for
            return await self.handlers[method](params)

    def close(self) -> None:
        if self._engine.done() and self._engine.exception() is None:
            try:
                self._engine.result().close()
            except Exception as exc:
                log.warning("closing the engine: %s", exc)
        self.executor.shutdown(wait=False, cancel_futures=True)
