"""`lore-sidecar demo`: the whole loop through the real protocol, for a first look.

Spawns `lore-sidecar --stdio` as a child (exactly as an editor would), indexes a folder,
records a short coding conversation, asks a question and prints the hits.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from lore_sidecar.client import StdioClient, sidecar_command
from lore_sidecar.terminal import print_hits

CONVERSATION = [
    ("user", "The sidecar sometimes starts two writers when two editors open at once. Why?"),
    ("assistant", "Both processes raced on creating writer.lock. The fix: flock(LOCK_EX|LOCK_NB) on a "
     "dedicated lock file, never on the SQLite files, so exactly one process becomes the writer."),
    ("user", "Good. Remember that we decided followers must spool their writes durably before acking."),
]


def run_demo(folder: Path, query: str, *, store_dir: str | None = None) -> int:
    folder = folder.resolve()
    tmp = None
    if store_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="lore-demo-")
        store_dir = tmp.name
    print(f"lore-sidecar demo: workspace {folder}, store {store_dir}", file=sys.stderr)
    client = StdioClient(sidecar_command("--store-dir", store_dir))
    try:
        t0 = time.perf_counter()
        init = client.initialize(folder)
        caps = init["capabilities"]["experimental"]["lore"]
        print(f"initialize answered in {1000 * (time.perf_counter() - t0):.0f} ms; methods: {', '.join(caps['methods'])}")
        client.request("lore/recordMessages", {
            "sessionId": "demo-session",
            "harness": "demo",
            "messages": [{"id": f"m{i}", "role": r, "content": c} for i, (r, c) in enumerate(CONVERSATION)],
        })
        # Wait for the initial workspace scan to be searchable.
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            status = client.request("lore/status")
            if status["counts"]["files"] and status["indexLagMs"] == 0:
                break
            time.sleep(0.2)
        c = status["counts"]
        print(f"indexed {c['files']} files ({c['chunks']} chunks), {c['messages']} messages; "
              f"embedder {status['embedder']['name']}")
        distilled = client.request("lore/distill", {"sessionId": "demo-session"})
        print(f"\ndistilled the conversation ({distilled['mode']}):")
        for uri in distilled["created"]:
            print("  " + client.request("lore/getNode", {"uri": uri})["content"].replace("\n", "\n  "))
        kept = client.request("lore/retain", {"content": "Followers spool writes durably before acknowledging them.",
                                              "title": "followers spool writes", "category": "decision", "priority": 1})
        print(f"retained {kept['uri']}")
        print(f"\nrecall: {query!r}")
        result = client.request("lore/recall", {"query": query, "limit": 8})
        print_hits(result["hits"], result["total"], result["tookMs"])
        return 0 if result["hits"] else 1
    finally:
        client.close()
        if tmp is not None:
            tmp.cleanup()
