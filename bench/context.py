"""Context economics on real sessions: each recorded model request replayed through
`lore/assembleContext` over stdio (at its recorded time), priced with a simulated prompt
cache, against the same requests passed through at L0.

    python bench/context.py                    # every session under ../shared/data/transcripts
    python bench/context.py --sessions large-session --probes 20

Per session: cost at L0 and through lore (and the ratio), cache busts (TTL / content /
front), rewritten tokens as a share of input, the layer histogram, the token estimate's
error after calibration, and recall probes (distinctive strings from messages the final
body no longer carries verbatim: each must be in that body or in the top 5 of `lore/recall`
on that session's store). The simulator is engine/context/cache_sim.py: Anthropic's rules
(breakpoints, 20-block lookback, 5-minute TTL renewed on read, or 1 hour for a breakpoint
marked so; write 1.25x, 1-hour write 2x, read 0.1x);
for the Responses API (Codex) OpenAI's automatic prefix caching (no write surcharge).
Prices: Sonnet 4.5, $3 / $15 per MTok, for every Anthropic session; GPT-5 for Codex.
The "true" token count is a tokenizer-shaped count (words, numbers and punctuation; long
words split every 6 characters), different from the assembler's characters/4, so the
calibration through `lore/recordUsage` is exercised.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine, pct, steps, write_result  # noqa: E402
from bench.transcripts import Session, sessions  # noqa: E402
from lore_sidecar.client import StdioClient, sidecar_command  # noqa: E402
from lore_sidecar.engine.capture.messages import render_content  # noqa: E402
from lore_sidecar.engine.context import bodies as b  # noqa: E402
from lore_sidecar.engine.context.cache_sim import CacheSim  # noqa: E402
from lore_sidecar.engine.context.prices import price_of, usd  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "transcripts"
TOKEN = re.compile(r"\w+|[^\w\s]")
IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{11,}\b")
DISTINCT = re.compile(r"_|\d|[a-z][A-Z]")  # an identifier, not an English word (snake, digits, camelCase)
BENCH_PATH = re.compile(r"(?:[\w.-]+/)+[\w.-]+\.[A-Za-z]\w{0,7}\b")
BENCH_ERROR = re.compile(r"\b(?:error|exception|traceback|failed|fatal)\b", re.I)
FLOOR_WINDOW = 20_000  # the floor: system + this much raw window read from cache, no writes
FIXED = {"pi": 1600, "claude-code": 26000, "codex": 10000}  # the prefix the logs leave out (first calls' usage)


def true_tokens(text: str) -> int:
    return sum(max(1, math.ceil(len(t) / 6)) for t in TOKEN.findall(text))


def system_text(tokens: int) -> str:
    line = "You are a careful coding agent working in the user's repository; follow the tools' contracts. "
    return line * max(1, tokens // true_tokens(line))


def blocks(api: str, body: dict[str, Any]) -> tuple[list[tuple[str, int]], list[int], int]:
    """The body as the cache sees it: (hash, true tokens) per block, the breakpoints, and how
    many leading blocks are the system prompt and tools. The breakpoints with a 1-hour TTL
    are also in `long_marks(marks)`."""
    out: list[tuple[str, int]] = []
    marks: list[int] = LongMarks()

    def add(obj: Any) -> None:
        if isinstance(obj, dict) and "cache_control" in obj:
            marks.append(len(out))
            if isinstance(obj["cache_control"], dict) and obj["cache_control"].get("ttl") == "1h":
                marks.long.add(len(out))
        plain = b.strip_marks(obj)
        text = json.dumps(plain, ensure_ascii=False, sort_keys=True)
        out.append((hashlib.sha1(text.encode()).hexdigest(), true_tokens(text)))

    system = body.get("system") or body.get("instructions")
    for block in (system if isinstance(system, list) else [system] if system else []):
        add(block)
    add({"tools": body.get("tools") or []})
    head = len(out)
    for item in b.items(api, body):
        content = item.get("content") if isinstance(item, dict) else None
        if api == b.ANTHROPIC and isinstance(content, list) and content:
            for block in content:
                add(block)
        else:
            add(item)
    if api != b.ANTHROPIC:  # OpenAI: every request's whole prefix is cached automatically
        marks = LongMarks([len(out) - 1])
    return out, marks, head


class LongMarks(list):
    """Breakpoint indices, and which of them carry a 1-hour TTL."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.long: set[int] = set()


def cost(price: Any, o: Any, output: int) -> float:
    return usd(price, uncached=o.uncached, write=o.write - o.write_1h, write_1h=o.write_1h, read=o.read, output=output)


def body_for(s: Session, conversation: list[dict[str, Any]]) -> dict[str, Any]:
    if s.api == b.RESPONSES:
        return {"model": s.model, "instructions": system_text(FIXED[s.harness]), "input": conversation, "stream": True}
    return {"model": s.model, "max_tokens": 32000, "stream": True,
            "system": [{"type": "text", "text": system_text(FIXED[s.harness])}], "messages": conversation}


def l0(s: Session, body: dict[str, Any]) -> dict[str, Any]:
    if s.api != b.ANTHROPIC:
        return body
    out = dict(body)
    out["system"] = [{**body["system"][0], "cache_control": b.MARK}]
    out["messages"] = [*body["messages"][:-1], b.mark_last_block(body["messages"][-1])]
    return out


def replay(s: Session, store: Path, probes: int, options: dict[str, Any] | None = None) -> dict[str, Any]:
    price = price_of("claude-sonnet-4-5" if s.api == b.ANTHROPIC else "gpt-5")
    base, lore = CacheSim(), CacheSim()
    cost0 = cost1 = floor = 0.0
    busts: Counter[str] = Counter()
    layers: Counter[int] = Counter()
    errors: list[float] = []
    took: list[float] = []
    rewritten = total_in = 0
    largest = ttl_1h = 0
    c = StdioClient(sidecar_command("--store-dir", str(store)))
    c.initialize(store.parent, options={"watch": False, "indexWorkspace": False, "distiller": "extractive",
                                        **(options or {})})
    try:
        last_sent: dict[str, Any] = {}
        for n, call in enumerate(steps(s.calls, s.name)):
            body = body_for(s, call.conversation)
            bl, marks, head = blocks(s.api, l0(s, body))
            o = base.request(bl, marks, call.at, head, long=marks.long)
            cost0 += cost(price, o, call.output_tokens)
            fixed_tokens = sum(t for _, t in bl[:head])
            floor += usd(price, uncached=0, write=0, read=fixed_tokens + min(FLOOR_WINDOW, sum(t for _, t in bl[head:])),
                         output=call.output_tokens)
            at = datetime.fromtimestamp(call.at, UTC).isoformat().replace("+00:00", "Z")
            t = time.perf_counter()
            r = c.request("lore/assembleContext", {"sessionId": s.name, "body": body, "api": s.api, "model": s.model,
                                                   "harness": s.harness, "at": at}, timeout=120)
            took.append((time.perf_counter() - t) * 1000)
            last_sent = r["body"]
            bl, marks, head = blocks(s.api, last_sent)
            o = lore.request(bl, marks, call.at, head, long=marks.long)
            cost1 += cost(price, o, call.output_tokens)
            ttl_1h += bool(marks.long)
            truth = o.read + o.write + o.uncached
            if n >= 3:
                errors.append(abs(r["estimate"]["inputTokens"] - truth) / truth)
            layers[r["layer"]] += 1
            if o.bust:
                busts[o.bust] += 1
            kept = max(0, o.diverged_at)
            appended = max(0, truth - kept)
            rewritten += max(0, o.write - appended)
            total_in += truth
            largest = max(largest, truth)
            c.request("lore/recordUsage", {"sessionId": s.name, "model": s.model, "usage": {
                "inputTokens": o.uncached, "cacheCreationInputTokens": o.write, "cacheReadInputTokens": o.read,
                "outputTokens": call.output_tokens}, "at": at})
        probe = run_probes(c, s, last_sent, probes)
        kept = coverage(s, last_sent)
    finally:
        c.close()
    engine_ms = in_process(s, store.parent / "inproc" / "store")
    return {
        "session": s.name, "harness": s.harness, "requests": len(s.calls), "largest_sent_tokens": largest,
        "cost_l0_usd": round(cost0, 2), "cost_lore_usd": round(cost1, 2), "ratio": round(cost1 / cost0, 3), "ratio_exact": cost1 / cost0,
        "floor_ratio": round(floor / cost0, 3), "evicted_kept": kept,
        "busts": dict(busts), "content_busts_per_25": round(25 * (busts["content"] + busts["front"]) / len(s.calls), 2),
        "rewritten_pct_of_input": round(100 * rewritten / max(1, total_in), 2),
        "layers": {str(k): v for k, v in sorted(layers.items())}, "calls_with_1h_breakpoint": ttl_1h,
        "estimate_error_after_3": {"p50": round(statistics.median(errors), 3) if errors else None,
                                   "p95": round(pct(errors, 95), 3) if errors else None},
        "assemble_ms_stdio": {"p50": round(statistics.median(took), 1), "p95": round(pct(took, 95), 1)},
        "assemble_ms_in_process_largest": engine_ms,
        "probes": probe,
    }


def coverage(s: Session, sent: dict[str, Any]) -> dict[str, Any]:
    """The file paths and error lines of what lore evicted (the last call's history, less what
    the body sent carries verbatim) that the body sent still names. The bench's own patterns,
    not the assembler's: a path is dir/name.ext (or a tool's file_path/path argument); an
    error line is a tool output line saying error, exception, traceback, failed or fatal
    (its first 160 characters must be present, the prefix's entity quoting undone). A path
    counts as named whole or as a name on a `files in <dir>/:` line of that directory."""
    final = html.unescape("\n".join(render_content(x.get("content") if isinstance(x, dict) and "content" in x else x)
                                    for x in b.items(s.api, sent)))  # the prefix quotes < > & as entities
    paths: set[str] = set()
    errors: set[str] = set()
    for item in s.calls[-1].conversation:
        text = render_content(item.get("content") if isinstance(item, dict) and "content" in item else item)
        if text and text in final:
            continue  # still sent whole
        for part in (item.get("content") if isinstance(item, dict) and isinstance(item.get("content"), list) else [item]):
            if not isinstance(part, dict):
                continue
            args = part.get("input") if isinstance(part.get("input"), dict) else {}
            paths.update(str(v) for k, v in args.items() if k in ("file_path", "path", "notebook_path") and v)
            body = render_content(part)
            paths.update(BENCH_PATH.findall(body))
            if part.get("type") in ("tool_result", "function_call_output"):
                errors.update(line.strip()[:160] for line in body.splitlines() if BENCH_ERROR.search(line) and line.strip())
    # A path is kept written whole, or by name under its directory (`files in <dir>/: a, b`).
    listed = {f"{m.group(1)}/{name}" for m in re.finditer(r"^files in (.+?)/: (.*)$", final, re.M)
              for name in m.group(2).split(", ")}
    kept_p = sum(p in final or any(p in q for q in listed) for p in paths)  # substrings, as in the text
    kept_e = sum(e in final for e in errors)
    return {"paths": len(paths), "paths_kept": kept_p, "errors": len(errors), "errors_kept": kept_e,
            "share": round((kept_p + kept_e) / max(1, len(paths) + len(errors)), 3)}


def in_process(s: Session, store: Path) -> dict[str, Any]:
    """The assembler's own cost, without the JSON-RPC transfer: the same calls through the
    engine in this process; percentiles over the largest tenth of the bodies."""
    from lore_sidecar.app import open_engine
    from lore_sidecar.settings import load_settings

    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"), init_options={
        "storeDir": str(store), "watch": False, "indexWorkspace": False, "distiller": "off"})
    e = open_engine(settings, [str(store.parent)])
    timed: list[tuple[int, float]] = []
    try:
        for call in s.calls:
            body = body_for(s, call.conversation)
            at = datetime.fromtimestamp(call.at, UTC).isoformat().replace("+00:00", "Z")
            t = time.perf_counter()
            e.context.assemble(session_id=s.name, body=body, api=s.api, model=s.model, harness=s.harness, at=at)
            timed.append((len(json.dumps(body)) // 4, (time.perf_counter() - t) * 1000))
    finally:
        e.close()
    timed.sort()
    top = [ms for _, ms in timed[-max(1, len(timed) // 10):]]
    return {"largest_body_tokens": timed[-1][0], "p50_ms": round(statistics.median(top), 1),
            "p95_ms": round(pct(top, 95), 1)}


def settled(c: StdioClient, timeout: float = 300) -> None:
    """Wait until every captured message is searchable by its words and its meaning: the
    index follows the record asynchronously, and a probe asked the moment the replay ends,
    on a loaded machine, measured the lag instead of recall (one miss in 25, once)."""
    deadline = time.monotonic() + timeout
    while True:
        st = c.request("lore/status", {})
        if st["indexLagMs"] == 0 and st["vectorLag"] == 0:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"the index did not catch up within {timeout:.0f} s: {st['indexLagMs']=}, {st['vectorLag']=}")
        time.sleep(0.2)


def run_probes(c: StdioClient, s: Session, sent: dict[str, Any], want: int) -> dict[str, Any]:
    """Distinctive identifiers from messages the final body no longer carries verbatim."""
    final = json.dumps(sent, ensure_ascii=False)
    counts: Counter[str] = Counter()
    seen: set[str] = set()
    for call in s.calls:  # every block the session ever sent (a harness's own compaction drops some)
        for item in call.conversation:
            content = item.get("content") if isinstance(item, dict) else None
            for part in (content if isinstance(content, list) else [item]):
                text = render_content(part)  # the words as written (not JSON-escaped)
                if text not in seen:
                    seen.add(text)
                    counts.update(set(IDENT.findall(text)))
    unique = [w for w, k in counts.items() if k == 1 and not w.isupper() and DISTINCT.search(w)]
    gone = [w for w in unique if w not in final]  # evicted or stubbed: recall must find these
    step = max(1, len(gone) // max(1, want))
    chosen = gone[::step][:want]
    if len(chosen) < want:  # a session that never left L0 keeps everything: probe what it kept
        kept = [w for w in unique if w in final]
        chosen += kept[:: max(1, len(kept) // max(1, want - len(chosen)))][: want - len(chosen)]
    settled(c)
    found = 0
    missed = []
    for word in chosen:
        if word in final:
            found += 1
            continue
        hits = c.request("lore/recall", {"query": word, "sources": ["messages"], "limit": 5})["hits"]
        if any(word in h["snippet"] or word in c.request("lore/getNode", {"uri": h["uri"]})["content"] for h in hits):
            found += 1
        else:
            missed.append(word)
    return {"asked": len(chosen), "evicted": min(len(gone), len(chosen)), "answered": found,
            "share": round(found / max(1, len(chosen)), 3), "missed": missed}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--sessions", help="comma-separated names (default: all)")
    ap.add_argument("--probes", type=int, default=25)
    ap.add_argument("--limit", type=int, help="only the first N requests of each session (smoke runs)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "context.json"))
    ap.add_argument("--options", type=json.loads, default={},
                    help='settings for the sidecar, as JSON (e.g. \'{"carryHarnessSummary": true}\')')
    args = ap.parse_args()
    chosen = sessions(Path(args.data))
    if args.sessions:
        chosen = [s for s in chosen if s.name in args.sessions.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="lore-bench-context-"))
    rows = []
    try:
        for s in chosen:
            if args.limit:
                s.calls = s.calls[: args.limit]
            row = replay(s, tmp / s.name / "store", args.probes, args.options)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result = {"machine": machine(), "options": args.options, "sessions": rows}
    write_result(args.out, result)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
