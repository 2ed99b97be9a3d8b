"""git as untrusted input through `lore/ask` itself: a real sidecar over stdio, started with
every `GIT_*` variable (and PATH, HOME, PAGER) pointing at a canary, opened on the whole
hostile corpus and its controls (tests/support/hostile_git.py), asked about each one by a
scripted model on 127.0.0.1 that calls every git tool. No canary fires; the hostile
repositories lore cannot make safe answer with a tool error; every control answers with its
own commit. And the tools of a question are jailed to the project it asks about, not to every
folder the sidecar was opened on."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from tests.integration.test_hostile_git import hostile_env
from tests.support import ask_agent
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.hostile_git import CASES, SUBJECT, Corpus

SPLIT = "\n=====\n"
GIT_CALLS = [("get_changed_files", {}), ("git_search", {"query": "walrus"}),
             ("git_search", {"query": "walrus", "patch": True}),
             ("git_search", {"query": "WALRUS", "path": "a.txt", "patch": True, "limit": 5})]


def scripted(calls):
    """A model that makes `calls` in one turn, then answers with every result it read."""
    def responder(body):
        messages = body.get("messages") or []
        question, results = ask_agent.state(messages)
        if not question:
            return "ok"
        if not results:
            return {"tool_use": calls}
        last = [b for b in messages[-1]["content"] if b.get("type") == "tool_result"]  # in the order called
        return SPLIT.join(ask_agent._text(b) for b in last)
    return responder


def open_sidecar(tmp: Path, url: str, folders: list[Path], env: dict[str, str]) -> StdioClient:
    env = {**{k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}, **env,
           "ANTHROPIC_API_KEY": "sk-test-not-a-real-key", "ANTHROPIC_BASE_URL": url}
    c = StdioClient(sidecar_command(), env=env)
    uris = [{"uri": f.resolve().as_uri(), "name": f.name} for f in folders]
    c.request("initialize", {"processId": os.getpid(), "rootUri": uris[0]["uri"], "workspaceFolders": uris,
                             "capabilities": {}, "initializationOptions": {
                                 "storeDir": str(tmp / "store"), "watch": False, "indexWorkspace": False,
                                 "distiller": "off"}})
    c.notify("initialized", {})
    return c


def results_of(answer: str) -> list[str]:
    return answer.split(SPLIT)


@pytest.mark.slow
def test_every_git_tool_over_stdio_runs_nothing_a_hostile_repository_names_and_controls_answer(tmp_path):
    corpus = Corpus(tmp_path / "corpus")
    repos = {(case, kind): corpus.build(case, hostile=kind == "hostile") for case in sorted(CASES)
             for kind in ("hostile", "control")}
    assert corpus.fired() == {}
    env = hostile_env(corpus, repos["config-pager", "control"])  # GIT_DIR etc. point at a decoy outside
    answers = {}
    with FakeAnthropic(scripted(GIT_CALLS)) as fake:
        c = open_sidecar(tmp_path, fake.url, list(repos.values()), env)
        try:
            for (case, kind), root in repos.items():
                r = c.request("lore/ask", {"question": f"What does git say about `{case}`?", "project": str(root)}, timeout=60)
                assert r["mode"] == "model" and r["trailer"]["toolCalls"] == len(GIT_CALLS), (case, kind, r)
                answers[case, kind] = results_of(r["answer"])
        finally:
            c.close()
    assert corpus.fired() == {}, corpus.fired()
    for (case, kind), results in answers.items():
        assert len(results) == len(GIT_CALLS), (case, kind, results)
        if kind == "hostile" and CASES[case].expect == "refused":
            assert all(r.startswith("refused (untrustedRepository)") for r in results), (case, results)
            continue
        changed, log, patch, path = results
        assert "M a.txt" in changed and SUBJECT in log and "decoy" not in log, (case, kind, results)
        if case != "promisor-ext-transport":
            assert "+walrus one" in patch and "a.txt | 1 +" in path, (case, kind, results)
    sent = json.dumps(fake.bodies)
    assert "decoy walrus commit" not in sent  # GIT_DIR in the sidecar's environment never reached git


def two_projects(tmp: Path) -> tuple[Path, Path, Corpus]:
    corpus = Corpus(tmp / "corpus")
    alpha, beta = corpus.build("config-pager", hostile=False), corpus.build("config-alias", hostile=False)
    (alpha / "alpha-only.txt").write_text("marker-alpha-77\n")
    corpus.git(alpha, "add", "alpha-only.txt")
    corpus.git(alpha, "commit", "-qm", "Alpha-only kraken commit")
    return alpha, beta, corpus


@pytest.mark.slow
def test_a_question_about_one_folder_reads_only_that_folder_though_the_sidecar_opened_two(tmp_path):
    alpha, beta, _ = two_projects(tmp_path)
    calls = [("Read", {"path": str(alpha / "alpha-only.txt")}), ("Grep", {"pattern": "marker-alpha"}),
             ("git_search", {"query": "kraken"}), ("find_paths", {"path": str(alpha)}),
             ("Glob", {"pattern": "alpha-only*"})]
    with FakeAnthropic(scripted(calls)) as fake:
        c = open_sidecar(tmp_path, fake.url, [alpha, beta], {})
        try:
            about_beta = c.request("lore/ask", {"question": "Where is `kraken`?", "project": str(beta)}, timeout=60)
            about_alpha = c.request("lore/ask", {"question": "Where is `kraken`?", "project": str(alpha)}, timeout=60)
        finally:
            c.close()
    read, grep, log, tree, glob = results_of(about_beta["answer"])
    assert read.startswith("refused (outsideWorkspace)") and tree.startswith("refused (outsideWorkspace)")
    assert grep == "no matches" and log == "no commits match" and glob == "no files match"
    assert "marker-alpha-77" not in about_beta["answer"] and "kraken" not in about_beta["answer"].replace("`kraken`", "")
    # The control: the same calls in a question about alpha find what beta's could not.
    read, grep, log, tree, glob = results_of(about_alpha["answer"])
    assert "marker-alpha-77" in read and "alpha-only.txt:1:marker-alpha-77" in grep
    assert "Alpha-only kraken commit" in log and "alpha-only.txt" in tree and glob == "alpha-only.txt"
