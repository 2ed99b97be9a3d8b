"""What the command line prints for people (the CLI's verbs and the demo share it).

On a terminal: progress bars on stderr for long work and tables for results (rich). Piped,
or with `--json`: no progress at all, and plain lines or JSON that scripts can read.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

Report = Callable[[str, "int | None"], None]


def interactive(json_out: bool = False) -> bool:
    """Both streams on a terminal and no JSON asked for."""
    return not json_out and sys.stdout.isatty() and sys.stderr.isatty()


@contextmanager
def progress(title: str, shown: bool) -> Iterator[Report]:
    """A `report(message, percent)` for the engine's long work: a bar on stderr when shown."""
    if not shown:
        yield lambda message, pct: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True)) as bar:
        task = bar.add_task(title, total=100)

        def report(message: str, pct: int | None) -> None:
            bar.update(task, description=f"{title}: {message}"[:70], **({"completed": pct} if pct is not None else {}))

        yield report
        bar.update(task, completed=100, description=f"{title}: done")


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title, title_justify="left", show_lines=False)
    for c in columns:
        t.add_column(c, overflow="fold")
    for r in rows:
        t.add_row(*("" if v is None else str(v) for v in r))
    Console().print(t)


def print_hits(hits: list[Any], total: int, took_ms: float) -> None:
    if not hits:
        print("no hits")
        return
    rows = [h if isinstance(h, dict) else {"score": h.score, "uri": h.uri, "cues": h.cues, "snippet": h.snippet} for h in hits]
    if interactive():
        table(f"{len(hits)} of {total} hits ({took_ms:.1f} ms)", ("#", "score", "uri", "cues", "snippet"),
              [(i, f"{d['score']:.4f}", d["uri"], " · ".join(d["cues"] or []), d["snippet"][:160])
               for i, d in enumerate(rows, 1)])
        return
    for i, d in enumerate(rows, 1):
        cues = " · ".join(d["cues"] or [])
        print(f"{i:2d}. {d['score']:.4f}  {d['uri']}")
        if cues:
            print(f"     cues: {cues}")
        print(f"     {d['snippet'][:160]}")
    print(f"({len(hits)} of {total} hits, {took_ms:.1f} ms)")


def print_status(status: dict[str, Any], extra: Sequence[tuple[str, str]] = ()) -> None:
    counts = status.get("counts") or {}
    rows = [("role", f"{status.get('role')} (writer pid {status.get('writerPid')})"),
            ("store", status.get("storeDir")),
            ("project", (status.get("project") or {}).get("root")),
            ("records", ", ".join(f"{k} {v}" for k, v in counts.items())),
            ("index", f"generation {status.get('generation')}, lag {status.get('indexLagMs')} ms"),
            ("embedder", (status.get("embedder") or {}).get("name")),
            ("distiller", (status.get("distiller") or {}).get("mode")),
            ("indexing", (status.get("indexing") or {}).get("message") or "current")]
    bg = status.get("backgroundIndexer")
    if bg:
        rows.append(("background indexer", f"pid {bg.get('pid')} since {bg.get('startedAt')}"))
    rows += extra
    table("lore-sidecar status", ("", ""), rows)
