"""Which local user is on the other end of a loopback TCP connection (Linux: /proc/net/tcp).

A connection to 127.0.0.1 has two sockets on this machine; the kernel lists the client's
with its owner's uid. The dashboard answers only its own user: another local user who read
a launch code from the browser's command line, or learnt the token some other way, is
refused. Where the kernel does not tell (no procfs, another network namespace), the
token, cookie and launch code stand alone.
"""

from __future__ import annotations

import os
import socket
import sys

TABLES = ("/proc/net/tcp", "/proc/net/tcp6")


def _hex(host: str, port: int) -> str:
    """An address as /proc/net/tcp prints it: each 32-bit word in host order, then the port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    raw = socket.inet_pton(family, host)
    words = [raw[i:i + 4] for i in range(0, len(raw), 4)]
    if sys.byteorder == "little":
        words = [w[::-1] for w in words]
    return "".join(w.hex().upper() for w in words) + f":{port:04X}"


def _mapped(host: str) -> str:
    return host if ":" in host else f"::ffff:{host}"


def peer_uid(peer: tuple[str, int], local: tuple[str, int]) -> int | None:
    """The uid owning the client socket `peer` connected to `local`, or None if unknown."""
    wanted = set()
    for p_host, l_host in ((peer[0], local[0]), (_mapped(peer[0]), _mapped(local[0]))):
        try:
            wanted.add((_hex(p_host, peer[1]), _hex(l_host, local[1])))
        except OSError:
            continue
    for table in TABLES:
        try:
            with open(table, encoding="ascii") as fh:
                next(fh, None)
                for line in fh:
                    f = line.split()
                    if len(f) > 7 and (f[1], f[2]) in wanted:
                        return int(f[7])
        except OSError:
            continue
    return None


def same_user(request) -> bool:
    """True unless the kernel says the client belongs to another user."""
    transport = request.transport
    if transport is None:
        return True
    peer, local = transport.get_extra_info("peername"), transport.get_extra_info("sockname")
    if not peer or not local:
        return True
    uid = peer_uid((peer[0], peer[1]), (local[0], local[1]))
    return uid is None or uid == os.getuid()
