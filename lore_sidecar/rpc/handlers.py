"""The `lore/*` request handlers and their `workspace/executeCommand` twins.

Each handler structures its params (bad params -> -32602 with the list of problems), waits
for the engine, runs the work on the server's executor, and returns a plain JSON object.
Expected failures become -32803 with a stable `data.kind`.
"""

from __future__ import annotations

import errno
import functools
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from lore_sidecar.engine.uris import file_path
from lore_sidecar.errors import BadParams, LoreError
from lore_sidecar.model import Hit
from lore_sidecar.rpc import editor_features
from lore_sidecar.rpc.calls import Calls
from lore_sidecar.rpc.features import ask, capture, context, facts, maintenance, memory, recall
from lore_sidecar.wire.methods import COMMANDS

log = logging.getLogger(__name__)
EXPECTED_FAILURE = -32803


def _expected(fn):
    """Translate domain errors into JSON-RPC errors."""

    @functools.wraps(fn)
    async def wrapper(*args, **kwargs):
        try:
            return await fn(*args, **kwargs)
        except BadParams as exc:
            raise JsonRpcInvalidParams(exc.message, data={"errors": exc.errors}) from None
        except LoreError as exc:
            log.info("%s: %s (%s)", fn.__name__, exc.kind, exc.message[:200])
            raise JsonRpcException(exc.message, code=EXPECTED_FAILURE, data=exc.data()) from None
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise JsonRpcException("the store's disk is full; nothing was written", code=EXPECTED_FAILURE,
                                       data={"kind": "diskFull", "retryable": True}) from None
            raise _internal(fn.__name__, exc) from None
        except JsonRpcException:
            raise
        except Exception as exc:
            raise _internal(fn.__name__, exc) from None

    return wrapper


def _internal(name: str, exc: Exception) -> JsonRpcException:
    """A bug: one log line with the traceback's last frame, one short reply, no traceback."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" if tb is not None else "?"
    log.error("%s failed: %s: %s (at %s)", name, type(exc).__name__, str(exc)[:300], where)
    return JsonRpcException(f"internal error: {type(exc).__name__}", code=-32603,
                            data={"kind": "internal", "retryable": False})


def register(server) -> None:
    calls = Calls(server)
    table: dict[str, Any] = {}
    for feature in (recall, capture, facts, memory, context, ask, maintenance):
        table.update(feature.handlers(calls))
    for method, fn in table.items():
        server.feature(method)(_bind(_expected(fn)))

    for command, method in COMMANDS.items():
        server.command(command)(_command(table[method], server, command))
    editor_features.register(server)

    @server.feature(lsp.INITIALIZE)
    def on_initialize(params: lsp.InitializeParams) -> None:
        server.configure(params)

    @server.feature(lsp.INITIALIZED)
    async def on_initialized(params: lsp.InitializedParams) -> None:
        await server.start_background()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def folders_changed(params: lsp.DidChangeWorkspaceFoldersParams) -> None:
        """The client opened or closed folders: the jail follows (requests may name them)."""
        try:
            engine = await server.engine()
        except LoreError:
            return
        for f in params.event.removed:
            engine.projects.close_folder(str(Path(file_path(f.uri)).resolve()))
        for f in params.event.added:
            engine.projects.open_folder(str(Path(file_path(f.uri)).resolve()))

    @server.feature(lsp.SHUTDOWN)
    def on_shutdown(*_: Any) -> None:
        if server.watcher is not None:
            server.watcher.stop()

    @server.feature(lsp.WORKSPACE_SYMBOL)
    async def workspace_symbol(params: lsp.WorkspaceSymbolParams) -> list[lsp.WorkspaceSymbol]:
        if not params.query.strip():
            return []
        try:
            engine = await server.engine()
            result = await server.run(engine.recall, params.query, limit=20)
        except LoreError:
            return []
        return [_symbol(h) for h in result.hits]


def _bind(fn):
    """pygls passes the params (positionally) to handlers; ours take only params."""

    async def handler(params: Any = None) -> Any:
        return await fn(params)

    handler.__name__ = fn.__name__
    return handler


def _command(fn, server, command: str):
    """`workspace/executeCommand` twin: arguments are `[params]` or `[query]`. The result is
    returned, and shown to clients that drop command results (Helix)."""

    async def run(params: Any) -> Any:
        result = await fn(params)
        await editor_features.present(server, command, result)
        return result

    guarded = _expected(run)

    async def handler(*arguments: Any) -> Any:  # pygls spreads the arguments
        params: Any = arguments[0] if arguments else {}
        if isinstance(params, str):
            params = {"query": params}
        return await guarded(params)

    return handler


def _symbol(h: Hit) -> lsp.WorkspaceSymbol:
    if h.path and h.range:
        loc: Any = lsp.Location(
            uri=Path(h.path).as_uri(),
            range=lsp.Range(start=lsp.Position(h.range[0] - 1, 0), end=lsp.Position(h.range[1], 0)),
        )
    else:
        loc = lsp.LocationUriOnly(uri=h.uri)
    return lsp.WorkspaceSymbol(
        name=(h.title or h.uri)[:120], kind=lsp.SymbolKind.String, location=loc, container_name=h.snippet[:80]
    )
