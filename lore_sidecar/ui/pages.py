"""The dashboard's pages and actions. Reads and writes are `lore/*` calls through the engine
host (the same handlers as every client); the few views no wire method gives (dream runs,
usage over time, a node's evidence) are engine reads run on the host's executor."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from aiohttp import web

from lore_sidecar.errors import BadParams, LoreError
from lore_sidecar.rpc.calls import bound
from lore_sidecar.sources import ALL_SOURCES
from lore_sidecar.ui import savings as savings_page
from lore_sidecar.ui.html import bars, escape, form, hidden, link, page, table, timeline

SLOW_S = 120.0  # a dream or a first open may take a while; the page waits for it


class Pages:
    def __init__(self, host: Any, token: str):
        self.host = host
        self.token = token

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/", self.search), web.get("/node", self.node), web.post("/node/edit", self.edit),
                web.post("/node/suppress", self.suppress), web.post("/node/forget", self.forget),
                web.post("/retain", self.retain), web.get("/review", self.review), web.get("/dream", self.dream),
                web.post("/dream/run", self.dream_run), web.post("/dream/rollback", self.rollback),
                web.get("/facts", self.facts), web.get("/analytics", self.analytics), web.get("/savings", self.savings),
                web.get("/health", self.health),
                web.get("/status.json", self.status)]

    # -- helpers ---------------------------------------------------------------------------------------
    async def call(self, method: str, params: dict[str, Any], timeout_s: float = SLOW_S) -> dict[str, Any]:
        return await self.host.call(method, params, timeout_s=timeout_s)

    async def engine(self, fn: str, *args: Any) -> Any:
        return await self.host.run(bound(await self.host.engine(), fn), *args)

    def html(self, title: str, body: str, request: web.Request) -> web.Response:
        return web.Response(text=page(title, self.token, body, note=request.query.get("note")), content_type="text/html")

    def back(self, path: str, note: str, **params: Any) -> web.Response:
        raise web.HTTPSeeOther(link(path, self.token, note=note, **params).replace("&amp;", "&"))

    async def form_of(self, request: web.Request) -> dict[str, str]:
        return {k: str(v) for k, v in (await request.post()).items()}

    # -- search and remember ---------------------------------------------------------------------------------
    async def search(self, request: web.Request) -> web.Response:
        q = request.query.get("q", "").strip()
        chosen = [s for s in request.query.getall("source", []) if s in ALL_SOURCES] or list(ALL_SOURCES)
        scope = "all" if request.query.get("scope") == "all" else "project"
        boxes = "".join(f'<label><input type=checkbox name=source value="{s}"{" checked" if s in chosen else ""}> {s}</label> '
                        for s in ALL_SOURCES)
        body = (f'<form method=get action="/" class=card>{hidden(token=self.token) if self.token else ""}'
                f'<input type=text name=q value="{escape(q)}" placeholder="what do agents remember about…" autofocus>'
                f'<p>{boxes} <label><input type=checkbox name=scope value=all{" checked" if scope == "all" else ""}> '
                f'every project</label></p><button type=submit>Search</button></form>')
        if q:
            r = await self.call("lore/recall", {"query": q, "sources": chosen, "scope": scope, "limit": 30})
            rows = [[f'<a class=hit href="{link("/node", self.token, uri=h["uri"])}">{escape(h["uri"])}</a>',
                     escape(h["source"]), escape(h["snippet"][:240])] for h in r["hits"]]
            more = f'<p class=muted>{r["total"]} found, first {len(rows)} shown</p>' if r.get("truncated") else ""
            body += table(["item", "tier", "snippet"], rows, empty="nothing matches") + more
        body += ('<h2>Remember something</h2>' + form("/retain", self.token, '<textarea name=content required></textarea>'
                 '<p><select name=category>' + "".join(f"<option>{c}</option>" for c in
                 ("decision", "pattern", "preference", "architecture", "gotcha")) + '</select></p>', "Remember"))
        return self.html("Search", body, request)

    async def retain(self, request: web.Request) -> web.Response:
        f = await self.form_of(request)
        r = await self.call("lore/retain", {"content": f.get("content", ""), "category": f.get("category") or None,
                                            "harness": "dashboard"})
        self.back("/node", "remembered", uri=r["uri"])

    # -- one node -------------------------------------------------------------------------------------------
    async def node(self, request: web.Request) -> web.Response:
        uri = request.query.get("uri", "")
        got = await self.call("lore/getNode", {"uri": uri})
        meta = got.get("metadata") or {}
        body = f'<div class=card><p class=muted>{escape(got["source"])}</p><pre id=content>{escape(got["content"])}</pre></div>'
        if got["source"] == "knowledge":
            body += await self._knowledge(uri, meta)
        else:
            body += table(["field", "value"], [[escape(k), escape(json.dumps(v))] for k, v in meta.items()])
        return self.html(uri, body, request)

    async def _knowledge(self, uri: str, m: dict[str, Any]) -> str:
        evidence = await self.engine("maintenance.evidence", uri)
        history = (await self.call("lore/nodeHistory", {"uri": uri}))["entries"]
        facts = [["scope", escape(m.get("scope") or "")], ["priority", str(m.get("priority"))],
                 ["category", escape(m.get("category") or "none")], ["expires", escape(m.get("expiresAt") or "never")],
                 ["suppressed", "<b class=bad>yes</b>" if m.get("suppressed") else "no"],
                 ["correction state", "<b class=bad>stale: " + escape(json.dumps(m["stale"])) + "</b>" if m.get("stale")
                  else "current"], ["version", str(m.get("version"))], ["uses", str(m.get("uses"))]]
        ledger = [[escape(e["path"]), f'<code>{escape(str(e["sha256"])[:12])}</code>',
                   '<b class=good>current</b>' if e["current"] else '<b class=bad>changed</b>' if e["exists"]
                   else '<b class=bad>missing</b>'] for e in evidence]
        events = []
        for h in history:
            review = h["node"].get("review")
            why = (f' — <span class=tag>{escape(review.get("runId", ""))}</span> {escape(review.get("reason", ""))}'
                   if review else "")
            events.append([escape(h["at"]), escape(h["action"]), escape(h["runtime"]), f"v{h['version']}{why}",
                           escape(h["node"].get("content", "")[:160])])
        version = m.get("version")
        edit = form("/node/edit", self.token, hidden(uri=uri, version=version) +
                    f'<textarea name=content>{escape(m.get("content") or "")}</textarea><p>priority '
                    f'<input type=number name=priority min=0 max=4 value="{m.get("priority")}"></p>', "Save", name="edit")
        toggle = form("/node/suppress", self.token, hidden(uri=uri, suppressed=0 if m.get("suppressed") else 1),
                      "Unsuppress" if m.get("suppressed") else "Suppress", inline=True, name="suppress")
        forget = form("/node/forget", self.token, hidden(uri=uri), "Forget", inline=True, name="forget")
        return (table(["", ""], facts) + "<h2>Evidence</h2>" + table(["source", "sha256 recorded", "now"], ledger,
                empty="no sources cited") + "<h2>History</h2>" + table(["at", "change", "by", "version", "content"],
                events) + f"<h2>Correct it</h2><div class=card>{edit}<p>{toggle}{forget}</p></div>")

    async def edit(self, request: web.Request) -> web.Response:
        f = await self.form_of(request)
        changes: dict[str, Any] = {"content": f.get("content", "")}
        if f.get("priority", "").isdigit():
            changes["priority"] = int(f["priority"])
        version = int(f["version"]) if f.get("version", "").isdigit() else None
        await self.call("lore/updateNode", {"uri": f.get("uri", ""), **changes, "expectedVersion": version,
                                            "harness": "dashboard"})
        self.back("/node", "saved", uri=f.get("uri"))

    async def suppress(self, request: web.Request) -> web.Response:
        f = await self.form_of(request)
        on = f.get("suppressed") == "1"
        await self.call("lore/updateNode", {"uri": f.get("uri", ""), "suppressed": on, "harness": "dashboard"})
        self.back("/node", "suppressed" if on else "unsuppressed", uri=f.get("uri"))

    async def forget(self, request: web.Request) -> web.Response:
        f = await self.form_of(request)
        await self.call("lore/forget", {"uri": f.get("uri", ""), "reason": "forgotten from the dashboard",
                                        "harness": "dashboard"})
        self.back("/", f"forgot {f.get('uri')}")

    # -- maintenance ------------------------------------------------------------------------------------------
    async def review(self, request: web.Request) -> web.Response:
        r = await self.call("lore/review", {"limit": 200})
        rows = [[f'<a href="{link("/node", self.token, uri=i["uri"])}">{escape(i["uri"])}</a>', f'{i["retrievability"]:.2f}',
                 str(i["priority"]), escape(i["reason"])] for i in r["items"]]
        return self.html("Review", f'<p class=muted>knowledge whose retrievability fell below {r["threshold"]:g}</p>' +
                         table(["node", "retrievability", "priority", "why"], rows, empty="nothing has faded"), request)

    async def dream(self, request: web.Request) -> web.Response:
        runs = await self.engine("maintenance.dream_runs")
        body = ('<div class=card>' + form("/dream/run", self.token, hidden(advisory=1), "Propose (advisory)", inline=True,
                name="propose") + form("/dream/run", self.token, hidden(advisory=0), "Dream now", inline=True, name="apply")
                + '</div>')
        for run in runs:
            before = {a["uri"]: a["before"] for a in run.get("applied") or []}
            rows = []
            for ch in run["changes"]:
                old = before.get(ch["uri"])
                rows.append([escape(ch["action"]), f'<a href="{link("/node", self.token, uri=ch["uri"])}">{escape(ch["uri"])}</a>',
                             escape(ch["reason"]), "applied" if ch["applied"] else "proposed",
                             escape(json.dumps({k: old[k] for k in ("content", "priority", "suppressed")}) if old else "")])
            state = ("rolled back " + run["rolledBackAt"] if run.get("rolledBackAt") else "advisory" if run.get("advisory")
                     else "applied")
            actions = ""
            if run.get("advisory"):
                actions = form("/dream/run", self.token, hidden(advisory=0), "Accept: apply these", inline=True, name="accept")
            elif not run.get("rolledBackAt"):
                actions = form("/dream/rollback", self.token, hidden(runId=run["runId"]), "Roll back", inline=True,
                               name="rollback")
            body += (f'<div class="card run"><h3>{escape(run["runId"])} <span class=muted>{escape(run["at"])}, '
                     f'{escape(run["mode"])}, {escape(state)}</span></h3>{actions}'
                     + table(["change", "node", "why", "state", "before"], rows, empty="nothing to change") + "</div>")
        return self.html("Dream", body, request)

    async def dream_run(self, request: web.Request) -> web.Response:
        f = await self.form_of(request)
        r = await self.call("lore/dream", {"dryRun": f.get("advisory") == "1"})
        self.back("/dream", f"{r['runId']}: {r['applied']} applied, {r['proposed']} proposed")

    async def rollback(self, request: web.Request) -> web.Response:
        f = await self.form_of(request)
        r = await self.call("lore/dreamRollback", {"runId": f.get("runId") or None})
        self.back("/dream", f"rolled back {r['runId']}: {len(r['restored'])} nodes restored")

    # -- facts, usage, health ----------------------------------------------------------------------------------
    async def facts(self, request: web.Request) -> web.Response:
        subject = request.query.get("subject", "").strip()
        r = await self.call("lore/queryFacts", {"history": True, "limit": 200, **({"subject": subject} if subject else {})})
        found = r["facts"]
        subjects = sorted({f["subject"] for f in found})
        pick = "".join(f'<a href="{link("/facts", self.token, subject=s)}">{escape(s)}</a> · ' for s in subjects[:60])
        rows = [[escape(f["subject"]), escape(f["predicate"]), escape(f["object"]), escape(str(f.get("validFrom"))),
                 escape(str(f.get("validUntil"))), escape(f["recordedAt"]), escape(str(f.get("supersededAt")))]
                for f in found]
        body = (f'<p>{pick}</p>' + (timeline(found) if subject else "") +
                table(["subject", "predicate", "object", "valid from", "valid until", "recorded", "superseded"], rows,
                      empty="no facts"))
        return self.html(f"Facts{': ' + subject if subject else ''}", body, request)

    async def analytics(self, request: web.Request) -> web.Response:
        s = await self.engine("maintenance.usage_series", 30)
        return self.html("Usage: recalled vs used", '<p class=muted>leads shown to each runtime per day, and how many '
                         'it opened (last 30 days)</p>' + bars(s["days"], s["runtimes"]), request)

    async def savings(self, request: web.Request) -> web.Response:
        days = int(request.query["days"]) if request.query.get("days", "").isdigit() else 30
        days = min(max(days, 1), 3650)
        report = await self.engine("context.savings.report", days)
        return self.html("Savings: through lore vs L0", savings_page.body(report, days), request)

    async def status(self, request: web.Request) -> web.Response:
        """`lore/status` as JSON, for a script watching the store."""
        return web.json_response(await self.call("lore/status", {}))

    async def health(self, request: web.Request) -> web.Response:
        st = await self.call("lore/status", {})
        e = st.get("election") or {}
        disk, size = await asyncio.to_thread(_disk_and_size, Path(st["storeDir"]))  # a walk: off the loop
        rows = [["role", escape(st["role"])], ["writer pid", escape(str(st.get("writerPid")))],
                ["index lag", f'{st.get("indexLagMs")} ms, vectors {st.get("vectorLag")} behind'],
                ["spool", f'{e.get("spoolPending", 0)} pending, <b{" class=bad" if e.get("spoolQuarantined") else ""}>'
                          f'{e.get("spoolQuarantined", 0)} quarantined</b>'],
                ["counts", escape(json.dumps(st.get("counts")))], ["store", escape(st["storeDir"]) + f" ({size / 1e6:.1f} MB)"],
                ["disk free", f"{disk.free / 1e9:.1f} GB of {disk.total / 1e9:.1f} GB" if disk else "?"],
                ["distiller", escape((st.get("distiller") or {}).get("mode", ""))],
                ["codebase questions", escape((st.get("ask") or {}).get("mode", ""))]]
        return self.html("Health", table(["", ""], rows), request)


def _disk_and_size(store: Path) -> tuple[Any, int]:
    """The store's disk (None if unreadable) and the bytes of its files. Files and folders
    come and go while it counts (a spool file applied, a segment merged, a delta folded, an
    epoch removed): one gone is left out, never an error. Trigger: `rglob` + `stat` made the
    Health page a 500 whenever one went between the listing and the look (about half the
    loads while a folder of the store changed)."""
    try:
        disk = shutil.disk_usage(store)
    except OSError:
        disk = None
    size = 0
    for folder, _, names in os.walk(store):  # a folder gone before it is listed is skipped
        for name in names:
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            size += info.st_size if stat.S_ISREG(info.st_mode) else 0
    return disk, size


@web.middleware
async def errors(request: web.Request, handler) -> web.StreamResponse:
    """A refused or failed call becomes a page saying why (and the status it deserves)."""
    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except BadParams as exc:
        return web.Response(status=400, text="bad input: " + "; ".join(exc.errors))
    except LoreError as exc:
        status = (404 if exc.kind == "notFound" else 409 if exc.kind in ("versionConflict", "nodeExists")
                  else 403 if exc.kind in ("secretFile", "outsideWorkspace") else 400)
        return web.Response(status=status, text=f"{exc.message} [{exc.kind}]")
    except TimeoutError:
        return web.Response(status=503, text="the store did not answer in time (busy, or still opening); try again")
