"""The human verbs (`status`, `recall`, `facts`, `node`, `export`, ...): the same engine
the server runs, printed for people (or as JSON with `--json`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from lore_sidecar import logs
from lore_sidecar.terminal import interactive, print_hits, print_status, progress, table

# The longest a CLI call waits for what it (as the writer) just wrote to be searchable by its
# words; the meaning index is never waited for (a background indexer fills it).
WORDS_WAIT_S = 60.0
INDEXING_VERBS = ("recall", "ask")  # the verbs that scan first, and may leave embedding behind
# The verbs only the writer may run: a background indexer holding the role is stopped first
# (it saves what it embedded; the next recall starts it again if need be).
WRITER_VERBS = ("reindex", "distill", "import")


def open_engine_for(args: argparse.Namespace):
    from lore_sidecar.app import open_engine
    from lore_sidecar.settings import load_settings

    workspace = str(Path(args.workspace).resolve())
    settings, warnings = load_settings(
        workspace_root=Path(workspace), cli={"storeDir": args.store_dir} if args.store_dir else {}
    )
    logs.apply_settings(settings, cli_chose=bool(args.verbose or args.log_file))
    for w in warnings:
        print(f"lore-sidecar: settings: {w}", file=sys.stderr)
    if args.verb in WRITER_VERBS:
        from lore_sidecar import background

        if background.stop(Path(settings.store_dir)):
            print("lore-sidecar: stopped the background indexer to take the writer role", file=sys.stderr)
    # A CLI call embeds nothing itself: it would either hold the answer up (120 s for a fresh
    # 1,000-file repository) or be cut off on exit; whoever writes next fills the meaning index.
    # `reindex` is the exception: a rebuild is asked for whole, and it waits for every leg.
    return open_engine(settings, [workspace], embed=args.verb == "reindex")


def searchable_now(engine, args: argparse.Namespace) -> None:
    """The writer brings the workspace's words up to date before answering (the followers'
    writer does it for them); nothing waits for the meaning index."""
    if getattr(args, "no_index", False) or not engine.role.writer:
        return
    with progress("indexing the workspace", interactive(args.json)) as report:
        engine.index.scan(report)
        report("making it searchable", None)
        engine.index.wait_words(WORDS_WAIT_S)


def still_coming(engine, args: argparse.Namespace) -> None:
    """Say on stderr what the answer could not include yet, and, as the writer leaving the
    meaning index behind, start the background indexer that takes the role over when this
    call exits (lore_sidecar/background.py)."""
    from lore_sidecar import background

    state = engine.index.progress()
    store = engine.settings.store_dir
    started = False
    if engine.role.writer and state["meaning"]["chunksToGo"] and engine.settings.index.index_workspace:
        started = background.start(store, str(Path(args.workspace).resolve()), after_pid=os.getpid())
    if state["message"]:
        running = background.info(store)
        who = ("a background indexer is starting" if started else
               f"background indexer pid {running['pid']} is embedding" if running and running.get("pid") else
               f"the writer (pid {engine.role.writer_pid}) is indexing" if not engine.role.writer else "")
        print(f"lore-sidecar: {state['message']}" + (f" ({who})" if who and state["meaning"]["chunksToGo"] else ""),
              file=sys.stderr)


def run_verb(args: argparse.Namespace) -> int:
    engine = open_engine_for(args)
    try:
        if args.verb == "status":
            status = engine.status()
            if interactive(args.json):
                from lore_sidecar.savings_table import summary

                print_status(status, [("savings, 7 days", summary(status["savings"]["total"]))])
            else:
                print(json.dumps(status, indent=2))
        elif args.verb == "reindex":
            with progress("reindexing", interactive(args.json)) as report:
                result = engine.index.rebuild(args.scope, report)
            if interactive(args.json):
                print(f"reindexed: {result['files']} files, {result['chunks']} chunks in {result['tookMs'] / 1000:.1f} s"
                      f" (generation {result['generation']})")
            else:
                print(json.dumps(result, indent=2))
        elif args.verb == "facts":
            run_facts(engine, args)
        elif args.verb == "node":
            run_node(engine, args)
        elif args.verb == "export":
            with progress("exporting knowledge", interactive()) as report:
                report("writing .lore.md", None)
                result = engine.memory.export_knowledge(path=str(Path(args.out).resolve()) if args.out else None)
            print(f"wrote {result['nodes']} nodes to {result['path']}")
        elif args.verb == "import":
            with progress("importing .lore.md", interactive()) as report:
                report("reading", None)
                result = engine.memory.import_knowledge()
            print(json.dumps(result, indent=2))
        elif args.verb == "distill":
            print(json.dumps(engine.memory.distill(session_id=args.session), indent=2))
        elif args.verb == "recall":
            run_recall(engine, args)
        elif args.verb == "ask":
            if engine.ask.model is None:  # retrieval answers need the index (a model reads the files itself)
                searchable_now(engine, args)
            result = engine.ask.ask(question=args.question, harness="cli")
            print(json.dumps(result, indent=2) if args.json else ask_text(result))
        elif args.verb == "ask-stats":
            print(json.dumps(engine.ask.stats(), indent=2))
        elif args.verb == "review":
            r = engine.maintenance.review(threshold=args.threshold)
            print(json.dumps(r, indent=2) if args.json else "\n".join(
                [f"{i['retrievability']:.2f}  {i['uri']}  — {i['reason']}" for i in r["items"]]
                + [f"{r['total']} below {r['threshold']:g}" + (" (first 50 shown)" if r["truncated"] else "")]))
        elif args.verb == "dream":
            if args.rollback:
                r = engine.maintenance.rollback(run_id=None if args.rollback == "latest" else args.rollback)
            else:
                r = engine.maintenance.dream(dry_run=args.dry_run)
            print(json.dumps(r, indent=2) if args.json or args.rollback else "\n".join(
                [f"{'applied ' if c['applied'] else 'proposed'}  {c['action']:<13} {c['uri']}  — {c['reason']}"
                 for c in r["changes"]] + [f"{r['runId']}: {r['applied']} applied, {r['proposed']} proposed ({r['mode']})"]))
        if args.verb in INDEXING_VERBS:
            still_coming(engine, args)
    finally:
        engine.close()
    return 0


def run_backup(args: argparse.Namespace) -> int:
    """`backup` and `restore`: no engine of their own (a backup reads the store under running
    sidecars; a restore opens one on the staged copy to try it out)."""
    from lore_sidecar import backups
    from lore_sidecar.settings import load_settings

    settings, _ = load_settings(workspace_root=Path(args.workspace).resolve(),
                                cli={"storeDir": args.store_dir} if args.store_dir else {})
    if args.verb == "backup":
        with progress("backing up the store", interactive(args.json)) as report:
            report("copying", None)
            r = backups.backup(settings, Path(args.out).resolve() if args.out else None)
        print(json.dumps(r, indent=2) if args.json else
              f"backup {r['path']}: {r['counts']['messages']} messages, {r['counts']['nodes']} nodes, "
              f"{r['counts']['facts']} facts" + (f"; removed {len(r['removed'])} older" if r["removed"] else ""))
    else:
        with progress("restoring", interactive(args.json)) as report:
            from lore_sidecar.app import open_engine

            r = backups.restore(settings, Path(args.backup).resolve(), open_engine, lambda message: report(message, None),
                                rebuild_indexes=args.rebuild_indexes)
        print(json.dumps(r, indent=2) if args.json else
              f"restored {r['store']} from {r['restoredFrom']} ({r['took']}; indexes {r['indexes']})"
              + (f"; the old store is at {r['previous']}" if r["previous"] else ""))
    return 0


def ask_text(r: dict) -> str:
    lines = [r["answer"]]
    if r["sources"]:
        lines += ["", "Sources:"] + [f"  {s['path']}" + (f":{s['lines']}" if s.get("lines") else "") for s in r["sources"]]
    t = r["trailer"]
    lines += ["", f"({r['mode']}{', ' + t['model'] if t['model'] else ''}; {t['latencyMs'] / 1000:.1f} s, "
                  f"{t['toolCalls']} tool calls, {t['filesRead']} files read, ${t['usd']:.4f})"]
    return "\n".join(lines)


def run_recall(engine, args: argparse.Namespace) -> None:
    searchable_now(engine, args)
    result = engine.recall(args.query, scope=args.scope, sources=args.sources, limit=args.limit)
    if args.json:
        from lore_sidecar.wire.results import recall_to_wire

        print(json.dumps(recall_to_wire(result), indent=2))
    else:
        print_hits(result.hits, result.total, result.took_ms)


def run_facts(engine, args: argparse.Namespace) -> None:
    v = args.facts_verb
    if v == "assert":
        result = engine.facts.assert_fact(project=None, subject=args.subject, predicate=args.predicate, object=args.object,
                                    valid_from=args.valid_from, valid_until=args.valid_until, source=args.source,
                                    confidence=args.confidence)
        line = f"{result['factId']} recorded at {result['recordedAt']}"
    elif v == "invalidate":
        result = engine.facts.invalidate_fact(project=None, subject=args.subject, predicate=args.predicate,
                                        valid_until=args.valid_until)
        line = f"closed {', '.join(result['closed']) or 'nothing'} at {result['recordedAt']}"
    elif v == "query":
        result = engine.facts.query(subject=args.subject, predicate=args.predicate, object=args.object, text=args.text,
                                    as_of=args.as_of, as_known_at=args.as_known_at, history=args.history,
                                    limit=args.limit)
        line = "\n".join(
            f"{f['subject']} :: {f['predicate']} :: {f['object']}  [{f['validFrom'] or '…'} → {f['validUntil'] or '…'})"
            for f in result["facts"]
        ) or "no facts"
        if result["truncated"]:
            line += f"\n({len(result['facts'])} of {result['total']}; --limit for more)"
    else:
        result = engine.facts.timeline(subject=args.subject)
        line = "\n".join(
            f"{e['at'] or '…'}  {e['event']:9s} {e['predicate']}" + (f" :: {e['object']}" if "object" in e else "")
            for e in result["events"]
        ) or "no events"
    if interactive(args.json) and v in ("query", "timeline"):
        if v == "query":
            table(f"{len(result['facts'])} of {result['total']} facts", ("subject", "predicate", "object", "valid from",
                                                                        "valid until", "recorded"),
                  [(f["subject"], f["predicate"], f["object"], f["validFrom"], f["validUntil"], f["recordedAt"])
                   for f in result["facts"]])
        else:
            table(f"timeline of {args.subject}", ("at", "event", "predicate", "object"),
                  [(e["at"], e["event"], e["predicate"], e.get("object")) for e in result["events"]])
        return
    print(json.dumps(result, indent=2) if args.json else line)


def run_node(engine, args: argparse.Namespace) -> None:
    v = args.node_verb
    if v == "create":
        result: Any = engine.memory.node_op("createNode", uri=args.uri, content=args.content, category=args.category,
                                     priority=args.priority, disclosure=args.disclosure, scope=None,
                                     sources=[{"path": s} for s in args.source] or None, expires_at=args.expires_at,
                                     runtime="cli")
        line = f"created {result['uri']} (version {result['version']})" + "".join(
            f"\nwarning: {w}" for w in result.get("warnings") or [])
    elif v == "show":
        node = engine.get_node(args.uri)
        result = {"uri": node.uri, "source": node.source, "content": node.content, "metadata": node.metadata}
        m = node.metadata
        head = f"{node.uri}  [{m.get('category') or 'note'}, p{m.get('priority')}, {m.get('scope')}]"
        line = f"{head}\n\n{node.content}"
    else:
        result = engine.memory.list_nodes(scope=args.scope)
        if interactive(args.json) and result["nodes"]:
            table(f"{result['total']} knowledge nodes", ("priority", "uri", "category", "content"),
                  [(f"p{n['priority']}" + (" (suppressed)" if n["suppressed"] else ""), n["uri"], n["category"] or "note",
                    n["content"][:100]) for n in result["nodes"]])
            return
        line = "\n".join(
            f"p{n['priority']} {n['uri']}" + (" (suppressed)" if n["suppressed"] else "") + f"\n   {n['content'][:100]}"
            for n in result["nodes"]) or "no knowledge nodes yet (create one: lore-sidecar node create URI TEXT)"
    print(json.dumps(result, indent=2) if args.json else line)
