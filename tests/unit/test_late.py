"""Late interaction's parts on the shipped contextual model (real weights, no mocks): the word
pieces come from the same forward pass as the vectors, what is kept of a chunk, and how a
query's pieces score against a chunk's sign bits."""

from __future__ import annotations

import numpy as np
import pytest

from lore_sidecar.engine import late
from lore_sidecar.llm.embedders import MiniLMEmbedder

TEXTS = [
    "# TSS/360\n\nA time-shared operating system for the IBM System/360 Model 67.",
    "Merge sorting of records held on magnetic tape, with run lengths compared.",
    "",
    "def blend(rgb_a, rgb_b):\n    return tuple((x + y) // 2 for x, y in zip(rgb_a, rgb_b))",
]


@pytest.fixture(scope="module")
def model():
    return MiniLMEmbedder()


def test_the_pieces_come_from_the_same_pass_as_the_vectors(model):
    vecs, pieces = model.embed_with_tokens(TEXTS)
    assert np.array_equal(vecs, model.embed(TEXTS))
    tokens, states = pieces[0]
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and len(tokens) == len(states)
    assert np.allclose(np.linalg.norm(states, axis=1), 1.0, atol=1e-5)
    # The pooled vector is the mean of the piece vectors before they were scaled: its
    # direction lies among them (each piece is closer to it than to a random direction).
    assert (states @ vecs[0]).min() > 0.1
    assert pieces[2][0] == [] and not vecs[2].any()  # an empty text has neither


def test_a_chunk_keeps_its_content_pieces_as_sign_bits(model):
    _, pieces = model.embed_with_tokens(TEXTS[:1])
    tokens, states = pieces[0]
    keep = late.content(tokens)
    kept = [tokens[i] for i in keep]
    assert "[CLS]" not in kept and "for" not in kept and "the" not in kept and "/" not in kept
    assert {"time", "operating", "ibm"} <= set(kept)
    packed = late.pack(tokens, states)
    assert len(packed) == len(keep) * model.dim // 8
    bits = np.unpackbits(np.frombuffer(packed, dtype=np.uint8).reshape(len(keep), -1), axis=1)
    assert np.array_equal(bits.astype(bool), states[keep] > 0)
    assert late.pack(["[CLS]", "the", "[SEP]"], states[:3]) == b""


def test_a_query_scores_highest_against_the_chunk_that_means_what_it_asks(model):
    _, docs = model.embed_with_tokens(TEXTS)
    _, (asked,) = model.embed_with_tokens(["an operating system shared by many users"])
    q = late.query(*asked)
    scores = late.scores(q, [late.pack(*d) for d in docs])
    assert scores[0] == max(scores) and scores[0] > scores[1] + 0.05
    assert scores[2] == 0.0  # no pieces, no match
    # Each score is the mean best cosine against that chunk's ±1 vectors, computed without
    # them and for all the chunks at once: each as it scores alone.
    for i in (0, 1, 3):
        signs = np.where(docs[i][1][late.content(docs[i][0])] > 0, 1.0, -1.0) / np.sqrt(model.dim)
        assert scores[i] == pytest.approx(float((q @ signs.T).max(axis=1).mean()), abs=1e-5)
        assert late.scores(q, [late.pack(*docs[i])]) == [pytest.approx(scores[i], abs=1e-6)]
    # Control: a query of stopwords alone has nothing to compare.
    _, (empty,) = model.embed_with_tokens(["what is it"])
    assert late.query(*empty) is None
