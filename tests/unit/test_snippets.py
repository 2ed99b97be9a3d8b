"""A hit's snippet: a long text is cut around its first match without flattening it whole,
and the cut is exactly the one the whole flattened text gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lore_sidecar.engine.recall import query as q

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
