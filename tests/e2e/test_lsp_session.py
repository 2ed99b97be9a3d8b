"""End to end over stdio with pytest-lsp, once per recorded client capability set."""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.conftest import make_workspace

CLIENTS = ["visual_studio_code", "neovim@v0.11.0", "emacs"]


def _plain(obj):
    """pygls hands custom results back as attribute objects; compare as plain data."""
    if hasattr(obj, "_asdict"):
        return {k: _plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    return obj


async def call(client: LanguageClient, method: str, params: dict | None = None):
    return _plain(await client.protocol.send_request_async(method, params or {}))


async def wait_indexed(client: LanguageClient, files: int, timeout: float = 60) -> dict:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        status = await call(client, "lore/status")
        # Both legs: the words at once, the vectors (their own thread) a moment later.
        if status["counts"]["files"] >= files and status["indexLagMs"] == 0 and status["vectorLag"] == 0:
            return status
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"workspace not indexed in time: {status}")
        await asyncio.sleep(0.1)


@pytest_lsp.fixture(
    params=CLIENTS,
    config=ClientServerConfig(server_command=[sys.executable, "-m", "lore_sidecar", "--stdio"]),
)
async def client(lsp_client: LanguageClient, request, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    params = lsp.InitializeParams(
        capabilities=client_capabilities(request.param),
        root_uri=ws.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
        initialization_options={"storeDir": str(tmp_path / "store"), "watch": True, "debounceMs": 50},
    )
    result = await lsp_client.initialize_session(params)
    lsp_client.init_result = result
    lsp_client.ws = ws
    yield
    await lsp_client.shutdown_session()


async def test_initialize_advertises_every_lore_method(client: LanguageClient):
    from lore_sidecar.wire.methods import METHOD_TO_TYPES

    lore = client.init_result.capabilities.experimental["lore"]
    assert lore["protocolVersion"] == 1
    assert sorted(lore["methods"]) == sorted(METHOD_TO_TYPES)


async def test_status_reports_writer_and_embedder(client: LanguageClient):
    status = await wait_indexed(client, 4)
    assert status["role"] == "writer"
    assert status["embedder"]["dim"] == 256
    assert status["project"]["root"] == str(client.ws.resolve())
    assert status["counts"]["files"] == 4  # README, billing.py, deploy.md, .gitignore; not ignored/binary


async def test_recorded_message_is_recalled_with_cues_and_opened_by_uri(client: LanguageClient):
    res = await call(client, "lore/recordMessages", {
        "sessionId": "s-1",
        "harness": "test",
        "messages": [
            {"id": "u1", "role": "user", "content": "Why does the flamingo exporter time out?"},
            {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "The flamingo exporter holds the GIL during gzip."}]},
        ],
    })
    assert res == {"recorded": 2, "duplicates": 0, "ids": ["u1", "a1"], "durable": True, "applied": True}
    again = await call(client, "lore/recordMessages", {"sessionId": "s-1", "messages": [{"id": "a1", "role": "assistant", "content": "x"}]})
    assert again["duplicates"] == 1 and again["recorded"] == 0

    hits = (await call(client, "lore/recall", {"query": "flamingo exporter gzip", "sources": ["messages"]}))["hits"]
    assert hits[0]["uri"] == "session://s-1/a1"
    assert set(hits[0]["cues"]) == {"flamingo", "exporter", "gzip"}
    node = await call(client, "lore/getNode", {"uri": hits[0]["uri"]})
    assert node["content"] == "The flamingo exporter holds the GIL during gzip."
    assert node["metadata"]["role"] == "assistant"


async def test_workspace_files_are_recalled_but_ignored_and_binary_files_are_not(client: LanguageClient):
    await wait_indexed(client, 4)
    res = await call(client, "lore/recall", {"query": "invoice tax rate", "sources": ["files"]})
    assert res["hits"], res
    top = res["hits"][0]
    assert top["path"].endswith("src/billing.py") and top["uri"].startswith("file:///")
    assert top["range"]["startLine"] >= 1
    # Control: the word is in an ignored file, an ignored folder and a binary; none is indexed.
    none = await call(client, "lore/recall", {"query": "zebracornflakes", "sources": ["files"]})
    assert none["hits"] == [] and none["total"] == 0


async def test_file_edit_is_picked_up_by_the_watcher(client: LanguageClient):
    await wait_indexed(client, 4)
    before = await call(client, "lore/recall", {"query": "quokka", "sources": ["files"]})
    assert before["hits"] == []
    (client.ws / "docs" / "animals.md").write_text("# Animals\n\nThe quokka lives on Rottnest Island.\n")
    for _ in range(100):
        after = await call(client, "lore/recall", {"query": "quokka", "sources": ["files"]})
        if after["hits"]:
            break
        await asyncio.sleep(0.1)
    assert after["hits"][0]["path"].endswith("docs/animals.md")
    (client.ws / "docs" / "animals.md").unlink()
    for _ in range(100):
        gone = await call(client, "lore/recall", {"query": "quokka", "sources": ["files"]})
        if not gone["hits"]:
            break
        await asyncio.sleep(0.1)
    assert gone["hits"] == []


async def test_bad_params_get_32602_with_details_and_server_keeps_answering(client: LanguageClient):
    with pytest.raises(JsonRpcException) as err:
        await call(client, "lore/recall", {"query": 42, "limit": 0})
    assert err.value.code == -32602
    assert any("query" in e for e in err.value.data["errors"])
    ok = await call(client, "lore/recall", {"query": "stripe"})
    assert "hits" in ok


async def test_unknown_method_gets_32601(client: LanguageClient):
    with pytest.raises(JsonRpcException) as err:
        await call(client, "lore/noSuchThing", {})
    assert err.value.code == -32601


async def test_expected_failures_carry_a_stable_kind(client: LanguageClient):
    with pytest.raises(JsonRpcException) as err:
        await call(client, "lore/getNode", {"uri": "session://nobody/nothing"})
    assert err.value.code == -32803
    assert err.value.data["kind"] == "notFound"


async def test_execute_command_twins_answer_like_the_requests(client: LanguageClient):
    await wait_indexed(client, 4)
    via_cmd = _plain(await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="lore.recall", arguments=[{"query": "Buildkite pipeline", "sources": ["files"]}])
    ))
    via_req = await call(client, "lore/recall", {"query": "Buildkite pipeline", "sources": ["files"]})
    assert [h["uri"] for h in via_cmd["hits"]] == [h["uri"] for h in via_req["hits"]]
    assert via_req["hits"][0]["path"].endswith("docs/deploy.md")
    status = _plain(await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="lore.status")))
    assert status["role"] == "writer"


async def test_reindex_reports_progress_and_answers_like_the_live_index(client: LanguageClient):
    await wait_indexed(client, 4)
    await call(client, "lore/recordMessages", {"sessionId": "s-2", "messages": [
        {"id": str(i), "role": "user", "content": f"note {i} about retries backoff and webhooks"} for i in range(30)
    ]})
    await wait_indexed(client, 4)  # the live index compared once its dense leg has caught up
    q = {"query": "webhooks retried backoff", "limit": 20}
    live = await call(client, "lore/recall", q)
    assert not live["densePartial"]
    res = await call(client, "lore/reindex", {"scope": "all"})
    assert res["files"] == 4 and res["generation"] > 0
    rebuilt = await call(client, "lore/recall", q)
    assert [(h["uri"], h["score"]) for h in rebuilt["hits"]] == [(h["uri"], h["score"]) for h in live["hits"]]
    caps = client.capabilities
    kinds = [type(v).__name__ for reports in client.progress_reports.values() for v in reports]
    if caps.window and caps.window.work_done_progress:
        assert "WorkDoneProgressBegin" in kinds and "WorkDoneProgressEnd" in kinds
    else:  # control: a client that cannot show progress is never sent any
        assert kinds == []


async def test_workspace_symbol_searches_memory(client: LanguageClient):
    await wait_indexed(client, 4)
    symbols = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="refund policy window"))
    assert symbols and any("billing.py" in s.name for s in symbols)
