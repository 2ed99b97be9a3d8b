"""git as untrusted input: every git-using tool against a corpus of hostile repositories
(tests/support/hostile_git.py), each beside its control. Nothing a repository names may run
(the canary folder stays empty); a repository lore cannot make safe is refused with
`untrustedRepository`, a tool error; the controls answer with the commit they hold."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lore_sidecar.engine import gitsafe
from lore_sidecar.engine.ask import toolspec
from lore_sidecar.engine.ask.tools import Tools
from lore_sidecar.engine.jail import Jail
from lore_sidecar.engine.project import canonical_root
from lore_sidecar.errors import LoreError
from tests.support.hostile_git import CASES, SUBJECT, Corpus

ROOT = Path(__file__).resolve().parents[2]


def tools(root: Path) -> Tools:
    return Tools(root=root, jail=Jail.of([root]))


def every_git_call(t: Tools) -> dict[str, object]:
    """Each git-using tool once per shape: status, log, log with patches, log of one path."""
    out: dict[str, object] = {}
    for name, key, call in [("changed", "changed", lambda: t.get_changed_files()),
                            ("log", "log", lambda: t.git_search("walrus")),
                            ("patch", "log", lambda: t.git_search("walrus", patch=True)),
                            ("path", "log", lambda: t.git_search("WALRUS", path="a.txt", patch=True, limit=5))]:
        try:
            for _ in range(5):  # a run cut at the 1 s bound (2 shared cores under load) says so: ask again
                result = call()
                if not result["truncated"]:
                    break
            out[name] = result[key]
        except LoreError as exc:
            out[name] = exc
    return out


def assert_answers(case: str, got: dict[str, object]) -> None:
    assert any(line.endswith("a.txt") and line.startswith(" M") for line in got["changed"]), (case, got)
    assert SUBJECT in got["log"], (case, got)
    if case != "promisor-ext-transport":  # its blob is missing and may not be fetched: git stops at the patch
        assert "+walrus one" in got["patch"] and SUBJECT in got["path"] and "a.txt | 1 +" in got["path"], (case, got)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_repository_runs_nothing_and_its_control_answers(tmp_path, case):
    corpus = Corpus(tmp_path)
    hostile, control = corpus.build(case, hostile=True), corpus.build(case, hostile=False)
    assert corpus.fired() == {}  # building the corpus ran nothing either
    got = every_git_call(tools(hostile))
    assert canonical_root(hostile) == str(hostile)  # project identity: a path walk, never git
    assert corpus.fired() == {}, corpus.fired()
    if CASES[case].expect == "refused":
        assert all(isinstance(v, LoreError) and v.kind == "untrustedRepository" for v in got.values()), got
    else:
        assert_answers(case, got)
    assert_answers(case, every_git_call(tools(control)))
    assert corpus.fired() == {}


def test_the_corpus_covers_every_executing_option_in_fifteen_repositories_or_more():
    assert len(CASES) >= 15
    assert {"refused", "answers"} == {c.expect for c in CASES.values()}


def test_a_refused_repository_reaches_the_model_as_a_tool_error_naming_why(tmp_path):
    corpus = Corpus(tmp_path)
    hostile, control = corpus.build("config-filter", hostile=True), corpus.build("config-filter", hostile=False)
    refused = toolspec.call(tools(hostile), "git_search", {"query": "walrus"})
    assert refused.refused and refused.text.startswith("refused (untrustedRepository):")
    assert "filter.evil.clean" in refused.text
    answered = toolspec.call(tools(control), "git_search", {"query": "walrus"})
    assert not answered.refused and SUBJECT in answered.text
    assert corpus.fired() == {}


def test_a_folder_that_is_no_repository_is_a_tool_error_and_git_never_looks_above_it(tmp_path):
    corpus = Corpus(tmp_path)
    outer = corpus.build("config-pager", hostile=True)  # a hostile repository around the project
    inner = outer / "plain"
    inner.mkdir()
    result = toolspec.call(tools(inner), "get_changed_files", {})
    assert result.refused and "notARepository" in result.text
    assert toolspec.call(tools(outer), "git_search", {"query": "walrus"}).text.count(SUBJECT) == 1  # the control
    assert corpus.fired() == {}


GIT_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0",
           "GIT_CONFIG_VALUE_0", "GIT_CONFIG_GLOBAL", "GIT_EXEC_PATH", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER",
           "PAGER", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EDITOR", "GIT_CONFIG_SYSTEM",
           "GIT_CONFIG_NOSYSTEM", "HOME", "XDG_CONFIG_HOME", "PATH", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
           "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CEILING_DIRECTORIES", "GIT_ALLOW_PROTOCOL", "GIT_TRACE")


def hostile_env(corpus: Corpus, project: Path) -> dict[str, str]:
    """The sidecar's own environment, set by whoever started it: every variable git obeys,
    each pointing at a canary; GIT_DIR at another repository (its commit must never show) and
    PATH first at the project, which carries its own `git`."""
    decoy = Corpus(corpus.base / "decoy").build("config-fsmonitor", hostile=False)  # another repository, same subject
    corpus.git(decoy, "commit", "-q", "--allow-empty", "-m", "decoy walrus commit")
    e = corpus.evil("env")
    execdir = corpus.base / "evil" / "exec"
    execdir.mkdir()
    for name in ("git-log", "git-status", "git-config", "git-sh-setup"):
        (execdir / name).write_text(f"#!/bin/sh\necho exec {name} >> {corpus.canaries / 'env'}\n")
        (execdir / name).chmod(0o755)
    (project / "git").write_text(f"#!/bin/sh\necho own-git >> {corpus.canaries / 'env'}\n")
    (project / "git").chmod(0o755)
    for tool in ("grep", "sh", "cat"):
        (project / tool).write_text(f"#!/bin/sh\necho own-{tool} >> {corpus.canaries / 'env'}\n")
        (project / tool).chmod(0o755)
    gitconfig = corpus.base / "evil" / "env.gitconfig"
    gitconfig.write_text(f"[core]\n\tpager = {e}\n\tfsmonitor = {e}\n[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {e}\n")
    return {"GIT_DIR": str(decoy / ".git"), "GIT_WORK_TREE": str(decoy),
            "GIT_CONFIG_PARAMETERS": f"'core.pager={e}' 'core.fsmonitor={e}'", "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": e, "GIT_CONFIG_GLOBAL": str(gitconfig),
            "GIT_CONFIG_SYSTEM": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "0", "GIT_EXEC_PATH": str(execdir),
            "GIT_SSH_COMMAND": e, "GIT_SSH": e, "GIT_PAGER": e, "PAGER": e, "GIT_EXTERNAL_DIFF": e, "GIT_ASKPASS": e,
            "SSH_ASKPASS": e, "GIT_EDITOR": e, "HOME": str(corpus.base / "evil"), "XDG_CONFIG_HOME": str(corpus.base / "evil"),
            "PATH": f"{project}:.::{os.environ.get('PATH', '/usr/bin:/bin')}", "GIT_INDEX_FILE": str(decoy / ".git" / "index"),
            "GIT_OBJECT_DIRECTORY": str(decoy / ".git" / "objects"),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(decoy / ".git" / "objects"), "GIT_ALLOW_PROTOCOL": "ext:file:ssh",
            "GIT_CEILING_DIRECTORIES": "", "GIT_TRACE": str(corpus.base / "evil" / "trace")}


def test_git_variables_in_lores_own_environment_are_not_inherited(tmp_path, monkeypatch):
    corpus = Corpus(tmp_path)
    project = corpus.build("config-pager", hostile=False)
    assert_answers("control", every_git_call(tools(project)))  # the control, before the environment turns
    env = hostile_env(corpus, project)
    assert set(env) == set(GIT_ENV)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    got = every_git_call(tools(project))
    assert_answers("env", got)
    assert "decoy" not in got["log"]  # the project's own history, not GIT_DIR's
    assert tools(project).grep("walrus")["matches"] == ["a.txt:1:walrus two"]  # grep is the system's, too
    assert corpus.fired() == {} and not (corpus.base / "evil" / "trace").exists()


def test_gitsafe_is_the_only_place_that_starts_git(tmp_path):
    """Every git lore runs goes through engine/gitsafe.py: no other module builds a `git` argv."""
    found = []
    for path in (ROOT / "lore_sidecar").rglob("*.py"):
        if path.name == "gitsafe.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.List | ast.Tuple) and node.elts and isinstance(node.elts[0], ast.Constant):
                if node.elts[0].value == "git" or str(node.elts[0].value).startswith("git "):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
    # The control: gitsafe does build one (in a repository of the test's own: the checkout may be
    # a copy without .git, as tools/mutations.py makes).
    project = Corpus(tmp_path).build("config-pager", hostile=False)
    argv, env = gitsafe.command(project, Jail.of([project]), "log", "-1")
    assert argv[0].startswith("/") and "HOME" in env and env["HOME"] != str(project)


@pytest.mark.parametrize("case", sorted(c for c, v in CASES.items() if v.expect == "answers"))
def test_the_environment_and_overrides_hold_alone_even_when_git_is_asked_to_verify_and_diff(tmp_path, case):
    """gitsafe without the tools' own flags (`--no-show-signature`, `--no-ext-diff`): git
    asked outright to verify signatures and run external diffs still runs nothing the
    repository names."""
    corpus = Corpus(tmp_path)
    hostile = corpus.build(case, hostile=True)
    outputs = []
    for args in (["log", "-p", "--show-signature", "--ext-diff", "-1"], ["status", "--porcelain"]):
        argv, env = gitsafe.command(hostile, Jail.of([hostile]), *args)
        done = subprocess.run(argv, cwd=hostile, env=env, capture_output=True, text=True, timeout=30, check=False)
        outputs.append(done.stdout)
    assert corpus.fired() == {}, corpus.fired()
    assert " M a.txt" in outputs[1]  # git did run, and answered
    assert SUBJECT in outputs[0] or case == "promisor-ext-transport"  # (its missing blob may stop git first)


def test_an_unreadable_git_file_is_a_tool_error_not_an_internal_one(tmp_path):
    corpus = Corpus(tmp_path)
    hostile, control = corpus.build("config-pager", hostile=True), corpus.build("config-pager", hostile=False)
    (hostile / ".git" / "commondir").symlink_to(hostile / ".git" / "HEAD")  # opened with O_NOFOLLOW: ELOOP
    result = toolspec.call(tools(hostile), "get_changed_files", {})
    assert result.refused and result.text.startswith("refused (untrustedRepository)"), result.text
    assert "M a.txt" in toolspec.call(tools(control), "get_changed_files", {}).text


# -- independent review round 2026-12-03 (tools/rounds/2026-12-03-gitsafe.py) --------------------

def test_the_child_environment_is_the_documented_one_and_names_the_repository(tmp_path):
    """docs/security.md, "environment": built from nothing. The system config cannot be planted
    from a test (its path is compiled into git and the environment is not inherited), so
    GIT_CONFIG_NOSYSTEM is checked where lore sets it."""
    project = Corpus(tmp_path).build("config-pager", hostile=False)
    _, env = gitsafe.command(project, Jail.of([project]), "status", "--porcelain")
    home = Path(env["HOME"])
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_ATTR_NOSYSTEM"] == "1" and env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["XDG_CONFIG_HOME"] == str(home) and Path(env["GIT_CONFIG_GLOBAL"]).parent == home
    assert os.path.getsize(env["GIT_CONFIG_GLOBAL"]) == 0 and (os.stat(home).st_mode & 0o777) == 0o700
    assert env["GIT_DIR"] == str(project / ".git") and env["GIT_WORK_TREE"] == str(project)
    assert not any(p in env["GIT_ALLOW_PROTOCOL"].split(":") for p in ("ext", "file", "ssh", "http", "https", "git"))
    assert not project.is_relative_to(home) and not home.is_relative_to(project)


def test_the_repositorys_core_worktree_never_moves_git_out_of_the_project(tmp_path):
    corpus = Corpus(tmp_path)
    hostile, control = corpus.build("config-pager", hostile=False), corpus.build("config-alias", hostile=False)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "outside-name-zq81.txt").write_text("not the project's\n")
    corpus.config(hostile, ("core.worktree", str(outside)))
    got = every_git_call(tools(hostile))
    assert_answers("core.worktree", got)  # the project's own work tree: GIT_WORK_TREE beats core.worktree
    assert "outside-name-zq81" not in repr(got) and not any(" D " in line for line in got["changed"]), got
    assert_answers("control", every_git_call(tools(control)))


def test_a_submodules_own_config_is_never_reached_by_git_status(tmp_path):
    """`git status` checks each populated submodule by running git inside it, with the
    submodule's own config, which lore never vets: a filter there would run on a touched file.
    get_changed_files passes --ignore-submodules=all; the control shows the trap is armed (the
    same status without it runs the filter)."""
    corpus = Corpus(tmp_path)
    project = corpus.build("config-pager", hostile=False)
    sub = project / "sub"
    sub.mkdir()
    corpus.git(sub, "init", "-q", "-b", "main")
    (sub / ".gitattributes").write_text("*.txt filter=evil\n")
    (sub / "s.txt").write_text("steady\n")
    corpus.git(sub, "add", "-A")
    corpus.git(sub, "commit", "-qm", "Submodule walrus")
    corpus.git(project, "add", "sub")  # a gitlink: an embedded repository as a submodule
    corpus.git(project, "commit", "-qm", "Add the submodule")
    corpus.config(sub, ("filter.evil.clean", corpus.evil("submodule")), ("filter.evil.process", corpus.evil("submodule", "process")))
    later = os.stat(sub / "s.txt").st_mtime + 100
    os.utime(sub / "s.txt", (later, later))  # same content, new stat: a status inside it re-reads it
    assert corpus.fired() == {}
    got = every_git_call(tools(project))
    assert corpus.fired() == {}, corpus.fired()
    assert_answers("submodule", got)
    argv, env = gitsafe.command(project, Jail.of([project]), "status", "--porcelain")  # the trap, without the flag
    subprocess.run(argv, cwd=project, env=env, capture_output=True, timeout=30, check=False)
    assert "submodule" in corpus.fired()


def worktree_project(corpus: Corpus, builder: Corpus) -> tuple[Path, Path]:
    """A linked worktree whose main repository lies inside the project (`main/`): `.git` is a
    gitdir file naming main/.git/worktrees/wt, whose commondir is main/.git. (project, common dir)"""
    root = builder.build("config-pager", hostile=False)
    (root / ".gitattributes").write_text("*.txt filter=evil\n")
    common = root / "main" / ".git"
    common.parent.mkdir()
    os.rename(root / ".git", common)
    wt = common / "worktrees" / "wt"
    wt.mkdir(parents=True)
    (wt / "HEAD").write_text((common / "HEAD").read_text())
    shutil.copy2(common / "index", wt / "index")  # its times too: a newer index would hide the racy a.txt change
    (wt / "commondir").write_text("../..\n")
    (wt / "gitdir").write_text(f"{root / '.git'}\n")
    (root / ".git").write_text(f"gitdir: {wt}\n")
    return root, common


def _lender(corpus: Corpus, folder: Path) -> Path:
    folder.mkdir(parents=True)
    corpus.git(folder, "init", "-q", "-b", "main")
    (folder / "secret.txt").write_text("lender-secret\n")
    corpus.git(folder, "add", "secret.txt")
    corpus.git(folder, "commit", "-qm", "Lender walrus secret")
    return folder / ".git" / "objects"


@pytest.mark.parametrize("case", ["main-config-filter", "main-alternates-elsewhere", "main-owned-by-another-user"])
def test_a_linked_worktree_is_judged_by_its_main_repository(tmp_path, case):
    """The git dir of a linked worktree holds no config and no objects: the main repository's
    (the common dir) does, and git reads them. Each hostile change is made there; the control
    is the same worktree without it, which answers."""
    if case == "main-owned-by-another-user" and os.geteuid() != 0:
        pytest.skip("chown to another user needs root")
    corpus = Corpus(tmp_path)
    (hostile, common), (control, _) = (worktree_project(corpus, Corpus(tmp_path / k)) for k in ("h", "c"))
    if case == "main-config-filter":
        corpus.config(common.parent, ("filter.evil.clean", corpus.evil(case)), ("filter.evil.process", corpus.evil(case, "process")))
    elif case == "main-alternates-elsewhere":
        (common / "objects" / "info" / "alternates").write_text(f"{_lender(corpus, tmp_path / 'elsewhere' / 'lender')}\n")
        inside = _lender(corpus, control / "vendor" / "lender")  # the control borrows from inside the project
        (control / "main" / ".git" / "objects" / "info" / "alternates").write_text(f"{inside}\n")
    else:
        os.chown(common, 65534, 65534)  # the common dir only: its config is still the user's file
    got = every_git_call(tools(hostile))
    assert corpus.fired() == {}, corpus.fired()
    assert all(isinstance(v, LoreError) and v.kind == "untrustedRepository" for v in got.values()), got
    assert_answers(case, every_git_call(tools(control)))
    assert corpus.fired() == {}


def test_a_private_home_that_changed_is_made_again_before_git_reads_it(tmp_path):
    """gitsafe.private_home: the empty global config is re-made if anything in it changed, so a
    config written into it (here a filter driver) never reaches git."""
    corpus = Corpus(tmp_path)
    project = corpus.build("config-filter", hostile=False)  # its .gitattributes names filter=evil
    home = gitsafe.private_home()
    config = home / "gitconfig"
    config.chmod(0o600)
    config.write_text(f"[filter \"evil\"]\n\tclean = {corpus.evil('home')}\n\tprocess = {corpus.evil('home', 'process')}\n")
    got = every_git_call(tools(project))
    assert corpus.fired() == {}, corpus.fired()
    assert_answers("control", got)
    again = gitsafe.private_home()
    assert again != home and not home.exists() and os.path.getsize(again / "gitconfig") == 0


def test_a_path_entry_inside_another_repository_never_runs(tmp_path, monkeypatch):
    """PATH entries inside any git repository are dropped, however deep (another opened
    folder's node_modules/.bin), while an ordinary folder outside any repository is kept."""
    corpus = Corpus(tmp_path)
    project = corpus.build("config-pager", hostile=False)
    other = corpus.build("config-alias", hostile=False)
    deep = other / "node_modules" / ".bin"
    deep.mkdir(parents=True)
    for tool in ("git", "grep"):
        (deep / tool).write_text(f"#!/bin/sh\necho own-{tool} >> {corpus.canaries / 'other-repo'}\n")
        (deep / tool).chmod(0o755)
    plain = tmp_path / "plain-bin"
    plain.mkdir()
    corpus.canaries.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", f"{deep}:{plain}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    got, grep = every_git_call(tools(project)), tools(project).grep("walrus")["matches"]
    assert corpus.fired() == {}, corpus.fired()
    assert_answers("other-repo", got)
    assert grep == ["a.txt:1:walrus two"]
    assert gitsafe.clean_path(project).split(os.pathsep)[0] == str(plain)  # the control: an ordinary folder is kept


def test_private_homes_of_processes_that_died_are_swept_and_a_live_ones_kept(tmp_path):
    """A process stopped by a signal never runs its atexit removal: the next process that makes
    a private home removes those whose process is gone. Control: a live process's stays."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = tmp_path / f"lore-git-home-{dead.pid}-abc123"
    alive = tmp_path / f"lore-git-home-{os.getpid()}-def456"  # this test's process: alive
    for folder in (left, alive):
        folder.mkdir()
        (folder / "gitconfig").touch()
    made = subprocess.run([sys.executable, "-c", "from lore_sidecar.engine import gitsafe; print(gitsafe.private_home())"],
                          env={**os.environ, "TMPDIR": str(tmp_path)}, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    assert not left.exists() and alive.is_dir()
    assert not Path(made.stdout.strip()).exists()  # its own, removed at its ordinary exit


def test_the_home_of_a_process_killed_by_a_signal_is_swept_by_the_next_one(tmp_path):
    """The folder a process really makes (not one named by hand) carries its pid, so the sweep
    can tell it is dead. Control: before the next process starts, the folder is still there."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    killed = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom lore_sidecar.engine import gitsafe\n"
                               "print(gitsafe.private_home(), flush=True)\ntime.sleep(600)"],
                              env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert killed.stdout is not None
        home = Path(killed.stdout.readline().strip())
    finally:
        killed.kill()  # SIGKILL: its atexit removal never runs
        killed.wait(60)
    assert home.parent == tmp_path and (home / "gitconfig").exists()
    made = subprocess.run([sys.executable, "-c", "from lore_sidecar.engine import gitsafe; print(gitsafe.private_home())"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    assert not home.exists()


# -- independent review, hunt round 6 (tools/rounds/2026-12-07-hunt6.py) ----------------------------

def test_a_path_entry_that_is_another_repositorys_own_top_never_runs(tmp_path, monkeypatch):
    """The module's promise: "entries inside any git repository" are dropped from PATH; the
    top folder of another repository (which holds its `.git`, and here its own `git` and
    `grep`) is inside it too. The control: an ordinary folder after it is kept."""
    corpus = Corpus(tmp_path)
    project = corpus.build("config-pager", hostile=False)
    other = corpus.build("config-alias", hostile=False)
    corpus.canaries.mkdir(exist_ok=True)
    for tool in ("git", "grep"):
        (other / tool).write_text(f"#!/bin/sh\necho own-{tool} >> {corpus.canaries / 'repo-top'}\n")
        (other / tool).chmod(0o755)
    plain = tmp_path / "plain-bin"
    plain.mkdir()
    monkeypatch.setenv("PATH", f"{other}:{plain}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    got, grep = every_git_call(tools(project)), tools(project).grep("walrus")["matches"]
    assert corpus.fired() == {}, corpus.fired()
    assert_answers("repo-top", got)
    assert grep == ["a.txt:1:walrus two"]
    assert gitsafe.clean_path(project).split(os.pathsep)[0] == str(plain)  # the control: an ordinary folder is kept
