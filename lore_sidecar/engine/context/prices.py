"""Model prices and windows, and what a call costs. Pure.

Prices are USD per million tokens (input, output) from the providers' public price lists
(Anthropic: https://www.anthropic.com/pricing, OpenAI: https://openai.com/api/pricing,
as of 2026-11). Anthropic prompt caching: a 5-minute cache write costs 1.25x input, a
1-hour one (`"ttl": "1h"`) 2x, a read 0.1x (Sonnet 4.5: $3.75 / $6 / $0.30 per MTok). OpenAI caches automatically: no write
surcharge, reads at 0.1x (GPT-5 family). The table is overridable (`modelPrices`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    input: float  # USD / MTok
    output: float
    write: float = 1.25  # cache write, x input
    read: float = 0.1  # cache read, x input
    window: int = 200_000  # context window, tokens
    caching: bool = True  # provider honours cache_control breakpoints
    write_1h: float = 2.0  # a 1-hour cache write, x input
    ttl_1h: bool = True  # the provider offers 1-hour breakpoints


# Longest matching prefix of the model name wins.
PRICES: dict[str, Price] = {
    "claude-sonnet-4": Price(3.0, 15.0),
    "claude-3-7-sonnet": Price(3.0, 15.0),
    "claude-haiku-4": Price(1.0, 5.0),
    "claude-3-5-haiku": Price(0.8, 4.0),
    "claude-opus-4-5": Price(5.0, 25.0),
    "claude-opus-4-6": Price(5.0, 25.0),
    "claude-opus-4-7": Price(5.0, 25.0),
    "claude-opus-4-8": Price(5.0, 25.0),
    "claude-opus-4": Price(15.0, 75.0),
    "gpt-5": Price(1.25, 10.0, write=1.0, window=400_000, ttl_1h=False),
    "gpt-4.1": Price(2.0, 8.0, write=1.0, read=0.25, window=1_000_000, ttl_1h=False),
    "gpt-4o": Price(2.5, 10.0, write=1.0, read=0.5, window=128_000, ttl_1h=False),
}
DEFAULT = PRICES["claude-sonnet-4"]


def price_of(model: str | None, overrides: Mapping[str, Price] | None = None) -> Price:
    table = {**PRICES, **(overrides or {})}
    name = (model or "").lower()
    best = max((k for k in table if name.startswith(k)), key=len, default=None)
    return table[best] if best else DEFAULT


def usd(p: Price, *, uncached: int, write: int, read: int, output: int = 0, write_1h: int = 0) -> float:
    """`write`: 5-minute cache writes; `write_1h`: 1-hour ones (priced apart)."""
    return (uncached * p.input + write * p.input * p.write + write_1h * p.input * p.write_1h + read * p.input * p.read
            + output * p.output) / 1e6
