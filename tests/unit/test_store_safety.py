"""Store safety rules that need no running sidecar: network filesystems, the lock."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from lore_sidecar.errors import LoreError
from lore_sidecar.store.filesystem import filesystem_type, refuse_network_fs
from lore_sidecar.store.lock import WriterLock

MOUNTS = textwrap.dedent(
    """\
    overlay / overlay rw,relatime 0 0
    /dev/vda /home ext4 rw,relatime 0 0
    fileserver:/export/home /home/me/net nfs4 rw,vers=4.2 0 0
    //nas/share /mnt/nas\\040box cifs rw 0 0
    sshfs#me@host: /mnt/remote fuse.sshfs rw 0 0
    """
)


@pytest.mark.parametrize(
    "path, expected",
    [
        ("/home/me/net/lore", ("/home/me/net", "nfs4")),
        ("/mnt/nas box/lore", ("/mnt/nas box", "cifs")),
        ("/mnt/remote/x", ("/mnt/remote", "fuse.sshfs")),
        ("/home/me/local/lore", ("/home", "ext4")),  # control: a longer sibling is not a parent
        ("/home/me/netlore", ("/home", "ext4")),
        ("/tmp/lore", ("/", "overlay")),
    ],
)
def test_the_mount_holding_a_path_is_found(path, expected):
    assert filesystem_type(path, MOUNTS) == expected


def test_a_store_on_a_network_mount_is_refused_with_a_clear_message(tmp_path):
    mounts = tmp_path / "mounts"
    mounts.write_text(f"overlay / overlay rw 0 0\nserver:/x {tmp_path} nfs rw 0 0\n")
    with pytest.raises(LoreError) as err:
        refuse_network_fs(tmp_path / "store", mounts_file=str(mounts))
    assert err.value.kind == "storeUnsupported" and "network filesystem (nfs" in str(err.value)
    # Control: the same store on a local mount is accepted.
    mounts.write_text(f"overlay / overlay rw 0 0\n/dev/sda1 {tmp_path} ext4 rw 0 0\n")
    refuse_network_fs(tmp_path / "store", mounts_file=str(mounts))
    # And the real mount table of this machine accepts the test's temporary directory.
    refuse_network_fs(tmp_path)


def _hold_lock_in_child(path) -> subprocess.Popen:
    code = f"""
import sys, time
from pathlib import Path
from lore_sidecar.store.lock import WriterLock
lock = WriterLock(Path({str(path)!r}))
assert lock.try_acquire()
print("held", flush=True)
time.sleep(60)
"""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_live_lock_is_not_broken_and_a_stale_one_is(tmp_path):
    path = tmp_path / "writer.lock"
    holder = _hold_lock_in_child(path)
    try:
        mine = WriterLock(path)
        assert not mine.try_acquire()
        assert not mine.break_stale(stale_s=5.0)  # fresh heartbeat: left alone
        old = os.stat(path).st_mtime - 30
        os.utime(path, (old, old))  # the holder stopped touching it 30 s ago
        assert mine.heartbeat_age() > 25
        assert mine.break_stale(stale_s=5.0)
        assert mine.held and mine.holder_pid() == os.getpid()
        # Everyone else now sees our lock, not the sleeper's.
        assert not WriterLock(path).try_acquire()
    finally:
        holder.kill()
        holder.wait()
    mine.release()
    # Control: once released, anyone may take it.
    other = WriterLock(path)
    assert other.try_acquire()
    other.release()


def test_the_holder_learns_that_its_lock_was_broken(tmp_path):
    path = tmp_path / "writer.lock"
    first = WriterLock(path)
    assert first.try_acquire() and not first.lost()
    old = os.stat(path).st_mtime - 30
    os.utime(path, (old, old))
    second = WriterLock(path)
    assert second.break_stale(stale_s=5.0)
    assert first.lost() and not second.lost()
    first.release()
    second.release()


def test_a_forked_child_does_not_keep_the_lock_after_its_parent_dies(tmp_path):
    """The writer dies without unlocking while a child it forked lives on: the OS must be
    able to hand the lock to the next instance."""
    path = tmp_path / "writer.lock"
    code = f"""
import os, sys, time
from pathlib import Path
from lore_sidecar.store.lock import WriterLock
assert WriterLock(Path({str(path)!r})).try_acquire()
child = os.fork()
if child == 0:
    os.write(1, b"child-running\\n")  # os.fork() has returned here: at-fork handlers ran
    time.sleep(30)
    os._exit(0)
os.write(1, f"{{child}}\\n".encode())  # one write per line: the two lines never interleave
os._exit(0)  # die holding the lock, never unlocking
"""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    lines = {proc.stdout.readline().strip(), proc.stdout.readline().strip()}  # either order
    assert "child-running" in lines
    child = int((lines - {"child-running"}).pop())
    proc.wait(timeout=30)
    try:
        os.kill(child, 0)  # the child is alive
        lock = WriterLock(path)
        assert lock.try_acquire(), "the forked child kept the writer lock"
        lock.release()
    finally:
        os.kill(child, 9)
