"""Savings a person can see: per assembled model call, what was sent and what the body as it
came (L0: no context management) would have cost; summed per day and per session on read.

Each call appends one row when it is assembled (the assembler's estimate, for the body sent
and for L0), and one more when the provider's usage comes back (`lore/recordUsage`, which the
gateway sends after each answer). A call with its usage is "reported": its tokens and cost are
the provider's; one without (no usage fed back, an answer the gateway could not read) stays
"estimated". What L0 would have cost is never observed, except at layer 0, where the body
sent is the body as it came and L0's figures are the call's own; above layer 0 it is the
estimate (calibrated per session like every estimate), plus the reported output, which no
context manager changes.

Rows go through a small port (`append(day, row)`, `rows(days)`, `days()`:
store/context_ledger.py); totals are computed from the per-call figures, so they are the
sum of them by construction. Costs are rounded to the micro-dollar per call, as
`lore/assembleContext` reports them.
"""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from lore_sidecar.engine.context.prices import Price, price_of, usd

log = logging.getLogger(__name__)
REASONS = {"ttl": "the cache had expired (more than 5 minutes since the session's last call)",
           "layer": "the layer changed (the prompt was compressed further)",
           "rewritten": "the harness rewrote its own history (its compaction)",
           "moved": "the raw window moved (a planned compaction)",
           "missed": "the provider read less than half of what should have been cached"}
STATUS_DAYS = 7
STATUS_SESSIONS = 10


def day_of(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d")


def iso_of(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Pending:
    """The session's last call, until its usage comes back."""
    id: str
    day: str
    model: str | None
    expected_read: int
    bust: str


class Savings:
    def __init__(self, ledger: Any):
        self.ledger = ledger  # None: figures are computed for the answer, nothing is kept
        self._pending: dict[str, Pending] = {}
        self._l0_tokens: dict[str, int] = {}  # per session: the size of the body as it came last call
        self._days: dict[str, tuple[int, list[dict], dict[str, Any]]] = {}  # day -> (rows read, figures, totals)
        self._lock = threading.Lock()

    # -- writing ---------------------------------------------------------------------------------
    def called(self, session_id: str, *, at: float, model: str | None, harness: str | None, price: Price, plan: Any,
               prior: Any, known: int, l0_raw: int, cached_raw: int, sent: dict[str, Any], warm: bool) -> dict[str, Any]:
        """Record one assembled call; returns L0's estimate for it (the shape of `estimate`).
        `prior`: the session's state before this call; `l0_raw`, `cached_raw`: raw estimates of
        the body as it came and of its items unchanged since the last call; `warm`: within the TTL."""
        with self._lock:
            last_l0 = self._l0_tokens.get(session_id)
        if last_l0 is None:  # another process served the call before (or this one restarted)
            last_l0 = prior.expect_read if prior.layer == 0 else int(cached_raw * prior.ratio)
        l0 = l0_estimate(price, plan.layer, prior, l0_raw, last_l0, sent, warm)
        bust = bust_of(price, plan, prior, known, warm, sent["cacheReadTokens"])
        row = {"k": "call", "id": uuid.uuid4().hex[:16], "session": session_id, "at": iso_of(at), "model": model,
               "harness": harness, "layer": plan.layer, "sentTokens": sent["inputTokens"],
               "read": sent["cacheReadTokens"], "write": sent["cacheWriteTokens"], "usd": sent["usd"],
               "l0Tokens": l0["inputTokens"], "l0Usd": l0["usd"], "bust": bust}
        day = day_of(at)
        with self._lock:
            self._pending[session_id] = Pending(row["id"], day, model, sent["cacheReadTokens"], bust)
            self._l0_tokens[session_id] = l0["inputTokens"]
        self._append(day, row)
        return l0

    def used(self, session_id: str, *, usage: dict[str, Any], at: float, model: str | None = None) -> None:
        """The provider's usage for the session's last call (snake_case Anthropic fields)."""
        with self._lock:
            last = self._pending.pop(session_id, None)
        p = price_of(model or (last.model if last else None))
        inp, write = int(usage.get("input_tokens") or 0), int(usage.get("cache_creation_input_tokens") or 0)
        read, out = int(usage.get("cache_read_input_tokens") or 0), int(usage.get("output_tokens") or 0)
        missed = last is not None and not last.bust and p.caching and last.expected_read > 0 and \
            read < 0.5 * last.expected_read
        row = {"k": "usage", "call": last.id if last else None, "session": session_id, "at": iso_of(at),
               "input": inp, "read": read, "write": write, "output": out,
               "usd": round(usd(p, uncached=inp, write=write, read=read, output=out), 6),
               "outputUsd": round(usd(p, uncached=0, write=0, read=0, output=out), 6), "bust": "missed" if missed else ""}
        self._append(last.day if last else day_of(at), row)

    def _append(self, day: str, row: dict[str, Any]) -> None:
        if self.ledger is None:
            return
        try:
            self.ledger.append(day, row)
        except OSError as exc:  # accounting never fails a model call
            log.warning("savings not recorded: %s", exc)

    # -- reading ---------------------------------------------------------------------------------
    def calls(self, days: int | None = None, session_id: str | None = None, now: float | None = None) -> list[dict]:
        """Per-call figures of the last `days` days (None: every day kept), oldest first."""
        if self.ledger is None:
            return []
        have = self.ledger.days()
        if days is not None:
            today = datetime.fromtimestamp(now, UTC) if now is not None else datetime.now(UTC)
            wanted = {(today - timedelta(days=k)).strftime("%Y-%m-%d") for k in range(days)}
            have = [d for d in have if d in wanted]
        out: list[dict] = []
        for day in have:
            out += self._day(day)[0]
        return [f for f in out if f["sessionId"] == session_id] if session_id else out

    def _day(self, day: str) -> tuple[list[dict], dict[str, Any]]:
        """A day's figures and totals, worked out again only when its file has grown (past
        days are read once; a usage line goes to its call's day, so days join apart)."""
        rows = self.ledger.rows([day])
        with self._lock:
            known = self._days.get(day)
        if known is None or known[0] != len(rows):
            figs = figures(rows)
            known = (len(rows), figs, totals(figs))
            with self._lock:
                self._days[day] = known
        return known[1], known[2]

    def report(self, days: int | None = None, now: float | None = None) -> dict[str, Any]:
        """Totals per day and per session (newest first), and over all of them."""
        figs = self.calls(days, now=now)
        by_day: dict[str, list[dict]] = {}
        by_session: dict[str, list[dict]] = {}
        for f in figs:
            by_day.setdefault(f["day"], []).append(f)
            by_session.setdefault(f["sessionId"], []).append(f)
        day_rows = [{"day": d, "sessions": len({f["sessionId"] for f in fs}), **self._totals_of(d, fs)}
                    for d, fs in sorted(by_day.items(), reverse=True)]
        # Most recent first: by the last call's time, then by the order the calls were appended
        last = {f["sessionId"]: (f["at"], k) for k, f in enumerate(figs)}
        session_rows = [{"sessionId": s, "harness": fs[-1]["harness"], "model": fs[-1]["model"],
                         "firstAt": fs[0]["at"], "lastAt": fs[-1]["at"], **totals(fs)}
                        for s, fs in sorted(by_session.items(), key=lambda kv: last[kv[0]], reverse=True)]
        return {"days": day_rows, "sessions": session_rows, "total": totals(figs)}

    def _totals_of(self, day: str, figs: list[dict]) -> dict[str, Any]:
        """The day's cached totals when its figures are exactly the day file's (a call's
        `at` is its day, so they are unless the clock of a replay put calls elsewhere)."""
        with self._lock:
            known = self._days.get(day)
        return known[2] if known is not None and len(known[1]) == len(figs) and known[1][-1] is figs[-1] else totals(figs)

    def status(self) -> dict[str, Any]:
        """`lore/status`'s `savings`: the last week, its most recent sessions (capped)."""
        r = self.report(STATUS_DAYS)
        shown = r["sessions"][:STATUS_SESSIONS]
        return {"days": r["days"], "sessions": shown, "sessionsTotal": len(r["sessions"]),
                "truncated": len(shown) < len(r["sessions"]), "total": r["total"],
                "more": "lore-sidecar savings --sessions --days N"}


def l0_estimate(price: Price, layer: int, prior: Any, l0_raw: int, last_l0: int, sent: dict[str, Any],
                warm: bool) -> dict[str, Any]:
    """At layer 0 the body sent is the body as it came: L0 is the call's own estimate. Above
    it, the body as it came, estimated as the assembler estimates a call at layer 0: the last
    call's body read from cache (while it is warm), the rest written."""
    if layer == 0:
        return dict(sent)
    tokens = int(l0_raw * prior.ratio)
    read = min(tokens, last_l0) if warm and prior.calls and price.caching else 0
    write = tokens - read if price.caching else 0
    return {"inputTokens": tokens, "cacheReadTokens": read, "cacheWriteTokens": write,
            "usd": round(usd(price, uncached=tokens - read - write, write=write, read=read), 6)}


def bust_of(price: Price, plan: Any, prior: Any, known: int, warm: bool, read: int) -> str:
    """Why this call reads less than half of what the session's last call sent, as the
    assembler estimates it ("" when it reads the rest: the same rule `lore/recordUsage`
    applies to the provider's figures)."""
    if not prior.calls or not price.caching or not prior.caching or read >= 0.5 * prior.expect_read:
        return ""  # a first call writes the cache; a provider that does not cache has none to lose
    if not warm:
        return "ttl"
    if plan.layer != prior.layer:
        return "layer"
    if prior.captured > 1 and not known:
        return "rewritten"
    if plan.rebuild or (plan.layer and plan.window_start != prior.window_start):
        return "moved"
    return "missed"


def figures(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each call with its usage, if any came back. A usage row names its call; one that does
    not (its call was assembled by another process) belongs to the session's latest call
    before it still without usage."""
    calls: dict[str, dict] = {}
    order: list[str] = []
    waiting: dict[str, list[str]] = {}
    usage_of: dict[str, dict] = {}
    for r in rows:
        if r.get("k") == "call" and r.get("id") and r["id"] not in calls:
            calls[r["id"]] = r
            order.append(r["id"])
            waiting.setdefault(r.get("session"), []).append(r["id"])
        elif r.get("k") == "usage":
            cid = r.get("call")
            if cid is None:
                cid = next((c for c in reversed(waiting.get(r.get("session"), [])) if c not in usage_of), None)
            if cid in calls and cid not in usage_of:
                usage_of[cid] = r
    return [figure(calls[c], usage_of.get(c)) for c in order]


def figure(call: dict[str, Any], used: dict[str, Any] | None) -> dict[str, Any]:
    layer = int(call.get("layer") or 0)
    if used is None:
        read, write = int(call.get("read") or 0), int(call.get("write") or 0)
        sent = int(call.get("sentTokens") or 0)
        inp, out, cost = max(0, sent - read - write), 0, float(call.get("usd") or 0.0)
        l0_tokens, l0_cost, bust = int(call.get("l0Tokens") or 0), float(call.get("l0Usd") or 0.0), call.get("bust") or ""
    else:
        inp, read, write, out = (int(used.get(k) or 0) for k in ("input", "read", "write", "output"))
        sent, cost = inp + read + write, float(used.get("usd") or 0.0)
        l0_tokens = sent if layer == 0 else int(call.get("l0Tokens") or 0)
        l0_cost = cost if layer == 0 else round(float(call.get("l0Usd") or 0.0) + float(used.get("outputUsd") or 0.0), 6)
        bust = call.get("bust") or used.get("bust") or ""
    at = str(call.get("at") or "")
    return {"id": call["id"], "sessionId": call.get("session"), "at": at, "day": at[:10], "model": call.get("model"),
            "harness": call.get("harness"), "layer": layer, "source": "estimated" if used is None else "reported",
            "sentTokens": sent, "inputTokens": inp, "cacheReadTokens": read, "cacheWriteTokens": write,
            "outputTokens": out, "usd": cost, "l0Tokens": l0_tokens, "l0Usd": l0_cost,
            "savedUsd": round(l0_cost - cost, 6), "bust": bust}


def totals(figs: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(figs)
    reported = sum(1 for f in figs if f["source"] == "reported")

    def total(key: str) -> int:
        return sum(f[key] for f in figs)

    cost, l0 = round(sum(f["usd"] for f in figs), 6), round(sum(f["l0Usd"] for f in figs), 6)
    sent, read = total("sentTokens"), total("cacheReadTokens")
    reasons: dict[str, int] = {}
    for f in figs:
        if f["bust"]:
            reasons[f["bust"]] = reasons.get(f["bust"], 0) + 1
    return {"calls": n, "source": "none" if not n else "reported" if reported == n else "estimated" if not reported
            else "mixed", "reportedCalls": reported, "estimatedCalls": n - reported,
            "sentTokens": sent, "l0Tokens": total("l0Tokens"), "savedTokens": total("l0Tokens") - sent,
            "inputTokens": total("inputTokens"), "cacheReadTokens": read, "cacheWriteTokens": total("cacheWriteTokens"),
            "outputTokens": total("outputTokens"), "usd": cost, "l0Usd": l0, "savedUsd": round(l0 - cost, 6),
            "ratio": round(cost / l0, 4) if l0 > 0 else None, "cacheHitRatio": round(read / sent, 4) if sent else None,
            "busts": sum(reasons.values()), "bustReasons": reasons}
