"""The token estimate of the conversation alone, calibrated from the provider's counts. Pure.

Trigger / Why / Outcome:
- Why: the estimate (JSON characters / 4) is calibrated per session by the provider's usage,
  but a ratio for the whole body is mostly the system prompt's and tools' (prose and JSON
  schemas: some 26k tokens on a Claude Code call), while the raw window is tool output, code
  and logs, which a tokenizer splits finer. The window's sizes priced at the whole body's
  ratio make a `minLayer0Tokens` window larger than the setting says, and every call re-reads
  it.
- Outcome: the conversation's own ratio, from how the provider's count changes between two
  calls whose system prompt and tools are the same (their share cancels in the difference):
  the least-squares slope through the origin of count differences on estimate differences,
  over sums that decay per call so the latest calls weigh most. Used for the conversation's
  sizes; the whole body's ratio still prices the whole body.
"""

from __future__ import annotations

DECAY = 0.8  # weight of the earlier sums at each new difference
PLAUSIBLE = (0.4, 2.5)  # tokens per estimated token a body can have (as the whole-body ratio)


def fold(xx: float, xy: float, d_estimate: int, d_counted: int) -> tuple[float, float]:
    """The sums after one more pair of differences (estimate, provider's count)."""
    return DECAY * xx + d_estimate * d_estimate, DECAY * xy + d_estimate * d_counted


def slope(xx: float, xy: float) -> float | None:
    """The conversation's ratio, or None while the sums say nothing plausible."""
    if xx <= 0:
        return None
    ratio = xy / xx
    return ratio if PLAUSIBLE[0] <= ratio <= PLAUSIBLE[1] else None
