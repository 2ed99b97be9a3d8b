"""The never-read list, asked of every face that reads a workspace file: a workspace holding
`.env`, `.env.local`, `id_rsa`, `server.pem`, `.npmrc`, `.ssh/config` and a harmless-looking link to `.env`
(each with its own marker word) beside an ordinary file. LSP over stdio (getNode, its
executeCommand twin, hover, recall, workspace/symbol, export), lore/ask with a scripted model
that asks to Read each one, the ask tools themselves, MCP over stdio, the dashboard over HTTP.
Each secret file: refused with `secretFile` (where the face has a way to say so), and not one
marker byte in any answer; the ordinary file answers on every face."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from lore_sidecar.engine.ask.tools import Tools
from lore_sidecar.engine.jail import Jail
from tests.support import ask_agent
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.mcp_client import mcp_session, refusal, text

pytestmark = pytest.mark.slow

# Plain words: redaction leaves them alone, so only the never-read rule can keep them out.
SECRETS = {".env": "quokkaenvone", ".env.local": "quokkaenvlocal", "id_rsa": "quokkarsakey",
           "server.pem": "quokkapemcert", ".npmrc": "quokkanpmrc", "deploy/.ssh/config": "quokkasshconfig",
           "docs/see-env.txt": "quokkaenvone"}
MARKERS = sorted(set(SECRETS.values()))
CONTROL = ("src/app.py", "wombatplainword")


def build(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    for name, marker in SECRETS.items():
        if name != "docs/see-env.txt":
            # `zebracorn` first: hover on it would find memory (the control file) if the file were read
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(f"zebracorn {marker}\n{marker} second line\n")
    os.symlink("../.env", root / "docs" / "see-env.txt")  # a harmless name leading to .env
    (root / CONTROL[0]).write_text(f"zebracorn {CONTROL[1]}\ndef handler():\n    return 'zebracorn'\n")
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-f", "."], cwd=root, check=True)  # committed once: the history holds them too
    subprocess.run([*git, "commit", "-qm", "the walrus release"], cwd=root, check=True)
    return root.resolve()


def uri(ws: Path, rel: str) -> str:
    return f"file://{ws}/{rel}#L1-L2"


def leaks(*answers) -> list[str]:
    """Each marker found, with what surrounds it (so a failure shows where it leaked)."""
    blob = "\n".join(a if isinstance(a, str) else json.dumps(a) for a in answers)
    return [blob[max(0, blob.index(m) - 120): blob.index(m) + 40] for m in MARKERS if m in blob]


def ask_responder(body: dict) -> object:
    """A model that, asked about secrets, tries every way the ask tools offer to see them."""
    question, results = ask_agent.state(body.get("messages") or [])
    if not question:
        return "ok"
    if not results:  # two turns: a model may make only so many calls in one
        return {"tool_use": [("Read", {"path": name}) for name in SECRETS] + [("Read", {"file_path": ".env"}),
                                                                              ("Read", {"path": CONTROL[0]})]}
    if len(results) == len(SECRETS) + 2:
        return {"tool_use": [("Grep", {"pattern": "quokka|zebracorn"}), ("Glob", {"pattern": "*"}),
                             ("Glob", {"pattern": ".env*"}), ("find_paths", {"path": "."})]}
    return f"{len(results)} calls answered"


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("never-read")
    ws = build(tmp / "ws")
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    with FakeAnthropic(ask_responder) as fake:
        env.update(ANTHROPIC_API_KEY="sk-test-not-a-real-key", ANTHROPIC_BASE_URL=fake.url)
        c = StdioClient(sidecar_command(), env=env)
        try:
            c.initialize(ws, options={"storeDir": str(tmp / "store"), "watch": False, "indexWorkspace": True,
                                      "distiller": "off"})
            c.request("lore/reindex", {"scope": "workspace"}, timeout=120)
            c.request("lore/retain", {"content": "zebracorn is what the handler returns", "category": "pattern"})
            yield c, ws, tmp / "store", fake
        finally:
            c.close()


def test_the_jail_judges_the_path_as_given_and_the_real_path_it_resolves_to(tmp_path):
    """Three links, each refused for one side only: a harmless name leading into `.ssh/` (its
    real path is the credential, its name is not), a `.env` leading to an ordinary file, and a
    `.ssh` folder that is a link to an ordinary one (the given paths are the credentials)."""
    from lore_sidecar.errors import LoreError

    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "deploy" / ".ssh").mkdir(parents=True)
    (ws / "deploy" / ".ssh" / "config").write_text("Host prod quokkasshconfig\n")
    (ws / "sshcopy").mkdir()
    (ws / "sshcopy" / "config").write_text("Host test wombatplainword\n")
    (ws / "src" / "values.txt").write_text("wombatplainword\n")
    os.symlink("../deploy/.ssh/config", ws / "src" / "notes.txt")
    os.symlink("src/values.txt", ws / ".env")
    os.symlink("sshcopy", ws / ".ssh")
    os.symlink("values.txt", ws / "src" / "plain-link.txt")  # the control: a link to an ordinary file
    ws = ws.resolve()
    jail = Jail.of([ws])
    tools = Tools(root=ws, jail=jail)
    for given in ("src/notes.txt", ".env", ".ssh/config"):
        for attempt in (lambda g=given: jail.readable(ws / g), lambda g=given: jail.read_bytes(ws / g, max_bytes=1 << 20)):
            with pytest.raises(LoreError) as refused:
                attempt()
            assert refused.value.kind == "secretFile", (given, refused.value)
    with pytest.raises(LoreError) as refused:
        tools.read("src/notes.txt")  # the ask agent's Read: the real path is the credential
    assert refused.value.kind == "secretFile"
    # controls: the same files under their own ordinary names, and a link to one, read
    assert jail.read_bytes(ws / "src" / "plain-link.txt", max_bytes=1 << 20) == b"wombatplainword\n"
    assert tools.read("sshcopy/config")["lines"] == ["Host test wombatplainword"]
    assert tools.read("src/values.txt")["lines"] == ["wombatplainword"]


def test_grep_never_shows_files_of_credential_folders_its_excludes_do_not_name(tmp_path):
    """grep's `--exclude`s name files and a few folders; `.kube/config`, `.docker/config.json`,
    `gh/hosts.yml` and gcloud's folder are kept out by the filter on grep's output."""
    ws = tmp_path / "ws"
    for rel in (".kube/config", ".docker/config.json", ".config/gh/hosts.yml", ".config/gcloud/properties"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(f"token: quokkatail {rel}\n")
    (ws / "kube").mkdir()
    (ws / "kube" / "config.yaml").write_text("quokkatail control\n")  # the control: a look-alike that is not one
    ws = ws.resolve()
    tools = Tools(root=ws, jail=Jail.of([ws]))
    assert tools.grep("quokkatail")["matches"] == ["kube/config.yaml:1:quokkatail control"]
    assert tools.glob("*")["paths"] == ["kube/config.yaml"]


def test_chunks_indexed_before_the_list_named_the_file_are_never_shown(tmp_path, monkeypatch):
    """An index built by an older lore (whose list did not name `.ssh/`) holds a chunk of
    `deploy/.ssh/config`: recall shows no hit from it and getNode of that very chunk is refused."""
    from lore_sidecar.engine.workspace import walk as walk_module
    from lore_sidecar.errors import LoreError
    from tests.integration.test_store_and_index import engine_for

    ws = tmp_path / "ws"
    (ws / "deploy" / ".ssh").mkdir(parents=True)
    (ws / "src").mkdir()
    (ws / "deploy" / ".ssh" / "config").write_text("Host prod\n  IdentityFile quokkasshconfig\n")
    (ws / "src" / "app.py").write_text("wombatplainword\nreturn 1\n")
    ws = ws.resolve()
    e = engine_for(tmp_path / "store", [str(ws)])
    try:
        with monkeypatch.context() as m:
            m.setattr(walk_module, "never_read", lambda rel: False)  # the older list
            e.view.workspace.scan(str(ws))
        e.index.wait()
        chunks = e.records.files.db.reader().execute(
            "SELECT c.start_line, c.end_line FROM chunks c JOIN files f ON f.id=c.file_id WHERE f.path=?",
            ("deploy/.ssh/config",)).fetchall()
        assert chunks, "the premise: the older index holds the credential file's chunk"
        hits = e.recall("quokkasshconfig IdentityFile", sources=["files"]).hits
        assert not any(".ssh" in h.uri for h in hits), hits
        for start, end in chunks:
            with pytest.raises(LoreError) as refused:
                e.get_node(f"file://{ws}/deploy/.ssh/config#L{start}-L{end}")
            assert refused.value.kind == "secretFile"
        # controls: the ordinary file of the same index is found and opened
        found = e.recall("wombatplainword", sources=["files"]).hits
        assert any(h.uri.startswith(f"file://{ws}/src/app.py") for h in found), found
        assert "wombatplainword" in e.get_node(found[0].uri).content
    finally:
        e.close()


def test_lsp_faces_refuse_every_secret_file_and_answer_the_ordinary_one(sidecar):
    c, ws, _, _ = sidecar
    answers = []
    for name in SECRETS:
        got = c.request_full("lore/getNode", {"uri": uri(ws, name)})
        twin = c.request_full("workspace/executeCommand", {"command": "lore.getNode", "arguments": [{"uri": uri(ws, name)}]})
        answers += [got, twin]
        assert got["error"]["data"]["kind"] == "secretFile", (name, got)
        assert twin["error"]["data"]["kind"] == "secretFile", (name, twin)
        hover = c.request_full("textDocument/hover", {"textDocument": {"uri": f"file://{ws}/{name}"},
                                                      "position": {"line": 0, "character": 2}})
        answers.append(hover)
        assert hover.get("result") is None, (name, hover)  # hover never read the file, so it has no word
    for marker in MARKERS:
        answers.append(c.request("lore/recall", {"query": marker, "limit": 20}))
        answers.append(c.request("workspace/symbol", {"query": marker}))
    export = c.request_full("lore/exportKnowledge", {"path": str(ws / ".env")})
    answers.append(export)
    assert export["error"]["data"]["kind"] == "secretFile"
    assert (ws / ".env").read_text() == f"zebracorn {SECRETS['.env']}\n{SECRETS['.env']} second line\n"  # untouched
    assert leaks(*answers) == []

    # The controls: the ordinary file answers each face.
    node = c.request("lore/getNode", {"uri": uri(ws, CONTROL[0])})
    twin = c.request("workspace/executeCommand", {"command": "lore.getNode", "arguments": [{"uri": uri(ws, CONTROL[0])}]})
    assert CONTROL[1] in node["content"] and CONTROL[1] in json.dumps(twin)
    hover = c.request("textDocument/hover", {"textDocument": {"uri": f"file://{ws}/{CONTROL[0]}"},
                                             "position": {"line": 0, "character": 2}})
    assert "what memory knows about `zebracorn`" in json.dumps(hover)
    assert any(h["path"].endswith(CONTROL[0]) for h in c.request("lore/recall", {"query": CONTROL[1]})["hits"])
    assert c.request("workspace/symbol", {"query": CONTROL[1]})
    assert c.request("lore/exportKnowledge", {})["path"].endswith(".lore.md")


def test_lore_ask_hands_the_model_refusals_and_never_a_secret_byte(sidecar):
    c, ws, _, fake = sidecar
    before = len(fake.bodies)
    r = c.request("lore/ask", {"question": "What do the credential files hold?"}, timeout=90)
    bodies = fake.bodies[before:]
    results = [b for m in bodies[-1]["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
               if b.get("type") == "tool_result"]
    reads = results[:len(SECRETS) + 1]  # one Read per secret file, and one naming it `file_path` as Claude Code does
    assert all(b.get("is_error") and "secretFile" in json.dumps(b) for b in reads), reads
    assert r["answer"] == f"{len(results)} calls answered"
    assert leaks(r, *bodies) == []
    control = results[len(SECRETS) + 1]
    assert CONTROL[1] in json.dumps(control) and not control.get("is_error")  # the control Read
    grep = json.dumps(results[len(SECRETS) + 2])
    assert CONTROL[0] in grep and ".env" not in grep  # Grep found the ordinary file only


def test_the_ask_tools_refuse_secret_files_directly(sidecar):
    _, ws, _, _ = sidecar
    tools = Tools(root=ws, jail=Jail.of([ws]))
    answers = []
    for name in SECRETS:
        for given in (name, str(ws / name)):
            with pytest.raises(Exception) as refused:
                answers.append(tools.read(given))
            assert getattr(refused.value, "kind", None) == "secretFile", (given, refused.value)
            assert tools.sha256(given) is None
        if "/" not in name:
            with pytest.raises(Exception, match="never-read"):
                tools.git_search("walrus", path=name, patch=True)
    log = tools.git_search("walrus", patch=True)["log"]
    assert leaks(log) == [] and CONTROL[1] in log  # the commit's patch, without the credential files
    answers += [tools.grep("quokka|zebracorn", context=2), tools.glob("*"), tools.glob(".env*"), tools.find_paths(".", 3)]
    assert leaks(*answers) == []
    listed = json.dumps([a.get("matches") or a.get("paths") or a.get("entries") for a in answers[-4:]])
    assert not any(name in listed for name in (".env", "id_rsa", "server.pem", ".npmrc", ".ssh", "see-env")), listed
    # controls
    assert CONTROL[1] in tools.read(CONTROL[0])["lines"][0]
    assert any(m.startswith(f"{CONTROL[0]}:1:") for m in answers[-4]["matches"])
    assert CONTROL[0] in answers[-3]["paths"]


async def test_mcp_tools_refuse_every_secret_file(sidecar):
    _, ws, store, _ = sidecar
    answers = []
    async with mcp_session(store, ws) as s:
        for name in SECRETS:
            said = await refusal(s, "lore_get_node", {"uri": uri(ws, name)})
            answers.append(said)
            assert "never-read" in said, said
        for marker in MARKERS:
            answers.append(await text(s, "lore_recall", {"query": marker}))
            answers.append(await text(s, "lore_search", {"query": marker}))
        control = await text(s, "lore_get_node", {"uri": uri(ws, CONTROL[0])})
    assert leaks(*answers) == []
    assert CONTROL[1] in control


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_the_dashboard_refuses_every_secret_file(sidecar):
    _, ws, store, _ = sidecar
    proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "ui", "--no-browser", "--store-dir", str(store)],
                            cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        base, token = url.split("/?token=")
        answers = []
        for name in SECRETS:
            status, body = _get(f"{base}/node?" + urllib.parse.urlencode({"uri": uri(ws, name), "token": token}))
            answers.append(body)
            assert status == 403 and "[secretFile]" in body, (name, status, body)
        for marker in MARKERS:
            status, body = _get(f"{base}/?" + urllib.parse.urlencode({"q": marker, "token": token}))
            assert status == 200 and "nothing matches" in body
            answers.append(body.replace(f'value="{marker}"', ""))  # the search box shows the query asked
        status, control = _get(f"{base}/node?" + urllib.parse.urlencode({"uri": uri(ws, CONTROL[0]), "token": token}))
    finally:
        proc.terminate()
        proc.wait(10)
    assert leaks(*answers) == []
    assert status == 200 and re.search(rf"<pre id=content>[^<]*{CONTROL[1]}", control)


def test_ignore_files_are_read_by_the_same_reader_a_fifo_or_a_link_to_env_is_not(tmp_path):
    import threading

    from lore_sidecar.engine.workspace.walk import IgnoreRules, walk

    root = tmp_path / "ws"
    (root / "fifo").mkdir(parents=True)
    (root / "linked").mkdir()
    os.mkfifo(root / "fifo" / ".gitignore")  # opened by a plain read, the walk would wait forever
    (root / ".env").write_text("kept.txt\n")  # as ignore patterns it would hide linked/kept.txt
    os.symlink("../.env", root / "linked" / ".gitignore")
    (root / ".gitignore").write_text("ignored.txt\n")  # the control: a regular ignore file applies
    for rel in ("ignored.txt", "fifo/kept.txt", "linked/kept.txt"):
        (root / rel).write_text("x\n")
    found: list[str] = []
    walker = threading.Thread(target=lambda: found.extend(e.rel for e in walk(root, root, IgnoreRules(root), 1 << 20)),
                              daemon=True)
    walker.start()
    walker.join(20)
    assert not walker.is_alive(), "the walk hangs on a FIFO named .gitignore"
    assert sorted(found) == [".gitignore", "fifo/kept.txt", "linked/kept.txt"], found

