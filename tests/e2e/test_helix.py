"""Helix, replayed: its initialize capabilities (transcribed from helix-lsp's client, in
fixtures/clients) and the `:lsp-workspace-command` calls it sends. Helix drops command
results, so the sidecar shows them; hover on a symbol shows what memory knows."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from lsprotocol.converters import get_converter
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.conftest import ROOT, make_workspace

HELIX = json.loads((ROOT / "fixtures" / "clients" / "helix_25.01.json").read_text())


def helix_capabilities(show_document: bool) -> lsp.ClientCapabilities:
    caps = json.loads(json.dumps(HELIX["capabilities"]))
    if show_document:  # newer Helix builds answer window/showDocument
        caps["window"]["showDocument"] = {"support": True}
    return get_converter().structure(caps, lsp.ClientCapabilities)


@pytest_lsp.fixture(params=[False, True], ids=["showMessage", "showDocument"],
                    config=ClientServerConfig(server_command=[sys.executable, "-m", "lore_sidecar", "--stdio"]))
async def helix(lsp_client: LanguageClient, request, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=helix_capabilities(request.param),
        client_info=lsp.ClientInfo(name=HELIX["clientInfo"]["name"], version=HELIX["clientInfo"]["version"]),
        root_uri=ws.as_uri(), workspace_folders=[lsp.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
        initialization_options={"storeDir": str(tmp_path / "store"), "watch": False},
    ))
    lsp_client.ws = ws
    lsp_client.show_document = request.param
    yield
    await lsp_client.shutdown_session()


async def command(client: LanguageClient, name: str, *args):
    return await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command=name, arguments=list(args)))


async def wait_for(predicate, timeout: float = 30):
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


@pytest.mark.asyncio(loop_scope="function")
async def test_helix_workspace_commands_show_their_results(helix: LanguageClient):
    client = helix
    await command(client, "lore.retain", {"content": "compute_invoice_total rounds tax half-even per line",
                                          "title": "invoice tax rounding", "category": "decision"})
    await command(client, "lore.recall", "invoice tax rounding")
    if client.show_document:
        await wait_for(lambda: any(d.uri.endswith("lore.recall.md") for d in client.shown_documents))
        shown = Path([d.uri for d in client.shown_documents if d.uri.endswith("lore.recall.md")][-1][len("file://"):])
        assert "project://ws/decision/invoice-tax-rounding" in shown.read_text()
    else:
        await wait_for(lambda: any("lore: " in m.message and "hits" in m.message for m in client.messages))
        msg = [m for m in client.messages if "hits" in m.message][-1].message
        assert "top: project://ws/decision/invoice-tax-rounding" in msg and "lore.recall.md" in msg
        assert client.shown_documents == []  # not offered: not used


@pytest.mark.asyncio(loop_scope="function")
async def test_helix_hover_shows_what_memory_knows_about_a_symbol(helix: LanguageClient):
    client = helix
    await command(client, "lore.retain", {"content": "compute_invoice_total rounds tax half-even per line",
                                          "title": "invoice tax rounding", "category": "decision"})
    source = client.ws / "src" / "billing.py"
    lines = source.read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if "def compute_invoice_total" in line)
    col = lines[row].index("compute_invoice_total") + 3
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=source.as_uri()), position=lsp.Position(line=row, character=col)))
    assert hover is not None and "project://ws/decision/invoice-tax-rounding" in hover.contents.value
    assert "`compute_invoice_total`" in hover.contents.value
    # Control: a word memory knows nothing about gets no hover at all.
    (client.ws / "src" / "quiet.py").write_text("zyzzogeton_flux = 1\n")
    none = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=(client.ws / "src" / "quiet.py").as_uri()),
        position=lsp.Position(line=0, character=3)))
    assert none is None
