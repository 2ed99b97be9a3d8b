"""Command line: `lore-sidecar --stdio` serves the protocol; verbs run the same engine."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from lore_sidecar import __version__
from lore_sidecar.terminal import print_hits

log = logging.getLogger("lore_sidecar")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="lore-sidecar",
        description="Memory engine for AI coding agents and editors, spoken to over LSP-framed JSON-RPC.",
        epilog="With no verb and stdin not a terminal, serves the protocol on stdio.",
    )
    p.add_argument("--version", action="version", version=f"lore-sidecar {__version__}")
    p.add_argument("--stdio", action="store_true", help="serve JSON-RPC on stdin/stdout (default when stdin is not a TTY)")
    p.add_argument("--store-dir", help="store location (default: $LORE_STORE_DIR or the platform data dir)")
    p.add_argument("--clientProcessId", "--client-process-id", type=int, dest="client_pid", help="exit when this process dies")
    p.add_argument("-v", "--verbose", action="count", default=0, help="more logging on stderr (-vv for debug)")
    p.add_argument("--log-file", help="write logs to this file instead of stderr")
    sub = p.add_subparsers(dest="verb", metavar="VERB")

    s = sub.add_parser("status", help="print the store's status as JSON")
    s.add_argument("--workspace", default=".", help="workspace folder (default: .)")

    r = sub.add_parser("recall", help="search memory and print the hits")
    r.add_argument("query")
    r.add_argument("--workspace", default=".", help="workspace folder (default: .)")
    r.add_argument("--limit", type=int, default=10)
    r.add_argument("--scope", choices=("project", "all"), default="project")
    r.add_argument("--sources", help="comma-separated: messages,files,...")
    r.add_argument("--json", action="store_true", help="print the raw result")
    r.add_argument("--no-index", action="store_true", help="do not refresh the workspace index first")

    x = sub.add_parser("reindex", help="rebuild the derived indexes from the record")
    x.add_argument("--workspace", default=".", help="workspace folder (default: .)")
    x.add_argument("--scope", choices=("workspace", "facts", "all"), default="all")

    e = sub.add_parser("export", help="write the project's knowledge to .lore.md (stable order, reviewable diffs)")
    e.add_argument("--workspace", default=".", help="workspace folder (default: .)")
    e.add_argument("--out", help="file to write (default: <project root>/.lore.md)")
    i = sub.add_parser("import", help="read the project's .lore.md into the store now (the writer also does this on start)")
    i.add_argument("--workspace", default=".", help="workspace folder (default: .)")
    ds = sub.add_parser("distill", help="distil every undistilled conversation segment now")
    ds.add_argument("--workspace", default=".", help="workspace folder (default: .)")
    ds.add_argument("--session", help="only this session")

    f = sub.add_parser("facts", help="bitemporal facts: assert, invalidate, query, timeline")
    fsub = f.add_subparsers(dest="facts_verb", metavar="ACTION", required=True)
    fa = fsub.add_parser("assert", help="record a fact (appended to the journal)")
    fa.add_argument("subject")
    fa.add_argument("predicate")
    fa.add_argument("object")
    fa.add_argument("--valid-from", help="when it became true (date or ISO time; default: now)")
    fa.add_argument("--valid-until", help="when it stops being true")
    fa.add_argument("--source", choices=("stated", "inferred"))
    fa.add_argument("--confidence", type=float)
    fi = fsub.add_parser("invalidate", help="record that a fact stopped being true")
    fi.add_argument("subject")
    fi.add_argument("predicate")
    fi.add_argument("--valid-until", help="when it stopped (default: now)")
    fq = fsub.add_parser("query", help="what is (or was, or was believed) true")
    fq.add_argument("--subject")
    fq.add_argument("--predicate")
    fq.add_argument("--object")
    fq.add_argument("--text")
    fq.add_argument("--as-of", help="valid time")
    fq.add_argument("--as-known-at", help="record time: only what was known then")
    fq.add_argument("--history", action="store_true", help="every row, superseded ones too")
    fq.add_argument("--limit", type=int, default=50)
    ft = fsub.add_parser("timeline", help="a subject's changes in valid-time order")
    ft.add_argument("subject")
    for sp in (fa, fi, fq, ft):
        sp.add_argument("--workspace", default=".", help="workspace folder (default: .)")
        sp.add_argument("--json", action="store_true", help="print the raw result")

    h = sub.add_parser("hook", help="run as a host's hook command (reads the host's JSON on stdin; never fails the host)")
    h.add_argument("--harness", help="the host's name for usage accounting (default: claude-code, or $LORE_HARNESS)")
    h.add_argument("event", help="SessionStart, UserPromptSubmit, Stop, SessionEnd (Claude Code names; Codex's map to these)")

    hd = sub.add_parser("hook-daemon", help="the warm process `hook` talks to (started on demand by `hook`)")
    hd.add_argument("--workspace", default=".", help="workspace folder to index (default: .)")
    hd.add_argument("--idle-ms", type=int, help="exit after this long without a request (default: setting hookIdleMs)")
    d = sub.add_parser("demo", help="spawn the sidecar over stdio, index a folder, record a chat, recall")
    d.add_argument("folder", nargs="?", default=".", help="folder to index (default: .)")
    d.add_argument("query", nargs="?", default="how does the writer lock elect a single writer", help="what to recall")
    return p


class BoundedRecords(logging.Filter):
    """Every log line redacted and cut to `MAX_LOG_CHARS`: a hostile request's params (or a
    library logging a message body) can neither fill the disk nor leak a secret to the log."""

    MAX_LOG_CHARS = 2000

    def filter(self, record: logging.LogRecord) -> bool:
        from lore_sidecar.engine.capture.redact import redact

        try:
            text = record.getMessage()
        except Exception:  # a bad format string is still one bounded line
            text = str(record.msg)
        if len(text) > self.MAX_LOG_CHARS:
            text = text[: self.MAX_LOG_CHARS] + f"… [{len(text) - self.MAX_LOG_CHARS} more characters]"
        record.msg, record.args = redact(text), None
        if record.exc_info and record.exc_info[1] is not None:
            # Keep the traceback, but bounded like the message.
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info)[-self.MAX_LOG_CHARS:])
            record.exc_info = None
        return True


def setup_logging(verbose: int, log_file: str | None) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(BoundedRecords())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # pygls logs whole message bodies at INFO: never let it follow -v.
    logging.getLogger("pygls").setLevel(logging.WARNING)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(args.verbose, args.log_file)
    if args.verb is None:
        if not args.stdio and sys.stdin.isatty():
            build_parser().print_help()
            return 0
        return serve(args)
    if args.verb == "hook":
        from lore_sidecar.hook.command import run_hook

        return run_hook(args.event, sys.stdin, sys.stdout, store_dir=args.store_dir, harness=args.harness)
    if args.verb == "hook-daemon":
        from lore_sidecar.hook.daemon import run_daemon

        return run_daemon(args.store_dir, str(Path(args.workspace).resolve()),
                          args.idle_ms / 1000 if args.idle_ms else None)
    try:
        if args.verb == "demo":
            from lore_sidecar.demo import run_demo

            return run_demo(Path(args.folder), args.query, store_dir=args.store_dir)
        return run_verb(args)
    except Exception as exc:  # a human verb: a clear line, not a traceback
        from lore_sidecar.errors import LoreError

        if isinstance(exc, LoreError):
            print(f"lore-sidecar: {exc.message} ({exc.kind})", file=sys.stderr)
            return 2
        raise


def serve(args: argparse.Namespace) -> int:
    from lore_sidecar.rpc.server import create_server, serve_stdio

    options: dict[str, Any] = {"clientProcessId": args.client_pid}
    if args.store_dir:
        options["storeDir"] = args.store_dir
    return serve_stdio(create_server(options))


def _open(args: argparse.Namespace, workspace: str):
    from lore_sidecar.app import open_engine
    from lore_sidecar.settings import load_settings

    settings, warnings = load_settings(
        workspace_root=Path(workspace).resolve(), cli={"storeDir": args.store_dir} if args.store_dir else {}
    )
    for w in warnings:
        print(f"lore-sidecar: settings: {w}", file=sys.stderr)
    return open_engine(settings, [workspace])


def run_verb(args: argparse.Namespace) -> int:
    engine = _open(args, args.workspace)
    try:
        if args.verb == "status":
            print(json.dumps(engine.status(), indent=2))
        elif args.verb == "reindex":
            result = engine.reindex(args.scope, lambda msg, pct: print(f"  {msg}", file=sys.stderr))
            print(json.dumps(result, indent=2))
        elif args.verb == "facts":
            run_facts(engine, args)
        elif args.verb == "export":
            result = engine.export_knowledge(path=args.out)
            print(f"wrote {result['nodes']} nodes to {result['path']}")
        elif args.verb == "import":
            print(json.dumps(engine.import_knowledge(), indent=2))
        elif args.verb == "distill":
            print(json.dumps(engine.distill(session_id=args.session), indent=2))
        elif args.verb == "recall":
            if not args.no_index and engine.role.writer:
                engine.index_workspace()
                engine.wait_indexed(120)
            sources = args.sources.split(",") if args.sources else None
            result = engine.recall(args.query, scope=args.scope, sources=sources, limit=args.limit)
            if args.json:
                from lore_sidecar.wire.results import recall_to_wire

                print(json.dumps(recall_to_wire(result), indent=2))
            else:
                print_hits(result.hits, result.total, result.took_ms)
    finally:
        engine.close()
    return 0


def run_facts(engine, args: argparse.Namespace) -> None:
    v = args.facts_verb
    if v == "assert":
        result = engine.assert_fact(project=None, subject=args.subject, predicate=args.predicate, object=args.object,
                                    valid_from=args.valid_from, valid_until=args.valid_until, source=args.source,
                                    confidence=args.confidence)
        line = f"{result['factId']} recorded at {result['recordedAt']}"
    elif v == "invalidate":
        result = engine.invalidate_fact(project=None, subject=args.subject, predicate=args.predicate,
                                        valid_until=args.valid_until)
        line = f"closed {', '.join(result['closed']) or 'nothing'} at {result['recordedAt']}"
    elif v == "query":
        result = engine.query_facts(subject=args.subject, predicate=args.predicate, object=args.object, text=args.text,
                                    as_of=args.as_of, as_known_at=args.as_known_at, history=args.history,
                                    limit=args.limit)
        line = "\n".join(
            f"{f['subject']} :: {f['predicate']} :: {f['object']}  [{f['validFrom'] or '…'} → {f['validUntil'] or '…'})"
            for f in result["facts"]
        ) or "no facts"
        if result["truncated"]:
            line += f"\n({len(result['facts'])} of {result['total']}; --limit for more)"
    else:
        result = engine.timeline(subject=args.subject)
        line = "\n".join(
            f"{e['at'] or '…'}  {e['event']:9s} {e['predicate']}" + (f" :: {e['object']}" if "object" in e else "")
            for e in result["events"]
        ) or "no events"
    print(json.dumps(result, indent=2) if args.json else line)


if __name__ == "__main__":
    raise SystemExit(main())
