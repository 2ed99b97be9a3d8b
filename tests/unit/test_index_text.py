"""What the text leg hands Tantivy is what the analysis defines, made faster: an ASCII field's
text with every non-word byte blanked, split on spaces, gives the very terms the regex
tokenizer finds in the original (same order, so the same positions); any other text is
handed over as its words (lore_sidecar.words); and the `parts` field, found word
by word with a cache, is exactly what the whole-text regex gives — in ASCII and in Unicode
text, with the cache full, cold, or forgotten half way."""

from __future__ import annotations

import tantivy
from hypothesis import given, settings
from hypothesis import strategies as st

from lore_sidecar import compound
from lore_sidecar.compound import CompoundParts, compound_parts
from lore_sidecar.store.text_index import _analyzer
from lore_sidecar.words import words, words_only

_pieces = st.sampled_from([
    "dates_in_range", "HTTPServer", "parseHeader", "__init__", "_private", "x_y", "a1_b2", "foo__bar", "ABCdef",
    "plain", "words", "os.path.join", "kebab-case", "42", "_", "__", "é", "naïveCase", "Straße_Weg", "ǅungla",
    "²", "日本語_テキスト", "’", "e.g.", "ID", "iOS", "getHTTPResponseCode", "\u00a0", "fooBar\u0301", "İstanbul_x",
    "設定はparse_configで", "東京HTTPServer", "はdates_in_range", "ＡＢＣ_ｄｅｆ"])
_gaps = st.sampled_from(["", " ", "\n", "(", ").", "-", "’", "\t", "é", "_"])
_text = st.lists(st.tuples(_pieces, _gaps), max_size=40).map(lambda pairs: "".join(p + g for p, g in pairs))
SHARED = CompoundParts()  # one cache across every example, as the index's writer keeps it


@settings(max_examples=600, deadline=None)
@given(text=_text)
def test_the_parts_found_a_word_at_a_time_are_the_parts_of_the_whole_text(text):
    assert SHARED(text) == compound_parts(text)
    assert CompoundParts()(text) == compound_parts(text)  # cold


def test_a_full_cache_is_forgotten_and_the_parts_stay_the_same(monkeypatch):
    monkeypatch.setattr(compound, "PARTS_CACHE_WORDS", 3)
    parts = CompoundParts()
    text = "def dates_in_range(start): return HTTPServer(parseHeader) and naïve_Case"
    for _ in range(3):
        assert parts(text) == compound_parts(text) == "dates in range HTTP Server parse Header"
        assert len(parts._words) <= 10  # cleared before each text once past the bound
    assert parts("plain words only") == "" == compound_parts("plain words only")  # the control: nothing to split


# The definition of a word in ASCII text: a run of [A-Za-z0-9_], as a regex tokenizer finds it.
BY_REGEX = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"[A-Za-z0-9_]+")).filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.remove_long(64)).filter(tantivy.Filter.stemmer("english")).build().analyze)
ON_SPACES = _analyzer().analyze
_any_text = st.text(st.characters(codec="utf-8"), max_size=200)
_ascii_text = st.text(st.characters(max_codepoint=127), max_size=200)


@settings(max_examples=600, deadline=None)
@given(text=st.one_of(_text.filter(str.isascii), _ascii_text, st.lists(_ascii_text, max_size=4).map("\n".join)))
def test_blanked_ascii_text_split_on_spaces_gives_the_terms_the_regex_finds(text):
    blanked = words_only(text)
    assert len(blanked.encode()) == len(text.encode())  # byte offsets stay where they were
    assert ON_SPACES(blanked) == BY_REGEX(text)


@settings(max_examples=600, deadline=None)
@given(text=st.one_of(_text, _any_text, st.lists(_any_text, max_size=4).map("\n".join)))
def test_any_text_is_handed_over_as_its_words(text):
    assert words_only(text).split() == words(text)


def test_blanking_keeps_words_and_long_words_are_still_dropped():
    text = "Retrying the dates_in_range() call - e.g. naive cafe; " + "x" * 70
    assert words_only(text).split() == ["Retrying", "the", "dates_in_range", "call", "e", "g", "naive", "cafe",
                                        "x" * 70]
    assert ON_SPACES(words_only(text)) == BY_REGEX(text) == ["retri", "the", "dates_in_rang", "call", "e", "g", "naiv",
                                                             "cafe"]
    # Control: without blanking, the same whitespace analyzer keeps punctuation in its terms.
    assert ON_SPACES(text) != BY_REGEX(text)
    # The same sentence with its accents and a dash is the same words (folded outside ASCII).
    accented = "Retrying the dates_in_range() call — e.g. naïve café; " + "x" * 70
    assert ON_SPACES(words_only(accented)) == ON_SPACES(words_only(text))
