"""`lore-sidecar install HOST` / `uninstall HOST`: apply a host's edits without clobbering.

Each changed file gets a backup beside it (`<name>.lore-backup`, the content just before the
change) and is written atomically. A manifest in the user's state folder keeps, per file,
its original bytes (or that it did not exist) and a hash of what was written, so
`uninstall` restores the original byte for byte when nothing changed it since; when
something did (the host rewrites its own state files), it takes lore's entries out and
leaves the rest. Both are idempotent: a second run changes nothing.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from lore_sidecar.setup import formats as f
from lore_sidecar.setup.hosts import Edit, Where
from lore_sidecar.setup.plan import edits


@dataclass(frozen=True)
class Change:
    path: Path
    before: bytes | None
    after: bytes | None  # None: delete the file


def render(edit: Edit, before: bytes | None, *, removing: bool = False, original: bytes | None | bool = False) -> bytes | None:
    """The file's bytes after `edit` (or its removal) applied to `before`. `original`, when
    removing: the file before install (None: it did not exist; False: not known)."""
    text = before.decode() if before is not None else None
    if edit.kind == "file":
        if removing:
            return None if before == (edit.content or "").encode() else before
        return (edit.content or "").encode()
    where = str(edit.path)
    fn = edit.remove if removing else edit.add
    assert fn is not None
    if edit.kind == "text":
        out = fn(text or "")
        return before if out == (text or "") or (before is None and not out.strip()) else out.encode()
    if edit.kind == "json":
        doc = f.load_json(text, where)
        original = json.loads(f.dump_json(doc))
        fn(doc)
        if doc == original:
            return before  # nothing to do: keep the file's bytes (and formatting) as they are
        return f.dump_json(doc).encode()
    doc = f.load_toml(text, where)
    fn(doc)
    if removing and edit.restore is not None and original is not False:
        edit.restore(doc, f.load_toml(original.decode() if original is not None else None, where))
    out = f.dump_toml(doc).encode()
    return before if out == before or (before is None and not out.strip()) else out


def plan(host: str, w: Where, *, removing: bool = False) -> list[Change]:
    out = []
    for edit in edits(host, w):
        before = edit.path.read_bytes() if edit.path.exists() else None
        after = render(edit, before, removing=removing)
        if after != before:
            out.append(Change(edit.path, before, after))
    return out


def diff(changes: list[Change]) -> str:
    lines: list[str] = []
    for c in changes:
        old = (c.before or b"").decode().splitlines(keepends=True)
        new = (c.after or b"").decode().splitlines(keepends=True)
        lines += difflib.unified_diff(old, new, f"{c.path} (now)" if c.before is not None else "/dev/null",
                                      f"{c.path} (after)" if c.after is not None else "/dev/null")
    return "".join(lines)


# -- the manifest -------------------------------------------------------------------------------
def manifest_path(host: str, w: Where) -> Path:
    state = Path(w.env["XDG_STATE_HOME"]) if w.env.get("XDG_STATE_HOME") else w.home / ".local" / "state"
    if not w.env.get("XDG_STATE_HOME") and not w.env.get("HOME"):
        state = Path(platformdirs.user_state_dir("lore", appauthor=False)).parent
    key = hashlib.sha1(str(w.project or "user").encode()).hexdigest()[:12]
    return state / "lore" / "installs" / f"{host}-{'project' if w.project else 'user'}-{key}.json"


def _load_manifest(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {"files": {}, "dirs": []}


def _sha(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


# -- applying -----------------------------------------------------------------------------------------
def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.lore-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def make_dirs(path: Path, created: list[str]) -> None:
    missing = []
    d = path.parent
    while not d.exists():
        missing.append(d)
        d = d.parent
    for d in reversed(missing):
        d.mkdir()
        created.append(str(d))


def install(host: str, w: Where) -> list[Change]:
    changes = plan(host, w)
    if not changes:
        return []
    mpath = manifest_path(host, w)
    manifest = _load_manifest(mpath)
    manifest.update(host=host, project=str(w.project) if w.project else None)
    for c in changes:
        entry = manifest["files"].get(str(c.path))
        if entry is None:  # the original, before any lore install: what uninstall restores
            entry = manifest["files"][str(c.path)] = {
                "before": base64.b64encode(c.before).decode() if c.before is not None else None}
        if c.before is not None:
            c.path.with_name(c.path.name + ".lore-backup").write_bytes(c.before)
        make_dirs(c.path, manifest["dirs"])
        assert c.after is not None
        write_atomic(c.path, c.after)
        entry["after"] = _sha(c.after)
    mpath.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(mpath, json.dumps(manifest, indent=2).encode())
    return changes


def uninstall(host: str, w: Where) -> list[Change]:
    """Restore each file install changed (byte for byte when untouched since); take lore's
    entries out of the ones changed since; remove the folders install made, if empty."""
    mpath = manifest_path(host, w)
    manifest = _load_manifest(mpath)
    by_path = {str(e.path): e for e in edits(host, w)}
    done: list[Change] = []
    for path_s, entry in manifest["files"].items():
        path = Path(path_s)
        current = path.read_bytes() if path.exists() else None
        original = base64.b64decode(entry["before"]) if entry.get("before") is not None else None
        if _sha(current) == entry.get("after"):
            target = original
        elif path_s in by_path and current is not None:
            target = render(by_path[path_s], current, removing=True, original=original)
            if original is None and target is not None and target.strip() in (b"{}", b""):
                target = None  # install made this file and nothing else is in it now
        else:
            continue
        if target == current:
            continue
        if target is None:
            path.unlink()
        else:
            write_atomic(path, target)
        backup = path.with_name(path.name + ".lore-backup")
        if backup.exists():
            backup.unlink()
        done.append(Change(path, current, target))
    # Entries added by hand or by an older version without a manifest.
    for change in plan(host, w, removing=True):
        if str(change.path) in manifest["files"]:
            continue
        if change.after is None:
            change.path.unlink()
        else:
            write_atomic(change.path, change.after)
        done.append(change)
    for d in sorted(manifest.get("dirs", []), key=len, reverse=True):
        try:
            Path(d).rmdir()
        except OSError:
            pass  # not empty: something else lives there now
    if mpath.exists():
        mpath.unlink()
    return done


def installed(w: Where) -> list[dict[str, Any]]:
    """The installs the manifests record for this user (doctor checks them)."""
    folder = manifest_path("x", w).parent
    out = []
    for p in sorted(folder.glob("*.json")) if folder.exists() else []:
        m = _load_manifest(p)
        if m.get("host"):
            out.append(m)
    return out
