"""The read-only tools of codebase questions against hostile calls: each is refused or
bounded within a second, nothing outside the project is read or written, and the same
tools answer inside it (the controls)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from lore_sidecar.engine.ask.tools import TIME_S, Tools, run
from lore_sidecar.engine.jail import Jail
from lore_sidecar.errors import BadParams, LoreError

SECRET = "outside-secret-zq81"


@pytest.fixture
def project(tmp_path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def parse_invoice(x):\n    return x  # walrus-7\n")
    (root / "README.md").write_text("# proj\n")
    os.symlink(outside / "secret.txt", root / "src" / "leak.txt")
    os.symlink(outside, root / "outdir")
    os.mkfifo(root / "pipe")
    with open(root / "huge.bin", "wb") as f:  # 2 GB, sparse
        f.truncate(2 * 1024 ** 3)
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "src/app.py", "README.md"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "Parse invoices (walrus fix)"], cwd=root, check=True)
    return root


def tools(root: Path) -> Tools:
    return Tools(root=root, jail=Jail.of([root]))


def hostile(root: Path, outside: Path, stray: Path) -> list[tuple[str, dict]]:
    """`stray` is where an injected git option would write (this test's own folder)."""
    calls: list[tuple[str, dict]] = []
    for p in ["../outside/secret.txt", str(outside / "secret.txt"), "/etc/passwd", "src/leak.txt",
              "outdir/secret.txt", "src/../../outside/secret.txt", "pipe", "huge.bin", "/dev/zero", "/proc/self/environ",
              "src/../" * 8 + "etc/passwd", "~/.ssh/id_rsa", "outdir", "src\x00.txt", "..", "/"]:
        calls.append(("read", {"path": p}))
    for p in ["../outside", str(outside), "outdir", "/etc", "src/../..", "/"]:
        calls.append(("find_paths", {"path": p}))
    for g in ["../*", "/etc/*", "../../**", "~/*"]:
        calls.append(("glob", {"pattern": g}))
    for pat in ["(a+)+$", "(x+x+)+y", "((a|aa)*)*b", "x" * 600, ""]:
        calls.append(("grep", {"pattern": pat}))
    calls.append(("grep", {"pattern": "secret", "glob": "../../*"}))
    for q in [f"--output={stray}/pwned-lore", f"-c core.pager=touch {stray}/pwned-lore2", f"--exec=touch {stray}/pwned3",
              "x" * 400]:
        calls.append(("git_search", {"query": q}))
    calls.append(("git_search", {"query": "fix", "path": "../outside"}))
    calls.append(("git_search", {"query": "fix", "path": f"--output={stray}/pwned4"}))
    calls.append(("git_search", {"query": "fix", "path": str(outside)}))
    calls.append(("git_search", {"query": "fix", "path": "src/leak.txt", "patch": True}))
    return calls


def test_forty_hostile_tool_calls_are_refused_or_bounded_and_read_nothing_outside(project, tmp_path):
    t = tools(project)
    outside, stray = tmp_path / "outside", tmp_path / "stray"
    stray.mkdir()
    calls = hostile(project, outside, stray)
    assert len(calls) >= 40
    before = {p: p.stat().st_mtime for p in outside.iterdir()}
    for name, args in calls:
        started = time.monotonic()
        try:
            result = getattr(t, name)(**args)
        except LoreError as exc:
            result = {"refused": exc.kind}
        except BadParams as exc:
            result = {"refused": exc.message}
        took = time.monotonic() - started
        assert took < 1.5, (name, args, took)  # the bound is 1 s; the rest is process start-up
        assert SECRET not in repr(result) and "root:x:0:0" not in repr(result), (name, args)
        if name == "read":
            assert "refused" in result, (args, result)
    assert {p: p.stat().st_mtime for p in outside.iterdir()} == before
    assert list(stray.iterdir()) == []  # no injected option wrote anything
    assert not list(project.glob("**/--output*"))


def test_the_same_tools_answer_inside_the_project(project):
    t = tools(project)
    read = t.read("src/app.py")
    assert read["lines"][0] == "def parse_invoice(x):" and read["path"] == "src/app.py"
    assert any("walrus-7" in m for m in t.grep("walrus-[0-9]")["matches"])
    assert t.glob("*.py")["paths"] == ["src/app.py"]
    assert "src/" in t.find_paths(".")["entries"] and "outdir/" not in t.find_paths(".")["entries"]
    assert "Parse invoices" in t.git_search("walrus")["log"]
    (project / "src" / "app.py").write_text("def parse_invoice(x):\n    return 2 * x\n")
    assert any("src/app.py" in line for line in t.get_changed_files()["changed"])
    slow = t.grep("(a+)+$")  # a pathological pattern still answers (GNU grep does not backtrack)
    assert "matches" in slow


# -- independent review round 2026-12-03 (tools/rounds/2026-12-03-gitsafe.py) --------------------

def test_a_child_stopped_at_the_time_bound_says_it_was_cut(tmp_path):
    """run() is every tool's child process: one still running at TIME_S is killed and its
    answer says `truncated` (get_changed_files and git_search pass it on; callers ask again)."""
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
    started = time.monotonic()
    text, cut = run(["/bin/sh", "-c", "echo partial; exec sleep 30"], tmp_path, env)
    assert (text, cut) == ("partial\n", True) and time.monotonic() - started < TIME_S + 1.5
    assert run(["/bin/sh", "-c", "echo whole"], tmp_path, env) == ("whole\n", False)  # the control


def test_what_a_child_started_is_ended_with_it_at_the_time_bound(tmp_path):
    """run() ends the child's whole process group: a process the child started in the
    background (as git starts transport helpers) does not outlive the bound."""
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
    text, cut = run(["/bin/sh", "-c", "sleep 30 & echo $!; exec sleep 30"], tmp_path, env)
    assert cut
    helper = int(text.split()[0])

    def running(pid: int) -> bool:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        return state not in ("Z", "X")

    deadline = time.monotonic() + 5
    while running(helper) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(helper)
    # Control: a helper that ends on its own is no business of run()'s bound.
    assert run(["/bin/sh", "-c", "sleep 0 & wait; echo whole"], tmp_path, env) == ("whole\n", False)


def test_grep_in_a_folder_that_is_no_repository_never_runs_the_projects_own_grep(tmp_path, monkeypatch):
    """Grep's PATH drops entries inside the project even where no .git marks a repository
    (a plain folder with its own bin/ on PATH); the control runs that same grep by PATH alone."""
    root = tmp_path / "plain"
    (root / "bin").mkdir(parents=True)
    (root / "notes.txt").write_text("walrus here\n")
    canary = tmp_path / "canary"
    (root / "bin" / "grep").write_text(f"#!/bin/sh\necho own-grep >> {canary}\n")
    (root / "bin" / "grep").chmod(0o755)
    monkeypatch.setenv("PATH", f"{root / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    assert tools(root).grep("walrus")["matches"] == ["notes.txt:1:walrus here"]
    assert not canary.exists()
    subprocess.run(["grep", "-q", "walrus", "notes.txt"], cwd=root, check=False)  # the trap is armed
    assert canary.read_text() == "own-grep\n"


# -- independent review round 2026-12-03 (tools/rounds/2026-12-03-fresh-gateway-ask-wire.py) ---------

def test_what_a_tool_hands_the_model_is_redacted_though_the_file_is_an_ordinary_one(project):
    """toolspec.call is the one dispatch the model reads: a credential pasted into an ordinary
    source file (not on the never-read list) reaches it as [REDACTED:…], by Read and by Grep;
    the file's other lines reach it as they are (the control)."""
    from lore_sidecar.engine.ask.toolspec import call
    from tests.support.secrets import PLANTED

    planted = [p for p in PLANTED if p[0] in ("anthropic-key", "github-token", "url-password")]
    body = "def load_settings():  # marker rdx4\n" + "".join(f"    # {text}\n" for _, text, _ in planted)
    (project / "src" / "settings.py").write_text(body)
    read = call(tools(project), "Read", {"path": "src/settings.py"})
    grep = call(tools(project), "Grep", {"pattern": "ANTHROPIC_API_KEY|ghp_|postgres://"})
    for r in (read, grep):
        assert not r.refused and "[REDACTED:" in r.text, r.text
        assert not [secret for _, _, secret in planted if secret in r.text], r.text
    assert "def load_settings():  # marker rdx4" in read.text and "src/settings.py" in grep.text


def test_read_numbers_the_lines_from_one_as_the_model_cites_them(project):
    """Read's numbers are the lines the model cites as path:line and the `lines` of the
    answer's sources: line 1 is the first, and `offset` (from 0) moves both."""
    from lore_sidecar.engine.ask.toolspec import call

    whole = call(tools(project), "Read", {"path": "src/app.py"})
    assert whole.text.splitlines()[1:] == ["    1\tdef parse_invoice(x):", "    2\t    return x  # walrus-7"]
    assert whole.read["src/app.py"][1] == "1-2"
    tail = call(tools(project), "Read", {"path": "src/app.py", "offset": 1})
    assert tail.text.splitlines()[1:] == ["    2\t    return x  # walrus-7"] and tail.read["src/app.py"][1] == "2-2"
    assert tools(project).read("src/app.py")["startLine"] == 1


def test_a_binary_file_is_refused_as_not_text_and_the_same_bytes_without_a_nul_are_read(project):
    from lore_sidecar.engine.ask.toolspec import call

    (project / "src" / "blob.dat").write_bytes(b"BLOBMARK9\x00\x01\x02binary tail\n")
    (project / "src" / "text.dat").write_bytes(b"BLOBMARK9 \x01\x02binary tail\n")  # control: no NUL
    refused = call(tools(project), "Read", {"path": "src/blob.dat"})
    assert refused.refused and "notText" in refused.text and "BLOBMARK9" not in refused.text and not refused.read
    read = call(tools(project), "Read", {"path": "src/text.dat"})
    assert not read.refused and "BLOBMARK9" in read.text


# -- independent review, fresh round 5 (tools/rounds/2026-12-07-fresh5.py) --------------------------

def test_grep_never_runs_a_grep_kept_at_the_top_of_the_project_on_path(tmp_path, monkeypatch):
    """Grep's PATH drops the project folder itself, not only the folders below it (a PATH
    with `.`'s real path, or a project whose top holds its own scripts); the control runs
    that same grep by PATH alone."""
    root = tmp_path / "plain"
    root.mkdir()
    (root / "notes.txt").write_text("walrus here\n")
    canary = tmp_path / "canary"
    (root / "grep").write_text(f"#!/bin/sh\necho own-grep >> {canary}\n")
    (root / "grep").chmod(0o755)
    monkeypatch.setenv("PATH", f"{root}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    assert tools(root).grep("walrus")["matches"] == ["notes.txt:1:walrus here"]
    assert not canary.exists()
    subprocess.run(["grep", "-q", "walrus", "notes.txt"], cwd=root, check=False)  # the trap is armed
    assert canary.read_text() == "own-grep\n"


def test_a_grep_pattern_that_starts_with_a_dash_is_searched_for_never_read_as_an_option(project, tmp_path):
    """The model's pattern is grep's pattern (`-e`), never an option: `--help-me` is found as
    text, and `-f<file>` reads no file for patterns (it would read outside the project). The
    control: the same file's plain word is found alike."""
    (project / "src" / "flags.txt").write_text("call it with --help-me please\nplain words\n")
    outside = tmp_path / "patterns"
    outside.write_text("plain\n")
    t = tools(project)
    assert t.grep("plain words")["matches"] == ["src/flags.txt:2:plain words"]  # the control
    assert t.grep("--help-me")["matches"] == ["src/flags.txt:1:call it with --help-me please"]
    assert t.grep(f"-f{outside}")["matches"] == []  # searched as text (it occurs nowhere), not read


# -- independent review, hunt round 6 (tools/rounds/2026-12-07-hunt6.py) ----------------------------

def test_find_paths_lists_exactly_the_depth_asked_and_never_past_four(project):
    """docs/ask.md: `find_paths` is "the folder tree under a path (depth ≤ 4)": depth 1 is the
    folder's own entries, depth 2 one level more, and a deeper ask is cut at four levels. The
    control: each level that should be listed is."""
    deep = project / "l1" / "l2" / "l3" / "l4" / "l5"
    deep.mkdir(parents=True)
    (deep / "leaf.txt").write_text("leaf\n")
    (project / "l1" / "top.txt").write_text("top\n")
    t = tools(project)
    one = t.find_paths(".", depth=1)["entries"]
    assert "l1/" in one and "README.md" in one and not any(e.startswith("l1/") and e != "l1/" for e in one), one
    two = t.find_paths(".", depth=2)["entries"]
    assert {"l1/l2/", "l1/top.txt"} <= set(two) and "l1/l2/l3/" not in two, two
    many = t.find_paths(".", depth=9)["entries"]
    assert "l1/l2/l3/l4/" in many and "l1/l2/l3/l4/l5/" not in many, many
    inside = t.find_paths("l1", depth=1)["entries"]
    assert set(inside) == {"l1/l2/", "l1/top.txt"}, inside


# -- hunt round 7a (tools/rounds/2026-12-07-hunt7a.py) --------------------------------------------
def test_each_tool_option_the_schema_offers_changes_the_answer_as_documented(project):
    """Beyond the default shape: git_search's query is case-insensitive, get_changed_files lists
    a new (untracked) file, Glob matches a bare name in a subfolder, Grep's context shows the
    lines around a match. Each beside its control (the default call)."""
    t = tools(project)
    # git_search: the commit says "Parse invoices"; an upper-case query finds it too.
    assert "Parse invoices" in t.git_search("parse invoices")["log"]  # control: same case
    assert "Parse invoices" in t.git_search("PARSE INVOICES")["log"]
    assert t.git_search("no-such-words-zz")["log"] == ""
    # get_changed_files: an edited tracked file (control) and a file git does not track yet.
    (project / "src" / "app.py").write_text("def parse_invoice(x):\n    return 3 * x\n")
    (project / "src" / "new_module.py").write_text("NEW = 1\n")
    changed = t.get_changed_files()["changed"]
    assert any(line.endswith("src/app.py") for line in changed), changed
    assert any(line.endswith("src/new_module.py") and line.startswith("??") for line in changed), changed
    # Glob: a pattern without a slash matches the file's name, whatever its folder.
    assert t.glob("src/app*.py")["paths"] == ["src/app.py"]  # control: the path
    assert t.glob("app*.py")["paths"] == ["src/app.py"]
    # Grep: context 1 adds the line after the match (the match line ends with ':'-numbered).
    bare = t.grep("parse_invoice")["matches"]
    assert bare == ["src/app.py:1:def parse_invoice(x):"], bare  # control: no context
    around = t.grep("parse_invoice", context=1)["matches"]
    assert "src/app.py-2-    return 3 * x" in around and "src/app.py:1:def parse_invoice(x):" in around, around
    # Grep, like Glob, skips .git (its COMMIT_EDITMSG holds the commit's words) and
    # node_modules: a search answers from the project's own files.
    (project / "node_modules" / "dep").mkdir(parents=True)
    (project / "node_modules" / "dep" / "index.js").write_text("// Parse invoices (walrus fix) vendored\n")
    assert (project / ".git" / "COMMIT_EDITMSG").read_text().startswith("Parse invoices")  # control: the words are there
    found = t.grep("Parse invoices")["matches"]
    assert found == [], found
    assert any(m.startswith("src/app.py:") for m in t.grep("parse_invoice")["matches"])  # control: grep answers


def test_what_a_tool_call_records_is_what_it_read_and_a_remembered_fact_is_redacted(project):
    """Through the dispatch the model's calls take (toolspec.call): a Read of lines 2-3 of a
    five-line file records exactly "2-3" (the span the answer cites and the ledger keeps),
    numbered as shown; a fact the model remembers keeps no credential it quoted, beside the
    control that the rest of the fact and its source are kept (hunt7a)."""
    from lore_sidecar.engine.ask.toolspec import call
    from tests.support.secrets import PLANTED

    (project / "src" / "five.py").write_text("".join(f"line_{i} = {i}\n" for i in range(1, 6)))
    t = tools(project)
    r = call(t, "Read", {"file_path": "src/five.py", "offset": 1, "limit": 2})
    assert not r.refused, r.text
    assert r.read["src/five.py"][1] == "2-3", r.read
    shown = [line.split("\t") for line in r.text.splitlines()[1:3]]
    assert [(int(n), text) for n, text in shown] == [(2, "line_2 = 2"), (3, "line_3 = 3")], r.text
    whole = call(t, "Read", {"path": "src/five.py"})
    assert whole.read["src/five.py"][1] == "1-5"  # control: the whole file
    for kind, text, secret in PLANTED[:6]:
        fact = f"deploys read {text} (walrus-fact)"
        r = call(t, "remember", {"fact": fact, "paths": ["src/five.py"]})
        assert not r.refused and r.fact is not None, r.text
        kept, sources = r.fact
        assert secret not in kept and "walrus-fact" in kept, (kind, kept)
        assert sources == {"src/five.py": whole.read["src/five.py"][0]}
