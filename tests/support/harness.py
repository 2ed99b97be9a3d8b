"""Installing and running the real agent harnesses (npm packages) offline, for tests.

Each harness is installed once into `<repo>/.cache/harnesses/<name>` (gitignored) from the
npm registry, at the version ../shared/HARNESSES.md was checked with, and run with its own
HOME, stdin closed, and every outside lookup disabled.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "harnesses"
PACKAGES = {
    "claude": ("@anthropic-ai/claude-code", "2.1.197", "claude"),
    "codex": ("@openai/codex", "0.171.0", "codex"),
    "opencode": ("opencode-ai", "1.18.33", "opencode"),
    "pi": ("@mariozechner/pi-coding-agent", "0.73.1", "pi"),
    "copilot": ("@github/copilot", "1.0.102", "copilot"),
}
HERMES = ("hermes-agent[mcp]", "0.19.0")
# Copilot's native binary unpacks ~235 MB here on its first run: one cache for every run.
COPILOT_XDG_CACHE = CACHE / "copilot-xdg-cache"


@contextmanager
def _installing(name: str) -> Iterator[None]:
    """Held around one harness's install: two pytest processes on one checkout (two workers,
    two runs) install it once, the second waiting for the first and then finding its stamp."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".lock-{name}", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def install(name: str, *extra: str) -> Path:
    """The harness's executable, installing the package first if needed."""
    package, version, binary = PACKAGES[name]
    prefix = CACHE / name
    exe = prefix / "node_modules" / ".bin" / binary
    stamp = prefix / f".installed-{version}"
    if not stamp.exists():
        with _installing(name):
            _install_npm(prefix, stamp, f"{package}@{version}", *extra)
    return exe


def _install_npm(prefix: Path, stamp: Path, *args: str) -> None:
    if not stamp.exists():  # looked at again under the lock: another process may have installed it
        if shutil.which("npm") is None:
            raise RuntimeError("npm is required to install the harnesses (Node 20 is on the CI machine)")
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error",
                        *args], check=True, timeout=900)
        stamp.touch()


def install_hermes() -> Path:
    """Hermes Agent's `hermes`, in its own virtualenv under .cache/ (pip from PyPI, once)."""
    package, version = HERMES
    venv = CACHE / "hermes" / "venv"
    stamp = venv / f".installed-{version}"
    if not stamp.exists():
        with _installing("hermes"):
            if not stamp.exists():
                subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
                subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                                "--disable-pip-version-check", f"{package}=={version}"], check=True, timeout=1200)
                stamp.touch()
    return venv / "bin" / "hermes"


def copilot_env(tmp: Path, url: str, **extra: str) -> dict[str, str]:
    """Copilot CLI offline in bring-your-own-key mode against `url` (Chat Completions unless
    `extra` says otherwise), with its own HOME and COPILOT_HOME and no GitHub token."""
    home, copilot_home = tmp / "home", tmp / "copilot-home"
    home.mkdir(exist_ok=True)
    copilot_home.mkdir(exist_ok=True)
    COPILOT_XDG_CACHE.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN")}
    return {**env, **lore_path_env(), "HOME": str(home), "COPILOT_HOME": str(copilot_home),
            "XDG_CACHE_HOME": str(COPILOT_XDG_CACHE), "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PROVIDER_BASE_URL": f"{url}/v1", "COPILOT_PROVIDER_API_KEY": "fake", "COPILOT_MODEL": "fake-model",
            **extra}


def hermes_config(home: Path, url: str, extra: str = "") -> Path:
    """`$HERMES_HOME/config.yaml` for the fake model server at `url` (Chat Completions), with
    nothing looked up online (no model metadata, no lazy installs); returns `home`."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "# the fake model server (tests)\n"
        f"model:\n  provider: custom\n  base_url: {url}/v1\n  default: fake-model\n  api_key: fake\n"
        "  api_mode: chat_completions\n  context_length: 128000\n"
        "security:\n  allow_lazy_installs: false\n  tirith_enabled: false\n" + extra)
    return home


def lore_path_env() -> dict[str, str]:
    """PATH with this interpreter's bin first, so hook configs find `lore-sidecar`."""
    bindir = str(Path(sys.executable).parent)
    return {"PATH": bindir + os.pathsep + os.environ.get("PATH", "")}


def run(cmd: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess:
    # PWD too: OpenCode takes its project directory from it, not from the process's cwd.
    return subprocess.run(cmd, cwd=cwd, env={**env, "PWD": str(cwd)}, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout)


def install_plugin_deps() -> Path:
    """`@opencode-ai/plugin` at OpenCode's version: what an OpenCode plugin imports, and what
    OpenCode would otherwise try (and offline, wait ~80 s) to install into each config dir."""
    version = PACKAGES["opencode"][1]
    prefix = CACHE / "opencode-plugin"
    stamp = prefix / f".installed-{version}"
    if not stamp.exists():
        with _installing("opencode-plugin"):
            if not stamp.exists():
                prefix.mkdir(parents=True, exist_ok=True)
                (prefix / "package.json").write_text(json.dumps({"dependencies": {"@opencode-ai/plugin": version}}) + "\n")
                _install_npm(prefix, stamp)
    return prefix


def stop_hook_daemons(store: Path | str) -> int:
    """Kill the hook daemons serving `store` (found through /proc; no pkill needed)."""
    import signal

    needle = ["--store-dir", str(store), "hook-daemon"]
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(argv[i : i + 3] == needle for i in range(len(argv))):
            try:
                os.kill(int(entry.name), signal.SIGTERM)
                killed += 1
            except ProcessLookupError:
                pass
    return killed


def wait_for_daemon(store: Path | str, timeout: float = 60) -> None:
    """Until the store's hook daemon answers a probe (an event without effects)."""
    import time

    from lore_sidecar.hook.command import ask_daemon
    from lore_sidecar.hook.events import socket_path

    deadline = time.monotonic() + timeout
    probe = {"event": "Notification", "payload": {"session_id": "probe"}, "cwd": "/"}
    while ask_daemon(socket_path(Path(store)), probe, 1.0) is None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the hook daemon of {store} never answered")
        time.sleep(0.1)


def install_lore(host: str, env: dict[str, str], project: Path | None = None) -> str:
    """Set a host up the way a user would, with `lore-sidecar install` (it finds the host's
    config through HOME, CODEX_HOME, ... in `env`); returns what it printed."""
    args = [sys.executable, "-m", "lore_sidecar", "install", host, *(["--project", str(project)] if project else ["--user"])]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def codex_config(home: Path, url: str, trusted: Path | None = None) -> Path:
    """`$CODEX_HOME/config.toml` for the fake model server at `url` (Responses API), with a
    project trusted when given; returns `home`."""
    home.mkdir(parents=True, exist_ok=True)
    trust = f'[projects."{trusted}"]\ntrust_level = "trusted"\n' if trusted else ""
    (home / "config.toml").write_text(
        'model = "fake-model"\nmodel_provider = "fake"\napproval_policy = "never"\nsandbox_mode = "read-only"\n'
        f'[model_providers.fake]\nname = "fake"\nbase_url = "{url}/v1"\nwire_api = "responses"\n'
        f'env_key = "FAKE_API_KEY"\n{trust}')
    return home
