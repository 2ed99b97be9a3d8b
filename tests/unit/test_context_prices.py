"""The price table (engine/context/prices.py) as docs/context.md states it: the longest
matching model prefix wins (Opus 4.5+ is not priced as Opus 4); Sonnet's cache write and
read are 1.25x and 0.1x; GPT-5 caches automatically, with no write surcharge."""

from __future__ import annotations

import pytest

from lore_sidecar.engine.context.prices import price_of, usd


def test_the_longest_matching_prefix_prices_the_model():
    opus45, opus41 = price_of("claude-opus-4-5-20251101"), price_of("claude-opus-4-1-20250805")
    assert (opus45.input, opus45.output) == (5.0, 25.0)
    assert (opus41.input, opus41.output) == (15.0, 75.0)  # the control: Opus 4 (and 4.1) is the pricier one
    assert (price_of("claude-sonnet-4-5").input, price_of("claude-haiku-4-5").input) == (3.0, 1.0)


def test_a_cache_write_costs_the_surcharge_at_anthropic_and_none_at_openai():
    sonnet, gpt5 = price_of("claude-sonnet-4-5"), price_of("gpt-5-codex")
    million = 1_000_000
    assert usd(sonnet, uncached=0, write=million, read=0) == pytest.approx(3.75)
    assert usd(sonnet, uncached=0, write=0, read=million) == pytest.approx(0.30)
    assert usd(gpt5, uncached=0, write=million, read=0) == pytest.approx(1.25)  # no write surcharge
    assert usd(gpt5, uncached=million, write=0, read=0) == pytest.approx(1.25)
    assert usd(gpt5, uncached=0, write=0, read=million) == pytest.approx(0.125)
    assert gpt5.window == 400_000
