"""Handing freed memory back to the operating system.

glibc keeps what a process freed in its arenas (one per thread that allocated), so a burst of
work — a 50 MB request, the catch-up after a large import — leaves the process holding
hundreds of MB it no longer uses. `release_memory()` returns it; call it once a burst is over,
never in a loop (it walks every arena).
"""

from __future__ import annotations


def release_memory() -> None:
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to trim
