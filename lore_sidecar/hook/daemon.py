"""`lore-sidecar hook-daemon`: the warm process behind `lore-sidecar hook`.

One per store, found at the store's hook socket (binding it is what makes it the only one).
It opens the engine like any sidecar — the writer if nobody else is, else a follower whose
writes go through the spool — and answers one JSON line per connection. It exits after
`hookIdleMs` without a request, or when its socket is taken over.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

from lore_sidecar import logs
from lore_sidecar.hook.events import (
    event_of,
    host_output,
    private_socket_dir,
    recv_line,
    socket_path,
    store_dir_of,
)
from lore_sidecar.hook.messages import prompt_message, tool_message
from lore_sidecar.store.filesystem import make_store_dir

log = logging.getLogger(__name__)
DEFAULT_IDLE_S = 600.0
REREAD_S = (1.0, 5.0)  # after a session's end, its transcript read again (hosts that flush late)


def handle(engine, request: dict[str, Any]) -> dict[str, Any]:
    """What one hook event does; returns `{"output": <host JSON or None>}`."""
    event, p, session_id, cwd, harness = event_of(request)
    # The host runs in `cwd`: that folder is opened for this hook like a workspace folder.
    engine.projects.open_folder(cwd)
    context = None
    if event == "SessionStart":
        context = engine.sessions.start(session_id=session_id, harness=harness, cwd=cwd)["context"]
    elif event == "UserPromptSubmit":
        prompt = str(p.get("prompt") or "")
        # Recall first (leads from earlier work), then capture the prompt itself.
        context = engine.sessions.prompt(session_id=session_id, prompt=prompt, harness=harness, project=cwd)["context"]
        if prompt.strip():
            engine.capture.record_messages(project=cwd, session_id=session_id, harness=harness,
                                   messages=[prompt_message(prompt)])
    elif event == "PostToolUse":
        message = tool_message(p, session_id)
        if message is not None:
            engine.capture.record_messages(project=cwd, session_id=session_id, harness=harness, messages=[message])
    elif event in ("Stop", "SessionEnd", "SubagentStop", "PreCompact"):
        path, inline = p.get("transcript_path"), p.get("transcript")
        if isinstance(inline, list):  # a host that hands the messages over itself (the Hermes provider)
            engine.sessions.end(session_id=session_id, harness=harness, project=cwd, transcript=inline)
        elif path:
            engine.sessions.end(session_id=session_id, harness=harness, project=cwd, transcript_path=str(path))
            if event in ("Stop", "SessionEnd"):
                _read_again_later(engine, session_id, harness, cwd, str(path))
        if event == "PreCompact":
            _distill(engine, session_id)
    return {"output": host_output(event, context, harness)}


def _read_again_later(engine, session_id: str, harness: str, cwd: str, path: str) -> None:
    """Trigger: a session's end. Why: a host may write its transcript's last lines after its
    Stop hook returns (Copilot CLI flushes events.jsonl's final assistant message later: seen
    missing at the hook, there a moment after). Outcome: the transcript is read again a
    little later; what was already recorded is a duplicate (same ids), only the tail is new."""

    def again() -> None:
        try:
            engine.sessions.end(session_id=session_id, harness=harness, project=cwd, transcript_path=path)
        except Exception as exc:  # noqa: BLE001 - the session is over; this is a second chance only
            log.info("transcript re-read skipped: %s", exc)

    for delay in REREAD_S:
        timer = threading.Timer(delay, again)
        timer.daemon = True
        timer.start()


def _distill(engine, session_id: str) -> None:
    """Before the host compacts its context: the session distilled now (the writer's job; a
    follower or a distiller switched off leaves it to the writer's idle pass)."""
    if not engine.role.writer:
        return
    try:
        engine.memory.distill(session_id=session_id)
    except Exception as exc:  # noqa: BLE001 - compaction goes on whatever lore did
        log.info("pre-compact distillation skipped: %s", exc)


class HookDaemon:
    def __init__(self, engine, store: Path, idle_s: float = DEFAULT_IDLE_S):
        self.engine = engine
        self.path = socket_path(store)
        self.idle_s = idle_s
        self.last = time.monotonic()
        self._stop = threading.Event()

    def bind(self) -> socket.socket | None:
        """The listening socket, or None when a live daemon already has it. A folder that is
        not privately ours is refused first: nothing in it is probed or removed."""
        if not private_socket_dir(self.path, create=True):
            raise OSError(f"{self.path.parent} is not a private folder of this user; not binding the hook socket there")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(self.path))
            return None  # someone answers: we are the spare
        except OSError:
            pass
        finally:
            probe.close()
        try:
            self.path.unlink()  # a dead daemon's socket file
        except FileNotFoundError:
            pass
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # created 0600: no moment when another user could connect
        try:
            s.bind(str(self.path))
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        s.listen(64)
        s.settimeout(0.5)
        return s

    def serve(self, server: socket.socket) -> None:
        ino = os.stat(self.path).st_ino
        try:
            while not self._stop.is_set():
                if time.monotonic() - self.last > self.idle_s:
                    log.info("hook daemon idle for %.0f s; exiting", self.idle_s)
                    return
                try:
                    if os.stat(self.path).st_ino != ino:
                        return  # our socket file was replaced: another daemon owns the name
                except FileNotFoundError:
                    return
                try:
                    conn, _ = server.accept()
                except TimeoutError:
                    continue
                self.last = time.monotonic()
                threading.Thread(target=self._answer, args=(conn,), daemon=True).start()
        finally:
            server.close()
            try:
                if os.stat(self.path).st_ino == ino:
                    self.path.unlink()
            except FileNotFoundError:
                pass

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(10)
                data = recv_line(conn)
                if not data.strip():
                    return  # a probe (another daemon checking whether we are alive)
                reply = handle(self.engine, json.loads(data))
            except Exception as exc:
                log.exception("hook request failed")
                reply = {"output": None, "error": f"{type(exc).__name__}: {exc}"}
            try:
                conn.sendall(json.dumps(reply).encode() + b"\n")
            except OSError:
                pass
            self.last = time.monotonic()


def run_daemon(store_dir: str | None, workspace: str, idle_s: float | None = None) -> int:
    from lore_sidecar.app import open_engine
    from lore_sidecar.settings import load_settings

    store = store_dir_of(store_dir)
    make_store_dir(store)
    settings, warnings = load_settings(workspace_root=Path(workspace), cli={"storeDir": str(store)})
    logs.apply_settings(settings, cli_chose=logging.getLogger().level != logging.WARNING)
    for w in warnings:
        log.warning("settings: %s", w)
    daemon = HookDaemon(None, store, idle_s if idle_s is not None else settings.hook_idle_ms / 1000)
    server = daemon.bind()
    if server is None:
        return 0
    engine = open_engine(settings, [workspace])
    daemon.engine = engine
    try:
        if engine.role.writer:
            engine.index.scan()
        daemon.serve(server)
    finally:
        engine.close()
    return 0
