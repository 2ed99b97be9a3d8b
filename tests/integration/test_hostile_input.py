"""10,000 malformed or hostile frames interleaved with valid requests, through a real
subprocess: the server stays up, every hostile request with an id gets an error reply,
valid requests keep being answered, and nothing hostile is written."""

from __future__ import annotations

import json
import random

from lore_sidecar.client import StdioClient
from tests.conftest import sidecar_cmd


def frame(body: bytes, header: bytes | None = None) -> bytes:
    return (header if header is not None else b"Content-Length: %d\r\n\r\n" % len(body)) + body


def hostile(i: int, rng: random.Random) -> tuple[bytes, object, int]:
    """(bytes, expected reply id, expected code)."""
    hid = f"h{i}"
    kind = i % 10
    if kind == 0:
        return frame(b'{"jsonrpc": "2.0", "id": 1, "method": '), None, -32700
    if kind == 1:
        return frame(json.dumps({"jsonrpc": "2.0", "id": hid, "method": "lore/recall", "params": {"query": rng.choice([3, None, [], {}])}}).encode()), hid, -32602
    if kind == 2:
        return frame(json.dumps({"jsonrpc": "2.0", "id": hid, "method": f"lore/nope{i}", "params": {}}).encode()), hid, -32601
    if kind == 3:
        body = json.dumps({"jsonrpc": "2.0", "id": hid, "method": "lore/status"}).encode()
        return frame(body, b"Content-Lenght: %d\r\n\r\n" % len(body)), hid, -32600
    if kind == 4:
        body = json.dumps({"jsonrpc": "2.0", "id": hid, "method": "lore/recordMessages", "params": {"sessionId": "evil", "messages": [{"role": "user", "content": "x"}]}}).encode()
        return frame(body, b"Content-Length: 1000000000000\r\n\r\n"), hid, -32600
    if kind == 5:
        return frame(rng.choice([b"[]", b"42", b'"str"', b"null", b"[1,2]"])), None, -32600
    if kind == 6:
        return frame(json.dumps({"jsonrpc": "1.0", "id": hid, "method": "lore/status"}).encode()), hid, -32600
    if kind == 7:
        msgs = rng.choice(["not a list", [{"role": "robot", "content": "x"}], [{"role": "user", "content": 5}], [{"content": "no role"}]])
        return frame(json.dumps({"jsonrpc": "2.0", "id": hid, "method": "lore/recordMessages", "params": {"sessionId": "evil", "messages": msgs}}).encode()), hid, -32602
    if kind == 8:
        return frame(json.dumps({"jsonrpc": "2.0", "id": hid, "method": "lore/recall", "params": "a string"}).encode()), hid, -32602
    return frame(json.dumps({"jsonrpc": "2.0", "id": {"an": "object"}, "method": "lore/status"}).encode()), None, -32600


def test_ten_thousand_hostile_frames_leave_the_server_answering_and_the_store_unchanged(tmp_path):
    rng = random.Random(20261130)
    ws = tmp_path / "ws"
    ws.mkdir()
    client = StdioClient(sidecar_cmd("--store-dir", str(tmp_path / "store")))
    try:
        client.initialize(ws, options={"indexWorkspace": False, "watch": False})
        expected_ids: dict[str, int] = {}
        expected_null = 0
        valid_answered = 0
        written = 0
        for i in range(10_000):
            data, rid, code = hostile(i, rng)
            client.send_raw(data)
            if rid is None:
                expected_null += 1
            else:
                expected_ids[rid] = code
            if i % 20 == 19:
                if i % 40 == 39:
                    res = client.request("lore/recordMessages", {"sessionId": "good", "messages": [{"id": f"g{i}", "role": "user", "content": f"valid {i}"}]})
                    written += res["recorded"]
                else:
                    res = client.request("lore/recall", {"query": "valid", "limit": 3})
                    assert "hits" in res
                valid_answered += 1
        status = client.request("lore/status")  # flushes anything the parser still holds
        replies = client.wait_unsolicited(len(expected_ids) + expected_null, timeout=120)
        by_id = {r["id"]: r for r in replies if r.get("id") is not None}
        assert set(by_id) == set(expected_ids)
        for rid, code in expected_ids.items():
            assert by_id[rid]["error"]["code"] == code, (rid, by_id[rid])
        nulls = [r for r in replies if r.get("id") is None]
        assert len(nulls) == expected_null
        assert all(r["error"]["code"] in (-32700, -32600) for r in nulls)
        assert valid_answered == 500
        assert status["counts"]["messages"] == written == 250  # nothing from "evil"
        evil = client.request("lore/recall", {"query": "x", "sources": ["messages"], "scope": "all"})
        assert all(h["sessionId"] != "evil" for h in evil["hits"])
        assert client.proc.poll() is None and client.violation is None
    finally:
        assert client.close() == 0
