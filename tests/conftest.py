"""Shared fixtures. Every test gets its own store and HOME so nothing leaks between tests
or into the developer's real data."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEMP_VARS = ("TMPDIR", "TMP", "TEMP")
# Per-user folders a program the suite runs makes in /tmp itself, whatever TMPDIR says: Codex's
# sandbox makes its app-server daemon's socket folder (to keep a sandboxed command out of it)
# before it runs a shell command. Removed at the end if the session made it and left it empty.
FIXED_TMP_FOLDERS = (Path("/tmp") / f"codex-daemon-{os.getuid()}",)


def home_env(home: Path) -> dict[str, str | None]:
    """HOME and the XDG folders under it (cache and state follow HOME: unset)."""
    return {"HOME": str(home), "XDG_DATA_HOME": str(home / ".local/share"), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": None, "XDG_STATE_HOME": None}


@pytest.hookimpl(trylast=True)  # after pytest's own tmpdir plugin has made its factory
def pytest_configure(config):
    """The whole session's temp dir is `<basetemp>/sys-tmp` and its HOME `<basetemp>/sys-home`,
    set before any test or fixture starts a child: every process the suite starts (sidecars,
    harnesses, git, Chromium, Neovim) inherits them, so what they put in "the temp dir" or
    the home dir goes where pytest prunes it, not into /tmp or the real home. Set here,
    before collection, so that no child sees the real ones, not even one a module or session
    fixture starts before a test's own HOME (_isolated_env) is set: onnxruntime, under the
    sidecar's MiniLM embedder, keeps a device id and a database in ~/.cache/Microsoft."""
    import tempfile

    basetemp = config._tmp_path_factory.getbasetemp()
    sys_tmp, sys_home = basetemp / "sys-tmp", basetemp / "sys-home"
    for folder in (sys_tmp, sys_home):
        folder.mkdir(mode=0o700, exist_ok=True)
    wanted = {**{key: str(sys_tmp) for key in TEMP_VARS}, **home_env(sys_home), **download_caches()}
    before = {key: os.environ.get(key) for key in wanted}
    _set_env(wanted)
    tempfile.tempdir = None  # gettempdir() caches its first answer: ask again
    absent = [folder for folder in FIXED_TMP_FOLDERS if not os.path.lexists(folder)]

    def restore() -> None:
        _set_env(before)
        tempfile.tempdir = None
        for folder in absent:  # only an empty folder goes: one a daemon uses has its socket in it
            try:
                folder.rmdir()
            except OSError:
                pass

    config.add_cleanup(restore)


def download_caches() -> dict[str, str]:
    """npm's and pip's download caches stay the real home's (only downloads live there, and a
    warm cache is what keeps installing the harnesses quick), unless the caller chose them."""
    real = Path(os.environ.get("HOME") or Path.home())
    caches = {"npm_config_cache": real / ".npm", "PIP_CACHE_DIR": real / ".cache" / "pip"}
    return {key: os.environ.get(key) or str(path) for key, path in caches.items()}


def _set_env(values: dict[str, str | None]) -> None:
    for key, value in values.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    for key, value in home_env(home).items():
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)
    for key in list(os.environ):
        if key.startswith("LORE_") or key == "ANTHROPIC_API_KEY":
            monkeypatch.delenv(key, raising=False)
    # Every sidecar a test starts inherits this: a read right after a write waits up to 30 s
    # (default 5 s) for the word index to hold it. A loaded CI machine's commit (fsync, a
    # first scan beside it) took longer than the 2 s of the time, and the read missed the
    # write. The tests prove the write is found; how soon is not theirs to prove. A test's
    # own option (initializationOptions) still wins; tests/integration/test_read_your_writes.py
    # holds what happens when the wait ends first.
    monkeypatch.setenv("LORE_READ_WAIT_MS", "30000")
    # Likewise a writer silent for 5 s (the default) is taken for dead and replaced: on a loaded
    # machine (a disk busy with fsyncs, 2 cores at load 14) a live writer's heartbeat was
    # late that long and a follower started beside it became the writer (test_mcp's follower
    # write answered as the writer's). Tests of a paused writer set `writerStaleMs` themselves;
    # a killed writer's lock is released by the OS at once.
    monkeypatch.setenv("LORE_WRITER_STALE_MS", "60000")
    # And a hook (`lore-sidecar hook`, which fails open: no output) answers within 30 s, not
    # the default 2 s: under load test_cli's second prompt got nothing from a live daemon in
    # 2 s. Tests of the deadline itself set LORE_HOOK_TIMEOUT_MS (test_lifecycle: 700 ms).
    monkeypatch.setenv("LORE_HOOK_TIMEOUT_MS", "30000")


def make_workspace(root: Path) -> Path:
    """A small but realistic project: code, docs, an ignored folder, a binary."""
    (root / ".git").mkdir(parents=True)
    files = {
        "README.md": """
            # Payments service

            Handles card payments through Stripe.

            ## Retries

            Failed webhooks are retried with exponential backoff, at most 7 times.
            """,
        "src/billing.py": """
            import math


            def compute_invoice_total(lines, tax_rate):
                \"\"\"Sum the invoice lines and apply the tax rate.\"\"\"
                subtotal = sum(line.amount for line in lines)
                return math.ceil(subtotal * (1 + tax_rate))


            class RefundPolicy:
                window_days = 30

                def allows(self, age_days):
                    return age_days <= self.window_days
            """,
        "docs/deploy.md": """
            # Deploying

            Deploys go through Buildkite; the pipeline is in .buildkite/pipeline.yml.
            """,
        ".gitignore": "secrets/\n*.log\n",
        "secrets/prod.env": "STRIPE_KEY=sk_live_zebracornflakes\n",
        "debug.log": "zebracornflakes appear in the log\n",
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip())
    (root / "logo.bin").write_bytes(b"\x00\x01zebracornflakes\x00" * 10)
    return root


@pytest.fixture
def workspace(tmp_path) -> Path:
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def store_dir(tmp_path) -> Path:
    return tmp_path / "store"


def sidecar_cmd(*extra: str) -> list[str]:
    return [sys.executable, "-m", "lore_sidecar", "--stdio", *extra]


@pytest.fixture(scope="session")
def pg_cluster():
    """One throwaway PostgreSQL for the session (each test isolates itself by a team id)."""
    from tests.support.postgres import Cluster

    with Cluster() as cluster:
        yield cluster


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request, monkeypatch):
    """The store conformance tests run twice: on one machine's store, and with every write
    going through a team's shared record on a real PostgreSQL (a fresh team per test)."""
    if request.param == "postgresql":
        cluster = request.getfixturevalue("pg_cluster")
        monkeypatch.setenv("LORE_SHARED_URL", cluster.url)
        monkeypatch.setenv("LORE_SHARED_TEAM", f"t-{os.getpid()}-{abs(hash(request.node.nodeid))}")
    return request.param
