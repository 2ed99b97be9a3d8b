"""What every benchmark script shares: percentiles, the machine it ran on, the result file."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any


def pct(values: list[float], p: float) -> float:
    """The p-th percentile (nearest rank) of `values`."""
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float:
    """A process's resident memory (VmRSS) or its peak (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def machine() -> dict[str, Any]:
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}


def write_result(out: str | Path, result: dict[str, Any]) -> None:
    """Write the JSON result file (creating its folder)."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2))


def steps(items, label: str):
    """Iterate `items`, with a progress bar on stderr when it is a terminal (quiet when piped)."""
    import sys

    items = list(items)
    if not sys.stderr.isatty():
        yield from items
        return
    from rich.console import Console
    from rich.progress import track

    yield from track(items, description=label, console=Console(stderr=True), transient=True)


def settle(client: Any, messages: int, timeout: float = 600) -> None:
    """Until a sidecar (a StdioClient) holds `messages` messages, searchable by their words
    and their meaning."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = client.request("lore/status")
        if s["counts"]["messages"] >= messages and s["indexLagMs"] == 0 and s.get("vectorLag", 0) == 0:
            return
        time.sleep(0.05)
    raise TimeoutError("the sidecar did not settle")
