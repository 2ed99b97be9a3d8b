"""Hybrid recall: BM25 (AND, backfilled with OR) + vectors, fused by weighted RRF, with a
small recency bonus; hits carry a snippet and the query terms that matched (cues)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from lore_sidecar.engine import late
from lore_sidecar.engine.facts import rules as facts
from lore_sidecar.engine.maintenance.decay import factor as fade_factor
from lore_sidecar.engine.never_read import never_read
from lore_sidecar.engine.recall import fusion, late_order
from lore_sidecar.engine.recall import query as q
from lore_sidecar.engine.recall import when as dates
from lore_sidecar.engine.recall.neighbours import REPLY_LEAD, with_neighbours
from lore_sidecar.engine.recall.reads import RowsOnce
from lore_sidecar.engine.uris import chunk_uri, message_uri
from lore_sidecar.filetypes import is_code_path
from lore_sidecar.model import GLOBAL_PROJECT, INDEXED_SOURCES, SIDES, Candidate, Hit, RecallResult
from lore_sidecar.ports import DenseModels, TextIndex, VectorIndex
from lore_sidecar.settings import RecallSettings

CUE_TEXT_LIMIT = 50_000


MEMORY_KINDS = ("distillations", "knowledge", "entities")
TELLS_WHEN_CHARS = 4000  # of a message, read for the time it tells (its opening)
PRIORITY_BONUS = 0.002  # per priority level above 4, against an RRF score of ~1/60 at rank 1


def _fact_in_force(row, at: str) -> bool:
    if row["merged_into"] is not None or row["shadowed"]:
        return False
    return facts.holds(row["valid_from"], row["eff_until"], at)


@dataclass(slots=True)
class _Told:
    """A question about time in one recall: what an answer must tell (`tells(text)`), and
    each message read so far, (its text, whether it tells it)."""

    tells: Callable[[str], bool]
    read: dict[int, tuple[str, bool]] = field(default_factory=dict)


class Recaller:
    def __init__(
        self,
        records,
        text: TextIndex,
        vectors: VectorIndex | None,
        embedder: DenseModels | None,
        settings: RecallSettings,
        memory=None,
    ):
        self.records = records
        self.memory = memory  # engine.memory.Memory: rows and hits of the memory tiers
        self.text = text
        self.vectors = vectors
        self.embedder = embedder  # each kind's dense model
        self.settings = settings

    def recall(
        self,
        query: str,
        *,
        project_ids: Sequence[int] | None,
        sources: Sequence[str],
        limit: int,
        offset: int = 0,
        as_of: str | None = None,
        now: str | None = None,
        lexical_only: bool = False,
        fade: Callable[[list[str]], dict[str, float]] | None = None,
    ) -> RecallResult:
        """`fade`: knowledge URIs -> retrievability (engine/maintenance/decay.py), folded into
        the ranking before the page is cut, so a page is a slice of the one full ranking.
        `now`: the time the question is asked at ("last month" counts from it, and recency);
        unlike `as_of` it hides nothing. Default: `as_of`, else the clock."""
        t0 = time.perf_counter()
        s = self.settings
        kinds = [k for k in sources if k in INDEXED_SOURCES]
        terms = q.query_terms(query)
        # A query that names a time ("on 3 June 2023", "last week") prefers the messages of
        # that window. Its words stay in the query (measured: the same either way; a date may
        # also be written in the text looked for).
        # Relative words ("yesterday") count from the recall's now, else its asOf, else the clock.
        asked_at = dates.parse_time(now) or dates.parse_time(as_of)
        when = dates.mentioned(query, asked_at) if "messages" in kinds and s.date_weight > 0 else None
        # A question asking when ("When did we move to Postgres?") prefers the messages that
        # tell a time: the answer says "last Friday" or "in 2022"; one asking how long, the
        # messages that tell a duration ("for four years").
        tells = dates.time_asked(query) if "messages" in kinds and s.when_weight > 0 else None
        pool = max(s.candidates, offset + limit)
        cands: list[Candidate] = []
        chunk_rows = None
        if project_ids is not None and project_ids and "knowledge" in kinds:
            project_ids = [*project_ids, GLOBAL_PROJECT]  # global knowledge applies everywhere
        if kinds and (project_ids is None or project_ids) and terms:
            reads = RowsOnce(self.records)  # the second pass below reads only what the first did not
            extra = self.memory.expansions(project_ids, query) if self.memory is not None else []
            words = q.search_terms(query)
            lex = self._lexical(words, kinds, project_ids, pool, q.query_terms(" ".join(extra)))
            # The word leg stopped at the pool: more may match than were ranked, so a page that
            # reaches the end of the pool is not the end of the list.
            cut = len(lex) >= pool
            if when is not None:
                lex = self._within(lex, when, words, project_ids, pool)
            dense = not lexical_only and self.vectors is not None and self.embedder is not None and s.vector_weight > 0
            held = self.vectors.holds(kinds, project_ids) if dense else set()
            # Trigger: every vector hit would be backfilled (no workspace file with a vector
            # is asked for, or `fusion = "backfill"`), and the vector leg weighs no more than
            # the lexical one. Why: backfilled vector hits then rank below every lexical hit of
            # their group, so when the page is full and its last hit scores above anything a
            # vector-only hit can reach (recency and priority bonuses included), embedding the
            # query and searching the HNSW graphs (~1.5 ms at 100k messages) cannot change the
            # page. Outcome: the dense leg runs only when it could; the page is the same either
            # way (`total` then counts the hits the lexical leg ranked).
            # Not when a kind held here has word pieces to match (late interaction reorders
            # the lexical hits themselves, from the query's pieces).
            pieced = late_order.kinds_with_pieces(held, s, self.embedder)
            deferred = dense and s.vector_weight <= s.lexical_weight and (
                s.fusion == "backfill" or (s.fusion == "auto" and "files" not in held)) and not pieced
            pieces: dict[str, object] = {}
            vec = self._dense(query, kinds, project_ids, pool, held, pieced, pieces) if dense and not deferred else []
            cands, chunk_rows = self._fused(lex, vec, reads)
            if pieces:  # the query's word pieces, from a dense leg that ran: there are vectors
                cands = late_order.reorder(cands, pieces, chunk_rows, self.settings, self.vectors.late_of)
            # The texts read to see which candidates tell the time asked, kept for a second
            # ranking below.
            told = _Told(tells) if tells is not None else None
            named = q.identifiers(query)
            scored = self._rank(cands, as_of, chunk_rows, when, told, fade, asked_at, named, reads)
            last = scored[offset + limit - 1][0] if limit > 0 and len(scored) >= offset + limit else None
            if deferred and held and (last is None or last <= self._backfill_ceiling(lex, kinds, when, told is not None, bool(named))):
                vec = self._dense(query, kinds, project_ids, pool, held)
                if vec:
                    cands, chunk_rows = self._fused(lex, vec, reads)
                    scored = self._rank(cands, as_of, chunk_rows, when, told, fade, asked_at, named, reads)
            hits = self._page(scored[offset : offset + limit], terms, told)
            total = len(scored)
        else:
            hits, total, cut = [], 0, False
        # Trigger: the page ends the ranked pool but the word leg was cut at it. Why: saying
        # `truncated: false` there would hide every match past the pool (invariant 8). Outcome:
        # go on; the next page ranks a larger pool (docs/protocol.md says so).
        truncated = total > offset + len(hits) or (cut and bool(hits))
        return RecallResult(
            query_id=uuid.uuid4().hex[:16],
            hits=hits,
            total=total,
            truncated=truncated,
            took_ms=round((time.perf_counter() - t0) * 1000, 3),
            next_offset=offset + len(hits) if truncated else None,
            time_windows=when.dates() if when is not None else (),
        )

    def _fused(self, lex, vec, reads=None) -> tuple[list[Candidate], dict | None]:
        s = self.settings
        chunk_rows = None
        if s.fusion == "auto":
            # Code or prose decides a file's vector weight; the rows read here are the
            # ones the hits are made from, so they are read once.
            chunk_rows = self.records.files.chunk_rows({key for kind, key, _ in [*lex, *vec] if kind == "files"})
            cands = fusion.fuse_by_kind(
                lex, vec, lexical_weight=s.lexical_weight, vector_weight=s.vector_weight,
                prose_vector_weight=s.files_vector_weight, code_vector_weight=s.code_vector_weight,
                is_code=lambda key: key in chunk_rows and is_code_path(chunk_rows[key]["path"]), k=s.rrf_k)
        else:
            cands = fusion.fuse(lex, vec, lexical_weight=s.lexical_weight, vector_weight=s.vector_weight,
                                k=s.rrf_k, mode=s.fusion)
        return with_neighbours(cands, reads or self.records, s.neighbours), chunk_rows

    def _backfill_ceiling(self, lex, kinds, when=None, asks_time: bool = False, named: bool = False) -> float:
        """The most a backfilled vector-only hit can score once ranked: the first place below
        its group's lexical hits, plus the largest bonuses one hit can get: recency, a code
        name's when the query spells one out, and a message's date and time-told bonuses or
        a knowledge node's priority (a hit is one or the other, never both)."""
        s = self.settings
        group = len(lex) if s.fusion == "backfill" else sum(1 for h in lex if h[0] != "files")
        ceiling = s.lexical_weight / (s.rrf_k + group + 1) * s.vector_weight
        ceiling += fusion.recency_bonus(0.0, weight=s.recency_weight, half_life_days=s.recency_half_life_days, k=s.rrf_k)
        if named:  # a message or chunk holding every name the query spells out
            ceiling += self._name_bonus(1.0)
        message = (self._date_bonus() if when is not None else 0.0) + (self._when_bonus() if asks_time else 0.0)
        message += s.session_weight * (s.lexical_weight / (s.rrf_k + 1) + REPLY_LEAD)  # the most a session's lift adds
        node = PRIORITY_BONUS * 4 if "knowledge" in kinds else 0.0
        return ceiling + max(message if "messages" in kinds else 0.0, node)

    def _date_bonus(self) -> float:
        return self.settings.date_weight / (self.settings.rrf_k + 1)

    def _when_bonus(self) -> float:
        return self.settings.when_weight / (self.settings.rrf_k + 1)

    def _name_bonus(self, share: float) -> float:
        """A first rank's score in one more leg, for the share of the query's code names held."""
        return share / (self.settings.rrf_k + 1)

    def _tell_when(self, msg_rows, told: _Told) -> set[int]:
        """The message candidates, said by the user or the assistant, that tell the time the
        question asks (a tool's output is no answer: its timestamps are the log's)."""
        said = [key for key, row in msg_rows.items() if row["role"] in SIDES]
        for key, text in self.records.message_texts([key for key in said if key not in told.read]).items():
            told.read[key] = (text, told.tells(text[:TELLS_WHEN_CHARS]))
        return {key for key in said if key in told.read and told.read[key][1]}

    def _within(self, lex, when: dates.When, terms, project_ids, pool) -> list[tuple[str, int, float]]:
        """The lexical leg with the best word matches among the messages of the named window
        added after it: a turn of that day that the whole store's top ranks low (its words
        are common elsewhere) still reaches the date bonus.
        Trigger: the date is all the query asks about ("what did we do yesterday?"). Why: its
        only content word is then the date's own ("yesterday"), which few of that day's
        messages say. Outcome: the window's messages, the latest first, are the leg; a window
        in which nothing was said leaves the word matches as they were."""
        alone = not q.asks_for_words(when.rest)
        inside = self.text.search([] if alone else terms, kinds=["messages"], project_ids=project_ids, limit=pool,
                                  conjunctive=False, days=when.ranges)
        if alone:
            return inside or lex
        seen = {(k, key) for k, key, _ in lex}
        return lex + [h for h in inside if (h[0], h[1]) not in seen]

    def _dense(self, query: str, kinds, project_ids, pool, held: set[str], pieced: set[str] = frozenset(),
               late_queries: dict | None = None) -> list[tuple[str, int, float]]:
        """The vector leg: the query embedded once by each model the asked kinds use.
        `held`: the kinds with vectors in these projects (a conversation-only store has no
        file vectors; embedding the query with MiniLM costs ~5 ms and loads ~200 MB for
        nothing: only models with something to find run). `late_queries` is given the
        query's word pieces for each of the `pieced` kinds (`late_order.kinds_with_pieces`:
        their model gives them, from the same forward pass)."""
        late_queries = {} if late_queries is None else late_queries
        groups: dict[int, tuple[object, list[str]]] = {}
        for kind in kinds:
            model = self.embedder.for_kind(kind) if kind in held else None
            if model is not None:
                groups.setdefault(id(model), (model, []))[1].append(kind)
        out: list[tuple[str, int, float]] = []
        for model, group in groups.values():
            wanted = pieced.intersection(group)
            if wanted:
                vecs, pieces = model.embed_with_tokens([query])
                qv, matrix = vecs[0], late.query(*pieces[0])
                if matrix is not None:
                    late_queries.update((kind, matrix) for kind in wanted)
            else:
                qv = model.embed([query])[0]
            if qv.any():
                # A nearest neighbour always exists; below the floor it is noise, and
                # "nothing relevant" must be able to answer with nothing.
                floor = self.settings.vector_floor
                out += [h for h in self.vectors.search(group, project_ids, qv, pool) if h[2] >= floor]
        # Models' similarities differ in scale; fusion weighs each source kind on its own.
        return sorted(out, key=lambda t: (-t[2], t[0], t[1]))

    def _lexical(self, terms, kinds, project_ids, pool, aliases=()) -> list[tuple[str, int, float]]:
        strict = self.text.search(terms, kinds=kinds, project_ids=project_ids, limit=pool, conjunctive=True)
        if (len(set(terms)) == 1 and not aliases) or len(strict) >= pool:
            return strict
        # Trigger: the strict AND query found fewer than the pool. Why: one missing or
        # misspelt word must not hide every other match. Outcome: AND hits stay on top,
        # OR hits fill the remaining places in BM25 order.
        # Other names of an entity the query names (aliases) join the loose query only.
        loose_terms = [*terms, *(a for a in aliases if a not in terms)]
        loose = self.text.search(loose_terms, kinds=kinds, project_ids=project_ids, limit=pool, conjunctive=False)
        seen = {(k, key) for k, key, _ in strict}
        return strict + [h for h in loose if (h[0], h[1]) not in seen][: pool - len(strict)]

    def _rank(self, cands, as_of, chunk_rows=None, when: dates.When | None = None,
              told: _Told | None = None, fade=None, asked_at: datetime | None = None,
              named: Sequence[str] = (), reads=None) -> list[tuple[float, Candidate, object]]:
        """The candidates that still stand (not deleted, suppressed, superseded or after
        `asOf`), each with its final score and its row, best first. `told`: given when the
        query asks about time ("when", "how long"; what `_tell_when` has read so far).
        `named`: the code names the query spells out; a message or chunk holding them as
        written ranks as if first in one more leg (a share of it per name held)."""
        s = self.settings
        reads = reads or self.records  # `RowsOnce`: a second pass of one recall reads only the new candidates
        msg_rows = reads.message_rows([c.key for c in cands if c.kind == "messages"])
        naming = reads.messages_naming(list(msg_rows), named) if named else {}
        timed = self._tell_when(msg_rows, told) if told is not None else set()
        if chunk_rows is None:
            chunk_rows = self.records.files.chunk_rows([c.key for c in cands if c.kind == "files"])
        fact_rows = self.records.fact_rows([c.key for c in cands if c.kind == "facts"])
        rows_of = {"messages": msg_rows, "files": chunk_rows, "facts": fact_rows}
        if self.memory is not None:
            for kind in ("distillations", "knowledge", "entities"):
                rows_of[kind] = self.memory.rows_for(kind, [c.key for c in cands if c.kind == kind])
        fact_at = facts.ts(as_of) if as_of else facts.now_ts()
        # Trigger: knowledge that is shown and never opened fades (a small factor). Why here and
        # not on the page: scaling a page after it is cut re-sorts within that page only, so the
        # pages of a walk would not add up to the one-call listing. Outcome: one ranking.
        knows = rows_of.get("knowledge", {})
        retrievable = fade([r["uri"] for r in knows.values()]) if fade is not None and knows else {}
        lift = fusion.session_lift(cands, msg_rows, s.session_weight) if s.session_weight > 0 else {}
        now = time.time()
        # Messages age from the time the question is asked at; knowledge and its expiry from the clock.
        asked = asked_at.timestamp() if asked_at is not None else now
        now_iso = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        scored: list[tuple[float, Candidate, object]] = []
        for c in cands:
            row = rows_of.get(c.kind, {}).get(c.key)
            if row is None or (c.kind == "files" and never_read(row["path"])):
                continue  # deleted since the index saw it, or indexed before the never-read list named it
            if c.kind in MEMORY_KINDS and not self.memory.admits(c.kind, row, now_iso):
                continue  # a suppressed, expired or deleted node
            if c.kind == "facts" and not _fact_in_force(row, fact_at):
                continue  # superseded, closed, or not yet true at that time
            score = c.fused
            if c.kind == "messages":
                if as_of is not None and row["created_at"] > as_of:
                    continue
                score += fusion.recency_bonus(
                    dates.age_days(row["created_at"], asked),
                    weight=s.recency_weight,
                    half_life_days=s.recency_half_life_days,
                    k=s.rrf_k,
                )
                if when is not None and when.holds(row["created_at"]):
                    score += self._date_bonus()
                if c.key in timed:
                    score += self._when_bonus()
                score += lift.get(c.key, 0.0)
                if c.key in naming:
                    score += self._name_bonus(naming[c.key] / len(named))
            elif c.kind == "files" and named:
                score += self._name_bonus(sum(n in row["text"] for n in named) / len(named))
            elif c.kind == "knowledge":
                # Curated knowledge ranks by priority; priority 0-1 nodes never decay.
                age = 0.0 if row["priority"] <= 1 else dates.age_days(row["updated_at"], now)
                score += PRIORITY_BONUS * (4 - row["priority"]) + fusion.recency_bonus(
                    age, weight=s.recency_weight, half_life_days=s.recency_half_life_days, k=s.rrf_k)
                score *= fade_factor(retrievable.get(row["uri"], 1.0), row["priority"])
            scored.append((score, c, row))
        scored.sort(key=lambda t: (-t[0], t[1].kind, t[1].key))
        return scored

    def _page(self, page: list[tuple[float, Candidate, object]], terms, told: _Told | None) -> list[Hit]:
        """The hits of a page of ranked candidates (made only for the page that is shown)."""
        read = told.read if told is not None else {}
        texts = {c.key: read[c.key][0] for _, c, _ in page if c.kind == "messages" and c.key in read}
        texts.update(self.records.message_texts([c.key for _, c, _ in page if c.kind == "messages" and c.key not in texts]))
        return [self._hit(score, c, row, terms, texts.get(c.key, "")) for score, c, row in page
                if c.kind != "messages" or c.key in texts]  # a message deleted since its row was read

    def _hit(self, score: float, c: Candidate, row, terms: list[str], message_text: str) -> Hit:
        if c.kind in MEMORY_KINDS:
            return self.memory.hit(c.kind, row, score, terms, self.text.analyze)
        if c.kind == "facts":
            text = f"{row['subject']} :: {row['predicate']} :: {row['object']}"
            return Hit(
                uri=f"fact://{row['fact_id']}",
                source="facts",
                score=round(score, 6),
                snippet=text,
                cues=q.cues(terms, text, self.text.analyze),
                title=f"{row['subject']} · {row['predicate']}",
                created_at=facts.show(row["recorded_at"]),
            )
        if c.kind == "messages":
            text = message_text
            return Hit(
                uri=message_uri(row["session_id"], row["msg_id"]),
                source="messages",
                score=round(score, 6),
                snippet=q.snippet(text, terms),
                cues=q.cues(terms, text[:CUE_TEXT_LIMIT], self.text.analyze),
                title=f"{row['role']} in {row['session_id']}",
                session_id=row["session_id"],
                created_at=row["created_at"],
            )
        text = row["text"]
        return Hit(
            uri=chunk_uri(row["project_root"], row["path"], row["start_line"], row["end_line"]),
            source="files",
            score=round(score, 6),
            snippet=q.snippet(text, terms),
            cues=q.cues(terms, text[:CUE_TEXT_LIMIT], self.text.analyze, title=row["title"] + " " + row["path"]),
            title=f"{row['path']}" + (f" · {row['title']}" if row["title"] else ""),
            path=str(Path(row["project_root"]) / row["path"]),
            range=(row["start_line"], row["end_line"]),
        )
