"""`lore-sidecar demo`: the main job end to end on a real folder, saying each step — spawn
the sidecar over stdio, index the folder, record a short chat, distil it, keep a decision,
and recall from all of it."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from lore_sidecar.client import StdioClient, sidecar_command
from lore_sidecar.terminal import print_hits

SCRIPT = json.loads((Path(__file__).with_name("demo_script.json")).read_text())
INDEX_WAIT_S = 120  # a big folder keeps being indexed in the background after this
QUIET_S = 2.0  # no new files for this long, and no index lag: the first scan is done


def step(text: str) -> None:
    print(f"lore-sidecar demo: {text}", file=sys.stderr, flush=True)


def has_files(folder: Path) -> bool:
    """Any regular file outside hidden folders (a cheap look: stops at the first one)."""
    for _, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        if any(not f.startswith(".") for f in files):
            return True
    return False


def run_demo(folder: Path, query: str | None, *, store_dir: str | None = None) -> int:
    folder = folder.expanduser().resolve()
    if not folder.is_dir():
        print(f"lore-sidecar demo: {folder}: no such folder", file=sys.stderr)
        return 2
    if not has_files(folder):
        print(f"lore-sidecar demo: {folder} has no files to index; point it at a source folder: "
              "lore-sidecar demo PATH", file=sys.stderr)
        return 2
    query = query or SCRIPT["question"]
    tmp = None
    if store_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="lore-demo-")
        store_dir = tmp.name
    step(f"starting the sidecar over stdio (store {store_dir})")
    client = StdioClient(sidecar_command("--store-dir", store_dir))
    try:
        t0 = time.perf_counter()
        init = client.initialize(folder)
        caps = init["capabilities"]["experimental"]["lore"]
        print(f"initialize answered in {1000 * (time.perf_counter() - t0):.0f} ms; {len(caps['methods'])} lore/* methods")
        client.request("lore/recordMessages", {
            "sessionId": "demo-session",
            "harness": "demo",
            "messages": [{"id": f"m{i}", "role": r, "content": c} for i, (r, c) in enumerate(SCRIPT["conversation"])],
        })
        step(f"recorded a {len(SCRIPT['conversation'])}-message chat; indexing {folder}")
        status = wait_for_first_scan(client)
        c = status["counts"]
        print(f"indexed {c['files']} files ({c['chunks']} chunks), {c['messages']} messages; "
              f"embedder {status['embedder']['name']}")
        step("distilling the chat")
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


def wait_for_first_scan(client: StdioClient) -> dict:
    """The status once the first workspace scan is searchable, reporting progress."""
    start = time.monotonic()
    deadline = start + INDEX_WAIT_S
    last_files, quiet_since, last_report = -1, start, 0.0
    while True:
        status = client.request("lore/status")
        files = status["counts"]["files"]
        now = time.monotonic()
        if files != last_files:
            last_files, quiet_since = files, now
        if status["indexLagMs"] == 0 and now - quiet_since >= QUIET_S and (files or now - start > 3 * QUIET_S):
            return status  # (no files after a while: everything there is ignored or binary)
        if now > deadline:
            step(f"still indexing after {INDEX_WAIT_S} s; recalling from what is indexed so far")
            return status
        if now - last_report >= 2:
            step(f"  {files} files indexed so far")
            last_report = now
        time.sleep(0.2)
