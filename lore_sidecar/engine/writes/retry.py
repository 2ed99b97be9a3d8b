"""How the writer treats a spooled operation that failed to apply: a pure policy.

Trigger: applying an acknowledged write raised. Why: an acknowledged write must never be
lost to a passing condition (a `database is locked`, a full disk being cleared), and one
operation that can never apply must not stall every follower's writes behind it.
Outcome: refusals are settled as the sender's error; transient store conditions are
retried with backoff for as long as they last; an operation that cannot be read, or keeps
failing for reasons we do not recognise, is set aside (quarantined, never deleted).
"""

from __future__ import annotations

from dataclasses import dataclass

from lore_sidecar.errors import FENCED, LoreError

# Store conditions that pass: retried without limit (they are not the operation's fault).
TRANSIENT_KINDS = frozenset({"storeBusy", "diskFull", "notReady", "indexNotReady"})
MAX_UNEXPECTED = 5
BASE_DELAY_S = 0.1
MAX_DELAY_S = 5.0

SETTLE, RETRY, QUARANTINE, STOP = "settle", "retry", "quarantine", "stop"


@dataclass(frozen=True)
class Verdict:
    action: str
    delay_s: float = 0.0
    why: str = ""


def backoff(attempt: int) -> float:
    """Delay before attempt `attempt + 1` (attempt counts from 1): doubling, capped."""
    return min(MAX_DELAY_S, BASE_DELAY_S * 2 ** max(0, attempt - 1))


def judge(exc: BaseException, attempt: int) -> Verdict:
    """What to do with an operation whose `attempt`-th application raised `exc`."""
    why = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, LoreError):
        if exc.kind in FENCED:  # lost the writer role: stop draining; the next writer applies it
            return Verdict(STOP, why=why)
        if exc.kind in TRANSIENT_KINDS or exc.retryable:
            return Verdict(RETRY, backoff(attempt), why)
        return Verdict(SETTLE, why=why)  # the store changed since the sender checked: its error
    if isinstance(exc, KeyError | TypeError | ValueError):
        return Verdict(QUARANTINE, why=f"malformed operation: {why}")
    if isinstance(exc, OSError):
        return Verdict(RETRY, backoff(attempt), why)
    if attempt >= MAX_UNEXPECTED:
        return Verdict(QUARANTINE, why=f"failed {attempt} times: {why}")
    return Verdict(RETRY, backoff(attempt), why)
