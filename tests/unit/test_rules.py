"""Pure rules: fusion, recency, query terms, cues, snippets, chunking, URIs, capture."""

import json

import pytest

from lore_sidecar.engine import uris
from lore_sidecar.engine.capture import messages as capture
from lore_sidecar.engine.recall import fusion, query
from lore_sidecar.engine.workspace import chunking
from lore_sidecar.errors import LoreError


def test_weighted_fusion_lets_a_strong_lexical_hit_beat_a_vector_only_hit():
    out = fusion.fuse([("messages", 1, 9.0)], [("messages", 2, 0.9)], lexical_weight=1.0, vector_weight=0.5, k=60)
    assert [c.key for c in out] == [1, 2]
    # Control: with equal weights the tie is broken by id, so the weights are what decided.
    eq = fusion.fuse([("messages", 1, 9.0)], [("messages", 2, 0.9)], lexical_weight=1.0, vector_weight=1.0, k=60)
    assert eq[0].fused == eq[1].fused


def test_a_hit_found_by_both_legs_outranks_hits_found_by_one():
    out = fusion.fuse([("m", 1, 5), ("m", 2, 4)], [("m", 2, 0.8), ("m", 3, 0.7)], lexical_weight=1, vector_weight=0.5, k=60)
    assert out[0].key == 2 and out[0].lex_rank == 1 and out[0].vec_rank == 0


def test_recency_bonus_halves_every_half_life_and_is_zero_when_off():
    b0 = fusion.recency_bonus(0, weight=0.1, half_life_days=180, k=60)
    assert fusion.recency_bonus(180, weight=0.1, half_life_days=180, k=60) == pytest.approx(b0 / 2)
    assert fusion.recency_bonus(10, weight=0, half_life_days=180, k=60) == 0
    assert fusion.recency_bonus(float("nan"), weight=0.1, half_life_days=180, k=60) == 0


def test_query_terms_drop_stopwords_but_never_return_nothing_for_words():
    assert query.query_terms("What is the Writer lock for?") == ["writer", "lock"]
    assert query.query_terms("what is it") == ["what", "is", "it"]
    assert query.query_terms("!!!") == []


def test_cues_match_stems_and_snippet_centres_on_a_term():
    analyze = lambda s: [w.lower().rstrip("s") for w in query.WORD.findall(s)]  # noqa: E731
    assert query.cues(["locks", "zebra"], "the writer lock", analyze) == ["locks"]
    text = "x " * 300 + "the needle is here " + "y " * 300
    snip = query.snippet(text, ["needle"], width=80)
    assert "needle" in snip and snip.startswith("…") and len(snip) <= 82


def test_markdown_chunks_follow_headings_and_code_chunks_follow_definitions():
    md = "# Title\nintro\nmore\nlines\n## Part two\nbody\nbody\nbody\nbody\n"
    chunks = chunking.chunk_file("a.md", md)
    assert [c.title for c in chunks] == ["Title", "Part two"]
    assert chunks[1].start_line == 5
    code = "import os\n\n\ndef alpha():\n    return 1\n\n\nclass Beta:\n    x = 1\n    y = 2\n"
    titles = [c.title for c in chunking.chunk_file("m.py", code)]
    assert titles == ["alpha", "Beta"]


def test_long_sections_are_windowed_with_overlap():
    text = "\n".join(f"line {i}" for i in range(200))
    chunks = chunking.chunk_file("notes.txt", text)
    assert len(chunks) >= 3 and all(c.end_line - c.start_line < chunking.MAX_LINES for c in chunks)
    assert chunks[1].start_line <= chunks[0].end_line  # overlap
    assert chunks[-1].end_line == 200


def test_uris_round_trip_and_reject_unknown_schemes():
    u = uris.message_uri("sess/1", "m 2")
    assert uris.parse(u) == ("messages", ("sess/1", "m 2"))
    f = uris.chunk_uri("/w", "src/a b.py", 3, 9)
    assert uris.parse(f) == ("files", ("/w/src/a b.py", 3, 9))
    with pytest.raises(LoreError) as err:
        uris.parse("ftp://x")
    assert err.value.kind == "invalidUri"


def test_capture_renders_anthropic_and_openai_blocks_and_keeps_the_verbatim_json():
    content = [
        {"type": "text", "text": "see below"},
        {"type": "tool_use", "name": "bash", "input": {"cmd": "ls"}},
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "a.py"}]},
        {"type": "output_text", "text": "openai says hi"},
    ]
    m = capture.normalise(session_id="s", harness=None, role="assistant", content=content, msg_id=None, created_at="2024-05-01T10:00:00+02:00", tool_name=None, tool_call_id=None)
    assert m.text.splitlines() == ["see below", '[tool call bash] {"cmd": "ls"}', "a.py", "openai says hi"]
    assert json.loads(m.content_json) == content
    assert m.created_at == "2024-05-01T08:00:00Z"
    with pytest.raises(ValueError):
        capture.iso_utc("yesterday")


def test_migrations_split_on_statements_not_on_semicolons_in_comments():
    from lore_sidecar.store.db import _statements

    sql = """
    -- a comment; with a semicolon
    CREATE TABLE a(x TEXT DEFAULT ';');
    CREATE INDEX a_x ON a(x); -- trailing; comment
    """
    import sqlite3

    statements = _statements(sql)
    assert len(statements) == 2
    db = sqlite3.connect(":memory:")
    for stmt in statements:
        db.execute(stmt)  # each is one complete statement
    assert {r[0] for r in db.execute("SELECT name FROM sqlite_master")} == {"a", "a_x"}
    assert len(sql.split(";")) > 3  # control: a naive split would have cut them apart


def test_auto_fusion_lets_a_confident_vector_hit_into_the_top_for_files_but_not_for_messages():
    lexical = [("files", k, 10.0 - k) for k in range(1, 8)] + [("messages", k, 10.0 - k) for k in range(1, 8)]
    # The vector leg's best hit for each kind is one BM25 did not find at all.
    vector = [("files", 99, 0.9), ("files", 1, 0.8), ("messages", 99, 0.9), ("messages", 1, 0.8)]
    out = fusion.fuse_by_kind(lexical, vector, lexical_weight=1.0, vector_weight=0.5, prose_vector_weight=1.0,
                              code_vector_weight=1.0, is_code=lambda key: False, k=60)
    files = [c.key for c in out if c.kind == "files"]
    messages = [c.key for c in out if c.kind == "messages"]
    assert files.index(99) < 3  # files: the dense leg counts
    assert messages[:7] == [1, 2, 3, 4, 5, 6, 7] and messages[7] == 99  # messages: BM25 order kept, vector backfills
    # Control: with the files' vector weight at 0 the same hit falls behind every BM25 file hit.
    off = fusion.fuse_by_kind(lexical, vector, lexical_weight=1.0, vector_weight=0.5, prose_vector_weight=0.0,
                              code_vector_weight=1.0, is_code=lambda key: False, k=60)
    assert [c.key for c in off if c.kind == "files"][:7] == [1, 2, 3, 4, 5, 6, 7]


def test_compound_names_are_indexed_by_their_parts_and_one_letter_fragments_are_not_searched():
    from lore_sidecar.compound import compound_parts

    assert compound_parts("def dates_in_range(start): return HTTPServer(parseHeader)") == \
        "dates in range HTTP Server parse Header"
    assert compound_parts("plain words, os.path.join and nightly-exports") == ""  # split by the body already
    assert compound_parts("def _manhattan_distance(a): self.__init__(_private)") == "manhattan distance init private"
    assert query.search_terms("e.g. retry the retry queue") == ["retry", "retry", "queue"]  # repeats kept
    assert query.search_terms("a b") == ["b"]  # nothing else left: the fragment is still searched


def test_auto_fusion_weighs_the_vector_leg_of_code_and_prose_files_each_with_its_own_weight():
    lexical = [("files", k, 10.0 - k) for k in range(1, 12)]
    vector = [("files", 98, 0.9), ("files", 99, 0.9)]  # 98 is prose, 99 is code; BM25 found neither
    def ranked(prose: float, code: float) -> list[int]:
        return [c.key for c in fusion.fuse_by_kind(lexical, vector, lexical_weight=1.0, vector_weight=0.5,
                                                     prose_vector_weight=prose, code_vector_weight=code,
                                                     is_code=lambda key: key == 99 or key % 2 == 1, k=60)]
    assert ranked(prose=0.0, code=2.0).index(99) < 2 and ranked(prose=0.0, code=2.0).index(98) > 5
    assert ranked(prose=2.0, code=0.0).index(98) < 2 and ranked(prose=2.0, code=0.0).index(99) > 5


def test_normalised_score_fusion_lets_a_confident_vector_hit_in_and_keeps_bm25_order_among_equals():
    lexical = [("files", k, 20.0 - k) for k in range(1, 11)]  # BM25: 1 best ... 10
    vector = [("files", 50, 0.9)] + [("files", k, 0.4) for k in (3, 4, 5)] + [("files", 60, 0.2)]

    def order(weight: float) -> list[int]:
        return [c.key for c in fusion.combine(lexical, vector, lexical_weight=1.0, vector_weight=weight, k=60)]

    strong, weak, off = order(3.0), order(0.67), order(0.0)
    assert strong[0] == 50  # far ahead in the dense leg, found by no word: it enters the top
    assert weak.index(50) > 0 and weak[0] == 1  # with a light dense weight BM25's best stays first
    assert off[:10] == list(range(1, 11))  # control: no dense weight, BM25's order exactly
    # 3, 4 and 5 share one similarity: the dense leg lifts them alike and BM25 orders them.
    assert [k for k in weak if k in (3, 4, 5)] == [3, 4, 5]
    assert weak.index(3) < weak.index(2)  # the dense leg's agreement lifts a hit over its BM25 neighbour


def test_auto_fusion_of_files_lets_a_near_tie_of_the_dense_leg_keep_bm25s_order():
    lexical = [("files", k, 11.0 - k) for k in range(1, 6)]  # BM25: 1, 2, 3, 4, 5
    # The dense leg sees 1-5 as equally close (in reverse order, by a hair) and 9 far off.
    vector = [("files", k, 0.80 + 0.001 * k) for k in (5, 4, 3, 2, 1)] + [("files", 9, 0.30)]

    def order(code_weight: float) -> list[int]:
        return [c.key for c in fusion.fuse_by_kind(lexical, vector, lexical_weight=1.0, vector_weight=0.5,
                                                     prose_vector_weight=0.67, code_vector_weight=code_weight,
                                                     is_code=lambda key: True, k=60)]

    assert order(3.0)[:5] == [1, 2, 3, 4, 5]
    # Control: the same dense leg far surer of one hit than of the rest moves it to the top.
    vector = [("files", 9, 0.99), *vector[:-1]]
    assert order(3.0)[0] == 9


def test_a_query_of_words_in_any_language_asks_for_words():
    # What decides whether a date query is about the date alone ("what did we do yesterday?").
    assert query.asks_for_words("東京") and query.asks_for_words("Größe") and query.asks_for_words("도서관")
    assert not query.asks_for_words("what is the") and not query.asks_for_words("。、！")
    assert query.asks_for_words("fence")  # the control
