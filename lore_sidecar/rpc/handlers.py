"""The `lore/*` request handlers and their `workspace/executeCommand` twins.

Each handler structures its params (bad params -> -32602 with the list of problems), waits
for the engine, runs the work on the server's executor, and returns a plain JSON object.
Expected failures become -32803 with a stable `data.kind`.
"""

from __future__ import annotations

import asyncio
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
from lore_sidecar.wire import types as t
from lore_sidecar.wire.converter import structure
from lore_sidecar.wire.methods import COMMANDS
from lore_sidecar.wire.results import node_to_wire, recall_to_wire

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


class Ordering:
    """Causal order per connection: a request never overtakes a write sent before it.

    Handlers run concurrently on the executor, so a client that pipes `recordMessages` and
    then `recall` without waiting could otherwise see the recall answered first. Writes
    form a chain; each request waits for the last write dispatched before it. Reads still
    run in parallel with each other. The barrier is taken synchronously when the handler's
    task starts, and tasks start in arrival order.
    """

    def __init__(self) -> None:
        self._last: asyncio.Future | None = None

    async def read(self, work):
        prev = self._last
        if prev is not None and not prev.done():
            await asyncio.shield(prev)
        return await work()

    async def write(self, work):
        prev = self._last
        mine = asyncio.get_running_loop().create_future()
        self._last = mine
        try:
            if prev is not None and not prev.done():
                await asyncio.shield(prev)
            return await work()
        finally:
            mine.set_result(None)


def register(server) -> None:
    order = Ordering()

    async def read(method: str, *args: Any, **kwargs: Any) -> Any:
        """`engine.<method>(...)` on the executor, after the writes sent before it."""
        engine = await order.read(server.engine)
        return await server.run(getattr(engine, method), *args, **kwargs)

    async def write(method: str, *args: Any, **kwargs: Any) -> Any:
        """`engine.<method>(...)` on the executor, in this connection's write order."""

        async def work() -> Any:
            engine = await server.engine()
            return await server.run(getattr(engine, method), *args, **kwargs)

        return await order.write(work)

    async def status(params: Any) -> dict[str, Any]:
        p = structure(params, t.StatusParams)
        result = await read("status", p.project)
        result["settingsWarnings"] = list(server.settings_warnings)
        return result

    async def record_messages(params: Any) -> dict[str, Any]:
        p = structure(params, t.RecordMessagesParams)
        messages = [
            {
                "role": m.role,
                "content": m.content,
                "msg_id": m.id,
                "created_at": m.created_at,
                "tool_name": m.tool_name,
                "tool_call_id": m.tool_call_id,
            }
            for m in p.messages
        ]
        return await write("record_messages", project=p.project, session_id=p.session_id, harness=p.harness,
                           messages=messages)

    async def recall(params: Any) -> dict[str, Any]:
        p = structure(params, t.RecallParams)
        result = await read("recall", p.query, project=p.project, scope=p.scope, sources=p.sources, limit=p.limit,
                            offset=p.offset, as_of=p.as_of, lexical_only=p.lexical_only, session_id=p.session_id)
        return recall_to_wire(result)

    async def get_node(params: Any) -> dict[str, Any]:
        p = structure(params, t.GetNodeParams)
        return node_to_wire(await read("get_node", p.uri, query_id=p.query_id, session_id=p.session_id, runtime=p.harness))

    async def reindex(params: Any) -> dict[str, Any]:
        p = structure(params, t.ReindexParams)

        async def work() -> dict[str, Any]:
            engine = await server.engine()
            return await server.with_progress("lore: reindexing", lambda report: engine.reindex(p.scope, report))

        return await order.write(work)

    async def assert_fact(params: Any) -> dict[str, Any]:
        p = structure(params, t.AssertFactParams)
        return await write("assert_fact", project=p.project, subject=p.subject, predicate=p.predicate, object=p.object,
                           valid_from=p.valid_from, valid_until=p.valid_until, source=p.source, confidence=p.confidence)

    async def invalidate_fact(params: Any) -> dict[str, Any]:
        p = structure(params, t.InvalidateFactParams)
        return await write("invalidate_fact", project=p.project, subject=p.subject, predicate=p.predicate,
                           valid_until=p.valid_until)

    async def query_facts(params: Any) -> dict[str, Any]:
        p = structure(params, t.QueryFactsParams)
        return await read("query_facts", project=p.project, scope=p.scope, subject=p.subject, predicate=p.predicate,
                          object=p.object, text=p.text, as_of=p.as_of, as_known_at=p.as_known_at, history=p.history,
                          limit=p.limit, offset=p.offset)

    async def timeline(params: Any) -> dict[str, Any]:
        p = structure(params, t.TimelineParams)
        return await read("timeline", subject=p.subject, project=p.project, scope=p.scope, limit=p.limit, offset=p.offset)

    async def aggregate_facts(params: Any) -> dict[str, Any]:
        p = structure(params, t.AggregateFactsParams)
        return await read("aggregate_facts", project=p.project, scope=p.scope, by=p.by, subject=p.subject,
                          predicate=p.predicate, object=p.object, as_of=p.as_of, limit=p.limit)

    async def prompt_submit(params: Any) -> dict[str, Any]:
        p = structure(params, t.PromptSubmitParams)
        return await read("prompt_submit", session_id=p.session_id, prompt=p.prompt, harness=p.harness,
                          project=p.project, budget_tokens=p.budget_tokens)

    async def session_start(params: Any) -> dict[str, Any]:
        p = structure(params, t.SessionStartParams)
        return await read("session_start", session_id=p.session_id, harness=p.harness, cwd=p.cwd, repo=p.repo,
                          budget_tokens=p.budget_tokens)

    async def session_end(params: Any) -> dict[str, Any]:
        p = structure(params, t.SessionEndParams)
        return await write("session_end", session_id=p.session_id, harness=p.harness, project=p.project,
                           transcript=p.transcript, transcript_path=p.transcript_path)

    def node_write(method: str, params_type: type, fields: tuple[str, ...], changes: bool = False):
        async def handler(params: Any) -> dict[str, Any]:
            p = structure(params, params_type)
            args: dict[str, Any] = {f: getattr(p, f) for f in fields}
            if args.get("sources") is not None:
                args["sources"] = [{"path": s.path, "sha256": s.sha256} for s in args["sources"]]
            if changes:  # an update carries only the fields the client sent
                args = {"uri": p.uri, "expected_version": p.expected_version,
                        "changes": {k: v for k, v in args.items() if v is not None}}
            return await write("node_op", method, project=getattr(p, "project", None), runtime=p.harness, **args)

        handler.__name__ = method
        return handler

    node_fields = ("content", "category", "priority", "disclosure", "scope", "sources", "expires_at")

    async def list_domains(params: Any) -> dict[str, Any]:
        p = structure(params, t.ListDomainsParams)
        return await read("list_domains", project=p.project, scope=p.scope)

    async def node_history(params: Any) -> dict[str, Any]:
        p = structure(params, t.NodeHistoryParams)
        return await read("node_history", p.uri)

    async def distill(params: Any) -> dict[str, Any]:
        p = structure(params, t.DistillParams)
        return await write("distill", session_id=p.session_id)

    async def export_knowledge(params: Any) -> dict[str, Any]:
        p = structure(params, t.ExportKnowledgeParams)
        return await read("export_knowledge", project=p.project, path=p.path)

    async def import_knowledge(params: Any) -> dict[str, Any]:
        p = structure(params, t.ImportKnowledgeParams)
        return await write("import_knowledge", project=p.project)

    table = {
        "lore/status": status,
        "lore/recordMessages": record_messages,
        "lore/recall": recall,
        "lore/getNode": get_node,
        "lore/reindex": reindex,
        "lore/assertFact": assert_fact,
        "lore/invalidateFact": invalidate_fact,
        "lore/queryFacts": query_facts,
        "lore/timeline": timeline,
        "lore/aggregateFacts": aggregate_facts,
        "lore/promptSubmit": prompt_submit,
        "lore/sessionStart": session_start,
        "lore/sessionEnd": session_end,
        "lore/createNode": node_write("createNode", t.CreateNodeParams, ("uri", *node_fields)),
        "lore/updateNode": node_write("updateNode", t.UpdateNodeParams, (*node_fields, "suppressed"), changes=True),
        "lore/moveNode": node_write("moveNode", t.MoveNodeParams, ("uri", "new_uri")),
        "lore/deleteNode": node_write("deleteNode", t.DeleteNodeParams, ("uri",)),
        "lore/retain": node_write("retain", t.RetainParams, ("uri", "title", *node_fields)),
        "lore/forget": node_write("forget", t.ForgetParams, ("uri", "reason")),
        "lore/listDomains": list_domains,
        "lore/nodeHistory": node_history,
        "lore/distill": distill,
        "lore/exportKnowledge": export_knowledge,
        "lore/importKnowledge": import_knowledge,
    }
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
            engine.close_folder(str(Path(file_path(f.uri)).resolve()))
        for f in params.event.added:
            engine.open_folder(str(Path(file_path(f.uri)).resolve()))

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
