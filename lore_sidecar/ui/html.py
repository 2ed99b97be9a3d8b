"""HTML for the dashboard: one layout, escaping everywhere (stored text is data), and the
charts drawn as inline SVG on the server."""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Any
from urllib.parse import urlencode

NAV = (("/", "Search"), ("/review", "Review"), ("/dream", "Dream"), ("/facts", "Facts"), ("/analytics", "Usage"),
       ("/savings", "Savings"),
       ("/health", "Health"))
STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
header{background:#1d2430;color:#fff;padding:.6em 1.2em;display:flex;gap:1.2em;align-items:center}
header a{color:#cfe3ff;text-decoration:none} header b{margin-right:1em}
main{padding:1em 1.4em;max-width:1100px}
table{border-collapse:collapse;width:100%;background:#fff} td,th{border-bottom:1px solid #e3e6ea;padding:.35em .5em;
text-align:left;vertical-align:top} th{background:#eef1f5}
.card{background:#fff;border:1px solid #e3e6ea;border-radius:6px;padding:.8em 1em;margin:.8em 0}
.muted{color:#6b7482} .bad{color:#b3261e} .good{color:#1b7f3b} .tag{background:#eef1f5;border-radius:4px;padding:0 .4em}
pre{white-space:pre-wrap;background:#f3f4f6;padding:.6em;border-radius:4px}
input[type=text],textarea{width:100%;box-sizing:border-box;font:inherit} textarea{min-height:7em}
button{font:inherit;padding:.25em .9em;margin-right:.4em}
form.inline{display:inline}
"""


def link(path: str, token: str, **params: Any) -> str:
    """A link inside the dashboard; with no token (the browser holds the session cookie) the
    URL carries none."""
    query = {k: v for k, v in params.items() if v not in (None, "")}
    if token:
        query["token"] = token
    return escape(f"{path}?{urlencode(query)}" if query else path)


def page(title: str, token: str, body: str, *, note: str | None = None) -> str:
    nav = "".join(f'<a href="{link(path, token)}">{escape(name)}</a>' for path, name in NAV)
    flash = f'<div class="card" id="note">{escape(note)}</div>' if note else ""
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)} · lore</title>"
            f"<meta name=viewport content='width=device-width,initial-scale=1'><style>{STYLE}</style></head>"
            f"<body><header><b>lore</b>{nav}</header><main><h1>{escape(title)}</h1>{flash}{body}</main></body></html>")


def form(action: str, token: str, fields: str, button: str, *, inline: bool = False, name: str = "") -> str:
    return (f'<form method=post action="{escape(action)}"{" class=inline" if inline else ""}'
            f'{f" name={escape(name)}" if name else ""}>'
            f'{hidden(token=token) if token else ""}{fields}<button type=submit>{escape(button)}</button></form>')


def hidden(**values: Any) -> str:
    return "".join(f'<input type=hidden name="{escape(k)}" value="{escape(str(v))}">' for k, v in values.items())


def table(headers: list[str], rows: list[list[str]], *, empty: str = "nothing here") -> str:
    if not rows:
        return f'<p class=muted>{escape(empty)}</p>'
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def bars(days: list[str], series: dict[str, dict[str, list[int]]]) -> str:
    """Recalled vs used per runtime, one group of bars per day (SVG, no script)."""
    if not days:
        return '<p class=muted>no recalls logged yet</p>'
    out = []
    for runtime, s in sorted(series.items()):
        top = max([*s["recalled"], *s["used"], 1])
        w, h, gap = 36, 140, 10
        width = len(days) * (w + gap) + 60
        parts = [f'<svg class=chart role=img aria-label="recalled and used per day for {escape(runtime)}" '
                 f'width="{width}" height="{h + 40}" xmlns="http://www.w3.org/2000/svg">']
        for i, day in enumerate(days):
            x = 40 + i * (w + gap)
            for j, (kind, colour) in enumerate((("recalled", "#8fb3e8"), ("used", "#1b7f3b"))):
                v = s[kind][i]
                bh = round(h * v / top)
                parts.append(f'<rect class="bar {kind}" x="{x + j * w // 2}" y="{h - bh + 10}" width="{w // 2 - 2}" '
                             f'height="{bh}" fill="{colour}"><title>{escape(day)} {kind}: {v}</title></rect>')
            parts.append(f'<text x="{x}" y="{h + 28}" font-size="10">{escape(day[5:])}</text>')
        parts.append(f'<text x="0" y="20" font-size="11">{top}</text></svg>')
        total_r, total_u = sum(s["recalled"]), sum(s["used"])
        out.append(f'<div class=card><h3>{escape(runtime)} <span class=muted>recalled {total_r}, used {total_u}'
                   f'{f" ({100 * total_u / total_r:.0f}%)" if total_r else ""}</span></h3>{"".join(parts)}'
                   f'<p class=muted><span class=tag style="background:#8fb3e8">recalled</span> '
                   f'<span class=tag style="background:#1b7f3b;color:#fff">used</span></p></div>')
    return "".join(out)


def timeline(facts: list[dict[str, Any]]) -> str:
    """Each fact as two bars: when it was true (valid time) and when it was believed (record time)."""
    if not facts:
        return '<p class=muted>no facts</p>'

    def t(iso: str | None, default: float) -> float:
        if not iso:
            return default
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()

    now = datetime.now().timestamp()
    starts = [t(f.get("validFrom"), t(f["recordedAt"], now)) for f in facts] + [t(f["recordedAt"], now) for f in facts]
    lo, hi = min(starts), now
    span = max(hi - lo, 1.0)
    width, row = 760, 46

    def x(v: float) -> float:
        return 220 + (width - 240) * (v - lo) / span

    parts = [f'<svg class=chart role=img aria-label="facts: valid time and record time" width="{width}" '
             f'height="{row * len(facts) + 20}" xmlns="http://www.w3.org/2000/svg">']
    for i, f in enumerate(facts):
        y = 10 + i * row
        v0, v1 = t(f.get("validFrom"), lo), t(f.get("validUntil"), hi)
        r0, r1 = t(f["recordedAt"], lo), t(f.get("supersededAt"), hi)
        label = f"{f['predicate']} {f['object']}"
        parts.append(f'<text x="0" y="{y + 14}" font-size="12">{escape(label[:32])}</text>')
        parts.append(f'<rect class="valid" x="{x(v0):.1f}" y="{y}" width="{max(2, x(v1) - x(v0)):.1f}" height="14" '
                     f'fill="#1b7f3b"><title>true {escape(str(f.get("validFrom")))} - {escape(str(f.get("validUntil")))}</title></rect>')
        parts.append(f'<rect class="recorded" x="{x(r0):.1f}" y="{y + 18}" width="{max(2, x(r1) - x(r0)):.1f}" '
                     f'height="10" fill="#8fb3e8"><title>believed {escape(f["recordedAt"])} - '
                     f'{escape(str(f.get("supersededAt")))}</title></rect>')
    parts.append("</svg>")
    return ('<div class=card>' + "".join(parts) + '<p class=muted><span class=tag style="background:#1b7f3b;color:#fff">'
            'valid time</span> <span class=tag style="background:#8fb3e8">record time</span></p></div>')
