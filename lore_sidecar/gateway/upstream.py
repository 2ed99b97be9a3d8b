"""Which proxy, if any, the gateway goes through to reach the provider: the user's own
`https_proxy` / `http_proxy` / `all_proxy` and `no_proxy`, read once from the environment, as
the harness's own client would have used them had it called the provider directly.

A loopback upstream is never proxied (a proxy cannot reach this machine's loopback), and
nothing else of the environment is taken: not `~/.netrc`, which would hand the provider
credentials the harness never sent.
"""

from __future__ import annotations

import base64
import urllib.request

from yarl import URL

LOOPBACK = ("127.0.0.1", "::1", "localhost")


class ProxyRoute:
    def __init__(self) -> None:
        self.proxies = urllib.request.getproxies_environment()  # {"https": ..., "no": ...}

    def __call__(self, target: URL) -> tuple[URL | None, dict[str, str] | None]:
        """(proxy URL without its credentials, the headers that carry them to the proxy alone)
        for a request to `target`."""
        host = target.host or ""
        if host in LOOPBACK or host.startswith("127."):
            return None, None
        if self.proxies.get("no") and urllib.request.proxy_bypass_environment(host, self.proxies):
            return None, None
        found = self.proxies.get(target.scheme) or self.proxies.get("all")
        if not found:
            return None, None
        proxy = URL(found if "://" in found else f"http://{found}")
        if not proxy.user:
            return proxy, None
        # Basic credentials as RFC 7617 spells them (aiohttp's BasicAuth is deprecated). yarl
        # has already decoded the URL's %-escapes in the name and password.
        pair = f"{proxy.user}:{proxy.password or ''}".encode()
        return proxy.with_user(None), {"Proxy-Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}

