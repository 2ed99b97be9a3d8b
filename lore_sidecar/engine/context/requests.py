"""`lore/assembleContext` and `lore/recordUsage`: capture what the harness is about to send,
choose the layer, build the body to send instead, and learn from the provider's usage.

The assembler never waits on a model: the distilled prefix is built from the extractive
observations of the evicted messages (deterministic, local), frozen until the window moves.
Everything evicted stays in the temporal tier (captured here first), so `lore_recall` in
the session finds it. State per session (layer, window, prefix, calibration, the forced
floor) is kept through a port, so it survives a restart.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from dataclasses import replace
from typing import Any

from lore_sidecar.engine.capture.messages import iso_utc
from lore_sidecar.engine.context import bodies as b
from lore_sidecar.engine.context import calibrate, stubs, throttle
from lore_sidecar.engine.context.gradient import (
    TTL_1H_S,
    TTL_S,
    Budget,
    Plan,
    State,
    hour_pays,
    observe,
    plan,
    rhythm,
    window_for,
)
from lore_sidecar.engine.context.prices import price_of, usd
from lore_sidecar.engine.context.savings import Savings
from lore_sidecar.engine.memory.distill import annotate_tool_output
from lore_sidecar.errors import LoreError

PREFIX_TOKENS = {1: 6000, 2: 6000, 3: 1000, 4: 500}
PART_OVERHEAD = 400  # characters of a digest part's own tags
REWRITTEN = "history rewritten by the harness"
STUB_CHARS = 600
RATIO_PLAUSIBLE = calibrate.PLAUSIBLE  # one bound for the whole body's ratio and the conversation's
LOOKBACK = 20  # blocks before a breakpoint where the provider still finds a cached prefix (Anthropic)
TOO_LONG = ("prompt is too long", "context length", "maximum context", "context_length_exceeded", "too many tokens")


def estimate(obj: Any) -> int:
    """Tokens, roughly: JSON characters / 4 (calibrated per session from real usage)."""
    return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":"))) // 4 + 1


def when(at: str | None) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso_utc(at).replace("Z", "+00:00")).timestamp() if at else time.time()


class ContextRequests:
    def __init__(self, instance: Any, states: Any, ledger: Any = None):
        self.i = instance  # the engine: capture, settings
        self.states = states  # load(session_id) -> dict | None; save(session_id, dict)
        self.savings = Savings(ledger)  # each call's cost and L0's, for status and `lore-sidecar savings`
        self._locks: dict[str, threading.Lock] = defaultdict(threading.Lock)

    # -- lore/assembleContext -------------------------------------------------------------------------
    def assemble(self, *, session_id: str, body: dict[str, Any], api: str = b.ANTHROPIC, model: str | None = None,
                 harness: str | None = None, project: str | None = None, at: str | None = None) -> dict[str, Any]:
        if api not in b.APIS:
            raise LoreError("invalidBody", f"api must be one of {', '.join(b.APIS)}, got {api!r}")
        if not isinstance(body, dict) or not isinstance(b.items(api, body), list):
            raise LoreError("invalidBody", "body must be the request body object the harness would send")
        now = when(at)
        conv = b.items(api, body)
        with self._locks[session_id]:
            state = State.load(self.states.load(session_id))
            known = self._known(state, conv)  # items unchanged since the last call
            recorded = self._capture(session_id, api, conv, known, harness, project)
            price = price_of(model or body.get("model"))
            raw_sizes = [*state.sizes[:known], *(estimate(x) for x in conv[known:])]
            fixed_raw = estimate({k: v for k, v in body.items() if k not in ("messages", "input")})
            conv_ratio = state.conv_ratio or state.ratio  # the conversation's own, once measured (calibrate.py)
            sizes = [int(s * conv_ratio) + 1 for s in raw_sizes]
            fixed = int(fixed_raw * state.ratio)
            starts = [s for s in b.cut_points(api, conv) if s > 0]
            budget = self._budget()
            lead = b.leading_summary(api, conv) if self._carry_summary() else None
            if lead is not None:
                # The prefix carries the harness's summary whole once the window moves past it
                # (`_carried`): it takes its room from the raw window's, not on top of it.
                budget = replace(budget, min_raw=max(budget.min_raw // 2, budget.min_raw - sizes[lead]))
            p = plan(state, sizes=sizes, fixed=fixed, starts=starts, price=price, max_output=b.max_output(api, body),
                     budget=budget, prefix_budget=self._first_prefix(api, conv, state, sizes, starts, budget, lead), at=now)
            p = self._anchor(state, p, conv, starts, sizes, budget.min_raw)
            if state.last_at <= 0 or now - state.last_at > TTL_S:
                # The system prompt's breakpoint is written anew on this call (first, or the
                # cache died): its TTL is chosen now, with this gap counted, and kept until
                # the next such call (switching on a warm call would write it again).
                gap = now - state.last_at if state.last_at > 0 else 0.0
                seen = replace(state, gaps=state.gaps + (gap > 0), cold_gaps=state.cold_gaps + (gap > TTL_S),
                               long_gaps=state.long_gaps + (gap > TTL_1H_S))
                state.ttl_1h = hour_pays(price, rhythm(seen))
            out, breakpoints, prefix = self._build(api, body, conv, p, state, session_id,
                                                   self._last_tail(api, state, conv, known), lead)
            sent_raw = fixed_raw + sum(raw_sizes) if p.layer == 0 else estimate(out)  # passthrough: already known
            sent = int(sent_raw * state.ratio)
            within_ttl = state.last_at > 0 and now - state.last_at <= TTL_S
            read = (state.expect_read if not p.rebuild else fixed) if within_ttl and price.caching and p.layer == state.layer else 0
            read = min(read, sent)
            write = sent - read if price.caching and breakpoints else 0
            estimate_out = {"inputTokens": sent, "cacheReadTokens": read, "cacheWriteTokens": write,
                            "usd": round(usd(price, uncached=sent - read - write, write=write, read=read), 6)}
            l0 = self.savings.called(session_id, at=now, model=model or body.get("model"), harness=harness, price=price,
                                     plan=p, prior=state, known=known, l0_raw=fixed_raw + sum(raw_sizes),
                                     cached_raw=fixed_raw + sum(raw_sizes[:known]), sent=estimate_out, warm=within_ttl)
            # What the cache loses on a warm call, for the bust budget: the window moved (or was
            # placed again after the harness rewrote its history), or the layer changed.
            if within_ttl and (p.rebuild or p.layer != state.layer):
                state.content_busts += 1
            delay = throttle.delay_s(state.spent, now, estimate_out["usd"], self._usd_per_hour(), state.last_at, TTL_S)
            state.spent = (*throttle.recent(state.spent, now), (now, estimate_out["usd"]))
            state.layer = p.layer
            if p.rebuild or state.window_start != p.window_start:
                state.compactions += 1
            state.window_start, state.parts, state.prefix_upto = p.window_start, prefix, p.window_start
            state.prefix = "\n".join(prefix)
            state.anchor = b.item_id(p.window_start, conv[p.window_start]) if p.layer and p.window_start < len(conv) else ""
            observe(state, sum(sizes), now)
            state.calls += 1
            state.last_expected_read = read
            state.last_at = now
            state.last_raw_estimate = sent_raw
            state.last_fixed_raw = fixed_raw
            state.expect_read = sent
            state.sizes = tuple(raw_sizes)
            state.captured = len(conv)
            state.captured_id = b.item_id(len(conv) - 1, conv[-1]) if conv else ""
            self.states.save(session_id, state.dump())
        return {"body": out, "layer": p.layer, "estimate": estimate_out, "l0": l0, "breakpoints": breakpoints,
                "reason": p.reason, "recorded": recorded, "delayMs": int(delay * 1000)}

    def _budget(self) -> Budget:
        """The raw window's limits from the settings (user-level; a repository may only lower them)."""
        s = getattr(self.i, "settings", None)
        if s is None:
            return Budget()
        return Budget(min_raw=s.min_layer0_tokens, max_raw=max(s.min_layer0_tokens, s.max_layer0_tokens),
                      read_usd_per_turn=s.target_cache_read_cost_per_turn)

    @staticmethod
    def _first_prefix(api: str, conv: list[Any], state: State, sizes: list[int], starts: list[int], budget: Budget,
                      lead: int | None = None) -> int:
        """At L0, the tokens of the prefix that leaving L0 now would write: its digest, measured
        (a short evicted part makes a short prefix), at most the budget. Why measured: the
        budget is a ceiling for long sessions; pricing every first prefix at the ceiling
        keeps a session at L0 after compressing has begun to pay."""
        if state.layer or not starts or sum(sizes) <= budget.min_raw:
            return PREFIX_TOKENS[1]
        start = window_for(sizes, starts, budget.min_raw)
        summary = _carried(api, conv, start, lead)
        kept, _ = stubs.fit(stubs.digest_lines(api, _evicted(conv, 0, start, lead)), PREFIX_TOKENS[1] * 4 - PART_OVERHEAD)
        chars = sum(len(x) + 1 for x in kept) + PART_OVERHEAD + (len(summary) + 1 if summary else 0)
        return int(chars / 4 * (state.conv_ratio or state.ratio)) + 1

    def _carry_summary(self) -> bool:
        """Whether the prefix keeps a harness's own compaction summary whole (setting
        `carryHarnessSummary`; off: it is digested like any other message)."""
        return bool(getattr(getattr(self.i, "settings", None), "carry_harness_summary", False))

    def _usd_per_hour(self) -> float:
        """The budget throttle's limit (setting `throttleUsdPerHour`; 0: off)."""
        return float(getattr(getattr(self.i, "settings", None), "throttle_usd_per_hour", 0.0) or 0.0)

    @staticmethod
    def _known(state: State, conv: list[Any]) -> int:
        """How many leading items are exactly those of the last call (the history is
        append-only; when the harness rewrote it - its own compaction - none are)."""
        n = state.captured
        if 0 < n <= len(conv) and len(state.sizes) >= n and state.captured_id == b.item_id(n - 1, conv[n - 1]):
            return n - 1  # the last one may have grown (a merged turn): counted again
        return 0

    def _capture(self, session_id: str, api: str, conv: list[Any], known: int, harness: str | None,
                 project: str | None) -> int:
        """The items past the known ones (ids dedupe anything offered twice)."""
        rows = b.capture_rows(api, conv[known:], offset=known)
        if not rows:
            return 0
        return self.i.capture.record_messages(project=project, session_id=session_id, harness=harness or "gateway",
                                              messages=rows)["recorded"]

    @staticmethod
    def _anchor(state: State, p: Plan, conv: list[Any], starts: list[int], sizes: list[int], pinned: int) -> Plan:
        """A window kept from the last call must still start at the same message; if the
        harness rewrote its history, the window is placed again (a planned rebuild)."""
        if p.layer == 0 or p.rebuild or not state.anchor:
            return p
        ok = p.window_start < len(conv) and b.item_id(p.window_start, conv[p.window_start]) == state.anchor
        if ok:
            return p
        return Plan(p.layer, window_for(sizes, starts, pinned), True, REWRITTEN)

    # -- building the body ------------------------------------------------------------------------------
    @staticmethod
    def _last_tail(api: str, state: State, conv: list[Any], known: int) -> int | None:
        """The item whose last block closed the last call's prompt, when more blocks were
        appended after it than the provider looks back from a breakpoint.

        Trigger: a call that appends many blocks (a dozen parallel tool calls and their
        results). Why: the last call wrote its cache entry at its tail; this call's tail
        breakpoint looks back only LOOKBACK blocks for it, and missing it re-writes the whole
        raw window. Outcome: a spare breakpoint goes on that block (None when not needed)."""
        if api != b.ANTHROPIC or known <= 0 or known != state.captured - 1:
            return None
        appended = sum(len(x["content"]) if isinstance(x, dict) and isinstance(x.get("content"), list) else 1
                       for x in conv[state.captured:])
        return known if appended >= LOOKBACK else None

    def _build(self, api: str, body: dict[str, Any], conv: list[Any], p: Plan, state: State,
               session_id: str, last_tail: int | None = None,
               lead: int | None = None) -> tuple[dict[str, Any], list[dict[str, Any]], tuple[str, ...]]:
        mark = b.MARK_1H if state.ttl_1h else b.MARK  # for the system prompt's breakpoint
        if p.layer == 0:
            out, marks = self._l0(api, body, conv, mark, last_tail)
            return out, marks, ()
        start = p.window_start
        head = b.leading_system(api, conv[:start])  # the harness's own instructions stay first, whole
        parts = state.parts if not p.rebuild and state.parts and state.prefix_upto == start else \
            self._parts(api, conv, start, state, p, session_id, lead)
        window = list(conv[start:])
        # "Turns" here are model calls: the last two keep their tool outputs at L2, the
        # last one (in flight) at L3; L4 keeps only the last one.
        calls = [s - start for s in b.cut_points(api, conv) if s >= start]
        protect = calls[-2] if p.layer == 2 and len(calls) >= 2 else (calls[-1] if calls else 0)
        if p.layer >= 4 and calls:
            window = window[calls[-1]:]
            protect = 0
        elif p.layer >= 2:
            window = [b.stub_tool_outputs(api, x, self._stub(session_id)) if k < protect and b.is_tool_output(api, x) else x
                      for k, x in enumerate(window)]
        ack = [b.prefix_ack(api)] if window and b.opens_with_user(api, window[0]) else []
        summary = _carried(api, conv, start, lead)  # the harness's own, whole, ahead of lore's parts
        items = [*head, b.prefix_message(api, [summary, *parts] if summary else list(parts)), *ack, *window] \
            if start > 0 else window
        marks: list[dict[str, Any]] = []
        out = b.with_items(api, body, items)
        if api == b.ANTHROPIC:
            # The breakpoint closes the prefix itself (not the acknowledgement after it): a
            # move appends a part, and the parts before it are read from that entry.
            kept_tail = None
            if last_tail is not None and not p.rebuild and start <= last_tail and p.layer < 2:
                kept_tail = len(items) - (len(conv) - last_tail)  # the window is conv[start:], unchanged at L1
            out, marks = self._marks(out, boundary=len(head) if start > 0 else None, mark=mark, last_tail=kept_tail)
        return out, marks, parts

    def _l0(self, api: str, body: dict[str, Any], conv: list[Any], mark: dict[str, str],
            last_tail: int | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Passthrough; on Anthropic bodies without breakpoints, one on the system prompt
        and one on the last message (the harness's own markers are left as they are)."""
        if api != b.ANTHROPIC or b.count_marks(body) or not conv:
            return body, []
        out = dict(body)
        marks = []
        system = body.get("system")
        if isinstance(system, list) and system and isinstance(system[-1], dict):
            out["system"] = [*system[:-1], {**system[-1], "cache_control": mark}]
            marks.append({"at": "system", "index": len(system) - 1})
        last = b.mark_last_block(conv[-1])
        if last is not conv[-1]:
            out["messages"] = [*conv[:-1], last]
            marks.append({"at": "tail", "index": len(conv) - 1})
            if last_tail is not None and last_tail < len(conv) - 1:
                out["messages"][last_tail] = b.mark_last_block(conv[last_tail])
                marks.append({"at": "last call's tail", "index": last_tail})
        return out, marks

    def _marks(self, out: dict[str, Any], boundary: int | None, mark: dict[str, str],
               last_tail: int | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Message markers replaced by ours: the prefix boundary, the tail, and the last
        call's tail when it is too far back to be found (`_last_tail`); system and tools keep
        theirs; never more than 4 in all (Anthropic's limit)."""
        msgs = [b.strip_marks(m) for m in out["messages"]]
        kept = b.count_marks({k: v for k, v in out.items() if k != "messages"})
        marks = []
        system = out.get("system")
        if not kept and isinstance(system, list) and system and isinstance(system[-1], dict):
            # Trigger: a harness that marks nothing. Why: without a breakpoint of its own the
            # system prompt is cached only as part of the prefix, so every window move would
            # write it again. Outcome: it gets one (as at L0), and a move rewrites only the
            # prefix and the window.
            out = {**out, "system": [*system[:-1], {**system[-1], "cache_control": mark}]}
            marks.append({"at": "system", "index": len(system) - 1})
            kept = 1
        spare = 4 - kept
        if spare > 0 and msgs:
            msgs[-1] = b.mark_last_block(msgs[-1])
            marks.append({"at": "tail", "index": len(msgs) - 1})
            spare -= 1
        if spare > 0 and boundary is not None and boundary < len(msgs) - 1:
            msgs[boundary] = b.mark_last_block(msgs[boundary])
            marks.append({"at": "prefix", "index": boundary})
            spare -= 1
        if spare > 0 and last_tail is not None and (boundary is None or boundary < last_tail) and last_tail < len(msgs) - 1:
            msgs[last_tail] = b.mark_last_block(msgs[last_tail])
            marks.append({"at": "last call's tail", "index": last_tail})
        return {**out, "messages": msgs}, marks

    @staticmethod
    def _stub(session_id: str):
        def stub(text: str) -> str:
            short = annotate_tool_output(text, STUB_CHARS)
            return short if short == text else f"{short}\n(full output kept in memory: lore_recall in session {session_id})"

        return stub

    @staticmethod
    def _parts(api: str, conv: list[Any], start: int, state: State, p: Plan, session_id: str,
               lead: int | None = None) -> tuple[str, ...]:
        """The prefix after a move: the parts sent before, unchanged, and one more for the
        messages this move evicted; when that would pass the prefix budget (or the history
        was rewritten, or the layer changed), one part for everything evicted (a compaction
        of the prefix itself)."""
        room = PREFIX_TOKENS[p.layer] * 4
        upto = state.prefix_upto
        if state.parts and 0 < upto < start and state.layer == p.layer and p.reason != REWRITTEN:
            earlier = "\n".join(state.parts)
            lines = stubs.new_lines(stubs.digest_lines(api, _evicted(conv, upto, start, lead)), earlier)
            kept, left = stubs.fit(lines, room - len(earlier) - PART_OVERHEAD)
            if not left:
                return (*state.parts, stubs.part(session_id, len(state.parts) + 1, upto, start - 1, kept, left))
        kept, left = stubs.fit(stubs.digest_lines(api, _evicted(conv, 0, start, lead)), room - PART_OVERHEAD)
        return (stubs.part(session_id, 1, 0, start - 1, kept, left),)

    @staticmethod
    def _calibrate_conversation(state: State, real: int) -> None:
        """Fold this call's count into the conversation's ratio (calibrate.py): a smaller
        conversation than any before, or another system prompt, measures the share again."""
        conv_raw = state.last_raw_estimate - state.last_fixed_raw
        if state.share_fixed_raw != state.last_fixed_raw or conv_raw < state.share_conv_raw:
            state.share = calibrate.fixed_share(state.last_fixed_raw, conv_raw, real)
            state.share_fixed_raw, state.share_conv_raw = state.last_fixed_raw, conv_raw
        state.conv_ratio = calibrate.conversation_ratio(real, conv_raw, state.share) or state.conv_ratio

    # -- lore/recordUsage -----------------------------------------------------------------------------
    def record_usage(self, *, session_id: str, model: str | None = None, usage: dict[str, Any] | None = None,
                     error: dict[str, Any] | None = None, at: str | None = None) -> dict[str, Any]:
        with self._locks[session_id]:
            state = State.load(self.states.load(session_id))
            calibrated = False
            if usage:
                real = int(usage.get("input_tokens") or 0) + int(usage.get("cache_creation_input_tokens") or 0) + \
                    int(usage.get("cache_read_input_tokens") or 0)
                ratio = real / state.last_raw_estimate if state.last_raw_estimate > 0 else 0.0
                # Trigger: a usage that cannot be this body's (a proxy that rewrites it, a fake
                # server). Why: one absurd number must not shrink every estimate to nothing.
                # Outcome: only plausible ratios (0.4-2.5 tokens per 4 characters) count.
                if real > 0 and RATIO_PLAUSIBLE[0] <= ratio <= RATIO_PLAUSIBLE[1]:
                    state.ratios = (*state.ratios[-4:], ratio)
                    median = sorted(state.ratios)[len(state.ratios) // 2]
                    # Most of the next body is this one (the history only grows): the latest
                    # ratio fits it best, unless it is an outlier against the last five.
                    chosen = ratio if abs(ratio - median) <= 0.25 * median else median
                    state.ratio = chosen
                    state.expect_read = int(state.last_raw_estimate * state.ratio)
                    calibrated = True
                    self._calibrate_conversation(state, real)
                cached = int(usage.get("cache_read_input_tokens") or 0) + int(usage.get("cache_creation_input_tokens") or 0)
                state.uncached_calls = 0 if cached else state.uncached_calls + 1
                if state.uncached_calls >= 3:
                    state.caching = False  # the provider does not cache: no read discount to protect
                read = int(usage.get("cache_read_input_tokens") or 0)
                expected = state.last_expected_read
                state.busts = state.busts + 1 if state.caching and expected > 0 and read < 0.5 * expected else 0
                if state.busts >= 2:
                    state.frozen = True
            if error and any(s in str(error.get("message", "")).lower() for s in TOO_LONG):
                state.force_min_layer = min(4, max(state.layer, state.force_min_layer) + 1)
            self.states.save(session_id, state.dump())
            if usage:
                self.savings.used(session_id, usage=usage, at=when(at), model=model)
        return {"calibrated": calibrated, "forceMinLayer": state.force_min_layer}


def _carried(api: str, conv: list[Any], start: int, lead: int | None) -> str | None:
    """The text of the harness's compaction summary (at `lead`) once the window has moved past it."""
    return b.text_of(api, conv[lead]) if lead is not None and lead < start else None


def _evicted(conv: list[Any], first: int, start: int, lead: int | None) -> list[Any]:
    """conv[first:start] for a digest: less the harness's summary, which the prefix carries whole."""
    return [x for i, x in enumerate(conv[first:start], first) if i != lead]
