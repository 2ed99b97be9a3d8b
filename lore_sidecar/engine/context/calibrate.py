"""The token estimate of the conversation alone, calibrated from the provider's counts. Pure.

Trigger / Why / Outcome:
- Why: the estimate (JSON characters / 4) is calibrated per session by the provider's usage,
  but a ratio for the whole body is mostly the system prompt's and tools' (prose and JSON
  schemas: some 26k tokens on a Claude Code call), while the raw window is tool output, code
  and logs, which a tokenizer splits finer. The window's sizes priced at the whole body's
  ratio make a `minLayer0Tokens` window larger than the setting says, and every call re-reads
  it.
- Outcome: the provider's count is split into the system prompt's and tools' share, the same
  on every call that sends them unchanged, and the conversation's. The share is taken from
  the call with the smallest conversation so far (usually the first), where not knowing the
  conversation's ratio errs least: that call's count
  split in proportion to the two estimates. The conversation's ratio is then the latest
  call's count less the share, over its conversation estimate — the window as it is now.
  A session whose system prompt is small (Pi) gets about the whole body's ratio back.
"""

from __future__ import annotations

PLAUSIBLE = (0.4, 2.5)  # tokens per estimated token a body can have (as the whole-body ratio)


def fixed_share(fixed_raw: int, conv_raw: int, counted: int) -> float:
    """The tokens of the system prompt and tools in `counted`, as their share of the estimate."""
    return counted * fixed_raw / max(1, fixed_raw + conv_raw)


def conversation_ratio(counted: int, conv_raw: int, share: float) -> float | None:
    """Tokens per estimated token of a call's conversation, or None (nothing to measure, or
    not a body's ratio)."""
    if conv_raw <= 0:
        return None
    ratio = (counted - share) / conv_raw
    return ratio if PLAUSIBLE[0] <= ratio <= PLAUSIBLE[1] else None
