"""The stdio contract: only well-formed frames on stdout, shutdown semantics, exit codes,
and the process ending when its client dies."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from lore_sidecar.client import StdioClient
from tests.conftest import make_workspace, sidecar_cmd


def test_a_whole_session_writes_nothing_but_strict_frames_to_stdout(tmp_path):
    ws = make_workspace(tmp_path / "ws")
    client = StdioClient(sidecar_cmd("--store-dir", str(tmp_path / "store"), "-vv"))
    client.initialize(ws)
    client.request("lore/recordMessages", {"sessionId": "s", "messages": [{"role": "user", "content": "hello stripe"}]})
    client.request("lore/recall", {"query": "stripe payments"})
    client.request("lore/reindex", {})
    client.send_raw(b"garbage\r\n\r\n")
    client.request("lore/status")
    assert client.close() == 0
    # The strict reader raises on any stray byte; -vv logs plenty, all of it to stderr.
    assert client.violation is None
    assert any("DEBUG" in line or "INFO" in line for line in client.stderr_lines)


def test_stdout_guard_sends_prints_and_raw_fd_writes_to_stderr():
    code = textwrap.dedent(
        """
        import os, sys
        from lore_sidecar.rpc.transport import StdoutGuard
        guard = StdoutGuard.install()
        print("stray print")
        os.write(1, b"stray fd write\\n")
        guard.write(b"Content-Length: 2\\r\\n\\r\\n{}")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30)
    assert out.stdout == b"Content-Length: 2\r\n\r\n{}"
    assert b"stray print" in out.stderr and b"stray fd write" in out.stderr


def test_requests_after_shutdown_are_refused_and_exit_code_follows_the_spec(tmp_path):
    client = StdioClient(sidecar_cmd("--store-dir", str(tmp_path / "store")))
    client.initialize(tmp_path, options={"indexWorkspace": False})
    assert client.request("shutdown") is None
    reply = client.request_full("lore/status", {})
    assert reply["error"]["code"] == -32600
    client.notify("exit")
    assert client.proc.wait(timeout=10) == 0


def test_exit_without_shutdown_is_exit_code_1(tmp_path):
    client = StdioClient(sidecar_cmd("--store-dir", str(tmp_path / "store")))
    client.initialize(tmp_path, options={"indexWorkspace": False})
    client.notify("exit")
    assert client.proc.wait(timeout=10) == 1


def test_end_of_input_stops_the_server(tmp_path):
    client = StdioClient(sidecar_cmd("--store-dir", str(tmp_path / "store")))
    client.initialize(tmp_path, options={"indexWorkspace": False})
    client.proc.stdin.close()
    assert client.proc.wait(timeout=10) == 0


def test_server_exits_when_its_client_process_dies(tmp_path):
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    client = StdioClient(sidecar_cmd("--store-dir", str(tmp_path / "store"), "--clientProcessId", str(parent.pid)))
    try:
        client.initialize(tmp_path, options={"indexWorkspace": False})
        assert client.request("lore/status")["role"] == "writer"
        parent.kill()
        parent.wait()
        assert client.proc.wait(timeout=15) is not None
    finally:
        if client.proc.poll() is None:
            client.proc.kill()


def test_no_arguments_in_a_terminal_prints_help():
    # `script` (util-linux) gives the child a real TTY on stdin.
    out = subprocess.run(
        ["script", "-qec", f"{sys.executable} -m lore_sidecar", "/dev/null"], capture_output=True, timeout=30
    )
    assert b"usage: lore-sidecar" in out.stdout


def test_ordinary_error_replies_leave_no_traceback_in_the_log(tmp_path):
    """notFound, bad params and unknown methods are answers, not server failures: an
    editor's LSP log must not fill with tracebacks for them."""
    client = StdioClient(sidecar_cmd("--store-dir", str(tmp_path / "store")))
    client.initialize(tmp_path, options={"indexWorkspace": False, "watch": False})
    before = len(client.stderr_lines)
    assert client.request_full("lore/getNode", {"uri": "project://x/decision/nope"})["error"]["data"]["kind"] == "notFound"
    assert client.request_full("lore/recall", {"query": "x", "limit": 0})["error"]["code"] == -32602
    assert client.request_full("lore/noSuchMethod", {})["error"]["code"] == -32601
    assert client.request("lore/status")["role"] == "writer"  # control: the server answers on
    client.close()
    assert [line for line in client.stderr_lines[before:] if line.strip()] == []


def test_each_documented_error_code_carries_its_documented_data_and_changes_nothing(tmp_path):
    """docs/protocol.md's error table, one frame each, beside a control that succeeds:
    -32700 (not JSON, id null), -32600 (no method), -32601 (unknown method), -32602 (bad
    params, with `data.errors` naming the field), -32803 (an expected failure, with a stable
    `data.kind` and a boolean `data.retryable`). None of them writes anything."""
    import json

    client = StdioClient(sidecar_cmd("--store-dir", str(tmp_path / "store")))
    client.initialize(tmp_path, options={"indexWorkspace": False, "watch": False})
    try:
        before = client.request("lore/status")["counts"]
        bad_json = b'{"jsonrpc": "2.0", "id": 7, "method": "lore/status", '
        client.send_raw(b"Content-Length: %d\r\n\r\n" % len(bad_json) + bad_json)
        no_method = json.dumps({"jsonrpc": "2.0", "id": 8, "params": {}}).encode()
        client.send_raw(b"Content-Length: %d\r\n\r\n" % len(no_method) + no_method)
        raw = client.wait_unsolicited(2, timeout=30)
        unknown = client.request_full("lore/noSuchMethod", {})
        params = client.request_full("lore/recordMessages", {"sessionId": "s", "messages": [
            {"role": "user", "content": "kept"}, {"role": "wizard", "content": "refused"}]})
        expected = client.request_full("lore/updateNode", {"uri": "project://x/decision/nope", "content": "c"})
        control = client.request_full("lore/recordMessages", {"sessionId": "s", "messages": [{"role": "user", "content": "ok"}]})
        after = client.request("lore/status")["counts"]
    finally:
        client.close()
    assert sorted((str(r["id"]), r["error"]["code"]) for r in raw) == [("8", -32600), ("None", -32700)], raw
    assert unknown["error"]["code"] == -32601
    assert params["error"]["code"] == -32602 and any("role" in str(e) for e in params["error"]["data"]["errors"])
    err = expected["error"]
    assert err["code"] == -32803 and err["data"]["kind"] == "notFound" and err["data"]["retryable"] is False
    assert control["result"]["recorded"] == 1  # the control: a good write goes through
    assert after["messages"] == before["messages"] + 1  # and only it: the refused batch wrote nothing


def test_params_that_fail_to_structure_are_32602_with_data_errors_naming_the_field(tmp_path):
    """docs/protocol.md: -32602 carries `data.errors` naming the field - also when pygls fails
    to structure a typed request's params (here textDocument/hover with a number for the
    document and no position), not only when a lore handler refuses them. The control: a
    lore request's own bad params carry theirs."""
    client = StdioClient(sidecar_cmd("--store-dir", str(tmp_path / "store")))
    client.initialize(tmp_path, options={"indexWorkspace": False, "watch": False})
    try:
        control = client.request_full("lore/recall", {"query": "x", "limit": 0})
        bad = client.request_full("textDocument/hover", {"textDocument": 3})
    finally:
        client.close()
    assert control["error"]["code"] == -32602 and control["error"]["data"]["errors"]  # the control
    assert bad["error"]["code"] == -32602, bad
    errors = bad["error"].get("data", {}).get("errors", [])
    assert any("text_document" in str(e) for e in errors) and any("position" in str(e) for e in errors), bad


def test_an_id_of_the_wrong_type_is_refused_to_its_sender_when_it_can_be_told(tmp_path):
    """JSON-RPC ids are strings or integers. A fractional id is refused with -32600 sent to
    that id (the client is waiting on it); a boolean one cannot be echoed and is refused to
    id null. The control: the same request with an integer id is answered."""
    client = StdioClient(sidecar_cmd("--store-dir", str(tmp_path / "store")))
    client.initialize(tmp_path, options={"indexWorkspace": False, "watch": False})
    try:
        control = client.request_full("lore/status", {}, msg_id=15)
        fractional = client.request_full("lore/status", {}, msg_id=1.5, timeout=30)
        client.send_raw(_frame(b'{"jsonrpc": "2.0", "id": true, "method": "lore/status"}'))
        [boolean] = client.wait_unsolicited(1, timeout=30)
    finally:
        client.close()
    assert "result" in control
    assert fractional["id"] == 1.5 and fractional["error"]["code"] == -32600, fractional
    assert boolean["id"] is None and boolean["error"]["code"] == -32600, boolean


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
