"""Transcript replay: each fixtures/<name>.jsonl is piped through `lore-sidecar --stdio` in one
go (as a CI script would), and the replies, with volatile fields normalised, must equal
fixtures/<name>.expected.json. Regenerate with UPDATE_FIXTURES=1 after a deliberate
change, and review the diff."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from lore_sidecar.client import read_frame
from tests.conftest import ROOT, sidecar_cmd

FIXTURES = sorted((ROOT / "fixtures").glob("*.jsonl"))
VOLATILE = {"tookMs", "queryId", "writerPid", "storeDir", "generation", "recordedAt", "version", "serverInfo", "score",
            "writerHeartbeatAgeMs", "densePartial", "vectorLag", "indexing"}  # the last three: how far the vector thread has got


def normalise(value):
    if isinstance(value, dict):
        return {k: ("<volatile>" if k in VOLATILE else normalise(v)) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def frames(path: Path) -> bytes:
    out = b""
    for line in path.read_text().splitlines():
        if line.strip():
            body = line.encode()
            out += b"Content-Length: %d\r\n\r\n" % len(body) + body
    return out


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_replay_matches_the_recorded_replies(fixture: Path, tmp_path):
    # The distiller waits for a quiet session; on a slow machine the replay could outlast
    # that wait and the counts would depend on timing. Here it waits longer than any replay.
    # Likewise a recall right after a write waits for the word index (readWaitMs): a loaded
    # machine's commit may take seconds, and a recall that gave up would answer without it.
    # writerStaleMs as its default (the recorded status shows it); one sidecar: no takeover.
    env = {**{k: v for k, v in os.environ.items() if k != "LORE_WRITER_STALE_MS"},
           "LORE_DISTILL_IDLE_MS": "600000", "LORE_READ_WAIT_MS": "60000"}
    proc = subprocess.run(sidecar_cmd("--store-dir", str(tmp_path / "store")), input=frames(fixture), capture_output=True,
                          timeout=120, env=env)
    stream = io.BytesIO(proc.stdout)
    replies = {}
    while (msg := read_frame(stream)) is not None:  # strict: any stray byte fails here
        if "id" in msg and "method" not in msg:
            replies[str(msg["id"])] = normalise(msg)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    expected_path = fixture.with_suffix(".expected.json")
    if os.environ.get("UPDATE_FIXTURES") == "1":
        expected_path.write_text(json.dumps(replies, indent=2, sort_keys=True) + "\n")
    assert replies == json.loads(expected_path.read_text())
