"""The layers in DESIGN.md §4, enforced: who may import what."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "lore_sidecar"
HEAVY = {"pygls", "lsprotocol", "anthropic", "tantivy", "usearch", "sqlite3"}
ALLOWED = {
    "pygls": {"rpc"},
    "lsprotocol": {"rpc", "wire"},
    "tantivy": {"store"},
    "usearch": {"store"},
    "sqlite3": {"store", "app.py"},
    "anthropic": {"llm"},
}


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


def test_heavy_libraries_are_imported_only_by_their_layer():
    offenders = []
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG)
        area = rel.parts[0]
        for lib in imports(path) & HEAVY:
            if area not in ALLOWED[lib]:
                offenders.append(f"{rel} imports {lib}")
    assert offenders == []


def test_engine_never_imports_adapters_or_the_protocol_layer():
    bad = []
    for path in (PKG / "engine").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(
                ("lore_sidecar.store", "lore_sidecar.rpc", "lore_sidecar.wire", "lore_sidecar.llm", "lore_sidecar.app")
            ):
                bad.append(f"{path.name}: {node.module}")
    assert bad == []


def test_control_the_checker_does_see_imports():
    assert "pygls" in imports(PKG / "rpc" / "server.py")
