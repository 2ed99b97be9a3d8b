"""WordLlama's Matryoshka widths (`embedderDim`): a narrower conversation vector is the
prefix of the full one, a store indexed at one width is rebuilt at another, and recall by
meaning works at the narrow width."""

from __future__ import annotations

import numpy as np

from lore_sidecar.llm.embedders import WordLlamaEmbedder
from lore_sidecar.settings import load_settings
from tests.integration.test_dense_leg import ASKED, SAID
from tests.integration.test_store_and_index import engine_for, record


def test_a_narrow_wordllama_vector_is_the_full_vectors_prefix_renormalised():
    texts = ["The automobile engine overheated on the motorway", "a cache decision", ""]
    full, narrow = WordLlamaEmbedder(256).embed(texts), WordLlamaEmbedder(128).embed(texts)
    assert narrow.shape == (3, 128)
    head = full[:2, :128] / np.linalg.norm(full[:2, :128], axis=1, keepdims=True)
    assert np.allclose(narrow[:2], head, atol=1e-6)
    assert not narrow[2].any()  # empty text: all zero, as at full width
    # Control: the prefix differs from the full vector (the width really changed).
    assert not np.allclose(full[0, :128], narrow[0], atol=1e-3)


def test_embedder_dim_takes_effect_and_a_width_wordllama_lacks_falls_back_with_a_warning(tmp_path):
    s, warnings = load_settings(env={}, user_file=tmp_path / "none", init_options={"embedderDim": 128})
    assert s.embedder_dim == 128 and not warnings
    s, warnings = load_settings(env={}, user_file=tmp_path / "none", init_options={"embedderDim": 100})
    assert s.embedder_dim == 256 and any("embedderDim" in w for w in warnings)


def test_a_store_indexed_at_full_width_is_rebuilt_at_the_narrow_one_and_found_by_meaning(tmp_path, workspace):
    store = tmp_path / "store"
    e = engine_for(store, [str(workspace)], indexWorkspace=False, watch=False)
    try:
        record(e, "s", [SAID, "an unrelated note about lunch"])
        assert e.index.wait(30)
        widths = {len(v) for part in e.view.vectors.contents().values() for v in part.values()}
        assert widths == {256} and e.status()["embedder"]["dim"] == 256
    finally:
        e.close()
    e = engine_for(store, [str(workspace)], indexWorkspace=False, watch=False, embedderDim=128)
    try:
        assert e.index.wait(30)
        status = e.status()["embedder"]
        assert status["dim"] == 128 and status["name"].endswith("-d128")
        contents = e.view.vectors.contents()
        assert {len(v) for part in contents.values() for v in part.values()} == {128}
        assert sum(len(part) for part in contents.values()) == 2  # both messages, re-embedded
        hits = e.recall(ASKED, sources=["messages"]).hits
        assert [h.uri for h in hits][:1] == ["session://s/s-0"]
        # Control: the words alone cannot find it; the narrow vectors did.
        assert e.recall(ASKED, sources=["messages"], lexical_only=True).hits == []
    finally:
        e.close()
