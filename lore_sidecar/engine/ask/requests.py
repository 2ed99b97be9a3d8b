"""`lore/ask` and `lore/askStats`: questions about a workspace's code.

With a model (Anthropic, or an OpenAI-compatible endpoint) each workspace keeps a window
(engine/ask/window.py) and a knowledge ledger (ledger.py); a question forks the window, runs
the tool loop (loop.py) on the fork and commits what it learnt. Without one, the answer is
retrieval (retrieval.py) and says so.

Many askers at once: up to `askMaxParallel` questions per workspace run together (1: a FIFO
queue), each on a fork tagged with the window's version. A commit never overwrites: a fork
based on an older version appends its exchange after the ones committed meanwhile and merges
its facts and observations into the ledger (same fact: sources merged), so three concurrent
questions leave all three's learning. The window's lock is held only to fork and to commit,
never across a model call.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lore_sidecar.engine.ask import compaction, loop, retrieval, toolspec, window
from lore_sidecar.engine.ask import ledger as lg
from lore_sidecar.engine.ask.keepwarm import KeepWarm
from lore_sidecar.engine.ask.tools import Tools
from lore_sidecar.engine.context.prices import price_of, usd
from lore_sidecar.errors import LoreError, not_found
from lore_sidecar.model import NodeContent

READ_TOOLS = ("read", "read_file", "readfile", "view", "open_file", "cat")
PATH_IN_RESULT = re.compile(r'"(?:filePath|file_path|path)"\s*:\s*"([^"\\]{1,400})"')
FACT_REF = re.compile(r"\bF[0-9a-f]{7}\b")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _plain(content: str | None) -> str:
    """A stored message's content: JSON of a string or of blocks; the text either way."""
    try:
        value = json.loads(content or "")
    except ValueError:
        return content or ""
    return value if isinstance(value, str) else json.dumps(value)


class Slot:
    """One workspace: its window, the lock guarding it, and the gate for parallel askers."""

    def __init__(self, w: window.Window, parallel: int):
        self.w = w
        self.lock = threading.Lock()
        self.gate = threading.Semaphore(parallel)


class AskRequests:
    def __init__(self, instance: Any, model: Any = None, ledgers: Any = None):
        self.i = instance  # the engine: recall, get_node, projects, records, settings
        self.model = model  # converse(...) -> Turn, or None: retrieval mode
        self.ledgers = ledgers  # load(key) / save(key, dict): the ledger outlives the process
        self.s = instance.settings.ask
        self._slots: dict[str, Slot] = {}
        self._slots_lock = threading.Lock()
        self.answered: dict[str, int] = {}
        self.keep_warm: KeepWarm | None = None
        self._hashes: dict[tuple[str, str], tuple[tuple[int, ...], str]] = {}

    # -- the requests -------------------------------------------------------------------------------
    def ask(self, *, question: str, project: str | None = None, deadline_ms: int | None = None,
            harness: str | None = None) -> dict[str, Any]:
        """The answer, with what the index does not hold yet (`indexing`): asked before the
        workspace's first scan finished, a retrieval answer says so in its text too, and never
        that nothing matches."""
        indexing = self.i.index.progress(project)  # before: a scan that ends meanwhile did not cover the recall
        out = self._answer(question=question, project=project, deadline_ms=deadline_ms, harness=harness)
        out["indexing"] = indexing
        if indexing["stillIndexing"] and out["mode"] == "retrieval":
            out["answer"] = retrieval.still_indexing(out["answer"], indexing["filesSoFar"])
        return out

    def _answer(self, *, question: str, project: str | None, deadline_ms: int | None,
                harness: str | None) -> dict[str, Any]:
        if not question.strip():
            raise LoreError("invalidQuestion", "ask a question (it was empty)")
        t0 = time.monotonic()
        root = self.i.projects.root(project)
        if self.model is None:
            text, sources = retrieval.leads(self.i, question, project=project, harness=harness)
            self.answered[root] = self.answered.get(root, 0) + 1
            return {"answer": text, "mode": "retrieval", "sources": sources, "ledgerFacts": [], "finished": "answered",
                    "trailer": retrieval.trailer(latency_ms=round((time.monotonic() - t0) * 1000, 1))}
        budget_s = (deadline_ms or self.s.deadline_ms) / 1000
        soft = t0 + budget_s - max(0.25, 0.15 * budget_s)  # below the caller's hard timeout: the commit and the reply fit after it
        slot, tools = self._slot(root), self._tools(root)
        if not slot.gate.acquire(timeout=max(0.0, soft - time.monotonic())):
            text, sources = retrieval.leads(self.i, question, project=project, harness=harness, intro=(
                "Every model slot for this workspace stayed busy past the deadline; what matches it best:"))
            return {"answer": text, "mode": "retrieval", "sources": sources, "ledgerFacts": [], "finished": "deadline",
                    "trailer": retrieval.trailer(latency_ms=round((time.monotonic() - t0) * 1000, 1))}
        try:
            with slot.lock:
                self._news(slot.w, tools)
                self._maybe_compact(slot.w)
                fork = slot.w.fork()
            out = loop.run(self.model, fork, question, tools, deadline=soft, max_iterations=self.s.max_iterations,
                           max_tokens=self.s.max_tokens, on_request=lambda: self._touch(slot.w))
            with slot.lock:
                facts = self._commit(slot.w, fork, out, question)
                fill = window.fill(slot.w, self.s.window_tokens)
                self._maybe_compact(slot.w)
                self._save(slot.w)
        finally:
            slot.gate.release()
        if self.s.keep_warm_ms and self.keep_warm is None:
            self.keep_warm = KeepWarm(self, self.s.keep_warm_ms / 1000, self.s.keep_warm_idle_ms / 1000)
        answer, sources = out.answer, [{"path": p, "lines": lines, "sha256": sha} for p, (sha, lines) in out.read.items()]
        if out.requests == 0 or (out.finished in ("error", "refused") and not out.read):
            # Trigger: the model failed, refused, or said nothing before reading anything.
            # Why: a best-effort note alone answers nothing. Outcome: retrieval's leads, saying why.
            why = f"The model did not answer ({out.error})"
            answer, sources = retrieval.leads(self.i, question, project=project, harness=harness,
                                              intro=f"{why}; the places that match it best:")
            if answer == retrieval.NOTHING:
                answer = f"{why}. {answer}"
        self.answered[root] = self.answered.get(root, 0) + 1
        kind, _, message = (out.error or "").partition(": ")
        return {
            **({"error": {"kind": kind, "message": message}} if out.error else {}),
            "answer": answer, "mode": "model", "sources": sources, "ledgerFacts": facts, "finished": out.finished,
            "trailer": {"model": out.model or getattr(self.model, "model", None),
                        "latencyMs": round((time.monotonic() - t0) * 1000, 1), "tokensIn": out.usage["in"],
                        "tokensOut": out.usage["out"], "cacheRead": out.usage["read"], "cacheWrite": out.usage["write"],
                        "toolCalls": out.tool_calls, "toolMs": round(out.tool_ms, 1), "filesRead": len(out.read), "usd": round(self.cost(out.usage), 6),
                        "contextFill": fill},
        }

    def stats(self, *, project: str | None = None) -> dict[str, Any]:
        root = self.i.projects.root(project)
        slot = self._slots.get(root)
        if slot is None:
            saved = (self.ledgers.load(root) if self.ledgers else None) or {}
            facts = [lg.from_json(f) for f in saved.get("ledger") or []]
            return {"project": root, "mode": "model" if self.model else "retrieval",
                    "questionsAnswered": self.answered.get(root, 0) + int(saved.get("questions") or 0),
                    "ledgerFacts": len(facts), "staleFacts": sum(f.stale for f in facts), "windowFill": 0.0,
                    "windowTokens": self.s.window_tokens, "fileContexts": 0, "historyMessages": 0, "version": 0,
                    "usd": float((saved.get("totals") or {}).get("usd") or 0.0), "cacheHitRatio": None,
                    "compactions": 0, "lastCompaction": saved.get("lastCompaction"), "keepWarmRequests": 0}
        with slot.lock:
            w = slot.w
            seen = w.totals["tokensIn"] + w.totals["cacheRead"] + w.totals["cacheWrite"]
            return {"project": root, "mode": "model" if self.model else "retrieval", "questionsAnswered": w.questions,
                    "ledgerFacts": len(w.ledger), "staleFacts": sum(f.stale for f in w.ledger),
                    "windowFill": window.fill(w, self.s.window_tokens), "windowTokens": self.s.window_tokens,
                    "fileContexts": len(w.files), "historyMessages": len(w.history), "version": w.version,
                    "usd": round(w.totals["usd"], 6), "cacheHitRatio": round(w.totals["cacheRead"] / seen, 4) if seen else None,
                    "compactions": w.compactions, "lastCompaction": w.last_compaction,
                    "keepWarmRequests": int(w.totals["keepWarm"])}

    def fact_node(self, uri: str) -> NodeContent:
        """`lore/getNode` of a `ledger://<project>/<id>` URI: the fact with its provenance, in
        the shape a knowledge node's sources take, so promoting it is one `lore/createNode`."""
        name, _, fid = uri[len("ledger://"):].partition("/")
        roots = {*self._slots, *(p.root for p in self.i.records.projects())}
        for root in sorted(r for r in roots if Path(r).name == name):
            slot = self._slots.get(root)
            facts = slot.w.ledger if slot else tuple(
                lg.from_json(f) for f in ((self.ledgers.load(root) if self.ledgers else None) or {}).get("ledger") or [])
            for f in facts:
                if f.id == fid:
                    return NodeContent(uri=uri, source="ledger", content=f.text, metadata={
                        "project": root, "origin": f.origin, "learntAt": f.learnt_at, "stale": f.stale,
                        "sources": [{"path": p, "sha256": sha} for p, sha in f.sources.items()]})
        raise not_found(uri)

    def close(self) -> None:
        if self.keep_warm is not None:
            self.keep_warm.stop()

    # -- the window ----------------------------------------------------------------------------------
    def _tools(self, root: str) -> Tools:
        # This project only (and the link roots the user allowed), not every opened folder.
        return Tools(root=Path(root), jail=self.i.projects.jail.with_roots([root]))

    def _hasher(self, tools: Tools):
        """sha256 of a cited file, re-read only when its size or mtime moved: a ledger of
        hundreds of facts is re-validated before every question."""
        def sha(path: str) -> str | None:
            try:
                st = os.stat(tools.root / path)
            except OSError:
                return None
            key = (str(tools.root), path)
            seen = self._hashes.get(key)
            stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
            if seen and seen[0] == stamp:
                return seen[1]
            value = tools.sha256(path)
            if value is not None:
                self._hashes[key] = (stamp, value)
            return value
        return sha

    def _slot(self, root: str) -> Slot:
        with self._slots_lock:
            slot = self._slots.get(root)
            if slot is None:
                slot = self._slots[root] = Slot(self._load(root), self.s.max_parallel)
            return slot

    def _load(self, root: str) -> window.Window:
        tools = self._tools(root)
        w = window.Window(root=root, tree="\n".join(tools.find_paths(".", depth=3)["entries"][:300]))
        saved = (self.ledgers.load(root) if self.ledgers else None) or {}
        w.ledger = tuple(lg.from_json(f) for f in saved.get("ledger") or [])
        w.totals["usd"] = float((saved.get("totals") or {}).get("usd") or 0.0)
        w.seen_message_id = self.i.records.last_message_id()
        self._preload(w, tools)
        w.ledger, _, _ = lg.revalidate(w.ledger, tools.sha256)  # re-hash on load
        w.refreeze()
        return w

    def _preload(self, w: window.Window, tools: Tools) -> None:
        """Configured docs, read when the workspace loads, capped well under the floor."""
        room = int(0.25 * self.s.window_tokens)
        for pattern in self.s.preload:
            try:
                paths = tools.glob(pattern)["paths"]
            except LoreError:
                continue
            for path in paths:
                r = toolspec.call(tools, "Read", {"path": path})  # rendered and redacted as a Read answer is
                if r.refused:
                    continue
                if window.tokens(r.text) > room:
                    return
                room -= window.tokens(r.text)
                for shown, (sha, _lines) in r.read.items():
                    w.files[shown] = window.FileCtx(shown, sha, r.text, used=0)

    def _news(self, w: window.Window, tools: Tools) -> None:
        """What changed since the last question, as deltas (the frozen block stays as it is)."""
        sha = self._hasher(tools)
        w.ledger, went, back = lg.revalidate(w.ledger, sha)
        for f in went:
            w.pending.append(f"stale: {f.id} cites {', '.join(f.sources)}, which changed since it was learnt; "
                             f"re-check before relying on it")
        for f in back:
            w.pending.append(f"current again: {f.id} (its files hash as when it was learnt)")
        for path, ctx in list(w.files.items()):
            now = sha(path)
            if now != ctx.sha256:
                w.files[path] = window.FileCtx(path, now or "", ctx.text, ctx.used)
                w.pending.append(f"changed: {path} was edited since it was read"
                                 f"{'' if now else ' (it is gone now)'}; read it again for its current text")
        self._passive(w, tools)

    def _passive(self, w: window.Window, tools: Tools) -> None:
        """Files other agents read (their PostToolUse captures) become observations."""
        rows = self.i.records.tool_results(w.root, w.seen_message_id, READ_TOOLS)
        for mid, content in rows:
            w.seen_message_id = max(w.seen_message_id, mid)
            m = PATH_IN_RESULT.search(_plain(content))
            if not m:
                continue
            try:
                r = tools.read(m.group(1))
            except LoreError:
                continue  # outside the project, gone, or not text: nothing to learn here
            summary = window.outline(r["path"], "\n".join(r["lines"]))
            if w.observed.get(r["path"], ("",))[0] != r["sha256"]:
                w.observed[r["path"]] = (r["sha256"], summary)
                w.pending.append(f"observed: an agent read {summary}")

    def _maybe_compact(self, w: window.Window) -> None:
        f = window.fill(w, self.s.window_tokens)
        if compaction.due(f, w.questions, w.cooldown_until):
            compaction.compact(w, window_tokens=self.s.window_tokens, at=now_iso(), fill_before=f)

    def _commit(self, w: window.Window, fork: window.Fork, out: loop.Outcome, question: str) -> list[str]:
        """Append this question's exchange and merge what it learnt (never overwrite)."""
        w.history.extend(out.turns)  # after whatever was committed since the fork: an extension
        at = now_iso()
        w.ledger, added = lg.add(w.ledger, [lg.make(text, sources, origin="model", at=at) for text, sources in out.facts])
        for path, (sha, _lines) in out.read.items():
            w.files[path] = window.FileCtx(path, sha, out.texts.get(path, ""), used=w.questions + 1)
            w.observed[path] = (sha, window.outline(path, out.texts.get(path, "").split("\n", 1)[-1]))
        w.qa.append((question, out.answer, {p: sha for p, (sha, _) in out.read.items()}))
        w.questions += 1
        w.version += 1
        window.add_usage(w.totals, out.usage, self.cost(out.usage))
        known = {f.id for f in w.ledger}
        cited = [x for x in dict.fromkeys(FACT_REF.findall(out.answer)) if x in known and x not in added]
        return [self._uri(w.root, x) for x in [*added, *cited]]

    def _touch(self, w: window.Window) -> None:
        w.last_active = w.last_request = time.monotonic()

    def cost(self, u: dict[str, int]) -> float:
        return usd(price_of(getattr(self.model, "model", None)), uncached=u["in"], write=u["write"], read=u["read"],
                   output=u["out"])

    def _uri(self, root: str, fact: str) -> str:
        return f"ledger://{Path(root).name}/{fact}"

    def _save(self, w: window.Window) -> None:
        if self.ledgers is None:
            return
        saved = self.ledgers.load(w.root) or {}
        ours = {f.id for f in w.ledger}
        # Another process's facts survive ours; ours (with their staleness) win where both have one.
        merged = w.ledger + tuple(f for f in map(lg.from_json, saved.get("ledger") or []) if f.id not in ours)
        self.ledgers.save(w.root, {"ledger": [lg.to_json(f) for f in merged], "questions": w.questions,
                                   "totals": {"usd": w.totals["usd"]}, "lastCompaction": w.last_compaction})

    # -- keep-warm (keepwarm.py calls these) -----------------------------------------------------------
    def warm_targets(self) -> list[Slot]:
        with self._slots_lock:
            return list(self._slots.values())
