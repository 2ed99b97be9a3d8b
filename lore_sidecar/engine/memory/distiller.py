"""Tier 2: distilling conversation segments into observation logs, and consolidating them.

The writer runs `Distiller.tick` on its memory thread (never on a request's path: recording
a message does not wait for any of this). A session's undistilled messages form a segment
when there are enough of them and the session has gone quiet, or when the segment is full.
With an LLM the segment becomes an observation log; without one (no key, or the call
failed) the extractive rules keep paths, errors, commands and decisions. Every row notes
which of the two made it.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lore_sidecar.engine.capture.redact import redact
from lore_sidecar.engine.indexing.words_first import wait_for_words
from lore_sidecar.engine.memory import entities as ent
from lore_sidecar.engine.memory import prompts
from lore_sidecar.engine.memory.distill import Turn, extractive_observations, render_segment
from lore_sidecar.engine.memory.knowledge import now_iso
from lore_sidecar.errors import FENCED, LoreError
from lore_sidecar.ports import LLM
from lore_sidecar.settings import MemorySettings

log = logging.getLogger(__name__)
MESSAGE_CHARS = 8000  # one user/assistant message in a segment, at most


MAX_SEGMENT_CHARS = 24_000  # a rendered segment above this is split (the rest waits)
# A model call that failed in a way that may pass (an outage, a rate limit, a timeout, an
# answer that is not a message or holds nothing) leaves its segment undistilled: the next
# pass tries again, the background one after `RETRY_AFTER_S`. The `DEFER_ATTEMPTS`-th failure
# of the same segment falls back to the extractive observation, so an outage cannot hold a
# session's memory back for ever. A failure that will not pass (the key refused, a refusal)
# falls back at once.
DEFER_ATTEMPTS = 3
RETRY_AFTER_S = 60.0


@dataclass(slots=True)
class _Session:
    """What the distiller knows of a session: its newest message, the last one distilled,
    when it last grew (monotonic), and its project root."""

    root: str
    done: int = 0
    newest: int = 0
    since: float = 0.0
    attempts: int = 0  # retryable model failures of the segment after `done`


def _unusable(done: Any) -> tuple[str, bool] | None:
    """(why a completed model reply cannot be used, whether asking again may help), or None."""
    if getattr(done, "stop", "") == "refusal":
        return "refusal: the model declined", False
    if not isinstance(done.text, str) or not done.text.strip():
        return "emptyAnswer: the model returned no text", True
    return None


def dist_id(*parts: object) -> str:
    """Deterministic: the same segment distils to the same id (idempotent, and the curator's
    prompt stays byte-stable across runs)."""
    return hashlib.sha1("\0".join(map(str, parts)).encode()).hexdigest()[:16]


class Distiller:
    def __init__(self, rows, llm, settings: MemorySettings, *, mode: str, reason: str | None = None,
                 curator=None, clock: Callable[[], str] = now_iso, monotonic: Callable[[], float] = time.monotonic):
        self.rows = rows
        self.llm: LLM | None = llm
        self.settings = settings
        self.mode = mode  # "llm" | "extractive" | "off"
        self.reason = reason
        self.curator = curator
        # A team's shared record (shared/replica.py): `publish(root, payload)` after each new
        # distillation, so the other machines get it (their messages are their own).
        self.publish: Callable[[str, dict[str, Any]], None] | None = None
        self.clock = clock
        self.monotonic = monotonic
        # Called between segments of a background pass (not a forced one): the memory
        # thread waits there while the text leg has writes to index (MemoryWorker).
        self.between: Callable[[], None] = lambda: None
        self.fallbacks = 0
        self.deferred = 0  # segments left for a retry by the last pass
        self.last_error: str | None = None
        self._retryable = False  # whether the last failed call may pass if asked again
        self._retry_at = 0.0
        self._lock = threading.Lock()  # one pass at a time (memory thread vs lore/distill)
        self._seen_upto = 0
        self._sessions: dict[tuple[int, str], _Session] = {}
        self._due_checked = False  # consolidation a stopped pass left owed, looked for once

    # -- the pass -----------------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget what this instance knew of the sessions (it may have been a follower while
        another writer distilled): the next pass re-reads the marks."""
        with self._lock:
            self._seen_upto = 0
            self._sessions.clear()
            self._due_checked = False

    def tick(self, *, force: bool = False, session_id: str | None = None) -> list[str]:
        """Distil what is ready (everything pending with `force`); returns the new URIs."""
        if self.mode == "off":
            return []
        if not force and self.monotonic() < self._retry_at:
            return []  # the model failed a moment ago: the background pass waits a little
        with self._lock:
            self.deferred = 0
            self._notice()
            created: list[str] = []
            touched = set()
            for key, state in list(self._sessions.items()):
                if state.newest <= state.done or (session_id is not None and key[1] != session_id):
                    continue
                while True:
                    if not force:
                        self.between()
                    uri = self._distil_next(key, state, force)
                    if uri is None:
                        break
                    touched.add(key)
                    if uri:  # "" when the segment held nothing worth keeping
                        created.append(uri)
            if not self._due_checked and session_id is None:
                # Trigger: a pass stopped (an exit) after distilling, before consolidating. Why:
                # the next start never touched those sessions again until they grew (an ended
                # session: never). Outcome: an instance's first pass consolidates what is owed.
                touched.update(self.rows.consolidation_due(self.settings.meta_threshold))
                self._due_checked = True
            for pid, sid in sorted(touched):
                root = state.root if (state := self._sessions.get((pid, sid))) else self.rows.project_root(pid)
                created += self._consolidate(pid, sid, root)
            if self.curator is not None:
                created += self.curator.run(force=force, session_id=session_id)
            return created

    def _notice(self) -> None:
        """Which sessions grew since the last pass (a read; no transaction)."""
        rows = self.rows.newest_by_session(self._seen_upto)
        if not rows:
            return
        now = self.monotonic()
        fresh = [(pid, sid) for pid, sid, _ in rows if (pid, sid) not in self._sessions]
        done = self.rows.distilled_upto(fresh) if fresh else {}
        for pid, sid, newest in rows:
            state = self._sessions.get((pid, sid))
            if state is None:
                state = self._sessions[(pid, sid)] = _Session(root=self.rows.project_root(pid), done=done.get((pid, sid), 0))
            state.newest, state.since = newest, now
        self._seen_upto = max(r[2] for r in rows)

    def _distil_next(self, key: tuple[int, str], state: _Session, force: bool) -> str | None:
        s = self.settings
        pid, sid = key
        msgs = self.rows.segment(pid, sid, state.done, s.distill_max_messages)
        if not msgs:
            state.done = state.newest
            return None
        turns = [Turn(m["role"], m["text"] if m["role"] == "tool" else m["text"][:MESSAGE_CHARS],
                      m["created_at"], m["tool_name"]) for m in msgs]
        if not force and not self._ready(state, turns):
            return None
        rendered = render_segment(turns, s.tool_output_limit)
        while len(rendered) > MAX_SEGMENT_CHARS and len(turns) > 1:  # keep the rest for the next segment
            turns, msgs = turns[: len(turns) // 2], msgs[: len(msgs) // 2]
            rendered = render_segment(turns, s.tool_output_limit)
        observed = self._observe(sid, turns, rendered, defer=state.attempts < DEFER_ATTEMPTS - 1)
        if observed is None:
            # Trigger: the model call failed and may pass later. Why: a failed call must not
            # change the store (the extractive text would stand in for the model's for good).
            # Outcome: nothing written; the segment waits for the next pass.
            state.attempts += 1
            self.deferred += 1
            self._retry_at = self.monotonic() + RETRY_AFTER_S
            return None
        state.attempts = 0
        text, named, mode, model, version, call = observed
        did = dist_id(state.root, sid, msgs[0]["msg_id"], msgs[-1]["msg_id"], 0)
        row: dict[str, Any] = {
            "dist_id": did, "session_id": sid, "generation": 0, "covers": len(msgs), "text": text, "mode": mode,
            "model": model, "prompt_version": version, "created_at": self.clock()}
        learnt: tuple[list, list] = ([], [])
        with self.rows.write() as c:
            self.log_call(c, call)
            self.rows.set_distilled(c, pid, sid, msgs[-1]["id"])
            if text:
                self.rows.add_distillation(c, {**row, "project_id": pid, "first_msg": msgs[0]["id"],
                                               "last_msg": msgs[-1]["id"]})
                learnt = self._learn_entities(c, pid, text, named, f"distillation://{did}")
        if text and self.publish is not None:  # a team's record carries it to the other machines
            self.publish(state.root, {"dist": row, "entities": learnt[0], "relations": learnt[1]})
        state.done = msgs[-1]["id"]
        if not text:  # nothing worth keeping in this segment
            return ""
        log.info("distilled %d messages of %s into %s (%s)", len(msgs), sid, did, mode)
        return f"distillation://{did}"

    def _ready(self, state: _Session, turns: Sequence[Turn]) -> bool:
        s = self.settings
        if len(turns) >= s.distill_max_messages:
            return True
        tokens = sum(len(t.text) for t in turns) // 4
        if len(turns) < s.distill_min_messages or tokens < s.distill_min_tokens:
            return False
        return (self.monotonic() - state.since) * 1000 >= s.distill_idle_ms

    def _observe(self, sid: str, turns: Sequence[Turn], rendered: str, *,
                 defer: bool = False) -> tuple[str, list, str, str | None, str, dict | None] | None:
        """(observations, entities the LLM named, mode, model, prompt version, the call's log
        row); None when the call failed, may pass later, and `defer` says to wait for that."""
        if self.mode == "llm" and self.llm is not None:
            stable, prompt = prompts.distill(sid, rendered)
            out, call = self.complete("distill", prompts.DISTILL_VERSION, stable, prompt)
            if out is not None:
                observations, named = prompts.split_entities(out)
                return redact(observations), named, "llm", self.llm.model, prompts.DISTILL_VERSION, call
            if defer and self._retryable:
                return None
        lines = extractive_observations(turns, self.settings.tool_output_limit)
        return "\n".join(lines), [], "extractive", None, "extractive-1", None

    def log_call(self, c, call: dict | None) -> None:
        if call is not None:
            self.rows.log_call(c, call)

    def complete(self, purpose: str, version: str, stable: list[str], prompt: str) -> tuple[str | None, dict | None]:
        """(reply text, its usage row to log in the caller's transaction); (None, None) when
        the call failed and the step must fall back."""
        try:
            done = self.llm.complete(stable=stable, prompt=prompt)
        except LoreError as exc:
            # Trigger: no key accepted, rate limits after retries, an outage. Why: memory
            # must keep working. Outcome: this step falls back; status shows the error.
            self.fallbacks += 1
            self.last_error = f"{exc.kind}: {exc.message}"
            self._retryable = bool(exc.retryable)
            log.warning("LLM %s failed (%s)", purpose, self.last_error)
            return None, None
        failed = _unusable(done)
        if failed:
            # Trigger: the call worked but the reply holds nothing to keep (no text, only
            # whitespace, a refusal). Why: "" would mark the segment distilled with nothing,
            # losing it. Outcome: handled as a failed call; status says why.
            self.fallbacks += 1
            self.last_error, self._retryable = failed
            log.warning("LLM %s gave no usable reply (%s)", purpose, self.last_error)
            return None, None
        u = done.usage
        self.last_error = None
        return done.text, {
            "at": self.clock(), "purpose": purpose, "prompt_version": version, "model": done.model,
            "input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
            "cache_read_tokens": u.cache_read_tokens, "cache_write_tokens": u.cache_write_tokens,
            "took_ms": done.took_ms,
        }

    # -- meta-distillation ----------------------------------------------------------------------------
    def _consolidate(self, pid: int, sid: str, root: str) -> list[str]:
        """When a generation holds more than the threshold, all but the newest few become
        one row of the next generation. The old rows stay (searchable), pointing at it."""
        s = self.settings
        created = []
        for generation in range(0, 4):
            rows = self.rows.open_generation(pid, sid, generation)
            # Every generation (an exit can leave a later one owed alone); metaKeep may exceed the threshold.
            if len(rows) <= s.meta_threshold or len(rows) <= s.meta_keep:
                continue
            old = rows[: len(rows) - s.meta_keep]
            text, mode, model, version, call = None, "extractive", None, "extractive-1", None
            if self.mode == "llm" and self.llm is not None:
                stable, prompt = prompts.meta(sid, [r["text"] for r in old])
                out, call = self.complete("meta", prompts.META_VERSION, stable, prompt)
                if out is not None:
                    text, mode, model, version = redact(prompts.split_entities(out)[0]), "llm", self.llm.model, prompts.META_VERSION
            if text is None:
                seen: dict[str, None] = {}
                for r in old:
                    for line in r["text"].splitlines():
                        seen.setdefault(line, None)
                text = "\n".join(seen)
            did = dist_id(root, sid, *[r["dist_id"] for r in old], generation + 1)
            row = {"dist_id": did, "session_id": sid, "generation": generation + 1,
                   "covers": sum(r["covers"] for r in old), "text": text, "mode": mode, "model": model,
                   "prompt_version": version, "created_at": self.clock()}
            with self.rows.write() as c:
                self.log_call(c, call)
                key = self.rows.add_distillation(c, {**row, "project_id": pid, "first_msg": old[0]["first_msg"],
                                                     "last_msg": old[-1]["last_msg"]})
                self.rows.consolidate(c, [r["id"] for r in old], key)
            if self.publish is not None:
                self.publish(root, {"dist": row, "consolidates": [r["dist_id"] for r in old]})
            log.info("consolidated %d gen-%d distillations of %s into %s", len(old), generation, sid, did)
            created.append(f"distillation://{did}")
        return created

    # -- entities -------------------------------------------------------------------------------------
    def _learn_entities(self, c, pid: int, text: str, named: list, evidence: str) -> tuple[list, list]:
        """Learn the text's entities and relations; returns them (name, kind, aliases) and
        (subject, relation, object, evidence) for the team's record."""
        found = ent.merge_llm(ent.extract(text), named)
        ids = {}
        at = self.clock()
        learnt = []
        for name, e in sorted(found.items())[:100]:
            ids[name] = self.rows.upsert_entity(c, pid, name, e.kind, sorted(e.aliases), at)
            learnt.append([name, e.kind, sorted(e.aliases)])
        related = []
        for subj, rel, obj in ent.relations(text, ids):
            self.rows.relate(c, pid, ids[subj], rel, ids[obj], evidence)
            related.append([subj, rel, obj, evidence])
        return learnt, related

    # -- status ---------------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "model": self.llm.model if self.mode == "llm" and self.llm is not None else None,
            "reason": self.reason,
            "fallbacks": self.fallbacks,
            "lastError": self.last_error,
            "usage": self.rows.llm_usage(),
            "curator": self.curator.status() if self.curator is not None else {"mode": "off", "reason": self.reason},
        }


class _Stopping(Exception):
    """The memory thread was told to stop while it waited between two segments."""


class MemoryWorker:
    """The writer's memory thread: wakes when told (new messages) or every `poll_s`.

    Trigger: the text leg has writes it has not indexed (`words_pending`). Why: distilling
    shares the cores and the interpreter with indexing, and a write must be searchable by
    its words first (a 100k-message import was searchable at 5.5-7.6k msg/s with distilling
    beside it; distillations are the catch-up). Outcome: before each segment of a
    background pass the thread waits for the text leg, bounded each time
    (engine/indexing/words_first.py), so a steady stream of writes still gets distilled."""

    def __init__(self, distiller: Distiller, poll_s: float = 0.25, words_pending: Callable[[], bool] = lambda: False):
        self.distiller = distiller
        self.poll_s = poll_s
        self.words_pending = words_pending
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lore-memory", daemon=True)
        distiller.between = self._words_first

    def _words_first(self) -> None:
        """Trigger: a stop while the pass waits (an import's backlog, held for the dense leg).
        Why: the pass went on distilling segment after segment, past the stop's join, into a
        closed database. Outcome: the pass ends there; the next start takes the segments up."""
        wait_for_words(self.words_pending, self._stop)
        if self._stop.is_set():
            raise _Stopping

    def start(self) -> None:
        self._thread.start()

    def notify(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)

    def _run(self) -> None:
        llm = self.distiller.llm
        if llm is not None:
            try:
                llm.prepare()
            except Exception:
                log.exception("preparing the LLM client failed")
        while not self._stop.is_set():
            self._wake.wait(self.poll_s)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.distiller.tick()
            except _Stopping:
                return
            except LoreError as exc:
                if exc.kind in FENCED:
                    return  # demoted: the new writer distils from here
                log.warning("memory pass failed: %s", exc)
            except Exception:
                log.exception("memory pass failed")
                time.sleep(1.0)
