"""The store's folder on disk: private to its owner, and never on a network filesystem.

A store holds every conversation, tool output and decision its user recorded: whoever made
it first (the sidecar, a hook, the gateway, the indexer), it is made `0700` whatever the
umask, so other local users cannot list or read it. A folder the user made themselves keeps
the mode they gave it (`doctor` says when others can read it).

Network filesystems are refused.
SQLite's WAL needs shared memory that every process sees coherently, and `flock` on NFS,
SMB and most FUSE mounts is emulated, per-client or silently a no-op. On such a mount two
sidecars could both believe they are the writer. Refusing with a clear message is better
than corrupting a store quietly; `allowNetworkFs` overrides for those who know their
mount is safe (for example a single machine using it).
"""

from __future__ import annotations

import os
from pathlib import Path

from lore_sidecar.errors import LoreError

NETWORK_FS = {
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "afs", "coda", "9p", "ceph",
    "glusterfs", "lustre", "gpfs", "ocfs2", "gfs2", "davfs", "fuse.sshfs", "fuse.rclone",
    "fuse.s3fs", "fuse.gcsfuse", "fuse.davfs2", "fuse.glusterfs", "fuse.cephfs", "vboxsf",
    "prl_fs", "vmhgfs", "fuse.vmhgfs-fuse", "virtiofs",
}


def make_store_dir(store: Path) -> Path:
    """`store`, made if missing (its parents as usual, itself `0700`)."""
    if store.is_dir():
        return store
    store.parent.mkdir(parents=True, exist_ok=True)
    try:
        store.mkdir(mode=0o700)
    except FileExistsError:  # another process made it first (with the same mode) or a file is there
        return store
    os.chmod(store, 0o700)  # the umask may have taken bits the owner needs
    return store


def _unescape(field: str) -> str:
    # /proc/mounts escapes space, tab, newline and backslash as octal.
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def filesystem_type(path: str, mounts: str) -> tuple[str, str]:
    """(mount point, fs type) of the mount holding `path`, given /proc/mounts text."""
    best = ("/", "unknown")
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        point, fstype = _unescape(parts[1]), parts[2]
        inside = path == point or path.startswith(point.rstrip("/") + "/") or point == "/"
        if inside and len(point) >= len(best[0]):
            best = (point, fstype)
    return best


def refuse_network_fs(store: Path, *, mounts_file: str = "/proc/mounts") -> None:
    try:
        mounts = Path(mounts_file).read_text()
    except OSError:
        return  # not Linux, or no procfs: nothing to go on
    point, fstype = filesystem_type(os.path.realpath(store), mounts)
    if fstype in NETWORK_FS or fstype.startswith(("nfs", "smb")):
        raise LoreError(
            "storeUnsupported",
            f"{store} is on a network filesystem ({fstype} mounted at {point}): SQLite WAL and "
            "file locks cannot be trusted there, so several sidecars could corrupt the store. "
            "Use a local --store-dir, or set allowNetworkFs if only one machine uses it.",
            filesystem=fstype,
            mountPoint=point,
        )
