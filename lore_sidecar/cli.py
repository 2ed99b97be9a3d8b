"""Command line: `lore-sidecar --stdio` serves the protocol; verbs run the same engine
(lore_sidecar/verbs.py). Global options (`--store-dir`, `-v`, `--log-file`) are accepted
before or after the verb; bad arguments get one clear line and exit code 2."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from lore_sidecar import __version__, collector
from lore_sidecar.logs import setup_logging
from lore_sidecar.setup import HOSTS
from lore_sidecar.sources import ALL_SOURCES

log = logging.getLogger("lore_sidecar")
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd")


class Parser(argparse.ArgumentParser):
    """Bad arguments: one line naming the verb and the problem, exit code 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def bounded(lo: int, hi: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be within {lo}..{hi}, got {value}")
        return value

    return parse


def sources(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in names if s not in ALL_SOURCES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown source {', '.join(unknown) or '(none)'}; choose from {', '.join(ALL_SOURCES)}")
    return names


def folder(text: str) -> str:
    path = Path(text).expanduser()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: no such folder" if not path.exists() else f"{text}: not a folder")
    return str(path)


def global_options(p: argparse.ArgumentParser, *, defaults: bool) -> None:
    """The options every verb takes; on a verb they default to SUPPRESS so a value given
    before the verb is not overwritten."""
    d = (lambda v: v) if defaults else (lambda v: argparse.SUPPRESS)
    p.add_argument("--store-dir", default=d(None), help="store location (default: $LORE_STORE_DIR or the platform data dir)")
    p.add_argument("-v", "--verbose", action="count", default=d(0), help="more logging on stderr (-vv for debug)")
    p.add_argument("--log-file", default=d(None), help="write logs to this file instead of stderr")


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="lore-sidecar",
        description="Memory engine for AI coding agents and editors, spoken to over LSP-framed JSON-RPC.",
        epilog="With no verb and stdin not a terminal, serves the protocol on stdio.",
    )
    p.add_argument("--version", action="version", version=f"lore-sidecar {__version__}")
    p.add_argument("--stdio", action="store_true", help="serve JSON-RPC on stdin/stdout (default when stdin is not a TTY)")
    p.add_argument("--clientProcessId", "--client-process-id", type=int, dest="client_pid", help="exit when this process dies")
    global_options(p, defaults=True)
    sub = p.add_subparsers(dest="verb", metavar="VERB")
    common = Parser(add_help=False)
    global_options(common, defaults=False)
    ws = Parser(add_help=False)
    ws.add_argument("--workspace", type=folder, default=".", help="workspace folder (default: .)")
    out = Parser(add_help=False)
    out.add_argument("--json", action="store_true", help="print the raw result")

    def verb(name: str, help: str, *parents: argparse.ArgumentParser) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, parents=[common, *parents])

    verb("status", "the store's status (a table on a terminal; JSON when piped or with --json)", ws, out)
    sv = verb("savings", "what context assembly saved against the harness's own bodies (L0), per day or session", ws, out)
    sv.add_argument("--days", type=bounded(1, 3650), default=None, help="only the last N days (default: every day kept)")
    sv.add_argument("--sessions", action="store_true", help="one row per session instead of per day")
    sv.add_argument("--session", help="only this session")
    sv.add_argument("--calls", action="store_true", help="one row per model call (the figures the totals sum)")
    r = verb("recall", "search memory and print the hits", ws, out)
    r.add_argument("query")
    r.add_argument("--limit", type=bounded(1, 200), default=10, help="1..200 (default 10)")
    r.add_argument("--scope", choices=("project", "all"), default="project")
    r.add_argument("--sources", type=sources, help=f"comma-separated, any of: {','.join(ALL_SOURCES)}")
    r.add_argument("--no-index", action="store_true", help="do not refresh the workspace index first")
    x = verb("reindex", "rebuild the derived indexes from the record", ws, out)
    x.add_argument("--scope", choices=("workspace", "facts", "all"), default="all")
    e = verb("export", "write the project's knowledge to .lore.md (stable order, reviewable diffs)", ws)
    e.add_argument("--out", help="file to write, inside the workspace (default: <project root>/.lore.md)")
    verb("import", "read the project's .lore.md into the store now (the writer also does this on start)", ws)
    ds = verb("distill", "distil every undistilled conversation segment now", ws)
    ds.add_argument("--session", help="only this session")
    a = verb("ask", "ask a question about the codebase (retrieval answers without a key)", ws, out)
    a.add_argument("question")
    verb("ask-stats", "codebase questions in this workspace: window fill, ledger, cost, cache hits", ws)
    rv = verb("review", "knowledge that has faded (recalled and not used, or not at all), with why", ws, out)
    rv.add_argument("--threshold", type=float, default=None, help="list what fell below this retrievability (default 0.3)")
    dr = verb("dream", "merge duplicates, retire superseded and contradicted knowledge, demote the stale and faded", ws, out)
    dr.add_argument("--dry-run", action="store_true", help="propose only; change nothing")
    dr.add_argument("--rollback", nargs="?", const="latest", metavar="RUN", help="undo a run (default: the latest)")
    bk = verb("backup", "a consistent backup of the store (while sidecars run); keeps the newest backupKeep", ws, out)
    bk.add_argument("--out", help="folder for backups (default: setting backupDir, else <store>/backups)")
    rs = verb("restore", "replace the store with a backup, after checking the backup works (stop the sidecars first)", ws, out)
    rs.add_argument("backup", help="a backup folder (lore-backup-...), its bare name in the backups folder, or the "
                    "backups folder itself (the newest)")
    rs.add_argument("--rebuild-indexes", action="store_true",
                    help="ignore the indexes the backup carries and rebuild them from the record (a backup you did not make)")
    sh = verb("shared", "a team's shared record on PostgreSQL (sharedUrl): init, status, migrate", ws)
    sh.add_argument("shared_verb", choices=("init", "status", "migrate"), metavar="init|status|migrate")
    ui = verb("ui", "a local dashboard: search, open, edit and suppress memories; dream runs, review, usage", ws)
    ui.add_argument("--port", type=bounded(0, 65535), default=0, help="port on 127.0.0.1 (default: any free one)")
    ui.add_argument("--no-browser", action="store_true", help="print the URL only; do not open a browser")
    facts_parser(verb("facts", "bitemporal facts: assert, invalidate, query, timeline"), common, ws, out)
    node_parser(verb("node", "knowledge nodes: create, show, list"), common, ws, out)

    h = verb("hook", "run as a host's hook command (reads the host's JSON on stdin; never fails the host)")
    h.add_argument("--harness", help="the host's name for usage accounting (default: claude-code, or $LORE_HARNESS)")
    h.add_argument("event", help=f"one of {', '.join(HOOK_EVENTS)} (Claude Code's names; Codex's hooks use the same)")
    hd = verb("hook-daemon", "the warm process `hook` talks to (started on demand by `hook`)", ws)
    hd.add_argument("--idle-ms", type=bounded(100, 86_400_000), help="exit after this long without a request (default: setting hookIdleMs)")
    for name, text in (("install", "set lore-sidecar up with an agent or editor (merges its config; a backup of each file)"),
                       ("uninstall", "undo install (restores the files install changed)")):
        ins = verb(name, text)
        ins.add_argument("host", choices=HOSTS, help="the agent or editor")
        scope = ins.add_mutually_exclusive_group()
        scope.add_argument("--project", type=folder, help="set it up for this project only (default: for the user)")
        scope.add_argument("--user", action="store_true", help="for every project of this user (the default)")
        ins.add_argument("--dry-run", action="store_true", help="print the changes as a diff; change nothing")
    ix = verb("indexer", "embed what the index still lacks, then exit (a CLI call starts this in the background)", ws)
    ix.add_argument("--stop", action="store_true", help="stop the store's running background indexer (it saves its work)")
    ix.add_argument("--idle-ms", type=bounded(1000, 86_400_000),
                    help="exit when the meaning index has not moved for this long (default 60000)")
    ix.add_argument("--after-pid", type=int, help=argparse.SUPPRESS)  # the CLI call whose writer role it takes over
    ix.add_argument("--lock-fd", type=int, help=argparse.SUPPRESS)  # the indexer lock, taken by the CLI call
    doc = verb("doctor", "check the store, the writer, the index and each installed agent; say how to fix problems", ws)
    doc.add_argument("--json", action="store_true", help="print the checks as JSON")
    comp = verb("completion", "print a shell completion script (bash, zsh or fish)")
    comp.add_argument("shell", choices=("bash", "zsh", "fish"))
    g = verb("gateway", "a loopback HTTP proxy that applies context assembly to an agent's model calls", ws)
    g.add_argument("--host", default="127.0.0.1", help="loopback address to bind (127.0.0.1 or ::1)")
    g.add_argument("--port", type=bounded(0, 65535), default=0, help="port (default: any free one)")
    g.add_argument("--upstream", help="where to forward (default: api.anthropic.com / api.openai.com by path)")
    g.add_argument("--leased", action="store_true",
                   help="exit once no `lore-sidecar run` holds a lease and it has been idle for gatewayLingerMs")
    rn = verb("run", "run an agent with its model calls through the gateway (started if none runs)")
    rn.add_argument("harness", choices=("claude", "codex", "pi", "opencode", "copilot", "hermes"))
    rn.add_argument("--upstream", help="the gateway's upstream (default: the providers' APIs)")
    rn.add_argument("--no-tools", action="store_true",
                    help="do not add lore's MCP tools to this run (claude, codex: added unless configured)")
    rn.add_argument("args", nargs="*", help="arguments for the agent, after -- (lore-sidecar run claude -- -p 'hi')")
    m = verb("mcp", "serve the store's tools to an agent over MCP (stdio)", ws)
    m.add_argument("--harness", help="the agent's name for usage accounting (default: $LORE_HARNESS, else the MCP client's name)")
    d = verb("demo", "spawn the sidecar over stdio, index a folder, record a chat, distil it, recall")
    d.add_argument("folder", nargs="?", default=".", help="a source folder to index (default: .)")
    d.add_argument("query", nargs="?", help="what to recall (default: a question the demo's chat answers)")
    return p


def facts_parser(f: argparse.ArgumentParser, *parents: argparse.ArgumentParser) -> None:
    fsub = f.add_subparsers(dest="facts_verb", metavar="ACTION", required=True)
    fa = fsub.add_parser("assert", help="record a fact (appended to the journal)", parents=parents)
    fa.add_argument("subject")
    fa.add_argument("predicate")
    fa.add_argument("object")
    fa.add_argument("--valid-from", help="when it became true (date or ISO time; default: now)")
    fa.add_argument("--valid-until", help="when it stops being true")
    fa.add_argument("--source", choices=("stated", "inferred"))
    fa.add_argument("--confidence", type=float)
    fi = fsub.add_parser("invalidate", help="record that a fact stopped being true", parents=parents)
    fi.add_argument("subject")
    fi.add_argument("predicate")
    fi.add_argument("--valid-until", help="when it stopped (default: now)")
    fq = fsub.add_parser("query", help="what is (or was, or was believed) true", parents=parents)
    for name in ("--subject", "--predicate", "--object", "--text"):
        fq.add_argument(name)
    fq.add_argument("--as-of", help="valid time")
    fq.add_argument("--as-known-at", help="record time: only what was known then")
    fq.add_argument("--history", action="store_true", help="every row, superseded ones too")
    fq.add_argument("--limit", type=bounded(1, 200), default=50, help="1..200 (default 50)")
    ft = fsub.add_parser("timeline", help="a subject's changes in valid-time order", parents=parents)
    ft.add_argument("subject")


def node_parser(n: argparse.ArgumentParser, *parents: argparse.ArgumentParser) -> None:
    nsub = n.add_subparsers(dest="node_verb", metavar="ACTION", required=True)
    nc = nsub.add_parser("create", help="keep a knowledge node at a URI (project://<name>/<category>/<slug>, ...)",
                         parents=parents)
    nc.add_argument("uri")
    nc.add_argument("content")
    nc.add_argument("--category", choices=("decision", "pattern", "preference", "architecture", "gotcha", "note"))
    nc.add_argument("--priority", type=bounded(0, 4), help="0 (always in context) .. 4 (recall only); default 2")
    nc.add_argument("--disclosure", help="when to surface it, e.g. 'when touching the deploy scripts'")
    nc.add_argument("--source", action="append", default=[], help="a file the node is about (repeatable)")
    nc.add_argument("--expires-at", help="ISO time after which it no longer applies")
    ns = nsub.add_parser("show", help="print one node", parents=parents)
    ns.add_argument("uri")
    nl = nsub.add_parser("list", help="the project's nodes (and global ones), best priority first", parents=parents)
    nl.add_argument("--scope", choices=("project", "all"), default="project")


def cli_level(verbose: int) -> int:
    return logging.WARNING - 10 * min(verbose, 2)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    passed: list[str] = []
    if "run" in argv and "--" in argv[argv.index("run"):]:  # the agent's own arguments, untouched
        cut = argv.index("--", argv.index("run"))
        argv, passed = argv[:cut], argv[cut + 1:]
    args = build_parser().parse_args(argv)
    if args.verb == "run":
        args.args = [*args.args, *passed]
    try:
        setup_logging(cli_level(args.verbose), args.log_file)
    except OSError as exc:
        print(f"lore-sidecar: cannot write the log file: {exc}", file=sys.stderr)
        return 2
    if args.verb is None:
        if not args.stdio and sys.stdin.isatty():
            build_parser().print_help()
            return 0
        return serve(args)
    if args.verb == "hook":
        from lore_sidecar.hook.command import run_hook

        return run_hook(args.event, sys.stdin, sys.stdout, store_dir=args.store_dir, harness=args.harness)
    try:
        if args.verb == "hook-daemon":
            from lore_sidecar.hook.daemon import run_daemon

            return run_daemon(args.store_dir, str(Path(args.workspace).resolve()),
                              args.idle_ms / 1000 if args.idle_ms else None)
        if args.verb == "indexer":
            return run_indexer(args)
        if args.verb in ("install", "uninstall"):
            from lore_sidecar.setup.commands import run

            return run(args)
        if args.verb == "doctor":
            from lore_sidecar.setup.doctor import run_doctor

            return run_doctor(args)
        if args.verb == "completion":
            from lore_sidecar.setup.completion import script

            print(script(build_parser(), args.shell))
            return 0
        if args.verb == "gateway":
            from lore_sidecar.gateway.serve import run_gateway

            return run_gateway(args.store_dir, str(Path(args.workspace).resolve()), args.host, args.port,
                               args.upstream, cli_chose_logging=bool(args.verbose or args.log_file), leased=args.leased)
        if args.verb == "run":
            from lore_sidecar.gateway.run import run_harness

            return run_harness(args.harness, args.args, args.store_dir, args.upstream, tools=not args.no_tools)
        if args.verb == "mcp":
            import os

            from lore_sidecar.mcp_face.serve import run_mcp

            return run_mcp(args.store_dir, str(Path(args.workspace).resolve()),
                           args.harness or os.environ.get("LORE_HARNESS") or None,
                           cli_chose_logging=bool(args.verbose or args.log_file))
        if args.verb == "shared":
            from lore_sidecar.shared.commands import run_shared

            return run_shared(args)
        if args.verb == "ui":
            from lore_sidecar.ui.serve import run_ui

            return run_ui(args.store_dir, str(Path(args.workspace).resolve()), args.port, not args.no_browser,
                          cli_chose_logging=bool(args.verbose or args.log_file))
        if args.verb == "savings":
            from lore_sidecar.savings_table import run_savings

            return run_savings(args)
        if args.verb in ("backup", "restore"):
            from lore_sidecar.verbs import run_backup

            return run_backup(args)
        if args.verb == "demo":
            from lore_sidecar.demo import run_demo

            return run_demo(Path(args.folder), args.query, store_dir=args.store_dir)
        from lore_sidecar.verbs import run_verb

        return run_verb(args)
    except Exception as exc:  # a human verb: one clear line, not a traceback
        return fail(exc, args.verbose)


def run_indexer(args: argparse.Namespace) -> int:
    from lore_sidecar import background

    if not args.stop:
        return background.run(args.store_dir, str(Path(args.workspace).resolve()), after_pid=args.after_pid,
                              lock_fd=args.lock_fd, idle_s=args.idle_ms / 1000 if args.idle_ms else background.IDLE_S)
    from lore_sidecar.settings import load_settings

    settings, _ = load_settings(workspace_root=Path(args.workspace).resolve(),
                                cli={"storeDir": args.store_dir} if args.store_dir else {})
    stopped = background.stop(Path(settings.store_dir))
    print(f"stopped the background indexer (pid {stopped['pid']})" if stopped else "no background indexer was running")
    return 0


def fail(exc: Exception, verbose: int) -> int:
    from lore_sidecar.errors import LoreError

    if isinstance(exc, LoreError):
        print(f"lore-sidecar: {exc.message} ({exc.kind})", file=sys.stderr)
        return 2
    if isinstance(exc, OSError):
        where = f" {exc.filename}" if exc.filename else ""
        print(f"lore-sidecar: cannot use{where}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    log.error("%s: %s", type(exc).__name__, exc, exc_info=verbose > 0)
    print(f"lore-sidecar: internal error ({type(exc).__name__}: {exc}); run with -v for details", file=sys.stderr)
    return 1


def serve(args: argparse.Namespace) -> int:
    collector.start_up()  # fewer collector passes while pygls and lsprotocol are imported
    try:
        from lore_sidecar.rpc.server import create_server, serve_stdio

        options: dict[str, Any] = {"clientProcessId": args.client_pid}
        if args.store_dir:
            options["storeDir"] = args.store_dir
        if args.verbose:
            options["logLevel"] = logging.getLevelName(cli_level(args.verbose))
        if args.log_file:
            options["logFile"] = args.log_file
        server = create_server(options)
    except BaseException:
        collector.started()
        raise
    return serve_stdio(server)  # which ends start-up's setting once `initialize` is answered

if __name__ == "__main__":
    raise SystemExit(main())
