"""`lore-sidecar savings [--days N] [--sessions] [--calls] [--json]`: what context assembly sent,
what the harness's own bodies (L0) would have cost, what it saved, per day or per session,
and whether the figures are the provider's ("reported") or the assembler's ("estimated").

It reads the store's call ledger directly (store/context_ledger.py): no engine is opened, so
it answers at once beside running sidecars and gateways. Also the summary line of
`lore-sidecar status`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from lore_sidecar.engine.context.savings import REASONS, Savings, totals
from lore_sidecar.terminal import interactive, table


def money(v: float | None) -> str:
    if v is None:
        return ""
    return f"-${-v:,.4f}" if v < 0 else f"${v:,.4f}"


def tokens(n: int) -> str:
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e3 else str(n)


def source(t: dict[str, Any]) -> str:
    """Which figures these are: the provider's, the estimate, or some of each (with counts)."""
    if t["source"] == "mixed":
        return f"mixed ({t['reportedCalls']} reported, {t['estimatedCalls']} estimated)"
    return t["source"]


def busts(t: dict[str, Any]) -> str:
    return ", ".join(f"{n} {why}" for why, n in sorted(t["bustReasons"].items())) if t["busts"] else "0"


def ratio(v: float | None) -> str:
    return "" if v is None else f"{v:.2f}x"


def share(v: float | None) -> str:
    return "" if v is None else f"{100 * v:.0f}%"


def row(label: str, t: dict[str, Any]) -> list[str]:
    return [label, str(t["calls"]), tokens(t["sentTokens"]), tokens(t["l0Tokens"]), money(t["usd"]), money(t["l0Usd"]),
            money(t["savedUsd"]), ratio(t["ratio"]), share(t["cacheHitRatio"]), busts(t), source(t)]


COLUMNS = ("calls", "sent", "L0 sent", "cost", "L0 cost", "saved", "x L0", "cache hits", "busts", "figures")


def summary(t: dict[str, Any]) -> str:
    """One line: `lore-sidecar status`'s savings row."""
    if not t["calls"]:
        return "no model calls assembled yet"
    return (f"{money(t['usd'])} sent vs {money(t['l0Usd'])} at L0: {money(t['savedUsd'])} saved ({ratio(t['ratio'])}), "
            f"{t['calls']} calls, cache hits {share(t['cacheHitRatio'])}, busts {busts(t)}; {source(t)}")


def print_report(r: dict[str, Any], *, by_session: bool, calls: list[dict[str, Any]] | None) -> None:
    if calls is not None:
        table("lore-sidecar savings: each call", ("at", "session", "layer", "sent", "L0 sent", "cost", "L0 cost", "saved",
                                                   "busts", "figures"),
              [[c["at"], c["sessionId"], c["layer"], tokens(c["sentTokens"]), tokens(c["l0Tokens"]), money(c["usd"]),
                money(c["l0Usd"]), money(c["savedUsd"]), c["bust"], c["source"]] for c in calls])
    elif by_session:
        table("lore-sidecar savings per session", ("session", "harness", "model", "last call", *COLUMNS),
              [[*row(s["sessionId"], s)[:1], s["harness"] or "", s["model"] or "", s["lastAt"], *row("", s)[1:]]
               for s in r["sessions"]])
    else:
        table("lore-sidecar savings per day", ("day", *COLUMNS), [row(d["day"], d) for d in r["days"]])
    print(f"all: {summary(r['total'])}")
    seen = sorted({why for t in (r["days"] or [r["total"]]) for why in t["bustReasons"]})
    for why in seen:
        print(f"  bust {why}: {REASONS.get(why, why)}")
    print("figures: reported = the provider's usage as the gateway (or lore/recordUsage) saw it; estimated = the "
          "assembler's estimate; L0 = the harness's own body as it came (estimated above layer 0)")


def run_savings(args: argparse.Namespace) -> int:
    from lore_sidecar.settings import load_settings
    from lore_sidecar.store.context_ledger import store_ledger

    settings, warnings = load_settings(workspace_root=Path(args.workspace).resolve(),
                                       cli={"storeDir": args.store_dir} if args.store_dir else {})
    for w in warnings:
        print(f"lore-sidecar: settings: {w}", file=sys.stderr)
    savings = Savings(store_ledger(Path(settings.store_dir)))
    report = savings.report(args.days)
    calls = savings.calls(args.days, session_id=args.session) if args.calls else None
    if args.session:  # one session's calls, over the same days
        report["sessions"] = [s for s in report["sessions"] if s["sessionId"] == args.session]
        report["total"] = totals(savings.calls(args.days, session_id=args.session))
    if not interactive(args.json):
        print(json.dumps({**report, **({"calls": calls} if calls is not None else {})}, indent=2))
        return 0
    print_report(report, by_session=args.sessions or bool(args.session), calls=calls)
    return 0
