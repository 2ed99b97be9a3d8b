"""The shipped static embedder on long texts and large batches (real weights, no mocks)."""

from __future__ import annotations

import numpy as np

from lore_sidecar.llm import embedders
from lore_sidecar.llm.embedders import MAX_TOKENS, WordLlamaEmbedder


def test_a_batch_larger_than_one_tokeniser_call_embeds_each_text_as_it_would_alone(monkeypatch):
    model = WordLlamaEmbedder()
    texts = [f"note {i}: the cache lives in SQLite and survives restarts " * (1 + i % 7) for i in range(40)]
    alone = np.vstack([model.embed([t]) for t in texts])
    monkeypatch.setattr(embedders, "ENCODE_BATCH_CHARS", 500)  # many tokeniser calls for the 40 texts
    assert np.array_equal(model.embed(texts), alone)


def test_a_long_text_is_embedded_by_its_first_tokens_without_tokenising_all_of_it():
    model = WordLlamaEmbedder()
    head = "We decided to keep the index in Tantivy because it rebuilds from the record. " * 40
    long = head + "unrelated trailing words about lunch and the weather " * 4000  # ~200 KB
    # The oracle: the whole text tokenised, its first MAX_TOKENS tokens averaged.
    ids = model._tok.encode(long, add_special_tokens=False).ids[:MAX_TOKENS]
    want = model._weights[ids].astype(np.float32).mean(axis=0)  # the table is stored float16
    want /= np.linalg.norm(want)
    got = model.embed([long])[0]
    assert np.allclose(got, want, atol=1e-6)
    # Control: the tail does count when it falls within the first tokens.
    assert not np.allclose(model.embed(["unrelated trailing words about lunch and the weather " * 10 + head])[0], got, atol=1e-3)
