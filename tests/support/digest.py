"""Reading a context digest the way an agent would (docs/context.md): the paths its `files`
lines name, whole (`files: a/b.py, c.py`) or by directory (`files in src/: a.py, b.py`).
The tests' own reading of the documented format, not the engine's."""

from __future__ import annotations


def listed_paths(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if line.startswith("files: "):
            out += line[len("files: "):].split(", ")
        elif line.startswith("files in ") and "/: " in line:
            folder, names = line[len("files in "):].split("/: ", 1)
            out += [f"{folder}/{name}" for name in names.split(", ")]
    return out
