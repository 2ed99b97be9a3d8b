"""A code name the query spells out (`line_numbers`, `parseConfig`) finds the text that holds
it as written, ahead of texts that only hold its kin (`line_number`, which stems alike, or
`parse` and `config` apart): engine/recall/query.py `identifiers`, recaller.py `_rank`."""

from __future__ import annotations

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
