"""The language server: pygls underneath, our transport in front, the engine behind.

`create_server()` builds a fresh server (no import-time globals), so tests can run two in
one process. `serve_stdio()` runs one over the process's stdin/stdout.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCRequestMessage, JsonRPCResponseMessage
from pygls.protocol.language_server import lsp_method

from lore_sidecar import PROTOCOL_VERSION, __version__, collector, logs
from lore_sidecar.engine.uris import file_path
from lore_sidecar.errors import LoreError, ScanStopped
from lore_sidecar.settings import Settings, load_settings
from lore_sidecar.wire.methods import METHOD_TO_TYPES

log = logging.getLogger(__name__)
START_UP_COLLECTOR_S = 2.0


class LoreProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]):
        # pygls turns the params of methods it does not know into attribute objects; ours
        # are structured (and validated) by the wire layer, so hand them over untouched.
        method = data.get("method")
        if method in METHOD_TO_TYPES and "id" in data:
            return JsonRPCRequestMessage(id=data["id"], method=method, jsonrpc=data["jsonrpc"], params=data.get("params"))
        return super().structure_message(data)

    def _serialize_message(self, data: Any) -> Any:
        # The reply to a `lore/*` request is a JSON object our handler built. pygls would
        # walk every value of it through cattrs (a recall reply: ~240 calls a hit, 0.2 ms);
        # json.dumps writes it as it is, and still comes back here for anything in it that
        # is not plain JSON (an attrs object, an enum), which is unstructured as before.
        if type(data) is JsonRPCResponseMessage and isinstance(data.result, dict | list):
            return {"id": data.id, "jsonrpc": data.jsonrpc, "result": data.result}
        return super()._serialize_message(data)

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams):
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {
            "lore": {"protocolVersion": PROTOCOL_VERSION, "methods": sorted(METHOD_TO_TYPES)}
        }
        return result


class LoreServer(LanguageServer):
    def __init__(self, *, cli_options: dict[str, Any], open_engine: Callable[..., Any], env: dict[str, str] | None = None):
        super().__init__("lore-sidecar", __version__, protocol_cls=LoreProtocol, text_document_sync_kind=lsp.TextDocumentSyncKind.None_)
        self.cli_options = cli_options
        self.open_engine = open_engine
        self.env = env
        self.executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="lore-work")
        self.engine_future: asyncio.Future | None = None
        self.settings: Settings | None = None
        self.settings_warnings: list[str] = []
        self.folders: list[str] = []
        self.watcher = None
        self.client_pid: int | None = cli_options.get("clientProcessId")
        self.stopped = threading.Event()
        # The engine once opened, and the writer's scans in flight: `close` stops and closes
        # them. The lock orders an open that finishes against a close that begins.
        self._opened = None
        self._open_work: Future | None = None  # the open, on the executor
        self._store_opening = False  # the open went past its imports (it is touching the store)
        self._open_lock = threading.Lock()
        self._scans: set[Future] = set()
        self.client_info: lsp.ClientInfo | None = None

    # -- engine lifecycle ----------------------------------------------------------------------
    def configure(self, params: lsp.InitializeParams) -> None:
        folders = [file_path(f.uri) for f in (params.workspace_folders or [])]
        if not folders and params.root_uri:
            folders = [file_path(params.root_uri)]
        if not folders and params.root_path:
            folders = [params.root_path]
        self.folders = [str(Path(f).resolve()) for f in folders if f]
        init = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        if params.initialization_options is not None and not isinstance(params.initialization_options, dict):
            self.settings_warnings.append("initializationOptions must be an object; ignored")
        cli = {k: v for k, v in self.cli_options.items() if k in ("storeDir", "logLevel", "logFile")}
        self.settings, warnings = load_settings(
            workspace_root=Path(self.folders[0]) if self.folders else None,
            cli=cli,
            init_options=init,
            env=self.env,
        )
        self.settings_warnings += warnings
        logs.apply_settings(self.settings, cli_chose="logLevel" in self.cli_options or "logFile" in self.cli_options)
        for w in self.settings_warnings:
            log.warning("settings: %s", w)
        self.client_info = params.client_info
        if params.process_id and not self.client_pid:
            self.client_pid = params.process_id

        async def opened():
            collector.started()
            self._open_work = self.executor.submit(self._open)
            return await asyncio.wrap_future(self._open_work)

        # A task's first step runs on a later turn of the loop, after pygls has written the
        # reply to `initialize` on this one: the collection of what start-up left and the
        # engine's imports and open (~140 ms of mostly Python) never delay the reply.
        self.engine_future = asyncio.ensure_future(opened())

    def _open(self):
        assert self.settings is not None
        if self.open_engine is _open_default_engine:
            # The engine's imports (numpy, Tantivy, usearch...: the open's first seconds under
            # load) touch no store: an exit meanwhile ends the process without waiting for them.
            import lore_sidecar.app  # noqa: F401
        with self._open_lock:
            if self.stopped.is_set():
                raise LoreError("shuttingDown", "the server is exiting")
            self._store_opening = True
        engine = self.open_engine(
            self.settings, self.folders, on_commit=self._on_commit, on_role_change=self._on_role_change
        )
        with self._open_lock:
            if not self.stopped.is_set():
                self._opened = engine
                return engine
        # Trigger: exit arrived while the store was opening. Why: after `close` nobody else
        # will close it. Outcome: closed here, on the thread that opened it.
        engine.close()
        raise LoreError("shuttingDown", "the server is exiting")

    async def engine(self):
        if self.engine_future is None:
            raise LoreError("notInitialized", "send initialize first", retryable=True)
        return await asyncio.shield(self.engine_future)

    async def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Heavy work runs on our executor, never on the loop or pygls's reader pool."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, lambda: fn(*args, **kwargs))

    def _on_commit(self, generation: int, engine) -> None:
        # Called on the indexer thread: read the counts here, send from the loop.
        try:
            counts = engine.records.counts(None)
        except Exception:
            return
        payload = {"generation": generation, "files": counts["files"], "chunks": counts["chunks"]}
        loop = self.loop_ref
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.protocol.notify, "lore/indexUpdated", payload)

    loop_ref: asyncio.AbstractEventLoop | None = None

    def _on_role_change(self, engine) -> None:
        # Called on the election thread when this instance becomes, or stops being, the writer.
        loop = self.loop_ref
        if loop is None or loop.is_closed() or self.stopped.is_set():
            return
        role = engine.role
        payload = {"role": "writer" if role.writer else "follower", "writerPid": role.writer_pid, "epoch": role.epoch}

        def on_loop() -> None:
            self.protocol.notify("lore/writerChanged", payload)
            if role.writer:
                asyncio.ensure_future(self._writer_duties(engine))
            else:
                self._stop_watcher()

        loop.call_soon_threadsafe(on_loop)

    # -- progress ------------------------------------------------------------------------------
    def supports_progress(self) -> bool:
        caps = getattr(self.protocol, "client_capabilities", None)
        return bool(caps and caps.window and caps.window.work_done_progress)

    async def with_progress(self, title: str, work: Callable[[Callable[[str, int | None], None]], Any], *,
                            stoppable: bool = False) -> Any:
        """Run `work(report)` on the executor, reporting `$/progress` if the client can show it.
        A `stoppable` work (the writer's own scans, which nobody awaits an answer for) ends at
        its next report once the server is closing: `report` raises ScanStopped."""
        loop = asyncio.get_running_loop()
        token = None
        if self.supports_progress():
            token = f"lore-{uuid.uuid4().hex[:12]}"
            try:
                await asyncio.wait_for(self.work_done_progress.create_async(token), 5)
                self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title=title, percentage=0))
            except Exception:
                token = None

        def report(message: str, pct: int | None) -> None:
            if stoppable and self.stopped.is_set():
                raise ScanStopped()
            if token is not None:
                loop.call_soon_threadsafe(
                    self.work_done_progress.report, token, lsp.WorkDoneProgressReport(message=message, percentage=pct)
                )

        try:
            if not stoppable:
                return await loop.run_in_executor(self.executor, lambda: work(report))
            future = self.executor.submit(work, report)
            self._scans.add(future)
            future.add_done_callback(self._scans.discard)
            return await asyncio.wrap_future(future)
        finally:
            if token is not None:
                self.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="done"))

    # -- after initialized ----------------------------------------------------------------------
    async def start_background(self) -> None:
        try:
            engine = await self.engine()
        except Exception as exc:
            if isinstance(exc, LoreError) and exc.kind == "shuttingDown":
                # Expected, not a failure: the exit came while the store was opening.
                log.info("no background work: %s", exc.message)
            else:
                log.error("store could not be opened: %s", exc)
            return
        if engine.role.writer:
            await self._writer_duties(engine)

    async def _writer_duties(self, engine) -> None:
        """Only the writer indexes the workspace and watches it."""
        if self.settings is None or self.stopped.is_set():
            return
        if self.settings.index.index_workspace and engine.projects.folders:
            await self.with_progress("lore: indexing workspace", lambda report: engine.index.scan(report), stoppable=True)
        folders = engine.projects.on_disk()
        if self.settings.index.watch and folders and engine.role.writer and self.watcher is None:
            from lore_sidecar.watch import Watcher

            self.watcher = Watcher(folders, engine.index.file_changes, debounce_ms=self.settings.index.debounce_ms)
            self.watcher.start()

    def _stop_watcher(self) -> None:
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop()

    def importing(self) -> bool:
        """An open is still importing the engine's modules (no store touched): after `close`
        it will not open the store, and nothing needs waiting for."""
        work = self._open_work  # not engine_future: the loop's end cancels that task, not the thread
        return work is not None and not work.done() and not self._store_opening

    def close(self) -> None:
        """Stop and close what this server opened, promptly: a scan in flight ends at its next
        progress report (waited for: it writes the indexes being closed); an open in flight
        closes its engine itself when it finishes (`_open`), or never opens the store when it
        is still importing."""
        with self._open_lock:
            if self.stopped.is_set():
                return
            self.stopped.set()
            engine = self._opened
        self._stop_watcher()
        wait_futures(list(self._scans))
        if engine is not None:
            try:
                engine.close()
            except Exception:
                log.exception("closing the engine failed")
        self.executor.shutdown(wait=False, cancel_futures=True)


def create_server(cli_options: dict[str, Any] | None = None, *, open_engine: Callable[..., Any] | None = None, env: dict[str, str] | None = None) -> LoreServer:
    from lore_sidecar.rpc import handlers

    if open_engine is None:
        open_engine = _open_default_engine
    server = LoreServer(cli_options=cli_options or {}, open_engine=open_engine, env=env)
    handlers.register(server)
    return server


def _open_default_engine(*args: Any, **kwargs: Any):
    # The engine's modules (numpy, Tantivy, usearch, SQLite rows: ~140 ms to import) load
    # here, on the thread that opens the engine after `initialize` is answered, not before
    # the server reads its first frame.
    from lore_sidecar.app import open_engine

    return open_engine(*args, **kwargs)


def serve_stdio(server: LoreServer) -> int:
    """Run until `exit`, end of input, or the client process dying. Returns the exit code."""
    from lore_sidecar.rpc.transport import (
        Dispatcher,
        GuardedWriter,
        StdoutGuard,
        read_stdin_forever,
    )

    guard = StdoutGuard.install()
    server.protocol.set_writer(GuardedWriter(guard))
    exit_code = 0

    async def main() -> int:
        loop = asyncio.get_running_loop()
        server.loop_ref = loop
        done = asyncio.Event()
        dispatcher = Dispatcher(server.protocol, guard.write)
        outcome = {"code": 0}

        def on_exit() -> None:
            outcome["code"] = dispatcher.exit_code
            done.set()

        dispatcher.on_exit = on_exit

        def on_data(data: bytes) -> None:
            try:
                dispatcher.feed(data)
            except SystemExit as exc:  # pygls's `exit` handler calls sys.exit()
                outcome["code"] = int(exc.code or 0)
                done.set()
            except Exception:
                log.exception("unexpected error while dispatching input")

        def on_eof() -> None:
            try:
                dispatcher.finish()
            except SystemExit as exc:
                outcome["code"] = int(exc.code or 0)
            if dispatcher.exit_requested:
                return  # exit is queued behind in-flight requests; it ends the loop itself
            asyncio.ensure_future(dispatcher._when_idle(done.set))

        read_stdin_forever(loop, on_data, on_eof)
        # Answering `initialize` ends start-up's collector setting; a client that never
        # sends it must not keep it.
        loop.call_later(START_UP_COLLECTOR_S, collector.started)
        _watch_parent(server, loop, done)
        await done.wait()
        return outcome["code"]

    from lore_sidecar.engine.indexing.loads import exit_leaving_loads, leave_loads_at_stop

    leave_loads_at_stop()  # this process ends through exit_leaving_loads, below
    try:
        exit_code = asyncio.run(main())
    finally:
        server.close()
    return exit_leaving_loads(exit_code, imports_running=server.importing())


def _watch_parent(server: LoreServer, loop: asyncio.AbstractEventLoop, done: asyncio.Event) -> None:
    """Exit when the client process dies (editors do not always close our stdin)."""

    def run() -> None:
        while not server.stopped.is_set():
            pid = server.client_pid
            if pid:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    log.warning("client process %s is gone; exiting", pid)
                    loop.call_soon_threadsafe(done.set)
                    return
                except PermissionError:
                    pass  # exists, owned by someone else
            server.stopped.wait(1.0)

    threading.Thread(target=run, name="lore-parent-watch", daemon=True).start()
