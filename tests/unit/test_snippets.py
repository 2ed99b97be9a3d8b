"""What a hit shows of its text: the snippet of a long text is cut around its first match
without flattening the text whole, and the cues stem only the words that could hold a query
stem; each is exactly what the whole-text way gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lore_sidecar.engine.recall import query as q
from lore_sidecar.store.text_index import _analyzer
from lore_sidecar.words import words_only

ANALYZE = (lambda a: lambda text: a(words_only(text)))(_analyzer().analyze)  # TextIndex.analyze

_words = st.sampled_from(["retry", "Retry", "RETRY", "backoff", "(retry)", "retrying", "x", "a1", "gamma_delta",
                          "foo-bar", "e.g.", "zz", "upload", "the"])
_space = st.sampled_from([" ", "  ", "\n", "\t\n ", "", " " * 300, "\n" * 50])
_long_text = st.lists(st.tuples(_words, _space), min_size=1, max_size=900).map(
    lambda pairs: "".join(w + s for w, s in pairs))
_terms = st.lists(st.sampled_from(["retry", "backoff", "gamma", "delta", "missing", "x", "a1", "zz", "upload"]),
                  min_size=1, max_size=3, unique=True)


@settings(max_examples=400, deadline=None)
@given(lead=_space, text=_long_text, trail=_space, terms=_terms, width=st.sampled_from([240, 60, 12]))
def test_the_cut_around_the_first_match_is_the_cut_of_the_whole_flattened_text(lead, text, trail, terms, width):
    text = lead + text + trail
    assert q._snippet_of_long(text, terms, width) == q._snippet_of_flat(text, terms, width)


def test_a_long_text_takes_the_fast_path_and_a_match_deep_in_it_is_found():
    text = ("filler words here\n\n" * 2000) + "the RETRY backoff    was\tlowered" + (" tail" * 500)
    assert len(text) > q.LONG_TEXT
    got = q.snippet(text, ["backoff"])
    assert got == q._snippet_of_flat(text, ["backoff"], 240)
    assert "RETRY backoff was lowered" in got and got.startswith("…") and got.endswith("…")
    # The control: the same text without the word is cut from its start.
    assert q.snippet(text, ["absent"]).startswith("filler words here")


def test_a_match_at_the_very_end_is_shown_with_a_whole_window_before_it():
    """The window then reaches back its full width (the property above rarely draws a match
    this late, so the cut's reach is pinned here)."""
    text = "lead words " * 2000 + "backoff"
    got = q.snippet(text, ["backoff"])
    assert got == q._snippet_of_flat(text, ["backoff"], 240)
    assert got.startswith("…") and got.endswith("backoff") and len(got) == 241
    # The control: a match early in the same text is cut forward from it.
    early = "backoff " + text
    assert q.snippet(early, ["backoff"]).startswith("backoff lead words")


_stem_words = st.builds(lambda a, b, c: a + b + c,
                        st.text("abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=8),
                        st.text("aeiouy", max_size=3),
                        st.sampled_from(["", "ing", "ies", "ied", "ly", "ness", "ational", "ization", "s", "es", "ed",
                                         "y", "iness", "ement", "ful", "ous", "ive", "ize", "ance", "er", "est"]))


@settings(max_examples=600, deadline=None)
@given(word=_stem_words)
def test_a_stem_begins_with_its_words_first_character(word):
    # What TextStems relies on; checked too over the 83,550 distinct words of ../shared/data.
    for stem in ANALYZE(word):
        assert stem[:1] == word[:1]


@settings(max_examples=300, deadline=None)
@given(words=st.lists(_stem_words, min_size=1, max_size=60), seps=st.sampled_from([" ", "\n", ", ", "-", "."]),
       asked=st.lists(_stem_words, max_size=8))
def test_stems_found_one_initial_at_a_time_are_the_stems_of_the_whole_text(words, seps, asked):
    text = seps.join(w.upper() if i % 3 == 0 else w for i, w in enumerate(words))
    whole = frozenset(ANALYZE(" ".join(set(q.WORD.findall(text.lower())))))
    lazy = q.stems_of(ANALYZE, text)
    assert isinstance(lazy, q.TextStems)
    for stem in [*whole, *(s for a in asked for s in ANALYZE(a))]:
        assert (stem in lazy) == (stem in whole), stem


def test_cues_name_the_query_words_a_text_holds_and_no_other():
    text = "We RETRIED the uploads twice; the back-off doubled each time."
    assert q.cues(["retry", "upload", "backoff", "double", "missing"], text, ANALYZE) == ["retry", "upload", "double"]
    # A word inside another word is not a word of the text: "ads" is in "uploads" only.
    stems = q.stems_of(ANALYZE, "we fixed the uploads")
    assert ANALYZE("uploads")[0] in stems and ANALYZE("ads")[0] not in stems
    assert q.cues(["ads", "uploads"], "we fixed the uploads", ANALYZE) == ["uploads"]


def test_a_cjk_term_inside_a_sentence_centres_the_snippet():
    # No word boundary falls inside a run of CJK text: 京都 follows は with nothing between.
    text = "これは長い日本語の文章です。" * 30 + "今日は京都へ行きました。" + "これは長い日本語の文章です。" * 30
    got = q.snippet(text, ["京都"])
    assert "今日は京都へ行きました" in got and got.startswith("…")
    assert q.snippet(text, ["大阪"]).startswith("これは長い日本語の文章です。")  # the control: no match, its start


def test_a_folded_term_centres_the_snippet_on_the_word_it_found():
    text = "Einleitung ohne Inhalt. " * 30 + "Die Größe der Straßenbahnhaltestelle überrascht mich." + " Schluss." * 30
    assert "Die Größe der" in q.snippet(text, q.query_terms("Größe"))


_folds_to_another_length = st.sampled_from(
    ["Straße", "ß", "ＡＢＣ", "ｶﾞｷﾞ", "İzmir", "ﬁne", "cafe\u0301", "東京", "ǿ", "x\u0304", "naïve", "①", "㍻", "plain", "(ß)", "今日は", "ｶﾞ", "한국어", "ひらがな"])


@settings(max_examples=300, deadline=None)
@given(before=st.lists(_folds_to_another_length, max_size=600), after=st.lists(_folds_to_another_length, max_size=60),
       gap=st.sampled_from([" ", "。", "、"]))
def test_a_folded_match_maps_back_to_the_very_character_it_was_found_at(before, after, gap):
    # Folding changes lengths (ß -> ss, ｶﾞ -> ガ, ﬁ -> fi, İ -> i), and a long text is folded a
    # piece at a time, cut at spaces or (Japanese) between characters: the position found
    # must still be the word's own in the original text.
    flat = gap.join([*before, "Größe", *after])
    at = len(gap.join(before)) + (1 if before else 0)
    assert flat[at:at + 5] == "Größe"
    assert q._first_folded(flat, ["grosse"]) == at
    assert q.snippet(flat, ["grosse"]) == q._window(flat, at, 240)
    assert q._first_folded(flat, ["grossere"]) == -1  # the control: a word the text lacks is found nowhere


def test_a_snippet_of_folded_text_keeps_the_original_spelling():
    text = "ＡＢＣ und Straße. " * 40 + "Die Größe der Haltestelle." + " Schluss." * 40
    got = q.snippet(text, ["grosse"])
    assert "Die Größe der Haltestelle." in got and "ＡＢＣ" in got and "grosse" not in got
    assert q.snippet(text, ["abc"]).startswith("ＡＢＣ und Straße.")  # full width found at the text's start


def test_a_cjk_word_across_the_cut_between_two_searched_pieces_is_found():
    # Long text is searched a piece at a time, cut between Japanese characters: 京都 sits
    # across the first cut (京 the piece's last character, 都 the next one's first).
    text = "あ" * (q.FOLD_PIECE - 1) + "京都" + "い" * 300
    assert q._first_folded(text, ["京都"]) == q.FOLD_PIECE - 1
    assert q._first_folded(text, ["あい"]) == -1  # the control: a pair the text never holds
    assert "京都" in q.snippet(text, ["京都"])
