"""Which edits set up a host: the one place that knows every host's builder (hosts.py for
the editors and the first four agents, agents.py for Copilot CLI and Hermes, which build on
hosts.py's pieces — so the dispatch lives here, above both, and neither imports the other
back)."""

from __future__ import annotations

from collections.abc import Callable

from lore_sidecar.errors import LoreError
from lore_sidecar.setup import HOSTS, USER_ONLY, agents, hosts
from lore_sidecar.setup.hosts import Edit, Where

BUILDERS: dict[str, Callable[[Where], list[Edit]]] = {
    **hosts.BUILDERS, "copilot": agents.copilot, "hermes": agents.hermes,
}


def edits(host: str, w: Where) -> list[Edit]:
    if host not in HOSTS:
        raise LoreError("unknownHost", f"unknown host {host!r}; choose from {', '.join(HOSTS)}")
    if w.project is not None and host in USER_ONLY:
        raise LoreError("userOnly", f"{host} is set up per user: use --user")
    return BUILDERS[host](w)
