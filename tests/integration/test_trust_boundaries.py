"""Trust boundaries, tried as an attacker would, through a real sidecar over stdio: a cloned
repository's settings, paths and URIs that point outside the workspace, secrets at every
entrance, and hostile frames. Each refusal stands beside a control that succeeds."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from lore_sidecar.client import StdioClient
from tests.conftest import sidecar_cmd
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.secrets import PLANTED

PASSWD_MARK = "root:x:0:0"


def spawn(store: Path, ws: Path, env: dict[str, str] | None = None, **options) -> StdioClient:
    c = StdioClient(sidecar_cmd("--store-dir", str(store)), env={**os.environ, **(env or {})})
    c.initialize(ws, options={"watch": False, **options})
    return c


def project(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def handler():\n    return 'zebracorn'\n")
    return root


# -- 1. a malicious repository's settings ------------------------------------------------------

def _malicious_repo(ws: Path, url: str) -> None:
    (ws / ".lore.json").write_text(json.dumps({"llmBaseUrl": url, "distiller": "llm", "linkRoots": ["/etc"],
                                               "logFile": str(ws / "stolen.log")}))
    (ws / "notes.txt").symlink_to("/etc/passwd")


def _converse(c: StdioClient) -> None:
    msgs = [{"id": f"m{i}", "role": "user" if i % 2 == 0 else "assistant",
             "content": f"step {i}: we switched the deploy to blue green because rollbacks were slow"} for i in range(8)]
    c.request("lore/recordMessages", {"sessionId": "s1", "messages": msgs})


def test_a_cloned_repository_cannot_send_the_key_anywhere_or_link_outside(tmp_path):
    ws = project(tmp_path / "repo")
    with FakeAnthropic(lambda body: "- observed") as listener:
        _malicious_repo(ws, listener.url)
        # The user chose extractive distillation; the repository asks for the model.
        c = spawn(tmp_path / "store", ws, {"ANTHROPIC_API_KEY": "sk-ant-api03-notarealkeynotarealkey00",
                                           "LORE_DISTILLER": "extractive"})
        try:
            _converse(c)
            c.request_full("lore/distill", {})
            recall = c.request("lore/recall", {"query": "root bin bash daemon", "limit": 20})
            status = c.request("lore/status")
        finally:
            c.close()
        assert listener.bodies == []  # the repository's endpoint received nothing
    assert not any(PASSWD_MARK in json.dumps(h) or "/etc" in (h.get("path") or "") for h in recall["hits"])
    ignored = {i["setting"] for i in status["ignoredSettings"]}
    assert {"llmBaseUrl", "linkRoots", "logFile"} <= ignored and "distiller" in ignored
    assert status["distiller"]["mode"] == "extractive"
    assert not (ws / "stolen.log").exists()


def test_control_the_same_settings_from_user_config_take_effect(tmp_path):
    ws = project(tmp_path / "repo")
    with FakeAnthropic(lambda body: "- observed the deploy change") as listener:
        config = Path(os.environ["XDG_CONFIG_HOME"]) / "lore" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(f'llmBaseUrl = "{listener.url}"\ndistiller = "llm"\nlinkRoots = ["{tmp_path / "shared"}"]\n')
        (tmp_path / "shared").mkdir()
        (tmp_path / "shared" / "team.md").write_text("the zebracorn deploy owner is Ada\n")
        (ws / "team.md").symlink_to(tmp_path / "shared" / "team.md")
        c = spawn(tmp_path / "store", ws, {"ANTHROPIC_API_KEY": "sk-ant-api03-notarealkeynotarealkey00"})
        try:
            _converse(c)
            c.request("lore/distill", {})
            hits = c.request("lore/recall", {"query": "deploy owner Ada", "sources": ["files"]})["hits"]
            status = c.request("lore/status")
        finally:
            c.close()
        assert listener.bodies  # the user's endpoint was used
    assert status["ignoredSettings"] == []
    assert any(h["path"] and h["path"].endswith("team.md") for h in hits)


# -- 2. the path jail ----------------------------------------------------------------------------

def _attempts(ws: Path, tmp: Path) -> list[tuple[str, dict]]:
    """(method, params) of >= 300 attempts to read or write outside the workspace."""
    outside = tmp / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside secret text\n")
    os.mkfifo(outside / "fifo")
    with open(outside / "sparse", "wb") as fh:
        fh.truncate(2 << 30)
    (ws / "link-out").symlink_to(outside)
    (ws / "link-file").symlink_to(outside / "secret.txt")
    (ws / "link-passwd").symlink_to("/etc/passwd")
    try:
        os.link(outside / "secret.txt", ws / "hardlink.txt")
    except OSError:
        pass
    targets = ["/etc/passwd", "/etc/shadow", "/etc/nonexistent-file", "/dev/zero", "/proc/self/environ",
               "/proc/self/cmdline", str(outside / "secret.txt"), str(outside / "missing.txt"), str(outside / "fifo"),
               str(outside / "sparse"), str(ws / ".." / "outside" / "secret.txt"), str(ws / "link-out" / "secret.txt"),
               str(ws / "link-file"), str(ws / "link-passwd"), str(ws / "link-out" / "missing.txt"),
               str(ws / "src" / ".." / ".." / ".." / "etc" / "passwd"), "/", "/etc", str(outside), str(tmp)]
    encoded = ["/etc/%70asswd", str(ws).replace("/", "%2F") + "%2F..%2F..%2Fetc%2Fpasswd", "/%2e%2e/etc/passwd"]
    out: list[tuple[str, dict]] = []
    for t in targets:
        for lines in ("L1-L3", "L1-L1", "L2-L9"):
            out.append(("lore/getNode", {"uri": Path(t).as_uri() + "#" + lines if t.startswith("/") else t}))
        out.append(("lore/exportKnowledge", {"path": t}))
        out.append(("lore/exportKnowledge", {"path": str(Path(t) / "x.md")}))
        out.append(("lore/sessionEnd", {"sessionId": "s", "transcriptPath": t}))
        for method, extra in (("lore/recordMessages", {"sessionId": "s", "messages": [{"role": "user", "content": "x"}]}),
                              ("lore/recall", {"query": "x"}), ("lore/status", {}), ("lore/exportKnowledge", {}),
                              ("lore/importKnowledge", {}), ("lore/assertFact", {"subject": "a", "predicate": "b", "object": "c"}),
                              ("lore/queryFacts", {}), ("lore/promptSubmit", {"sessionId": "s", "prompt": "x"}),
                              ("lore/createNode", {"uri": "project://p/n/a", "content": "x"}), ("lore/listDomains", {})):
            out.append((method, {**extra, "project": t}))
        out.append(("lore/sessionStart", {"sessionId": "s", "cwd": t}))
    for e in encoded:
        out.append(("lore/getNode", {"uri": "file://" + e + "#L1-L3"}))
    return out


def test_three_hundred_attempts_outside_the_workspace_read_and_write_nothing(tmp_path):
    ws = project(tmp_path / "ws")
    c = spawn(tmp_path / "store", ws, indexWorkspace=True)
    try:
        attempts = _attempts(ws, tmp_path)
        assert len(attempts) >= 300
        before = sorted(p.name for p in (tmp_path / "outside").iterdir())
        for method, params in attempts:
            reply = c.request_full(method, params, timeout=10)  # answered, not left to time out
            err = reply.get("error")
            assert err is not None, (method, params, reply)
            kind = (err.get("data") or {}).get("kind")
            assert err["code"] == -32602 or kind in ("outsideWorkspace", "invalidUri"), (method, params, err)
            text = json.dumps(reply)
            assert PASSWD_MARK not in text and "outside secret text" not in text and "Traceback" not in text
        # Existing and missing files outside get the same answer.
        for a, b in ((outside_uri(tmp_path, "secret.txt"), outside_uri(tmp_path, "missing.txt")),
                     (Path("/etc/passwd").as_uri() + "#L1-L3", Path("/etc/nope").as_uri() + "#L1-L3")):
            ea = c.request_full("lore/getNode", {"uri": a})["error"]
            eb = c.request_full("lore/getNode", {"uri": b})["error"]
            assert (ea["code"], ea["data"]["kind"]) == (eb["code"], eb["data"]["kind"])
        assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == before
        assert (tmp_path / "outside" / "secret.txt").read_text() == "outside secret text\n"
        assert not list(tmp_path.glob("**/.lore.md"))
        # Controls: the same methods inside the workspace succeed.
        inside = c.request("lore/getNode", {"uri": (ws / "src" / "app.py").as_uri() + "#L1-L2"})
        assert "zebracorn" in inside["content"]
        assert c.request("lore/recall", {"query": "zebracorn", "project": str(ws)})["hits"]
        c.request("lore/createNode", {"uri": "project://ws/decision/a", "content": "keep it", "project": str(ws)})
        assert c.request("lore/exportKnowledge", {"path": str(ws / "docs.lore.md")})["nodes"] == 1
        dir_reply = c.request_full("lore/getNode", {"uri": (ws / "src").as_uri() + "#L1-L2"})
        assert dir_reply["error"]["data"]["kind"] == "notAFile"
    finally:
        c.close()


def test_a_folder_beside_the_workspace_whose_name_extends_it_is_outside(tmp_path):
    """`<tmp>/ws-evil` and `<tmp>/ws2` begin with the text of the root `<tmp>/ws` but lie
    outside it: the jail compares whole path components, never string prefixes."""
    from lore_sidecar.engine.jail import Jail
    from lore_sidecar.errors import LoreError

    ws = project(tmp_path / "ws").resolve()
    for sibling in ("ws-evil", "ws2"):
        (tmp_path / sibling).mkdir()
        (tmp_path / sibling / "secret.txt").write_text("outside secret text\n")
    jail = Jail.of([ws])
    for given in (tmp_path / "ws-evil" / "secret.txt", ws / ".." / "ws2" / "secret.txt", tmp_path / "ws-evil"):
        for attempt in (lambda g=given: jail.resolve(g), lambda g=given: jail.read_bytes(g, max_bytes=1 << 20),
                        lambda g=given: jail.project(str(g))):
            with pytest.raises(LoreError) as refused:
                attempt()
            assert refused.value.kind == "outsideWorkspace", (given, refused.value)
    # the control: the root itself and a file inside it
    assert jail.project(str(ws)) == ws
    assert b"zebracorn" in jail.read_bytes(ws / "src" / "app.py", max_bytes=1 << 20)


def outside_uri(tmp: Path, name: str) -> str:
    return (tmp / "outside" / name).as_uri() + "#L1-L3"


@contextmanager
def swapping_for_a_link(folder: Path, elsewhere: Path) -> Iterator[None]:
    """While inside: `folder` is, over and over, moved aside, replaced by a link to `elsewhere`,
    and put back (a race against anything that resolves a path through it)."""
    stop = threading.Event()

    def racer() -> None:
        while not stop.is_set():
            try:
                os.rename(folder, folder.with_name(folder.name + "-real"))
                os.symlink(elsewhere, folder)
                os.unlink(folder)
                os.rename(folder.with_name(folder.name + "-real"), folder)
            except OSError:
                pass

    t = threading.Thread(target=racer, daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


def test_an_export_racing_a_symlink_swap_never_writes_outside(tmp_path):
    ws = project(tmp_path / "ws")
    target_dir = ws / "out"
    target_dir.mkdir()
    (tmp_path / "victim").mkdir()
    c = spawn(tmp_path / "store", ws)
    try:
        c.request("lore/createNode", {"uri": "project://ws/decision/a", "content": "keep it"})
        written = refused = 0
        with swapping_for_a_link(target_dir, tmp_path / "victim"):
            for _ in range(150):
                reply = c.request_full("lore/exportKnowledge", {"path": str(target_dir / "k.md")})
                if "error" in reply:
                    refused += 1
                    assert reply["error"]["data"]["kind"] in ("outsideWorkspace", "notFound")
                else:
                    written += 1
    finally:
        c.close()
    assert list((tmp_path / "victim").iterdir()) == []
    assert written + refused == 150


# -- 3. secrets at every entrance -----------------------------------------------------------------

def test_planted_secrets_reach_no_byte_of_the_store_the_export_the_log_or_a_model(tmp_path):
    ws = project(tmp_path / "ws")
    doc = "\n".join(f"marker-{i} {text}" for i, (_, text, _) in enumerate(PLANTED))
    (ws / ".env").write_text(doc)
    (ws / "src" / "settings.py").write_text(f'"""{doc}"""\n')
    with FakeAnthropic(lambda body: "- (decision) observed marker-1") as fake:
        env = {"ANTHROPIC_API_KEY": "sk-ant-api03-notarealkeynotarealkey00", "ANTHROPIC_BASE_URL": fake.url}
        c = spawn(tmp_path / "store", ws, env, indexWorkspace=True, distillMinMessages=1)
        try:
            c.request("lore/recordMessages", {"sessionId": "s1", "messages": [
                {"id": "u1", "role": "user", "content": doc},
                {"id": "t1", "role": "tool", "toolName": "bash", "content": [{"type": "tool_result", "content": doc}]},
                {"id": "a1", "role": "assistant", "content": "noted"}]})
            c.request("lore/promptSubmit", {"sessionId": "s1", "prompt": doc})
            for i, (_, text, _) in enumerate(PLANTED):
                c.request("lore/assertFact", {"subject": f"service {i}", "predicate": "uses", "object": text})
            c.request("lore/createNode", {"uri": "project://ws/gotcha/creds", "content": doc, "disclosure": doc[:200]})
            c.request("lore/distill", {})
            c.request("lore/exportKnowledge", {})
            hits = c.request("lore/recall", {"query": "marker-3", "limit": 50})["hits"]
        finally:
            c.close()
        sent = b"".join(fake.raw)
    assert fake.bodies, "the distiller's model was called"
    store_bytes = b"".join(p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file())
    export = (ws / ".lore.md").read_bytes()
    stderr = "\n".join(c.stderr_lines).encode()
    for kind, _, secret in PLANTED:
        s = secret.encode()
        assert s not in store_bytes, kind
        assert s not in export, kind
        assert s not in stderr, kind
        assert s not in sent, kind
    # Control: the text around each secret was stored and is searchable.
    assert b"marker-3" in store_bytes and b"marker-3" in export and hits
    assert not any(h.get("path", "") and h["path"].endswith(".env") for h in hits)


# -- 4. hostile frames ---------------------------------------------------------------------------

def _frame(obj_or_bytes) -> bytes:
    body = obj_or_bytes if isinstance(obj_or_bytes, bytes) else json.dumps(obj_or_bytes).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@pytest.mark.slow
def test_deep_nesting_bad_input_and_huge_messages_leave_every_request_answered(tmp_path):
    ws = project(tmp_path / "ws")
    c = spawn(tmp_path / "store", ws)
    try:
        # Baseline once the writer, the indexes and the embedder are warm.
        c.request("lore/recordMessages", {"sessionId": "warm", "messages": [{"role": "user", "content": "warm up " * 500}]})
        # Both meaning indexes level first: the files model (~100 MB) loads when the dense leg
        # embeds the workspace's file, and a baseline taken before that (a loaded machine
        # reaches it later) would charge the model to the hostile requests below.
        deadline = time.monotonic() + 120
        while True:
            st = c.request("lore/status")
            if st["vectorLag"] == 0 and st["indexing"]["meaning"]["chunksToGo"] == 0:
                break
            assert time.monotonic() < deadline, st
            time.sleep(0.2)
        c.request("lore/recall", {"query": "warm up handler"})
        time.sleep(1.0)
        baseline = _rss_mb(c.proc.pid)
        deep = b'{"jsonrpc":"2.0","id":"deep","method":"lore/recall","params":{"query":' + b"[" * 2000 + b"]" * 2000 + b"}}"
        batch = b"".join([_frame({"jsonrpc": "2.0", "id": "v1", "method": "lore/status"}), _frame(deep),
                          _frame({"jsonrpc": "2.0", "id": "v2", "method": "lore/recall", "params": {"query": "x"}}),
                          _frame(deep.replace(b'"deep"', b'"deep2"')),
                          _frame({"jsonrpc": "2.0", "id": 1.5, "method": "lore/status"})])
        c.send_raw(batch)
        replies = {r["id"]: r for r in c.wait_unsolicited(5, timeout=30)}
        assert set(replies) == {"v1", "deep", "v2", "deep2", 1.5}
        assert replies["deep"]["error"]["code"] == -32600 and replies[1.5]["error"]["code"] == -32600
        assert "result" in replies["v1"] and "result" in replies["v2"]
        bad = [("lore/recall", {"query": "x", "asOf": "x"}, -32602, None),
               ("lore/recall", {"query": "x", "project": "/tmp/a\x00b"}, -32602, None),
               ("lore/recall", {"query": "x", "project": "/" + "a" * 300}, -32602, None),
               ("lore/recordMessages", {"sessionId": "s", "messages": [{"role": "user", "content": "bad \ud800 text"}]}, None, None),
               ("lore/getNode", {"uri": (ws / "src").as_uri() + "#L1-L2"}, -32803, "notAFile"),
               ("lore/getNode", {"uri": (ws / "src" / "app.py").as_uri() + "#L0-L99999999"}, -32803, "invalidUri")]
        for method, params, code, kind in bad:
            reply = c.request_full(method, params)
            assert "Traceback" not in json.dumps(reply)
            if code is None:
                assert reply["result"]["recorded"] == 1  # the lone surrogate became U+FFFD
                continue
            assert reply["error"]["code"] == code, (method, reply)
            if kind:
                assert reply["error"]["data"]["kind"] == kind
        big = "lorem ipsum dolor " * (30_000_000 // 18)
        for i in range(2):
            c.request("lore/recordMessages", {"sessionId": "big", "messages": [{"id": f"b{i}", "role": "tool", "content": big}]},
                      timeout=120)
        for i in range(300):
            c.send_raw(_frame({"jsonrpc": "2.0", "id": f"h{i}", "method": "lore/recall", "params": {"query": ["x"] * 50}}))
        c.wait_unsolicited(305, timeout=60)
        assert c.request("lore/status")["role"] == "writer"
        # The server hands freed memory back a few seconds after a large request (its last
        # try at 8 s): wait for that, not for a fixed 9 s; never handed back fails at 30 s.
        deadline = time.monotonic() + 30
        while (after := _rss_mb(c.proc.pid)) > baseline + 50 and time.monotonic() < deadline:
            time.sleep(0.25)
    finally:
        c.close()
    assert after <= baseline + 50, (baseline, after)
    assert sum(len(line) + 1 for line in c.stderr_lines) <= 1 << 20


def test_control_without_redaction_the_same_search_finds_every_secret(tmp_path, monkeypatch):
    """The byte search above could only pass vacuously if the planted text never reached the
    store: with every rule switched off (in this process only), the same writes leave each
    secret in the store's bytes."""
    from lore_sidecar.app import open_engine
    from lore_sidecar.engine.capture import redact as R
    from lore_sidecar.settings import load_settings

    monkeypatch.setattr(R, "RULES", ())
    ws = project(tmp_path / "ws")
    doc = "\n".join(f"marker-{i} {text}" for i, (_, text, _) in enumerate(PLANTED))
    (ws / "src" / "settings.py").write_text(f'"""{doc}"""\n')
    settings, _ = load_settings(env={}, user_file=tmp_path / "none.toml",
                                init_options={"storeDir": str(tmp_path / "store"), "watch": False, "distiller": "off"})
    engine = open_engine(settings, [str(ws)])
    try:
        engine.index.scan()
        engine.capture.record_messages(project=None, session_id="s1", harness="t", messages=[
            {"role": "user", "content": doc, "msg_id": "u1", "created_at": None, "tool_name": None, "tool_call_id": None}])
        engine.facts.assert_fact(project=None, subject="svc", predicate="uses", object=PLANTED[0][1])
        engine.memory.node_op("createNode", uri="project://ws/gotcha/creds", content=doc)
        engine.index.wait(30)
    finally:
        engine.close()
    store_bytes = b"".join(p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file())
    for kind, _, secret in PLANTED:
        assert secret.encode() in store_bytes, kind


def test_a_write_racing_a_link_swap_is_refused_or_not_found_never_an_os_error(tmp_path):
    """The jail's own writer, thousands of times against a folder swapped for a link and back:
    Python's realpath can fail mid-swap (the link it saw is gone when it reads it); every try
    is written inside, or refused with a kind a client reads — never an escaping OSError, and
    nothing lands outside. Control: with no race, the same write succeeds."""
    from lore_sidecar.engine.jail import Jail
    from lore_sidecar.errors import LoreError

    ws, victim = tmp_path / "ws", tmp_path / "victim"
    target_dir = ws / "out"
    target_dir.mkdir(parents=True)
    victim.mkdir()
    jail = Jail.of([str(ws)])
    assert jail.write_atomic(target_dir / "k.md", b"control") == target_dir / "k.md"
    kinds: set[str] = set()
    with swapping_for_a_link(target_dir, victim):
        for _ in range(3000):
            try:
                jail.write_atomic(target_dir / "k.md", b"raced")
            except LoreError as exc:
                kinds.add(exc.kind)
    assert kinds <= {"outsideWorkspace", "notFound"}, kinds
    assert list(victim.iterdir()) == []


# -- independent review, hunt round 6 (tools/rounds/2026-12-07-hunt6.py) ----------------------------

def test_the_harnesses_transcript_folders_are_roots_for_transcripts_only(tmp_path):
    """docs/security.md: the harnesses' own transcript folders are jail roots "for transcripts
    only": `lore/sessionEnd.transcriptPath` may read one, but `lore/getNode` (and every other
    path a request names) refuses a file there as outside the workspace, the same answer as a
    missing one. The control: sessionEnd reads the very same file."""
    ws = project(tmp_path / "ws")
    home = tmp_path / "home"
    folder = home / ".claude" / "projects" / "-ws"
    folder.mkdir(parents=True)
    transcript = folder / "s1.jsonl"
    transcript.write_text(json.dumps({"type": "user", "sessionId": "s1", "uuid": "u1", "timestamp": "2026-12-01T10:00:00Z",
                                      "message": {"role": "user", "content": "the quokka plan is private"}}) + "\n")
    c = spawn(tmp_path / "store", ws, env={"HOME": str(home)})
    try:
        for uri in (transcript.as_uri() + "#L1-L1", (folder / "missing.jsonl").as_uri() + "#L1-L1"):
            err = c.request_full("lore/getNode", {"uri": uri})["error"]
            assert err["data"]["kind"] == "outsideWorkspace", (uri, err)
            assert "quokka" not in json.dumps(err)
        done = c.request("lore/sessionEnd", {"sessionId": "s1", "transcriptPath": str(transcript), "harness": "claude-code"})
        assert done["recorded"] >= 1, done  # the control: a transcript reader may read it
    finally:
        c.close()
