"""`lore/getNode` on a workspace file range (engine/recall/node_reader.py) hands the agent
the lines redacted (docs/security.md: a secret never leaves the sidecar as it is, whatever
the entrance): the secret is replaced, the lines around it are as written."""

from __future__ import annotations

from pathlib import Path

from lore_sidecar.app import open_engine
from lore_sidecar.engine.recall.node_reader import read_node
from lore_sidecar.settings import load_settings
from tests.support.secrets import PLANTED


def test_a_file_range_read_through_get_node_is_redacted(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    kind, text, secret = PLANTED[0]  # an AWS access key, in a line of text
    (ws / "deploy.sh").write_text(f"#!/bin/sh\necho start\n{text}\necho done\n")
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"),
                                init_options={"storeDir": str(tmp_path / "store"), "embedder": "none"})
    engine = open_engine(settings, [str(ws)])
    try:
        node = read_node(engine, (ws / "deploy.sh").as_uri() + "#L2-L4")
    finally:
        engine.close()
    assert node.content.splitlines()[0] == "echo start" and node.content.splitlines()[-1] == "echo done"
    assert secret not in node.content and f"[REDACTED:{kind}]" in node.content
