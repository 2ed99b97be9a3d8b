"""Embedders that run offline from weights shipped inside PyPI packages.

The default is WordLlama's 256-d static token embeddings (the `wordllama` wheel ships them).
We read the shipped files directly instead of calling `WordLlama.load()`: that looks for the
tokenizer under `tokenizer/` while the wheel ships it under `tokenizers/`, and then tries a
network download. Files are verified against pinned hashes: a swapped or corrupt model is
refused with a clear error, never silently used.
"""

from __future__ import annotations

import json
import logging
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np

# MiniLM lives in llm/minilm.py and the shipped-file checks in llm/shipped.py; their names
# are re-exported here, where callers (the engine, the bench, the tests) have found them.
from lore_sidecar.llm.minilm import (  # noqa: F401
    MINILM_BATCH,
    MINILM_FIRST_INT8_NAME,
    MINILM_INT8_NAME,
    MINILM_MAX_TOKENS,
    MINILM_MODEL,
    MINILM_TOKENIZER,
    LazyMiniLM,
    MiniLMEmbedder,
    minilm_streams,
)
from lore_sidecar.llm.shipped import CHARS_PER_TOKEN_BOUND, EmbedderUnavailable, package_dir, sha256  # noqa: F401

_package_dir, _sha256 = package_dir, sha256  # their names here (the bench and the tests use them too)

WORDLLAMA_FILES = {
    "weights/l2_supercat_256.safetensors": "64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5",
    "tokenizers/l2_supercat_tokenizer_config.json": "93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68",
}
MAX_TOKENS = 512
# WordLlama's table is trained Matryoshka-style: its first 64 / 128 / 256 columns are each a
# model of their own. Conversation vectors keep WORDLLAMA_DIM of them.
WORDLLAMA_DIMS = (64, 128, 256)
WORDLLAMA_DIM = 256
ENCODE_BATCH_CHARS = 1 << 20  # texts tokenised per call, at most this much text (and its encodings)
log = logging.getLogger(__name__)


def _read_safetensor(path: Path, name: str) -> np.ndarray:
    """Minimal safetensors reader (8-byte header length, JSON header, raw little-endian data),
    memory-mapped read-only in the stored dtype: the pages are the file's, shared and
    reclaimable, and only the rows a text uses are ever read in. (Copied and widened to
    float32, WordLlama's table held 33 MB of every process's private memory.)"""
    with open(path, "rb") as fh:
        (n,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(n))
    info = header[name]
    dtype = {"F16": np.float16, "F32": np.float32}[info["dtype"]]
    start, end = info["data_offsets"]
    data = np.memmap(path, dtype=dtype, mode="r", offset=8 + n + start, shape=((end - start) // np.dtype(dtype).itemsize,))
    return data.reshape(info["shape"])


def _batches(texts: list[str]):
    """(start, texts) runs of at most ENCODE_BATCH_CHARS characters (one text at least)."""
    start, size = 0, 0
    for i, t in enumerate(texts):
        if i > start and size + len(t) > ENCODE_BATCH_CHARS:
            yield start, texts[start:i]
            start, size = i, 0
        size += len(t)
    if start < len(texts):
        yield start, texts[start:]


class WordLlamaEmbedder:
    """Static embeddings: mean of token vectors, L2-normalised. ~100k short texts/s."""

    batch = None  # ~30,000 texts/s: a call is over in milliseconds

    def __init__(self, dim: int = WORDLLAMA_DIM) -> None:
        from tokenizers import Tokenizer

        if dim not in WORDLLAMA_DIMS:
            raise EmbedderUnavailable(f"wordllama keeps {WORDLLAMA_DIMS} dimensions, not {dim}")
        # The name carries the width: vectors of another width are rebuilt, never mixed.
        self.dim = dim
        self.name = "wordllama-l2-supercat-256" if dim == 256 else f"wordllama-l2-supercat-256-d{dim}"

        root = _package_dir("wordllama")
        for rel, want in WORDLLAMA_FILES.items():
            path = root / rel
            if not path.is_file():
                raise EmbedderUnavailable(f"{path} is missing from the wordllama package")
            got = _sha256(path)
            if got != want:
                raise EmbedderUnavailable(f"{path}: sha256 {got} does not match pinned {want}")
        # Widened to float32 once, in private memory (33 MB): numpy converts float16 in
        # software, and averaging a text's rows from the mapped float16 table made each text
        # ~3x dearer (30 against 9.5 us) and ingest ~25% slower; the vectors are the same.
        table = _read_safetensor(root / "weights/l2_supercat_256.safetensors", "embedding.weight")
        # Only the kept columns: the mean of truncated rows is the truncated mean.
        self._weights = np.ascontiguousarray(table[:, :dim].astype(np.float32))
        self._tok = Tokenizer.from_file(str(root / "tokenizers/l2_supercat_tokenizer_config.json"))
        self._tok.no_padding()
        self._tok.no_truncation()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        weights = self._weights
        for start, batch in _batches([t[: MAX_TOKENS * CHARS_PER_TOKEN_BOUND] for t in texts]):
            encs = self._tok.encode_batch(batch, add_special_tokens=False)
            # A plain loop of row gathers beats reduceat/add.at here (measured: ~4x).
            for i, enc in enumerate(encs, start):
                ids = enc.ids[:MAX_TOKENS]
                if ids:
                    out[i] = weights[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def load_embedder(name: str, *, lazy: bool = False, dim: int = WORDLLAMA_DIM):
    """Build the configured embedder, or None for lexical-only operation. `dim`: WordLlama's
    kept dimensions (MiniLM has its own 384)."""
    if name == "none":
        return None
    if name == "wordllama":
        return WordLlamaEmbedder(dim)
    if name == "minilm":
        return LazyMiniLM() if lazy else MiniLMEmbedder()
    raise EmbedderUnavailable(f"unknown embedder {name!r}")


class KindModels:
    """The dense model of each source kind. Workspace files have their own: code and
    documents are where a contextual model earns its cost (measured: code search nDCG@10
    0.36 -> 0.60), while conversation recall keeps BM25's order and only backfills from the
    dense leg, which a static model does as well at a hundredth of the cost. A kind whose
    model is None is searched by its words only."""

    def __init__(self, default, files, problem: str | None = None):
        self.default = default
        self.files = files
        self.problem = problem  # why files fell back to the default model, if they did

    @property
    def name(self) -> str:
        return self.default.name if self.default is not None else "none"

    @property
    def dim(self) -> int:
        return self.default.dim if self.default is not None else 0

    def for_kind(self, kind: str):
        return self.files if kind == "files" else self.default

    def any(self) -> bool:
        return self.default is not None or self.files is not None


def load_models(default: str, files: str, *, dim: int = WORDLLAMA_DIM) -> KindModels:
    """The configured models. Unavailable ones are reported, never swapped silently: the
    default model's failure leaves its kinds lexical-only; a files model that cannot load
    falls back to the default one, and lore/status says why."""
    base = None
    problem = None
    try:
        base = load_embedder(default, dim=dim)
    except EmbedderUnavailable as exc:
        log.error("embedder %r unavailable (%s); recall of those kinds runs lexical-only", default, exc)
        problem = f"{default}: {exc}"
    if files in ("same", default):
        return KindModels(base, base, problem)
    try:
        return KindModels(base, load_embedder(files, lazy=True, dim=dim), problem)
    except EmbedderUnavailable as exc:
        log.error("files embedder %r unavailable (%s); workspace files use %r", files, exc, default)
        return KindModels(base, base, f"{files}: {exc}")
