"""Who may talk to the dashboard: only pages it served itself, on this machine, this launch.

- the token: a per-launch secret in every URL (`?token=`) or form (`token`), compared in
  constant time; without it, 401;
- the Host header must name the loopback address and port it listens on (a page on a DNS
  name rebound to 127.0.0.1 sends its own name): 421 otherwise;
- an `Origin` header, or `Sec-Fetch-Site: cross-site`, from anywhere but this origin: 403 —
  a page on another site cannot post a form here even if it learnt the token;
- no CORS headers, ever; every answer says `no-store`, `nosniff`, frame-ancestors 'none' and
  a referrer only to itself (the token is in the URL: it must not leak to another site; "no-referrer"
  would make the browser send `Origin: null` on its own forms).
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin",
           "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
                                      "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"}


def guard(token: str, port_of: Callable[[], int]) -> Callable:
    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        port = port_of()
        hosts = {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
        if request.host not in hosts:
            return refuse(421, "this dashboard answers only at its loopback address")
        origin = request.headers.get("Origin")
        if origin is not None and origin not in {f"http://{h}" for h in hosts}:
            return refuse(403, "a page on another origin may not use this dashboard")
        if request.headers.get("Sec-Fetch-Site") == "cross-site":
            return refuse(403, "a page on another site may not use this dashboard")
        given = request.query.get("token", "")
        if not given and request.method == "POST":
            given = str((await request.post()).get("token", ""))
        if not secrets.compare_digest(given.encode(), token.encode()):
            return refuse(401, "the token is missing or wrong: open the URL lore-sidecar ui printed")
        try:
            response = await handler(request)
        except web.HTTPException as exc:  # a redirect after a form, or a 404
            exc.headers.update(HEADERS)
            raise
        response.headers.update(HEADERS)
        return response

    return check


def refuse(status: int, why: str) -> web.Response:
    return web.Response(status=status, text=why + "\n", headers=HEADERS)
