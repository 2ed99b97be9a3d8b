"""`lore-sidecar ui [--port N] [--no-browser]`: serve the dashboard on 127.0.0.1 until stopped.
The first line on stdout is its URL with this launch's token; nothing answers without it."""

from __future__ import annotations

import asyncio
import logging
import secrets
import signal
import webbrowser
from pathlib import Path

from aiohttp import web

from lore_sidecar import logs

log = logging.getLogger(__name__)


def app(host, token: str, port_of) -> web.Application:
    from lore_sidecar.ui.guard import guard
    from lore_sidecar.ui.pages import Pages, errors

    application = web.Application(middlewares=[guard(token, port_of), errors], client_max_size=4 << 20)
    application.add_routes(Pages(host, token).routes())
    return application


def run_ui(store_dir: str | None, workspace: str, port: int, open_browser: bool, *, cli_chose_logging: bool) -> int:
    from lore_sidecar.app import open_engine
    from lore_sidecar.engine_host import Host
    from lore_sidecar.settings import load_settings

    settings, warnings = load_settings(workspace_root=Path(workspace), cli={"storeDir": store_dir} if store_dir else {})
    logs.apply_settings(settings, cli_chose=cli_chose_logging)
    for w in warnings:
        log.warning("settings: %s", w)
    host = Host(settings, [workspace], open_engine, warnings)
    token = secrets.token_urlsafe(24)
    bound = {"port": 0}

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        runner = web.AppRunner(app(host, token, lambda: bound["port"]), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", port)
        await site.start()
        bound["port"] = site._server.sockets[0].getsockname()[1]  # aiohttp does not expose the chosen port otherwise
        url = f"http://127.0.0.1:{bound['port']}/?token={token}"
        print(url, flush=True)
        if open_browser:
            webbrowser.open(url)
        try:
            await stop.wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(main())
    finally:
        host.close()
    return 0
