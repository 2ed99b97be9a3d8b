"""Workspace files embedded by an earlier MiniLM path (the float graph of the release before
int8 compute, or the first int8 rewrite) are embedded again by the current one on the next
start: vectors carry their model's name, and a store's vectors of another name are rebuilt,
never mixed with the new ones."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lore_sidecar.llm import embedders as E
from tests.integration.test_late_interaction import ASKED, _keys, _ranked, _workspace
from tests.integration.test_store_and_index import engine_for

OLD_NAME = "all-minilm-l6-v2-int8"  # what the float graph's vectors were called
EARLIER = {  # an earlier release's files model: its vectors' name, and how to compute them
    "float graph": (OLD_NAME, lambda: E.MiniLMEmbedder(int8=False)),
    "first int8": ("all-minilm-l6-v2-int8-dq", lambda: E.MiniLMEmbedder(first_int8=True)),
}


def _fresh_vectors(tmp_path, ws) -> tuple[dict[int, np.ndarray], dict]:
    e = engine_for(tmp_path / "fresh-store", [str(ws)], watch=False)
    try:
        e.index.scan()
        assert e.index.wait(120)
        return _files_vectors(e), _keys(e)
    finally:
        e.close()


def _by_name(vectors: dict[int, np.ndarray], keys: dict) -> dict:
    return {keys[k]: v for k, v in vectors.items()}


def _files_vectors(e) -> dict[int, np.ndarray]:
    out = {}
    for (kind, _), rows in e.view.vectors.contents().items():
        if kind == "files":
            out.update({k: np.frombuffer(v, dtype=np.int8) for k, v in rows.items()})
    return out


@pytest.mark.parametrize("earlier", list(EARLIER))
def test_a_store_embedded_by_an_earlier_path_is_reembedded_by_the_current_one(tmp_path, monkeypatch, earlier):
    old_name, old_model = EARLIER[earlier]
    assert old_model().name == old_name != E.MINILM_INT8_NAME
    ws = _workspace(tmp_path / "ws")
    store = tmp_path / "store"
    with monkeypatch.context() as m:  # the earlier release: its compute, its name
        m.setattr(E.LazyMiniLM, "name", old_name)
        m.setattr(E.LazyMiniLM, "_loaded", lambda self: self.__dict__.setdefault("_old", old_model()))
        e = engine_for(store, [str(ws)], watch=False)
        try:
            e.index.scan()
            assert e.index.wait(120)
            old = _files_vectors(e)
            directory = e.view.vectors.directory
        finally:
            e.close()
    assert old and json.loads((directory / "vectors.json").read_text())["spaces"]["files"] == f"{old_name}/384"

    e = engine_for(store, [str(ws)], watch=False)
    try:
        assert e.index.wait(120)
        new = _files_vectors(e)
        keys = _keys(e)
        assert set(new) == set(old) == set(keys)  # every chunk embedded again
        assert e.view.vectors.late_of("files", list(keys)).keys() == set(keys)
        # ... by the current model: each chunk's vector is the one a store embedded by the
        # current model from the start holds (int8 in the index, so two close models agree
        # on many chunks; at least one differs from the earlier model's, the control).
        fresh = _by_name(*_fresh_vectors(tmp_path, ws))
        assert _by_name(new, keys).keys() == fresh.keys() and len(fresh) == len(keys)
        assert all(np.array_equal(v, fresh[n]) for n, v in _by_name(new, keys).items())
        assert any(not np.array_equal(v, fresh[n]) for n, v in _by_name(old, keys).items())
        assert e.view.vectors.spaces["files"] == (E.MINILM_INT8_NAME, 384) != (old_name, 384)
        assert _ranked(e, ASKED)  # and recall answers from them
        directory = e.view.vectors.directory
    finally:
        e.close()
    assert json.loads((directory / "vectors.json").read_text())["spaces"]["files"] == f"{E.MINILM_INT8_NAME}/384"
