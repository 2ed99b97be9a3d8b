"""WordLlama's Matryoshka widths (`embedderDim`): a narrower conversation vector is the
prefix of the full one, a store indexed at one width is rebuilt at another, and recall by
meaning works at the narrow width."""

from __future__ import annotations

import numpy as np

from lore_sidecar.llm.embedders import WordLlamaEmbedder, load_models
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


def test_embedder_dim_from_the_environment_is_a_number_the_model_takes(tmp_path):
    s, warnings = load_settings(env={"LORE_EMBEDDER_DIM": "128"}, user_file=tmp_path / "none")
    assert s.embedder_dim == 128 and type(s.embedder_dim) is int and not warnings
    models = load_models(s.embedder, "same", dim=s.embedder_dim)
    assert models.dim == 128 and models.problem is None  # the model loaded, at that width


def test_a_workspace_file_cannot_choose_the_width(tmp_path):
    """A width change re-embeds the whole store: a cloned repository's `.lore.json` may not
    ask for it (user-level only, like `embedder`). The control: the user's own file may."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".lore.json").write_text('{"embedderDim": 64}')
    s, warnings = load_settings(env={}, user_file=tmp_path / "none", workspace_root=ws)
    assert s.embedder_dim == 256 and any("embedderDim" in w and "ignored" in w for w in warnings)
    assert ("embedderDim", str(ws / ".lore.json")) in [(k, src) for k, src, _ in s.ignored]
    user = tmp_path / "config.toml"
    user.write_text("embedderDim = 64\n")
    s, warnings = load_settings(env={}, user_file=user, workspace_root=ws)
    assert s.embedder_dim == 64


def test_the_default_width_keeps_the_name_stores_were_indexed_under_and_each_width_has_its_own():
    """The vectors' name is what a store compares to decide to re-embed: the default width
    keeps the name it had before `embedderDim` existed (an upgrade re-embeds nothing), and
    the narrow widths are named apart."""
    names = {dim: WordLlamaEmbedder(dim).name for dim in (64, 128, 256)}
    assert names[256] == "wordllama-l2-supercat-256"
    assert names[128] == "wordllama-l2-supercat-256-d128" and len(set(names.values())) == 3


def test_a_wordllama_files_model_keeps_the_width_too():
    """`embedderDim` is WordLlama's width wherever it is loaded: as the files model beside
    another default model too. The control: without it, the full width."""
    files = load_models("none", "wordllama", dim=128).for_kind("files")
    assert files.dim == 128 and files.name.endswith("-d128")
    assert load_models("none", "wordllama").for_kind("files").dim == 256


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


def test_doctor_names_the_model_at_the_configured_width(tmp_path):
    from lore_sidecar.setup.doctor import engine_checks

    s, _ = load_settings(env={}, user_file=tmp_path / "none",
                         init_options={"storeDir": str(tmp_path / "store"), "embedderDim": 128})
    check = next(c for c in engine_checks(s) if c.name == "embedder")
    assert check.detail == "wordllama-l2-supercat-256-d128 (128-d)", check.detail  # what lore/status says


def test_doctor_names_a_wordllama_files_model_at_the_configured_width_too(tmp_path):
    """The engine loads a WordLlama files model at `embedderDim` as well
    (test_a_wordllama_files_model_keeps_the_width_too), so doctor's "files embedder" line
    names that width, not the full one."""
    from lore_sidecar.setup.doctor import engine_checks

    s, _ = load_settings(env={}, user_file=tmp_path / "none",
                         init_options={"storeDir": str(tmp_path / "store"), "embedderDim": 128,
                                       "filesEmbedder": "wordllama"})
    check = next(c for c in engine_checks(s) if c.name == "files embedder")
    assert check.detail == "wordllama-l2-supercat-256-d128 (128-d)", check.detail
