"""Fixtures the real-harness tests share."""

from __future__ import annotations

import pytest

from tests.support import harness


@pytest.fixture
def lab(tmp_path):
    """A git project `shop` and a store; the store's hook daemons stopped afterwards."""
    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    (ws / "README.md").write_text("# shop\n")
    store = tmp_path / "store"
    yield ws, store, tmp_path
    harness.stop_hook_daemons(store)
