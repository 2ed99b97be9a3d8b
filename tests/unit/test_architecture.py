"""The layers in DESIGN.md §4, enforced: who may import what."""

from __future__ import annotations

import ast
import re
import statistics
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "lore_sidecar"
HEAVY = {"pygls", "lsprotocol", "anthropic", "tantivy", "usearch", "sqlite3", "mcp", "mcp_types", "pydantic", "aiohttp", "psycopg"}
ALLOWED = {
    "pygls": {"rpc"},
    "lsprotocol": {"rpc", "wire"},
    "tantivy": {"store"},
    "usearch": {"store"},
    "sqlite3": {"store", "app.py"},
    "anthropic": {"llm"},
    "mcp": {"mcp_face"},
    "aiohttp": {"gateway", "ui"},
    "psycopg": {"shared"},
    "mcp_types": {"mcp_face"},
    "pydantic": {"mcp_face"},
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
    assert "mcp" in imports(PKG / "mcp_face" / "tools.py")


SQL = re.compile(r"\b(SELECT\s+[\w*(]|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX)|PRAGMA\s+\w)",
                 re.IGNORECASE)
ADAPTERS = {"Database", "Records", "FactRows", "Journal", "Spool", "TextIndex", "VectorIndex", "WriterLock",
            "AnthropicClient", "NodeRows", "MemoryRows"}


def sql_and_connections(path: Path) -> list[str]:
    """SQL text in string literals and `.conn(` calls: a repository's business, not a service's."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
            found.append(f"{path.name}:{node.lineno} SQL {node.value[:40]!r}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "conn":
            found.append(f"{path.name}:{node.lineno} .conn(")
    return found


def test_engine_holds_no_sql_and_opens_no_connection():
    assert [f for p in (PKG / "engine").rglob("*.py") for f in sql_and_connections(p)] == []


def test_control_the_sql_check_does_see_sql_and_connections(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('rows = self.rows.conn().execute("SELECT f.id FROM facts f WHERE f.slot=?", [s])\n')
    assert len(sql_and_connections(bad)) == 2
    assert sql_and_connections(PKG / "store" / "fact_rows.py")  # the repository does hold SQL


def constructed(path: Path) -> set[str]:
    return {n.func.id for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ADAPTERS}


def test_adapters_are_built_only_in_the_composition_root():
    builders = {str(p.relative_to(PKG)): sorted(constructed(p)) for p in PKG.rglob("*.py")
                if p.parent.name != "store" and p.parent.name != "llm" and constructed(p)}
    assert builders == {"app.py": builders.get("app.py", [])} and builders.get("app.py")


def module_graph() -> dict[str, set[str]]:
    """Module -> the lore_sidecar modules it imports (at any depth of the file)."""
    names = {".".join(("lore_sidecar", *p.relative_to(PKG).with_suffix("").parts)).removesuffix(".__init__"): p
             for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lore_sidecar"):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    deps.add(full if full in names else node.module)
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.startswith("lore_sidecar")}
        graph[name] = {d for d in deps if d in names and d != name and not name.startswith(d + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_module_imports_itself_through_others():
    assert cycles(module_graph()) == []


def test_control_the_cycle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_modules_stay_small_enough_to_hold_in_your_head():
    sizes = {str(p.relative_to(PKG)): len(p.read_text().splitlines()) for p in PKG.rglob("*.py")}
    assert {k: v for k, v in sizes.items() if v > 400} == {}
    assert statistics.median(sizes.values()) <= 150
