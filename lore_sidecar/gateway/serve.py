"""`lore-sidecar gateway [--host 127.0.0.1] [--port N] [--upstream URL]`: serve until stopped
(or, started by `lore-sidecar run` with `--leased`, until no run needs it: gateway/leases.py).
The first line on stdout is the base URL to give a harness: the address it listens on and the
store's gateway secret (`http://127.0.0.1:<port>/<secret>`). `<store>/gateway.json` (0600)
records the address without the secret, for `lore-sidecar run`, which reads the secret from
`<store>/gateway.secret` itself."""

from __future__ import annotations

import json
import logging
import os
import secrets
import sys
from pathlib import Path

from lore_sidecar import logs
from lore_sidecar.store.filesystem import make_store_dir

log = logging.getLogger(__name__)


def run_gateway(store_dir: str | None, workspace: str, host: str, port: int, upstream: str | None, *,
                cli_chose_logging: bool, leased: bool = False) -> int:
    from lore_sidecar.app import open_engine
    from lore_sidecar.engine_host import Host
    from lore_sidecar.gateway import leases
    from lore_sidecar.gateway.guard import gateway_secret
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
    try:
        secret = gateway_secret(Path(settings.store_dir))
    except OSError as exc:
        # An unusable store must not stop the proxy (it fails open): a secret for this run only,
        # in the URL printed below.
        log.warning("cannot keep the gateway secret in the store (%s); this run's URL has its own", exc)
        secret = secrets.token_hex(24)

    def ready(bound: int) -> None:
        url = f"http://{'[::1]' if host == '::1' else host}:{bound}"
        print(f"{url}/{secret}", flush=True)
        try:  # for `lore-sidecar run`
            make_store_dir(Path(settings.store_dir))
            tmp = registry.with_suffix(f".{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(json.dumps({"url": url, "pid": os.getpid(), "upstream": upstream}))
            os.replace(tmp, registry)
        except OSError as exc:
            log.warning("cannot record the gateway in the store (%s); serving anyway", exc)

    gateway = Gateway(engine_host, upstream, secret)
    until = None
    if leased:  # started by `run`: it stops by itself once no run needs it (gateway/leases.py)
        store = Path(settings.store_dir)

        def until(stop):
            return leases.watch(store, registry, settings.gateway_linger_ms / 1000, gateway.quiet, stop)
    try:
        serve(gateway, host, port, ready, until)
    finally:
        engine_host.close()
        try:
            if json.loads(registry.read_text()).get("pid") == os.getpid():
                registry.unlink()
        except (OSError, ValueError):
            pass
        registry.with_name(f"{registry.name}.closing.{os.getpid()}").unlink(missing_ok=True)
    return 0
