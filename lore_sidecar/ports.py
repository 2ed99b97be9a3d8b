"""The narrow interfaces the engine talks to. Adapters live in `store/` and `llm/`; unit
tests use in-memory fakes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np

from lore_sidecar.model import Doc


class Embedder(Protocol):
    name: str
    dim: int
    # Texts one call embeds well at a time, for a slow model (None: any number). A caller that
    # must stay stoppable embeds that many, shortest first, and checks between calls.
    batch: int | None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, rows L2-normalised (all-zero for empty text)."""
        ...

    # A contextual model may also have `embed_with_tokens(texts) -> (vectors, [(pieces,
    # piece vectors)])`: the same vectors, and what late interaction reads (engine/late.py).


class DenseModels(Protocol):
    """The dense model of each source kind (None: that kind is searched by its words only)."""

    name: str
    dim: int

    def for_kind(self, kind: str) -> Embedder | None: ...
    def any(self) -> bool: ...


class TextIndex(Protocol):
    def analyze(self, text: str) -> list[str]: ...
    def upsert(self, docs: Iterable[Doc]) -> None: ...
    def delete(self, kind: str, keys: Iterable[int]) -> None: ...
    saved_seq: int

    def commit(self, seq: int) -> None: ...
    def rollback(self) -> None: ...
    def clear(self) -> None: ...
    def reload(self) -> None: ...
    def num_docs(self) -> int: ...
    def search(
        self,
        terms: Sequence[str],
        *,
        kinds: Sequence[str],
        project_ids: Sequence[int] | None,
        limit: int,
        conjunctive: bool,
        days: Sequence[tuple[int, int]] = (),
    ) -> list[tuple[str, int, float]]: ...


class VectorIndex(Protocol):
    saved_seq: int
    dirty: bool
    stale: set[str]  # kinds being embedded again from the record (their stored vectors are another model's)

    def reembedded(self, kind: str) -> None: ...
    def reembed_all(self, seq: int) -> None: ...

    def upsert(self, kind: str, project_id: int, keys: Sequence[int], vectors: np.ndarray,
               late: Sequence[bytes] | None = None) -> None: ...
    def remove(self, kind: str, project_id: int, keys: Sequence[int]) -> None: ...
    def late_of(self, kind: str, keys: Sequence[int]) -> dict[int, bytes]: ...
    def clear(self) -> None: ...
    def save(self, seq: int) -> None: ...
    def size(self) -> int: ...
    def holds(self, kinds: Sequence[str], project_ids: Sequence[int] | None) -> set[str]: ...
    def search(
        self, kinds: Sequence[str], project_ids: Sequence[int] | None, vector: np.ndarray, limit: int
    ) -> list[tuple[str, int, float]]: ...


class LLM(Protocol):
    model: str

    def prepare(self) -> None:
        """Load what the first call needs (may be slow; called off the request path)."""
        ...

    def complete(self, *, stable: Sequence[str], prompt: str, max_tokens: int | None = None):
        """A completion with `.text`, `.usage`, `.model`, `.took_ms`; raises LoreError
        (kind noApiKey, authFailed, rateLimited, llmError, llmUnreachable) on failure."""
        ...
