"""Conversation memory as the engine facade sees it: node operations by name (so a follower
can spool them and the writer apply them), reading distillations, nodes and entities by
URI, recall hits for those tiers, alias expansion, and `.lore.md` export and import."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from lore_sidecar.engine.capture.redact import redact
from lore_sidecar.engine.jail import Jail
from lore_sidecar.engine.memory import lore_md
from lore_sidecar.engine.memory import nodes as rules
from lore_sidecar.engine.memory.curator import project_name
from lore_sidecar.engine.memory.knowledge import Knowledge
from lore_sidecar.engine.recall import query as q
from lore_sidecar.errors import FENCED, LoreError, not_found
from lore_sidecar.model import Hit, NodeContent

NODE_OPS = ("createNode", "updateNode", "moveNode", "deleteNode", "retain", "forget", "countUse", "logRecall")
LORE_MD = ".lore.md"
MAX_LORE_MD_BYTES = 16 << 20
_SLUG = re.compile(r"[^a-z0-9]+")


def _adding(also, **extra: Any):
    """The `also` hook (which records an operation's result with it) given the whole result:
    a follower or another machine is answered exactly what the writer answers here."""
    if also is None:
        return None
    return lambda c, result: also(c, {**result, **extra})


def slug(text: str, words: int = 6) -> str:
    return "-".join(_SLUG.sub(" ", text.lower()).split()[:words]) or "note"


class Memory:
    def __init__(self, records, knowledge: Knowledge):
        self.records = records
        self.rows = records.memory
        self.nodes = records.nodes
        self.knowledge = knowledge

    # -- node operations by name ------------------------------------------------------------------
    def check(self, method: str, root: str, args: dict[str, Any]) -> dict[str, Any]:
        """Refusals that need no store (run before a follower spools); returns the args the
        writer will apply (a retain gets its URI here, so both sides agree on it)."""
        k = self.knowledge
        if method == "createNode":
            k.check_create(**{f: args.get(f) for f in ("uri", "content", "category", "priority", "disclosure", "scope", "sources")})
        elif method == "updateNode":
            rules.parse_uri(args["uri"])
            k.check_update(args.get("changes", {}))
        elif method == "moveNode":
            rules.parse_uri(args["uri"])
            rules.parse_uri(args["new_uri"])
        elif method in ("deleteNode", "forget"):
            rules.parse_uri(args["uri"])
        elif method == "retain":
            args = {**args, "uri": args.get("uri") or self.retain_uri(root, args)}
            k.check_create(uri=args["uri"], content=args["content"], category=args.get("category"),
                           priority=args.get("priority"), disclosure=args.get("disclosure"), scope=args.get("scope"),
                           sources=args.get("sources"))
        elif method not in ("countUse", "logRecall"):
            raise ValueError(f"unknown node operation {method!r}")
        return args

    def apply(self, method: str, root: str, args: dict[str, Any], runtime: str, also=None) -> dict[str, Any]:
        k = self.knowledge
        if method == "createNode":
            return k.create(root, runtime=runtime, also=also, **args)
        if method == "updateNode":
            return k.update(args["uri"], changes=args.get("changes", {}), expected_version=args.get("expected_version"),
                            runtime=runtime, also=also, review=args.get("review"))
        if method == "moveNode":
            return k.move(args["uri"], args["new_uri"], runtime=runtime, also=also)
        if method == "deleteNode":
            return k.delete(args["uri"], runtime=runtime, also=also, reason=args.get("reason"), review=args.get("review"))
        if method == "forget":
            return {**k.delete(args["uri"], runtime=runtime, reason=args.get("reason") or "forgotten",
                               also=_adding(also, forgotten=True)), "forgotten": True}
        if method == "retain":
            return self._retain(root, args, runtime, also)
        if method in ("logRecall", "countUse"):  # usage bookkeeping, one small transaction
            with self.nodes.write() as c:
                if method == "logRecall":
                    self.nodes.log_recall(c, args["query_id"], args.get("session_id"), runtime, int(args["leads"]), k.clock(),
                                          [str(u) for u in (args.get("uris") or [])][:50])
                    result = {"logged": True}
                else:
                    result = {"counted": self.nodes.count_use(c, args["query_id"], args["uri"], args.get("session_id"),
                                                              runtime, k.clock())}
                if also:
                    also(c, result)
                return result
        raise ValueError(f"unknown node operation {method!r}")

    def apply_distillation(self, root: str, payload: dict[str, Any], also=None) -> dict[str, Any]:
        """A distillation another machine of the team made, with the entities it taught and
        the older distillations it consolidates (named by their ids, the same everywhere)."""
        with self.rows.write() as c:
            pid = self.records.ensure_project_in(c, root)
            key = self.rows.add_distillation(c, {**payload["dist"], "project_id": pid, "first_msg": None, "last_msg": None})
            ids = {name: self.rows.upsert_entity(c, pid, name, kind, aliases, payload["dist"]["created_at"])
                   for name, kind, aliases in payload.get("entities") or []}
            for subj, rel, obj, evidence in payload.get("relations") or []:
                if subj in ids and obj in ids:
                    self.rows.relate(c, pid, ids[subj], rel, ids[obj], evidence)
            old = [r["id"] for d in payload.get("consolidates") or [] if (r := self.rows.by_dist_id(d)) is not None]
            if old:
                self.rows.consolidate(c, old, key)
            result = {"distId": payload["dist"]["dist_id"]}
            if also:
                also(c, result)
            return result

    def retain_uri(self, root: str, args: dict[str, Any]) -> str:
        category = args.get("category") or "note"
        title = args.get("title") or args.get("content") or ""
        if (args.get("scope") or "project") == "global":
            return f"preferences://user/{slug(title)}" if category == "preference" else f"global://{category}/{slug(title)}"
        return f"project://{project_name(root)}/{category}/{slug(title)}"

    def _retain(self, root: str, args: dict[str, Any], runtime: str, also) -> dict[str, Any]:
        """A structured save: creates the node, or updates the one at that URI."""
        fields = {f: args.get(f) for f in ("content", "category", "priority", "disclosure", "scope", "sources")}
        uri = args.get("uri") or self.retain_uri(root, args)
        if self.nodes.live(uri) is None:
            out = self.knowledge.create(root, uri=uri, expires_at=args.get("expires_at"), runtime=runtime,
                                        also=_adding(also, created=True), **fields)
            return {**out, "created": True}
        changes = {f: v for f, v in fields.items() if v is not None}
        out = self.knowledge.update(uri, changes=changes, runtime=runtime, also=_adding(also, created=False))
        return {**out, "created": False}

    # -- reads ------------------------------------------------------------------------------------
    def get(self, uri: str) -> NodeContent:
        if uri.startswith("distillation://"):
            row = self.rows.by_dist_id(uri[len("distillation://"):])
            if row is None:
                raise not_found(uri)
            return NodeContent(uri=uri, source="distillations", content=row["text"], metadata={
                "sessionId": row["session_id"], "generation": row["generation"], "covers": row["covers"],
                "mode": row["mode"], "model": row["model"], "promptVersion": row["prompt_version"],
                "consolidatedInto": self._dist_uri(row["consolidated_into"]), "createdAt": row["created_at"],
                "project": row["project_root"]})
        if uri.startswith("entity://"):
            row = self.rows.entity_by_name(unquote(uri[len("entity://"):]))
            if row is None:
                raise not_found(uri)
            relations = [dict(r) for r in self.rows.entity_relations(row["id"])]
            aliases = json.loads(row["aliases"])
            lines = [f"{row['name']} ({row['kind']})", *(f"alias: {a}" for a in aliases),
                     *(f"{r['subject']} {r['relation']} {r['object']}" for r in relations)]
            return NodeContent(uri=uri, source="entities", content="\n".join(lines), metadata={
                "name": row["name"], "kind": row["kind"], "aliases": aliases, "mentions": row["mentions"],
                "relations": relations, "firstSeen": row["first_seen"]})
        node = self.knowledge.get(uri)
        return NodeContent(uri=uri, source="knowledge", content=node["content"], metadata=node)

    def _dist_uri(self, key: int | None) -> str | None:
        if key is None:
            return None
        row = self.rows.by_ids([key]).get(key)
        return f"distillation://{row['dist_id']}" if row else None

    def list_domains(self, project_ids: list[int] | None) -> dict[str, Any]:
        return {"domains": [{"domain": r["domain"], "scope": r["scope"], "nodes": r["nodes"], "bestPriority": r["best"]}
                            for r in self.nodes.domains(project_ids)]}

    def list_nodes(self, project_ids: list[int] | None) -> list[dict[str, Any]]:
        """Every live node of these projects (and the global ones), best priority first."""
        return [self.knowledge.wire(r) for r in self.nodes.listing(project_ids)]

    def boot_nodes(self, project_ids: list[int] | None, at: str, min_priority: int = 1) -> list[dict[str, Any]]:
        """Knowledge in force (not suppressed, not expired) at priority <= `min_priority`
        (0-1 by default: the boot block), best first."""
        return [self.knowledge.wire(r) for r in self.nodes.listing(project_ids, min_priority=min_priority, limit=60)
                if not r["suppressed"] and not (r["expires_at"] and r["expires_at"] <= at)]

    # -- recall -----------------------------------------------------------------------------------
    def rows_for(self, kind: str, keys: Sequence[int]) -> dict[int, Any]:
        if kind == "distillations":
            return self.rows.by_ids(keys)
        if kind == "knowledge":
            return self.nodes.by_ids(keys)
        return self.rows.entity_rows(keys)

    def admits(self, kind: str, row, at: str) -> bool:
        if kind == "knowledge":
            return row["deleted_at"] is None and not row["suppressed"] and not (row["expires_at"] and row["expires_at"] <= at)
        return True

    def hit(self, kind: str, row, score: float, terms: list[str], analyze: Callable) -> Hit:
        if kind == "distillations":
            return Hit(uri=f"distillation://{row['dist_id']}", source="distillations", score=round(score, 6),
                       snippet=q.snippet(row["text"], terms), cues=q.cues(terms, row["text"], analyze),
                       title=f"observations of {row['session_id']} (gen {row['generation']}, {row['covers']} messages)",
                       session_id=row["session_id"], created_at=row["created_at"])
        if kind == "knowledge":
            stale = json.loads(row["stale"]) if row["stale"] else None
            flags = [row["category"] or "note", f"p{row['priority']}"] + (["possibly stale"] if stale else [])
            return Hit(uri=row["uri"], source="knowledge", score=round(score, 6), snippet=q.snippet(row["content"], terms),
                       cues=q.cues(terms, row["content"], analyze), title=" · ".join(flags), created_at=row["updated_at"],
                       category=row["category"], priority=row["priority"], stale=stale)
        aliases = json.loads(row["aliases"])
        text = row["name"] + " " + " ".join(aliases)
        return Hit(uri=f"entity://{quote(row['name'], safe='/')}", source="entities", score=round(score, 6),
                   snippet=f"{row['name']} ({row['kind']})" + (f"; also {', '.join(aliases[:5])}" if aliases else ""),
                   cues=q.cues(terms, text, analyze), title=row["kind"])

    def expansions(self, project_ids: list[int] | None, query: str) -> list[str]:
        """Other names of the entities the query names (`db.py` -> `src/app/db.py`; "the
        persistence layer" -> the file the model said it is). Names are matched as written:
        single words and runs of up to four words."""
        words = [w.strip(",.;:!?()[]{}\"'`").lower() for w in query.split()]
        words = [w for w in words if w]
        names = {" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, min(len(words), i + 4) + 1)}
        extra: list[str] = []
        for row in self.rows.expansions(project_ids, sorted(names)[:200]):
            for name in [row["name"], *json.loads(row["aliases"])]:
                if name.lower() not in names and name not in extra:
                    extra.append(name)
        return extra[:12]

    # -- .lore.md -----------------------------------------------------------------------------------
    def export(self, root: str, project_id: int | None, path: Path | None = None, *, jail: Jail | None = None) -> dict[str, Any]:
        """Write the project's knowledge as `.lore.md` (redacted), inside the jail only."""
        rows = self.nodes.listing([project_id] if project_id is not None else [], include_global=False)
        nodes = [{**n, "content": redact(n["content"]), "disclosure": redact(n["disclosure"]) if n.get("disclosure") else None}
                 for n in (self.knowledge.wire(r) for r in rows if r["scope"] == "project")]
        text = lore_md.render(nodes)
        target = path or Path(root) / LORE_MD
        jail = jail if jail is not None else Jail.of([root])
        written = jail.write_atomic(target, text.encode())
        return {"path": str(written), "nodes": len(nodes), "sha256": hashlib.sha256(text.encode()).hexdigest()}

    def import_file(self, c, root: str, text: str, runtime: str = "import") -> dict[str, Any]:
        """Inside the caller's transaction: create the nodes the file has and the store does
        not, update the ones that differ. Nodes missing from the file are left alone (a file
        from an older checkout must not delete newer knowledge)."""
        parsed, problems = lore_md.parse(text)
        out = {"created": 0, "updated": 0, "unchanged": 0, "problems": problems}
        k = self.knowledge
        for n in parsed:
            fields = {"content": n["content"], "category": n["category"], "priority": n["priority"],
                      "disclosure": n["disclosure"], "scope": n["scope"], "sources": n["sources"] or []}
            try:
                live = self.nodes.live(n["uri"], c)
                if live is None:
                    checked = k.check_create(uri=n["uri"], **fields)
                    k.create_in(c, root, checked, expires_at=n["expiresAt"], runtime=runtime)
                    if n["suppressed"]:
                        k.update_in(c, n["uri"], {"suppressed": True}, expected_version=None, runtime=runtime)
                    out["created"] += 1
                    continue
                have = k.wire(live)
                changes = {f: v for f, v in fields.items() if v != have[f] and v is not None}
                if n["expiresAt"] != have["expiresAt"]:
                    changes["expires_at"] = n["expiresAt"]
                if n["suppressed"] != have["suppressed"]:
                    changes["suppressed"] = n["suppressed"]
                if not changes:
                    out["unchanged"] += 1
                    continue
                k.check_update(changes)
                k.update_in(c, n["uri"], changes, expected_version=None, runtime=runtime)
                out["updated"] += 1
            except LoreError as exc:
                if exc.kind in FENCED:
                    raise
                problems.append(f"{n['uri']}: {exc.message}")
        return out

    def import_if_changed(self, root: str, *, jail: Jail | None = None) -> dict[str, Any] | None:
        path = Path(root) / LORE_MD
        jail = jail if jail is not None else Jail.of([root])
        try:
            text = jail.read_bytes(path, max_bytes=MAX_LORE_MD_BYTES).decode()
        except (LoreError, OSError, UnicodeDecodeError):
            return None
        digest = hashlib.sha256(text.encode()).hexdigest()
        key = f"lore_md:{root}"
        if self.records.meta(key) == digest:
            return None
        with self.nodes.write() as c:
            result = self.import_file(c, root, text)
            self.records.set_meta(c, key, digest)
        return result
