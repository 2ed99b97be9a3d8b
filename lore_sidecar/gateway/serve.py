"""`lore-sidecar gateway [--host 127.0.0.1] [--port N] [--upstream URL]`: serve until stopped.
The first line on stdout is the address it listens on; `<store>/gateway.json` says so too,
for `lore-sidecar run`."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

from lore_sidecar import logs

log = logging.getLogger(__name__)


def run_gateway(store_dir: str | None, workspace: str, host: str, port: int, upstream: str | None, *,
                cli_chose_logging: bool) -> int:
    from lore_sidecar.app import open_engine
    from lore_sidecar.engine_host import Host
    from lore_sidecar.gateway.proxy import LOOPBACK, Gateway, serve
    from lore_sidecar.settings import load_settings

    if host not in LOOPBACK:
        print(f"lore-sidecar: the gateway serves loopback only (127.0.0.1 or ::1), not {host}", file=sys.stderr)
        return 2
    settings, warnings = load_settings(workspace_root=Path(workspace), cli={"storeDir": store_dir} if store_dir else {})
    logs.apply_settings(settings, cli_chose=cli_chose_logging)
    for w in warnings:
        log.warning("settings: %s", w)
    engine_host = Host(settings, [workspace], open_engine, warnings, timeout_ms=settings.gateway_timeout_ms)
    registry = Path(settings.store_dir) / "gateway.json"

    def ready(bound: int) -> None:
        url = f"http://{'[::1]' if host == '::1' else host}:{bound}"
        print(url, flush=True)
        try:  # for `lore-sidecar run`; an unusable store must not stop the proxy (it fails open)
            Path(settings.store_dir).mkdir(parents=True, exist_ok=True)
            tmp = registry.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"url": url, "pid": os.getpid(), "upstream": upstream}))
            os.replace(tmp, registry)
        except OSError as exc:
            log.warning("cannot record the gateway in the store (%s); serving anyway", exc)

    try:
        serve(Gateway(engine_host, upstream), host, port, ready)
    finally:
        engine_host.close()
        try:
            if json.loads(registry.read_text()).get("pid") == os.getpid():
                registry.unlink()
        except (OSError, ValueError):
            pass
    return 0
