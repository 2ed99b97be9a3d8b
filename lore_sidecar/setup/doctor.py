"""`lore-sidecar doctor`: check a set-up and say, one line each, what is wrong and how to fix
it. Read-only: it never joins the store's election, writes the record or migrates it.
Exit 0 when nothing failed (warnings are fine), 1 otherwise."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

OK, WARN, FAIL = "ok", "warn", "fail"
MARK = {OK: "✓", WARN: "!", FAIL: "✗"}


@dataclass(frozen=True)
class Check:
    name: str
    state: str
    detail: str
    fix: str = ""


def store_checks(store: Path, stale_ms: int) -> list[Check]:
    from lore_sidecar.store import health

    out: list[Check] = []
    if not store.exists():
        return [Check("store", OK, f"{store} does not exist yet; the first sidecar creates it")]
    if not store.is_dir():
        return [Check("store", FAIL, f"{store} is a file", "point --store-dir / LORE_STORE_DIR at a folder")]
    try:
        with tempfile.NamedTemporaryFile(dir=store, prefix=".doctor-"):
            pass
        out.append(Check("store", OK, f"{store} (readable and writable)"))
    except OSError as exc:
        out.append(Check("store", FAIL, f"{store} is not writable ({exc.strerror})",
                         f"give this user write access (chown/chmod {store}) or use another --store-dir"))
    mode = store.stat().st_mode & 0o777
    if mode & 0o077:
        out.append(Check("privacy", WARN, f"other users can {'read' if mode & 0o044 else 'enter'} the store "
                         f"(mode {oct(mode)}): it holds every recorded conversation",
                         f"chmod 700 {store}"))
    fs = health.network_fs(store)
    if fs:
        out.append(Check("filesystem", WARN, f"the store is on a network filesystem ({fs})",
                         "use a local --store-dir; file locks and WAL are not safe across machines"))
    db = store / "lore.db"
    if db.exists():
        try:
            facts = health.db_facts(db)
        except Exception as exc:
            out.append(Check("database", FAIL, f"{db} cannot be read ({exc})", f"restore a backup, or move {db} aside"))
        else:
            if facts.schema > facts.expected:
                out.append(Check("schema", FAIL, f"schema {facts.schema} is newer than this version reads ({facts.expected})",
                                 "upgrade lore-sidecar (pip install -U lore-sidecar)"))
            elif facts.schema < facts.expected:
                out.append(Check("schema", WARN, f"schema {facts.schema}; the next writer migrates it to {facts.expected}"))
            else:
                out.append(Check("schema", OK, f"schema {facts.schema}"))
            pending = facts.outbox_pending
            out.append(Check("index", OK if pending < 10_000 else WARN,
                             f"{pending} records waiting to be indexed" if pending else "index current",
                             "" if pending < 10_000 else "start any sidecar (e.g. lore-sidecar status) so a writer indexes them"))
    lock = store / "writer.lock"
    lf = health.lock_facts(lock)
    if not lf.held:
        out.append(Check("writer", OK, "no writer running; the next sidecar becomes it"))
    elif lf.heartbeat_age_s * 1000 > stale_ms:
        out.append(Check("writer", FAIL, f"pid {lf.pid} holds the writer lock but its heartbeat is "
                         f"{lf.heartbeat_age_s:.0f} s old (hung or stopped)",
                         f"kill {lf.pid} (or kill -CONT {lf.pid} if you stopped it); followers take over after "
                         f"writerStaleMs ({stale_ms} ms)"))
    else:
        out.append(Check("writer", OK, f"pid {lf.pid} (heartbeat {lf.heartbeat_age_s:.1f} s ago)"))
    spool = store / "spool"
    if spool.exists():
        pending, quarantined = health.spool_facts(spool)
        if quarantined:
            out.append(Check("spool", WARN, f"{quarantined} quarantined operations (could not be applied)",
                             f"inspect {spool / 'bad'}; the log says why each was set aside"))
        elif pending:
            out.append(Check("spool", OK if lf.held else WARN, f"{pending} follower writes waiting for the writer",
                             "" if lf.held else "start any sidecar so a writer applies them"))
    free = shutil.disk_usage(store).free
    out.append(Check("disk", OK if free > 1 << 30 else (WARN if free > 100 << 20 else FAIL),
                     f"{free / (1 << 30):.1f} GB free", "" if free > 1 << 30 else "free some space on the store's disk"))
    return out


def engine_checks(settings) -> list[Check]:
    from lore_sidecar.hook.command import ask_daemon
    from lore_sidecar.hook.events import socket_path
    from lore_sidecar.llm.embedders import EmbedderUnavailable, load_embedder

    out: list[Check] = []
    for label, name, lazy in (("embedder", settings.embedder, False), ("files embedder", settings.files_embedder, True)):
        if name == "same":
            continue
        try:
            e = load_embedder(name, lazy=lazy, dim=settings.embedder_dim)  # the width the engine uses
            out.append(Check(label, OK, f"{e.name} ({e.dim}-d)" if e else "none (lexical recall only, as configured)"))
        except EmbedderUnavailable as exc:
            out.append(Check(label, FAIL, f"{name} cannot load ({exc})",
                             "reinstall lore-sidecar (its models ship in its dependencies), or set it to \"wordllama\""))
    if os.environ.get("ANTHROPIC_API_KEY"):
        out.append(Check("distiller", OK, f"model ({settings.memory.llm_model}); ANTHROPIC_API_KEY is set"))
    else:
        out.append(Check("distiller", OK, "extractive (no ANTHROPIC_API_KEY; set one for model distillation)"))
    out += indexer_checks(Path(settings.store_dir)) + shared_checks(settings)
    probe = {"event": "Notification", "payload": {"session_id": "doctor"}, "cwd": "/"}
    warm = ask_daemon(socket_path(Path(settings.store_dir)), probe, 1.0) is not None
    out.append(Check("hook daemon", OK, "running" if warm else "not running (hook commands start it on demand)"))
    return out


def indexer_checks(store: Path) -> list[Check]:
    """The background indexer a CLI call leaves to fill the meaning index (lore_sidecar/background.py)."""
    from lore_sidecar import background

    running = background.info(store)
    if running is None:
        return [Check("background indexer", OK, "not running (a CLI call starts one when it leaves vectors to embed)")]
    return [Check("background indexer", OK, f"pid {running.get('pid')} is embedding {running.get('workspace')} "
                  f"since {running.get('startedAt')} (stop it: lore-sidecar indexer --stop)")]


def shared_checks(settings) -> list[Check]:
    """sharedUrl needs the team extra's driver; a default install leaves it out."""
    if not settings.store.shared_url:
        return []
    from lore_sidecar.shared.record import TEAM_EXTRA, driver_problem

    problem = driver_problem()
    if problem:
        return [Check("team backend", FAIL, problem, TEAM_EXTRA)]
    return [Check("team backend", OK, "sharedUrl is set and psycopg is installed (lore-sidecar shared status checks the server)")]


def install_checks() -> list[Check]:
    from lore_sidecar.setup.hosts import this_executable, where
    from lore_sidecar.setup.install import installed

    out: list[Check] = []
    exe = this_executable()[0]
    for m in installed(where(None)):
        label = f"{m['host']} ({'project ' + m['project'] if m.get('project') else 'user'})"
        redo = f"lore-sidecar install {m['host']}" + (f" --project {m['project']}" if m.get("project") else "")
        missing = [p for p in m["files"] if not Path(p).exists()]
        # The files that name the command (Hermes: its config.yaml and lore's provider, .py).
        stale = [p for p in m["files"] if Path(p).exists() and (Path(p).suffix in (".json", ".toml", ".py")
                 or Path(p).name == "config.yaml") and exe not in Path(p).read_text(errors="replace")]
        if missing:
            out.append(Check(label, FAIL, f"missing: {', '.join(missing)}", f"run `{redo}` again"))
        elif stale:
            out.append(Check(label, FAIL, f"{', '.join(stale)} start another lore-sidecar, not {exe}",
                             f"run `{redo}` again (from the lore-sidecar you want)"))
        else:
            out.append(Check(label, OK, f"configured ({len(m['files'])} files) and pointing at {exe}"))
    if not out:
        out.append(Check("agents", OK, "none installed by `lore-sidecar install` (see lore-sidecar install --help)"))
    return out


def run_doctor(args: argparse.Namespace) -> int:
    from lore_sidecar.settings import load_settings

    cli = {"storeDir": args.store_dir} if args.store_dir else {}
    settings, warnings = load_settings(workspace_root=Path(args.workspace), cli=cli)
    checks = [*store_checks(Path(settings.store_dir), settings.store.writer_stale_ms), *engine_checks(settings),
              *install_checks()]
    checks += [Check("settings", WARN, w) for w in warnings]
    failed = any(c.state == FAIL for c in checks)
    if args.json:
        print(json.dumps({"healthy": not failed, "checks": [asdict(c) for c in checks]}, indent=2))
    else:
        for c in checks:
            line = f"{MARK[c.state]} {c.name}: {c.detail}"
            print(line + (f"\n    fix: {c.fix}" if c.fix and c.state != OK else ""))
        print("healthy" if not failed else "problems found", file=sys.stderr)
    return 1 if failed else 0
