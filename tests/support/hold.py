"""A callable held at its call: the test sees it was reached, and lets it go on."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def held(fn: Callable[..., Any]) -> tuple[Callable[..., Any], threading.Event, threading.Event]:
    """(`fn` wrapped, `inside`, `go`): each call sets `inside`, then waits (up to 60 s) for
    `go` before running `fn`."""
    inside, go = threading.Event(), threading.Event()

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        inside.set()
        go.wait(60)
        return fn(*args, **kwargs)

    return wrapper, inside, go
