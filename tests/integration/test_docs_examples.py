"""The examples in docs/protocol.md, executed: the raw session byte for byte through a real
sidecar (replies compared with the documented ones), and one request of every method
(result fields compared with the method reference)."""

from __future__ import annotations

import json
import re
import subprocess

from lore_sidecar.client import StdioClient
from tests.conftest import sidecar_cmd
from tests.unit.test_docs import PROTOCOL, block, raw_frames, reference

VOLATILE = "…"


def replies(stdout: bytes) -> list[dict]:
    out, rest = [], stdout
    while rest:
        m = re.match(rb"Content-Length: (\d+)\r\n(?:[^\r\n]+\r\n)*\r\n", rest)
        assert m, rest[:80]
        n = int(m.group(1))
        out.append(json.loads(rest[m.end() : m.end() + n]))
        rest = rest[m.end() + n :]
    return out


def same(documented, actual) -> bool:
    """Equal, where the documentation's `…` stands for any value."""
    if documented == VOLATILE:
        return True
    if isinstance(documented, dict):
        return isinstance(actual, dict) and documented.keys() == actual.keys() and all(
            same(documented[k], actual[k]) for k in documented)
    if isinstance(documented, list):
        return isinstance(actual, list) and len(documented) == len(actual) and all(
            same(d, a) for d, a in zip(documented, actual, strict=True))
    return documented == actual


def test_the_raw_session_copied_byte_for_byte_gets_the_documented_replies(tmp_path):
    wire = b"".join(b"Content-Length: %d\r\n\r\n" % declared + body for declared, body in raw_frames(block(PROTOCOL, "raw-session")))
    proc = subprocess.run([*sidecar_cmd("--store-dir", str(tmp_path / "store"))], input=wire, capture_output=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    documented = [json.loads(line) for line in block(PROTOCOL, "raw-replies").splitlines()]
    got = replies(proc.stdout)
    assert len(got) == len(documented)
    for doc, actual in zip(documented, got, strict=True):
        assert same(doc, actual), (doc, actual)
    # Control: the comparison does notice a reply that differs.
    assert not same(documented[1], {**got[1], "result": {**got[1]["result"], "total": 1}})
    assert b"Traceback" not in proc.stderr


def test_one_request_of_every_method_answers_with_the_documented_fields(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "README.md").write_text("# ws\n\nThe writer lock lives in the store.\n")
    examples = [json.loads(line) for line in block(PROTOCOL, "requests").splitlines()]
    table = reference()
    assert {e["method"] for e in examples} == set(table)
    client = StdioClient(sidecar_cmd("--store-dir", str(tmp_path / "store")))
    try:
        client.initialize(ws, options={"watch": False, "distiller": "extractive"})
        for example in examples:
            reply = client.request_full(example["method"], example["params"])
            assert "result" in reply, (example, reply.get("error"))
            fields = table[example["method"]][1]
            required = {f for f in fields if not f.endswith("?")}
            allowed = {f.rstrip("?") for f in fields}
            got = set(reply["result"])
            assert required <= got <= allowed, (example["method"], sorted(got ^ allowed))
    finally:
        client.close()
