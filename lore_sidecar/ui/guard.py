"""Who may talk to the dashboard: only pages it served itself, on this machine, this launch.

- the token: a per-launch secret, printed once on stdout in `http://127.0.0.1:PORT/?token=…`
  (scripts pass it as `?token=` or a form field `token`), compared in constant time;
- the browser never sees it in a command line: `lore-sidecar ui` opens
  `/launch?code=…` with a one-time launch code (single use, valid LAUNCH_TTL_S), which
  is exchanged for an HttpOnly, SameSite=Strict session cookie and a redirect to a clean
  `/`. Any answer to a request carrying the token sets the same cookie, so the printed URL
  opened by hand logs in too;
- only this server's own user: a connection the kernel says belongs to another local user
  is refused (403) whatever it carries;
- without the token or the cookie, 401;
- the Host header must name the loopback address and port it listens on (a page on a DNS
  name rebound to 127.0.0.1 sends its own name): 421 otherwise;
- an `Origin` header, or `Sec-Fetch-Site: cross-site` or `same-site` (a page on another port
  of this machine), from anywhere but this origin: 403 — a page elsewhere can neither post a
  form here, even if it learnt the token, nor make the browser GET a page with its cookie. With
  `Referrer-Policy: no-referrer` a browser sends `Origin: null` on the dashboard's own forms;
  `null` passes only beside `Sec-Fetch-Site: same-origin`;
- no CORS headers, ever; every answer (pages, JSON, errors, redirects, refusals) carries
  HEADERS: no-store, nosniff, no-referrer, DENY / frame-ancestors 'none'.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlencode, urlsplit

from aiohttp import web

from lore_sidecar.ui import peers

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "X-Frame-Options": "DENY",
           "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
                                      "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"}
LAUNCH_TTL_S = 60.0
AUTH = "lore_ui_auth"  # request key: how the request got in, "token" or "cookie"


class Access:
    """This launch's secrets: the printed token, the session cookie's value, launch codes."""

    def __init__(self, token: str, *, clock: Callable[[], float] = time.monotonic):
        self.token = token
        self.session = secrets.token_urlsafe(32)
        self.clock = clock
        self._codes: dict[str, float] = {}

    def launch_code(self) -> str:
        code = secrets.token_urlsafe(24)
        self._codes[code] = self.clock() + LAUNCH_TTL_S
        return code

    def redeem(self, code: str) -> bool:
        """Single use: a code is gone once tried with success, and worthless after its time."""
        now = self.clock()
        for known, until in list(self._codes.items()):
            if until < now:
                del self._codes[known]
        match = next((k for k in self._codes if secrets.compare_digest(k.encode(), code.encode())), None)
        if match is None:
            return False
        del self._codes[match]
        return True

    def cookie_name(self, port: int) -> str:
        return f"lore_ui_{port}"  # cookies ignore ports: two dashboards must not clobber each other's


def guard(access: Access, port_of: Callable[[], int]) -> Callable:
    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        port = port_of()
        hosts = {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
        if request.host not in hosts:
            return refuse(421, "this dashboard answers only at its loopback address")
        origin = request.headers.get("Origin")
        fetch_site = request.headers.get("Sec-Fetch-Site")
        if origin is not None and origin not in {f"http://{h}" for h in hosts} and not (
                origin == "null" and fetch_site == "same-origin"):
            return refuse(403, "a page on another origin may not use this dashboard")
        if fetch_site in ("cross-site", "same-site"):
            # same-site: a page on another port of this machine, which the browser hands the
            # SameSite=Strict cookie all the same.
            return refuse(403, "a page on another site may not use this dashboard")
        if not peers.same_user(request):
            return refuse(403, "this dashboard answers only the user who started lore-sidecar ui")
        if request.path == "/launch":
            return launch(request, access, port)
        auth = await _authenticated(request, access, port)
        if auth is None:
            return refuse(401, "the token is missing or wrong: open the URL lore-sidecar ui printed")
        request[AUTH] = auth
        try:
            response = await handler(request)
        except web.HTTPRedirection as exc:
            if auth == "token":  # a script without cookies follows the redirect with its token
                exc.headers["Location"] = _with_token(exc.headers.get("Location", "/"), access.token)
            _finish(exc, access, port, auth)
            raise
        except web.HTTPException as exc:  # a 404, a 405
            _finish(exc, access, port, auth)
            raise
        _finish(response, access, port, auth)
        return response

    return check


async def _authenticated(request: web.Request, access: Access, port: int) -> str | None:
    cookie = request.cookies.get(access.cookie_name(port), "")
    if cookie and secrets.compare_digest(cookie.encode(), access.session.encode()):
        return "cookie"
    given = request.query.get("token", "")
    if not given and request.method == "POST":
        given = str((await request.post()).get("token", ""))
    if given and secrets.compare_digest(given.encode(), access.token.encode()):
        return "token"
    return None


def launch(request: web.Request, access: Access, port: int) -> web.StreamResponse:
    """`/launch?code=…`: the browser's way in (another local user who read the code from the
    browser's command line was refused above, where the kernel names the peer: peers.py)."""
    code = request.query.get("code", "")
    if request.method != "GET" or not code or not access.redeem(code):
        return refuse(401, "this launch link was used already or has expired: open the URL lore-sidecar ui printed")
    response = web.HTTPSeeOther("/")
    _finish(response, access, port, "code")
    return response


def _finish(response: web.StreamResponse, access: Access, port: int, auth: str) -> None:
    response.headers.update(HEADERS)
    if auth in ("token", "code"):
        response.set_cookie(access.cookie_name(port), access.session, path="/", httponly=True, samesite="Strict")


def _with_token(location: str, token: str) -> str:
    parts = urlsplit(location)
    query = (parts.query + "&" if parts.query else "") + urlencode({"token": token})
    return f"{parts.path or '/'}?{query}"


def refuse(status: int, why: str) -> web.Response:
    return web.Response(status=status, text=why + "\n", headers=HEADERS)


async def stamp(request: web.Request, response: web.StreamResponse) -> None:
    """on_response_prepare: whatever answers (aiohttp's own 500 or 413 included) carries HEADERS."""
    for k, v in HEADERS.items():
        response.headers.setdefault(k, v)
