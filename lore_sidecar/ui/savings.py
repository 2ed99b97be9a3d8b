"""The dashboard's Savings page: per day, what the model calls cost through context assembly
against what the harness's own bodies (L0) would have cost, as an inline SVG chart (no
script, nothing fetched: the page passes guard.py's CSP), then the days and the sessions as
tables, each saying whether its figures are the provider's ("reported") or the estimate."""

from __future__ import annotations

from typing import Any

from lore_sidecar.engine.context.savings import REASONS
from lore_sidecar.savings_table import busts, money, ratio, share, source, summary, tokens
from lore_sidecar.ui.html import escape, table

L0_COLOUR, SENT_COLOUR = "#c9d3df", "#1b7f3b"


def chart(days: list[dict[str, Any]]) -> str:
    """Two bars a day, oldest on the left: L0's cost and the cost through lore."""
    if not days:
        return '<p class=muted>no model calls assembled yet: run an agent through the gateway (lore-sidecar run claude)</p>'
    days = sorted(days, key=lambda d: d["day"])
    top = max([*(d["l0Usd"] for d in days), *(d["usd"] for d in days), 1e-9])
    w, h, gap, left = 34, 160, 14, 64
    width = left + len(days) * (2 * w + gap) + 10
    parts = [f'<svg class=chart role=img aria-label="cost per day: L0 against through lore" width="{width}" '
             f'height="{h + 46}" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="0" y="18" font-size="11">{escape(money(top))}</text>',
             f'<line x1="{left - 4}" y1="{h + 10}" x2="{width}" y2="{h + 10}" stroke="#6b7482"/>']
    for i, d in enumerate(days):
        x = left + i * (2 * w + gap)
        for j, (kind, value, colour) in enumerate((("l0", d["l0Usd"], L0_COLOUR), ("sent", d["usd"], SENT_COLOUR))):
            bh = round(h * value / top)
            label = "at L0" if kind == "l0" else "through lore"
            parts.append(f'<rect class="bar {kind}" x="{x + j * w}" y="{h + 10 - bh}" width="{w - 2}" height="{bh}" '
                         f'fill="{colour}"><title>{escape(d["day"])} {label}: {escape(money(value))} '
                         f'({escape(d["source"])})</title></rect>')
        parts.append(f'<text x="{x}" y="{h + 26}" font-size="10">{escape(d["day"][5:])}</text>')
        parts.append(f'<text class=saved x="{x}" y="{h + 40}" font-size="10" fill="#1b7f3b">'
                     f'{escape(money(d["savedUsd"]))}</text>')
    parts.append("</svg>")
    return ('<div class=card>' + "".join(parts) + f'<p class=muted><span class=tag style="background:{L0_COLOUR}">'
            f'L0: the harness\'s own bodies</span> <span class=tag style="background:{SENT_COLOUR};color:#fff">'
            'through lore</span> (saved under each day)</p></div>')


def cells(t: dict[str, Any]) -> list[str]:
    return [str(t["calls"]), tokens(t["sentTokens"]), tokens(t["l0Tokens"]), money(t["usd"]), money(t["l0Usd"]),
            f'<b class={"good" if t["savedUsd"] >= 0 else "bad"}>{escape(money(t["savedUsd"]))}</b>',
            ratio(t["ratio"]), share(t["cacheHitRatio"]), escape(busts(t)), f'<span class=tag>{escape(source(t))}</span>']


HEAD = ["calls", "sent", "L0 sent", "cost", "L0 cost", "saved", "x L0", "cache hits", "busts", "figures"]


def body(report: dict[str, Any], days: int) -> str:
    total = report["total"]
    reasons = sorted({why for d in report["days"] for why in d["bustReasons"]})
    legend = "".join(f"<li><b>{escape(why)}</b>: {escape(REASONS.get(why, why))}</li>" for why in reasons)
    return (f'<div class="card" id=summary><p><b>Last {days} days:</b> {escape(summary(total))}</p>'
            '<p class=muted>reported: the provider\'s usage, as the gateway saw it (or lore/recordUsage); estimated: '
            'the assembler\'s estimate, where no usage came back. L0 is what the harness\'s own body would have cost '
            '(the call\'s own figures at layer 0, estimated above it).</p></div>'
            + chart(report["days"]) + "<h2>Per day</h2>"
            + table(["day", *HEAD], [[escape(d["day"]), *cells(d)] for d in report["days"]], empty="no calls")
            + "<h2>Per session</h2>"
            + table(["session", "harness", "last call", *HEAD],
                    [[f'<code>{escape(s["sessionId"])}</code>', escape(s["harness"] or ""), escape(s["lastAt"]), *cells(s)]
                     for s in report["sessions"]], empty="no sessions")
            + (f"<h2>Busts</h2><ul>{legend}</ul>" if legend else ""))
