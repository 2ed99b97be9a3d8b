"""A code name the query spells out (`line_numbers`, `parseConfig`) finds the text that holds
it as written, ahead of texts that only hold its kin (`line_number`, which stems alike, or
`parse` and `config` apart): engine/recall/query.py `identifiers`, recaller.py `_rank`."""

from __future__ import annotations

import pytest

from lore_sidecar.store.db import IN_BATCH
from tests.integration.test_recall_replies import engine_for, record

# One long tool output names `line_numbers` once; short turns say `line_number` again and again.
LONG = ("Output of the test file, lines 140-170:\n" + "\n".join(f"  {i}  assert render(msg_{i}) == :ok" for i in range(120))
        + "\n  line_numbers = Enum.map(result, & &1.line_number)\n"
        + "\n".join(f"  {i}  assert render(msg_{i}) == :ok" for i in range(120, 240)))
KIN = [f"Each row carries a line_number; the line_number of row {i} is the line_number shown." for i in range(8)]
CAMEL = ("Startup trace:\n" + "\n".join(f"  step {i}: load module_{i} ok" for i in range(150))
         + "\n  step 150: parseConfig(path) before anything reads the settings\n"
         + "\n".join(f"  step {i}: load module_{i} ok" for i in range(151, 300)))
CAMEL_KIN = [f"parse the config {i}: we parse config files and parse config values, config parse {i}" for i in range(8)]


def _top(e, query: str, n: int = 3) -> list[str]:
    return [h.snippet for h in e.recall(query, sources=["messages"], limit=n).hits]


def test_a_code_name_finds_the_text_that_holds_it_as_written(tmp_path):
    with engine_for(tmp_path / "store") as e:
        record(e, "s", [*KIN[:4], LONG, *KIN[4:], *CAMEL_KIN[:4], CAMEL, *CAMEL_KIN[4:]])
        e.index.wait()
        assert "line_numbers" in _top(e, "line_numbers", 1)[0]
        assert "parseConfig" in _top(e, "where is parseConfig called", 1)[0]
        # Control: asked in words, the kin rank as the words say (the name's text is no
        # better a match for them), so the first place above is the name's doing.
        assert "line_numbers" not in _top(e, "line number", 1)[0]
        assert "parseConfig" not in _top(e, "parse config", 1)[0]


def test_only_code_names_count_as_names():
    from lore_sidecar.engine.recall.query import identifiers

    assert identifiers("find line_numbers and parseConfig in TranscriptRenderer") == [
        "line_numbers", "parseConfig", "TranscriptRenderer"]
    assert identifiers("What did Caroline say about the line number in May 2023?") == []
    assert identifiers("x_y or a_b") == []  # too short to name anything by itself


def test_a_name_spelled_twice_is_one_name():
    from lore_sidecar.engine.recall.query import identifiers

    # Each name is one share of the leg: spelled again it is not two (rev8: r8-names-not-deduped).
    assert identifiers("line_numbers, parseConfig, line_numbers again") == ["line_numbers", "parseConfig"]


# The name in another case: the same word to the text index (lowercased), not the name as written.
CASE_KIN = [f"ParseConfig {i}: ParseConfig reads parseconfig, PARSECONFIG too" for i in range(8)]


def test_a_camel_case_name_is_held_only_as_written_not_in_another_case(tmp_path):
    with engine_for(tmp_path / "store") as e:
        record(e, "s", [*CASE_KIN[:4], CAMEL, *CASE_KIN[4:]])
        e.index.wait()
        top = _top(e, "where is parseConfig called", 3)
        assert "parseConfig(path)" in top[0]
        assert all("parseConfig(path)" not in t for t in top[1:])
        # Control: asked in another case, the texts holding that case come first.
        assert "parseConfig(path)" not in _top(e, "where is ParseConfig called", 1)[0]


def test_a_page_the_words_cannot_fill_still_puts_the_name_first(tmp_path):
    # Forty asked of nine word matches: the vector leg runs after the first ranking and the
    # candidates are ranked again, with the names (recaller.py, the second `_rank`).
    with engine_for(tmp_path / "store") as e:
        record(e, "s", [*KIN[:4], LONG, *KIN[4:]])
        e.index.wait()
        model = e.embedder.for_kind("messages")
        embedded: list[list[str]] = []
        real = model.embed
        model.embed = lambda texts: embedded.append(list(texts)) or real(texts)
        assert "line_numbers" in _top(e, "line_numbers", 40)[0]
        assert embedded == [["line_numbers"]]  # the second pass ran


BOTH = ("Trace:\n" + "\n".join(f"  frame {i}: call module_{i}" for i in range(100))
        + "\n  frame 100: parseConfig(path) then line_numbers = lines(path)\n"
        + "\n".join(f"  frame {i}: call module_{i}" for i in range(101, 200)))
# Hold `line_numbers` as written and `parseConfig` in another case (the same word to the text index).
ONE = [f"line_numbers {i}: ParseConfig, the line numbers; ParseConfig reads the config {i}" for i in range(3)]


def test_a_text_holding_both_names_asked_for_outranks_one_holding_one(tmp_path):
    with engine_for(tmp_path / "store") as e:
        record(e, "s", [ONE[0], BOTH, *ONE[1:]])
        e.index.wait()
        assert "parseConfig(path)" in _top(e, "where do line_numbers and parseConfig meet", 1)[0]
        # Control: asked for the one name, the short texts holding it match its words better.
        assert "parseConfig(path)" not in _top(e, "where do line_numbers meet", 1)[0]


def test_every_message_holding_the_name_counts_past_a_batch_of_in_keys(tmp_path):
    # More candidates than one batch of the store's IN (...) reads (store/db.py select_in).
    n = IN_BATCH + 100
    named = [f"row {i}: line_numbers here" for i in range(n)]
    kin = [f"line_number {i}, line_number and line_number: a line number of line numbers" for i in range(20)]
    with engine_for(tmp_path / "store") as e:
        record(e, "s", [*named, *kin])
        e.index.wait()
        top = _top(e, "line_numbers", n + 20)
        assert len(top) == n + 20
        assert all("line_numbers here" in t for t in top[:n])


def _chunk_workspace(root):
    root.mkdir()
    (root / "render.py").write_text(
        "# renders rows\n" + "\n".join(f"def step_{i}(row):\n    return row + {i}\n" for i in range(60))
        + "\nline_numbers = [r.line_number for r in rows]\nconfig = parseConfig(path)\n"
        + "\n".join(f"def more_{i}(row):\n    return row - {i}\n" for i in range(60)))
    for i in range(6):
        (root / f"kin{i}.py").write_text(f"# each row has a line_number\nline_number = row.line_number  # {i}\n")
    return root


def test_a_workspace_chunk_gains_a_share_of_one_leg_per_name_it_holds_as_written(tmp_path):
    # The three queries differ only in case: the text index and the files model (uncased) see
    # them alike, so what the chunk gains between them is the names it holds as written.
    from tests.integration.test_store_and_index import engine_for as engine_with

    e = engine_with(tmp_path / "store", [str(_chunk_workspace(tmp_path / "code"))], watch=False)
    try:
        e.index.scan()
        assert e.index.wait(120)
        leg = 1 / (e.settings.recall.rrf_k + 1)  # first place in one leg

        def score(query):
            return next(h.score for h in e.recall(query, sources=["files"], limit=10).hits if h.path.endswith("render.py"))

        none, one, both = score("LINE_NUMBERS ParseConfig"), score("line_numbers ParseConfig"), score("line_numbers parseConfig")
        assert one - none == pytest.approx(leg / 2, abs=1e-5)
        assert both - none == pytest.approx(leg, abs=1e-5)
    finally:
        e.close()


def test_a_full_page_still_asks_the_vector_leg_when_a_named_text_could_climb_onto_it(tmp_path):
    """The vector leg is skipped when no vector-only hit could reach the page (`_backfill_ceiling`);
    a code name in the query lifts a text holding it by a first place in one more leg, so that
    lift is counted in what such a hit could reach. Control: without a name the ceiling is lower
    by exactly that."""
    with engine_for(tmp_path / "store") as e:
        record(e, "s", KIN)
        e.index.wait()
        r = e.view.recaller
        lex = [("messages", i, 1.0) for i in range(10)]
        plain = r._backfill_ceiling(lex, ["messages"])
        named = r._backfill_ceiling(lex, ["messages"], named=True)
        assert named - plain == pytest.approx(1 / (r.settings.rrf_k + 1))
