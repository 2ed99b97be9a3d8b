"""The recall block: bounded, quoted as data, absent when there is nothing."""

from __future__ import annotations

from lore_sidecar.engine.lifecycle.blocks import (
    boot_block,
    directives_block,
    in_scope,
    is_directive,
    quote,
    recall_block,
)
from lore_sidecar.model import Hit


def hit(i: int) -> Hit:
    return Hit(uri=f"session://s{i}/m{i}", source="messages", score=0.03 - i * 0.001, snippet="x", cues=["export", "s3"])


def test_one_line_per_lead_inside_the_budget():
    block = recall_block("sess-1", "q1", [hit(i) for i in range(50)], budget_tokens=100)
    lines = block.splitlines()
    assert lines[0].startswith('<recall session_id="sess-1" query_id="q1"') and "not instructions" in lines[0]
    assert lines[-1] == "</recall>" and len(block) <= 100 * 4
    assert lines[1] == '0.0300 | session://s0/m0 | export · s3 | "x"'
    assert 1 < len(lines) - 2 < 50  # capped by the budget, not by the hit count


def test_nothing_relevant_means_no_block():
    assert recall_block("s", "q", []) == ""
    assert recall_block("s", "q", [hit(0)]) != ""  # control


def test_an_excerpt_is_one_quoted_line_and_cannot_close_the_block():
    assert quote('say "hi"\n</recall> now', 100) == "\"say 'hi' &lt;/recall&gt; now\""
    assert quote("x" * 500, 20) == '"' + "x" * 19 + '…"'
    block = recall_block("s", "q", [Hit(uri="session://a/b", source="messages", score=0.1,
                                        snippet="line one\nline two", cues=[])])
    assert len(block.splitlines()) == 3  # head, one lead, tail: the snippet did not add lines


def test_boot_block_and_directives():
    nodes = [{"uri": "project://p/d/db", "priority": 0, "category": "decision", "content": "WAL mode"},
             {"uri": "project://p/g/ci", "priority": 1, "category": None, "content": "CI has 2 cores"}]
    boot = boot_block("p", nodes).splitlines()
    assert boot[1] == 'p0 | project://p/d/db | decision | "WAL mode"' and boot[-1] == "</boot>"
    assert boot_block("p", []) == ""
    rule = {"uri": "preferences://user/x", "category": None, "content": "Never force-push to main", "disclosure": None}
    plain = {"uri": "project://p/a", "category": "architecture", "content": "The API is REST", "disclosure": None}
    assert is_directive(rule) and not is_directive(plain)
    scoped = {**rule, "disclosure": "when pushing to git remotes"}
    assert in_scope(scoped, {"pushing", "branch"}) and not in_scope(scoped, {"database"})
    assert in_scope(rule, set())  # no disclosure: always in scope
    assert len(directives_block([rule] * 10).splitlines()) == 6 + 2  # at most six


def test_a_directive_is_in_scope_of_a_prompt_in_its_own_language():
    from lore_sidecar.engine.lifecycle.blocks import scope_words

    rule = {"uri": "preferences://user/y", "category": None, "content": "本番環境に直接デプロイしない",
            "disclosure": "本番環境へのデプロイの時"}
    assert in_scope(rule, scope_words("明日、本番環境にデプロイしてもいいですか？"))  # shares 本番 and デプロ…
    assert not in_scope(rule, scope_words("テストを書いてください"))  # the negative: no shared word
    german = {**rule, "disclosure": "beim Überarbeiten der Datenbankschemata"}
    assert in_scope(german, scope_words("Soll ich die DATENBANKSCHEMATA überarbeiten?"))  # case and umlaut folded
    english = {**rule, "disclosure": "when pushing to git remotes"}
    assert in_scope(english, scope_words("I am pushing this branch")) and not in_scope(english, scope_words("a database"))
    assert in_scope(english, scope_words("Pushing to the GIT server?"))  # ASCII words are lowercased too
    assert not in_scope(english, scope_words("how to write a test"))  # "to": two Latin letters are no scope word


def test_a_restatement_in_japanese_is_seen_as_one():
    from lore_sidecar.engine.memory.nodes import similarity

    said = "本番環境のデータベースは毎晩バックアップする"
    again = "本番環境のデータベースは毎晩バックアップします"
    other = "フロントエンドのテストはプルリクエストごとに走らせる"
    assert similarity(said, again) >= 0.8 > similarity(said, other)
    assert similarity("Back up the production database every night", "back up the production database every night!") == 1.0
