"""Command line: `lore-sidecar --stdio` serves the protocol; verbs run the same engine."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from lore_sidecar import __version__

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
    x.add_argument("--scope", choices=("workspace", "all"), default="all")

    d = sub.add_parser("demo", help="spawn the sidecar over stdio, index a folder, record a chat, recall")
    d.add_argument("folder", nargs="?", default=".", help="folder to index (default: .)")
    d.add_argument("query", nargs="?", default="how does the writer lock elect a single writer", help="what to recall")
    return p


def setup_logging(verbose: int, log_file: str | None) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
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
        elif args.verb == "recall":
            if not args.no_index and engine.role.writer:
                engine.index_workspace()
                engine.wait_indexed(120)
            sources = args.sources.split(",") if args.sources else None
            result = engine.recall(args.query, scope=args.scope, sources=sources, limit=args.limit)
            if args.json:
                from lore_sidecar.rpc.handlers import recall_to_wire

                print(json.dumps(recall_to_wire(result), indent=2))
            else:
                print_hits(result.hits, result.total, result.took_ms)
    finally:
        engine.close()
    return 0


def print_hits(hits: list[Any], total: int, took_ms: float) -> None:
    if not hits:
        print("no hits")
        return
    for i, h in enumerate(hits, 1):
        d = h if isinstance(h, dict) else {"score": h.score, "uri": h.uri, "cues": h.cues, "snippet": h.snippet}
        cues = " · ".join(d["cues"] or [])
        print(f"{i:2d}. {d['score']:.4f}  {d['uri']}")
        if cues:
            print(f"     cues: {cues}")
        print(f"     {d['snippet'][:160]}")
    print(f"({len(hits)} of {total} hits, {took_ms:.1f} ms)")


if __name__ == "__main__":
    raise SystemExit(main())
