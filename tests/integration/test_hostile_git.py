"""git as untrusted input: every git-using tool against a corpus of hostile repositories
(tests/support/hostile_git.py), each beside its control. Nothing a repository names may run
(the canary folder stays empty); a repository lore cannot make safe is refused with
`untrustedRepository`, a tool error; the controls answer with the commit they hold."""

from __future__ import annotations

import ast
import os
import subprocess
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


def test_gitsafe_is_the_only_place_that_starts_git():
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
    argv, env = gitsafe.command(ROOT, Jail.of([ROOT]), "log", "-1")
    assert argv[0].startswith("/") and "HOME" in env and env["HOME"] != str(ROOT)  # the control: gitsafe does build one


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
