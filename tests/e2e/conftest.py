"""Fixtures the e2e tests share: the real-harness lab and context assembly's stdio sidecars."""

from __future__ import annotations

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from tests.support import harness

# Context assembly needs neither the workspace index nor the distiller.
CONTEXT_OPTIONS = {"watch": False, "indexWorkspace": False, "distiller": "off"}


@pytest.fixture
def lab(tmp_path):
    """A git project `shop` and a store; the store's hook daemons stopped afterwards."""
    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    (ws / "README.md").write_text("# shop\n")
    store = tmp_path / "store"
    yield ws, store, tmp_path
    harness.stop_hook_daemons(store)


@pytest.fixture
def sidecar(tmp_path, workspace):
    """`spawn(**options)`: a sidecar over stdio on a store of its own, CONTEXT_OPTIONS under
    the options given; all closed afterwards. A module with a `sidecar` of its own uses that."""
    clients = []

    def spawn(**options) -> StdioClient:
        c = StdioClient(sidecar_command("--store-dir", str(tmp_path / f"store{len(clients)}")))
        c.initialize(workspace, options={**CONTEXT_OPTIONS, **options})
        clients.append(c)
        return c

    yield spawn
    for c in clients:
        c.close()
