"""`lore-sidecar hook <event>`: the command hosts run as a hook (Claude Code's
`SessionStart`, `UserPromptSubmit`, `PostToolUse`, `Stop`, `SessionEnd`, `PreCompact`;
Codex's and Copilot CLI's hooks use the same schema; lore's Hermes memory provider calls it
too, with the messages inline).

It must be quick, and it must never get in the way:
- It reads the host's JSON event on stdin and hands it to the warm **hook daemon** of the
  store over a Unix socket (`lore-sidecar hook-daemon`: one per store, an ordinary member of
  the writer election, gone after `hookIdleMs` without a call). This process imports only
  the standard library on that path: a warm round trip is a few tens of milliseconds.
- No daemon running: it starts one in the background for the next call and serves this one
  itself, degraded — the prompt goes into the store's spool (durable; the writer applies
  it), and recall is lexical, read-only, from the published index.
- It prints what the host expects on stdout
  (`{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`; `--harness copilot`: a
  flat `{"additionalContext"}`, the only shape Copilot reads for these events) or nothing, always
  exits 0, and gives up after `LORE_HOOK_TIMEOUT_MS` (default 2000): the host carries on
  without memory rather than wait. `LORE_HOOK_DAEMON=0` never starts a daemon (every call
  takes the degraded path).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from lore_sidecar.hook.events import private_socket_dir, recv_line, socket_path, store_dir_of
from lore_sidecar.spawn import module_command
from lore_sidecar.store.filesystem import make_store_dir

DEFAULT_TIMEOUT_MS = 2000
GRACE_S = 0.25  # the answer may come this much after the timeout (durable capture finishing)
MAX_STDIN_CHARS = 16 << 20  # a host event larger than this is not read at all


def run_hook(event: str, stdin: TextIO, stdout: TextIO, *, store_dir: str | None = None, harness: str | None = None) -> int:
    """Answer within the timeout whatever happens: the work runs on a daemon thread and this
    one waits for it only until the deadline (then the host gets nothing and carries on)."""
    started = time.monotonic()
    try:
        timeout = max(0.05, int(os.environ.get("LORE_HOOK_TIMEOUT_MS") or DEFAULT_TIMEOUT_MS) / 1000)
    except ValueError:
        timeout = DEFAULT_TIMEOUT_MS / 1000
    result: dict[str, Any] = {}
    worker = threading.Thread(target=_work, args=(event, stdin, result, store_dir, harness, started, timeout),
                              name="lore-hook", daemon=True)
    worker.start()
    worker.join(max(0.0, timeout + GRACE_S - (time.monotonic() - started)))
    if worker.is_alive():
        print(f"lore-sidecar hook {event}: no answer within {round(timeout * 1000)} ms; continuing without memory",
              file=sys.stderr)
        return 0
    output = result.get("output")
    if output:
        stdout.write(json.dumps(output))
        stdout.flush()
    return 0


def _work(event: str, stdin: TextIO, result: dict[str, Any], store_dir: str | None, harness: str | None,
          started: float, timeout: float) -> None:
    try:
        raw = stdin.read(MAX_STDIN_CHARS + 1)
        if len(raw) > MAX_STDIN_CHARS:
            raise ValueError(f"the hook input is larger than {MAX_STDIN_CHARS} characters; ignored")
        payload = json.loads(raw or "{}")
        if not isinstance(payload, dict):
            raise ValueError("the hook input is not a JSON object")
        payload.setdefault("hook_event_name", event)
        # The host is named here, where its environment is (the daemon's may be another's).
        payload["harness"] = harness or payload.get("harness") or os.environ.get("LORE_HARNESS") or "claude-code"
        store = store_dir_of(store_dir)
        request = {"event": event, "payload": payload, "cwd": str(payload.get("cwd") or Path.cwd())}
        use_daemon = os.environ.get("LORE_HOOK_DAEMON", "1") != "0"
        reply = ask_daemon(socket_path(store), request, timeout * 0.6) if use_daemon else None  # leaves the degraded path time to capture
        if reply is None:
            if use_daemon:
                start_daemon(store, request["cwd"])
            from lore_sidecar.hook.fallback import degraded  # only off the warm path

            reply = degraded(store, request, deadline=started + timeout)
        result["output"] = reply.get("output") if isinstance(reply, dict) else None
    except Exception as exc:  # fail open: the host continues without memory
        print(f"lore-sidecar hook {event}: {type(exc).__name__}: {str(exc)[:300]}; continuing without memory",
              file=sys.stderr)


def ask_daemon(path: Path, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """The daemon's reply, or None when no daemon answers (not running, or too slow)."""
    if not private_socket_dir(path, create=False):
        return None  # a folder someone else controls: whoever listens there is not our daemon
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(path))
            s.sendall(json.dumps(request).encode() + b"\n")
            data = recv_line(s)
        return json.loads(data) if data.strip() else None
    except (OSError, ValueError):
        return None


def start_daemon(store: Path, workspace: str) -> None:
    """A detached `lore-sidecar hook-daemon` for this store (if two hooks race, the second
    daemon finds the socket taken and exits)."""
    make_store_dir(store)
    log = open(store / "hook-daemon.log", "ab")  # noqa: SIM115 (handed to the child)
    subprocess.Popen(
        module_command("lore_sidecar", "--store-dir", str(store), "hook-daemon", "--workspace", workspace),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True, close_fds=True,
    )
    log.close()
