"""The opt-in live tier: the real Anthropic API with a real key (`pytest -m live`).

Never part of the default run (`addopts = -m 'not live'`). With `-m live` and no
ANTHROPIC_API_KEY in the environment these report as skipped, saying why.
"""

from __future__ import annotations

import os

import pytest

from lore_sidecar.engine.memory import prompts
from lore_sidecar.llm.anthropic_client import AnthropicClient
from lore_sidecar.settings import MemorySettings

pytestmark = pytest.mark.live
KEY = os.environ.get("LORE_LIVE_ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_API_KEY", "")
needs_key = pytest.mark.skipif(not KEY, reason="the live tier needs ANTHROPIC_API_KEY (or LORE_LIVE_ANTHROPIC_API_KEY)")


@needs_key
def test_a_real_distillation_call_keeps_the_error_and_the_path():
    client = AnthropicClient(api_key=KEY, model=MemorySettings().llm_model, max_tokens=400)
    segment = ("[2026-11-30T10:00:00Z] user: the tests fail\n"
               "[2026-11-30T10:00:05Z] tool bash: E   KeyError: 'order_id' in src/shop/cart.py:88")
    stable, prompt = prompts.distill("live-1", segment)
    done = client.complete(stable=stable, prompt=prompt)
    observations, _ = prompts.split_entities(done.text)
    assert "src/shop/cart.py" in observations and "KeyError" in observations
    assert done.usage.input_tokens > 0 and done.usage.output_tokens > 0
