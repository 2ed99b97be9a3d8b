"""`lore-sidecar ui [--port N] [--no-browser]`: serve the dashboard on 127.0.0.1 until stopped.
The first line on stdout is its URL with this launch's token; nothing answers without it (or
the session cookie the browser gets for a one-time launch code: ui/guard.py)."""

from __future__ import annotations

import asyncio
import logging
import secrets
import signal
import threading
import webbrowser
from pathlib import Path

from aiohttp import web

from lore_sidecar import logs
from lore_sidecar.ui.guard import Access

log = logging.getLogger(__name__)


def app(host, access, port_of) -> web.Application:
    """`access`: the launch's secrets (guard.Access). Pages link without the token: a browser
    holds the session cookie, a script passes `?token=` on each request."""
    from lore_sidecar.ui.guard import guard, stamp
    from lore_sidecar.ui.pages import Pages, errors

    application = web.Application(middlewares=[guard(access, port_of), errors], client_max_size=4 << 20)
    application.on_response_prepare.append(stamp)
    application.add_routes(Pages(host, "").routes())
    return application


def open_browser_at(url: str) -> None:
    """Runs on a thread: a BROWSER command that waits for its window would otherwise hold the
    event loop, and the page it opens would never be answered."""
    try:
        webbrowser.open(url)
    except Exception as exc:  # no browser is not a reason to stop serving
        log.warning("could not open a browser: %s", exc)


def run_ui(store_dir: str | None, workspace: str, port: int, open_browser: bool, *, cli_chose_logging: bool) -> int:
    from lore_sidecar.app import open_engine
    from lore_sidecar.engine_host import Host
    from lore_sidecar.settings import load_settings

    settings, warnings = load_settings(workspace_root=Path(workspace), cli={"storeDir": store_dir} if store_dir else {})
    logs.apply_settings(settings, cli_chose=cli_chose_logging)
    for w in warnings:
        log.warning("settings: %s", w)
    host = Host(settings, [workspace], open_engine, warnings)
    access = Access(secrets.token_urlsafe(24))
    bound = {"port": 0}

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        runner = web.AppRunner(app(host, access, lambda: bound["port"]), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", port)
        await site.start()
        bound["port"] = site._server.sockets[0].getsockname()[1]  # aiohttp does not expose the chosen port otherwise
        base = f"http://127.0.0.1:{bound['port']}"
        print(f"{base}/?token={access.token}", flush=True)  # stdout: only the user who ran us reads it
        if open_browser:
            # The browser's command line is readable by every local user (/proc/<pid>/cmdline):
            # it gets a one-time launch code, never the token.
            # A daemon thread: a browser command that waits for its window must not hold the
            # process past SIGTERM either (the loop's executor would be joined at exit).
            threading.Thread(target=open_browser_at, args=(f"{base}/launch?code={access.launch_code()}",),
                             name="open-browser", daemon=True).start()
        try:
            await stop.wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(main())
    finally:
        host.close()
    return 0
