"""The value converters of settings: each takes what a layer gave (JSON, TOML, an environment
string) and returns the typed value, or raises ValueError with what was expected."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def boolean(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("1", "true", "yes", "on"):
        return True
    if isinstance(v, str) and v.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected a boolean")


def integer(lo: int, hi: int) -> Callable[[Any], int]:
    def conv(v: Any) -> int:
        if isinstance(v, bool):
            raise ValueError("expected an integer")
        n = int(v)
        if not lo <= n <= hi:
            raise ValueError(f"expected {lo}..{hi}")
        return n

    return conv


def number(lo: float, hi: float) -> Callable[[Any], float]:
    def conv(v: Any) -> float:
        if isinstance(v, bool):
            raise ValueError("expected a number")
        x = float(v)
        if not lo <= x <= hi:
            raise ValueError(f"expected {lo}..{hi}")
        return x

    return conv


def choice(options: tuple[str, ...]) -> Callable[[Any], str]:
    def conv(v: Any) -> str:
        if v not in options:
            raise ValueError(f"expected one of {', '.join(options)}")
        return str(v)

    return conv


def one_of(options: tuple[int, ...]) -> Callable[[Any], int]:
    def conv(v: Any) -> int:
        n = integer(min(options), max(options))(v)
        if n not in options:
            raise ValueError(f"expected one of {', '.join(map(str, options))}")
        return n

    return conv


def path(v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ValueError("expected a path")
    return str(Path(v).expanduser())


def paths(v: Any) -> tuple[str, ...]:
    """A list of folders, or one string of them separated by the OS path separator."""
    import os

    items = v if isinstance(v, list | tuple) else str(v).split(os.pathsep)
    out = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError("expected paths")
        if item.strip():
            out.append(str(Path(item).expanduser().resolve()))
    return tuple(out)


def text(v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ValueError("expected a non-empty string")
    return v.strip()


def level(v: Any) -> str:
    s = str(v).upper()
    if s not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise ValueError("expected DEBUG, INFO, WARNING or ERROR")
    return s


def globs(v: Any) -> tuple[str, ...]:
    """A list of glob patterns relative to a project root (never absolute, never `..`)."""
    items = v if isinstance(v, list | tuple) else str(v).split(",")
    out = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError("expected glob patterns")
        item = item.strip()
        if item.startswith(("/", "~")) or ".." in Path(item).parts:
            raise ValueError(f"a glob stays inside the project: {item!r}")
        if item:
            out.append(item)
    return tuple(out)


def names(v: Any) -> tuple[str, ...]:
    """A list of names, or one string of them separated by commas."""
    items = v if isinstance(v, list | tuple) else str(v).split(",")
    if not all(isinstance(i, str) for i in items):
        raise ValueError("expected names")
    return tuple(i.strip() for i in items if i.strip())
