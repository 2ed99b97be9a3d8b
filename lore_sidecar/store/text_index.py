"""Full-text index on Tantivy: BM25 over words of any language (lore_sidecar.words), English
stemming, weighted fields.

The index is derived: `clear()` + re-adding from the record reproduces it. Only the writer
instance opens an IndexWriter (Tantivy allows one per directory); readers reload on demand.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import tantivy

from lore_sidecar.compound import CompoundParts
from lore_sidecar.filetypes import is_code_path
from lore_sidecar.model import Doc
from lore_sidecar.words import words_only

# Words only the neighbouring messages have count half (measured on a public conversation
# benchmark: 0.5 beats 0.2, 0.35 and 0.75; see docs/benchmarks.md).
CONTEXT_BOOST = 0.5
PARTS_BOOST = 0.8  # the pieces of a compound name count a little less than a whole word
# A code chunk's symbol name (also in its body) is a hint, not the topic: `def check(...)`
# must not win every query that says "check". A heading of prose keeps the title's weight.
SYMBOL_BOOST = 0.5
SCHEMA_TAG = "lore-text-10"  # 8: words of any language (lore_sidecar.words); 9: İ -> i, ǿ -> ø, names glued to
# CJK split; 10: Thai, Lao, Khmer and Myanmar runs cut into bigrams like CJK
KIND_CODES = {"messages": 1, "files": 2, "distillations": 3, "knowledge": 4, "facts": 5, "entities": 6}
CODE_KINDS = {v: k for k, v in KIND_CODES.items()}
FIELD_BOOSTS = {"title": 1.0, "symbol": SYMBOL_BOOST, "path": 1.5, "body": 1.0, "context": CONTEXT_BOOST,
                "parts": PARTS_BOOST}
def _title_field(d: Doc) -> str:
    """Where a document's title is indexed. A code chunk's title is its symbol's name; a
    prose chunk's is its section heading, which the chunk's body already holds when the
    section starts there — as a title it counted twice and outranked the text (measured on a
    document search set), as context it still finds the later chunks of a long section."""
    if d.kind != "files":
        return "title"
    return "symbol" if is_code_path(d.path) else "context"


def _analyzer() -> tantivy.TextAnalyzer:
    """Run on words_only() text: split on whitespace, lowercased, stemmed; none longer than
    64 bytes."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.remove_long(64))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("uid", tokenizer_name="raw")
    sb.add_text_field("project", tokenizer_name="raw")
    sb.add_unsigned_field("kind", fast=True, indexed=True)
    sb.add_unsigned_field("key", fast=True)
    sb.add_unsigned_field("day", fast=True)  # a message's day: searches inside a time window
    # Term frequencies, no positions: every search is a bag of words (search() strips any
    # phrase syntax), and BM25 reads only frequencies and field lengths.
    for field in ("title", "symbol", "path", "body", "context", "parts"):
        sb.add_text_field(field, tokenizer_name="lore", index_option="freq")
    return sb.build()


MAX_TIE_FETCH = 20_000  # the most documents one search reads to settle a tie at its cut


def _scope(schema, field: str, asked: set, present: Sequence[tuple]) -> list[tuple]:
    """The clauses that keep a search to the asked values of `field`, which every document
    has exactly one of; `present` is each value's document count (deleted ones included).
    Trigger: a filter clause in every search. Why: a Must over the asked kinds or projects
    makes Tantivy walk their long posting lists (at 100k messages an OR search took 2.8 ms
    with them, 0.7 ms without), and as scoring clauses they added each value's IDF to every
    hit (rare kinds outranked common ones by an accident of counts). Outcome: nothing when
    no other value has a document; the few others excluded when they are the smaller side;
    else the asked ones required. None of them scores."""
    others = [(v, n) for v, n in present if v not in asked and n]
    if not others:
        return []
    Q, Occur = tantivy.Query, tantivy.Occur
    if sum(n for _, n in others) <= sum(n for v, n in present if v in asked):
        return [(Occur.MustNot, Q.term_query(schema, field, v)) for v, _ in others]
    return [(Occur.Must, Q.const_score_query(
        Q.boolean_query([(Occur.Should, Q.term_query(schema, field, v)) for v in sorted(asked)]), 0.0))]


def _in_days(schema, days: Sequence[tuple[int, int]]) -> tantivy.Query:
    """A non-scoring clause: the document's day lies in one of the [first, last) ranges."""
    Q = tantivy.Query
    ranges = [(tantivy.Occur.Should, Q.range_query(schema, "day", tantivy.FieldType.Unsigned, max(1, a), b - 1))
              for a, b in days if b - 1 >= max(1, a)]
    if not ranges:
        return Q.boolean_query([(tantivy.Occur.MustNot, Q.all_query())])
    return Q.const_score_query(Q.boolean_query(ranges), 0.0)


class TextIndex:
    def __init__(self, directory: Path, *, writable: bool):
        self.directory = directory
        self.writable = writable
        self._lock = threading.Lock()
        # What the index runs on words_only() text, its query parser on plain words, and
        # Python asks the index's terms of (the same analysis on every side).
        self._index_analyzer = _analyzer()
        self._parts = CompoundParts()  # used by the writer thread only
        self._open()

    def _open(self) -> None:
        tag = self.directory / "SCHEMA"
        if self.writable and (not tag.exists() or tag.read_text() != SCHEMA_TAG):
            shutil.rmtree(self.directory, ignore_errors=True)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.schema = _schema()
        self.index = tantivy.Index(self.schema, path=str(self.directory), reuse=True)
        self.index.register_tokenizer("lore", self._index_analyzer)
        if self.writable:
            tag.write_text(SCHEMA_TAG)
            self._writer = self.index.writer(heap_size=64_000_000, num_threads=1)
        else:
            self._writer = None

    def analyze(self, text: str) -> list[str]:
        """The exact terms the index stores for `text` (used for cues and query terms)."""
        return self._index_analyzer.analyze(words_only(text))

    # -- writes (writer instance only) ---------------------------------------------------
    def upsert(self, docs: Iterable[Doc]) -> None:
        w = self._require_writer()
        for d in docs:
            uid = f"{d.kind}:{d.key}"
            w.delete_documents_by_term("uid", uid)
            doc = tantivy.Document()
            doc.add_text("uid", uid)
            doc.add_text("project", str(d.project_id))
            doc.add_unsigned("kind", KIND_CODES[d.kind])
            doc.add_unsigned("key", d.key)
            if d.day > 0:
                doc.add_unsigned("day", d.day)
            doc.add_text(_title_field(d), words_only(d.title))
            doc.add_text("path", words_only(d.path))
            doc.add_text("body", words_only(d.body))
            if d.context:
                doc.add_text("context", words_only(d.context))
            parts = d.parts if d.parts is not None else self._parts.of(d.title, d.body)
            if parts:
                doc.add_text("parts", parts)
            w.add_document(doc)

    def delete(self, kind: str, keys: Iterable[int]) -> None:
        w = self._require_writer()
        for key in keys:
            w.delete_documents_by_term("uid", f"{kind}:{key}")

    def commit(self, seq: int) -> None:
        """Commit, then record `seq` as the outbox position this index includes."""
        self._require_writer().commit()
        self.index.reload()
        tmp = self.directory / ".seq.tmp"
        tmp.write_text(str(seq))
        os.replace(tmp, self.directory / "SEQ")

    def rollback(self) -> None:
        """Every write since the last commit dropped: searches and the next commit see the
        index as last committed (a rebuild that failed half way is never committed)."""
        self._require_writer().rollback()

    @property
    def saved_seq(self) -> int:
        try:
            return int((self.directory / "SEQ").read_text())
        except (OSError, ValueError):
            return 0

    def clear(self) -> None:
        """Every document deleted as of the next commit: until then searches answer from the
        index as it was (a rebuild re-adds everything and commits once; `lore/reindex` left
        recall with nothing to find by words while it ran). SEQ goes at once, so a crash
        meanwhile is a rebuild on the next start."""
        self._require_writer().delete_all_documents()
        (self.directory / "SEQ").unlink(missing_ok=True)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.wait_merging_threads()
            self._writer = None

    def _require_writer(self):
        if self._writer is None:
            raise RuntimeError("text index opened read-only")
        return self._writer

    # -- reads ----------------------------------------------------------------------------
    def reload(self) -> None:
        self.index.reload()

    def num_docs(self) -> int:
        return self.index.searcher().num_docs

    def doc_keys(self) -> list[tuple[str, int]]:
        """Every live document as (kind, key), duplicates kept (for checks and diagnostics)."""
        searcher = self.index.searcher()
        n = searcher.num_docs
        if not n:
            return []
        addrs = [a for _, a in searcher.search(tantivy.Query.all_query(), n, count=False).hits]
        kinds = searcher.fast_field_values("kind", addrs)
        keys = searcher.fast_field_values("key", addrs)
        return sorted((CODE_KINDS[k], key) for k, key in zip(kinds, keys, strict=True))

    def search(
        self,
        terms: Sequence[str],
        *,
        kinds: Sequence[str],
        project_ids: Sequence[int] | None,
        limit: int,
        conjunctive: bool,
        days: Sequence[tuple[int, int]] = (),
    ) -> list[tuple[str, int, float]]:
        """Top `limit` (kind, key, bm25) for the given plain terms. Terms are sanitised here, so
        no query syntax from the user ever reaches Tantivy's parser. `days`: only documents
        whose day falls in one of these [first, last) ranges (a document without a day never
        does); the clause does not score."""
        words = words_only(" ".join(terms), query=True).lower().split()
        words = [w for w in words if w not in ("and", "or", "not")]
        if not (words or days) or not kinds:
            return []
        # No words but days: every document of those days, the latest first (all score 0).
        text_q = self.index.parse_query(
            " ".join(words),
            list(FIELD_BOOSTS),
            field_boosts=FIELD_BOOSTS,
            conjunction_by_default=conjunctive,
        ) if words else tantivy.Query.all_query()
        searcher = self.index.searcher()
        scope = _scope(self.schema, "kind", {KIND_CODES[k] for k in kinds}, [(c, searcher.doc_freq("kind", c)) for c in CODE_KINDS])
        if project_ids is not None:
            asked = {str(p) for p in project_ids}
            scope += _scope(self.schema, "project", asked, searcher.terms_with_prefix("project", ""))
        if days:
            scope.append((tantivy.Occur.Must, _in_days(self.schema, days)))
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, text_q), *scope]) if scope else text_q
        # Trigger: equal scores at the cut. Why: Tantivy breaks ties by document address,
        # which differs between the live index and one rebuilt from the record; the design
        # promises both answer alike. Outcome: the tied group at the cut is fetched whole
        # (up to MAX_TIE_FETCH) and ties are ordered by (kind, key), the record's identity.
        want = limit + 1  # one past the cut shows whether a tie straddles it
        while True:
            hits = searcher.search(query, want, count=False).hits
            if len(hits) < want or want >= MAX_TIE_FETCH or hits[limit - 1][0] != hits[-1][0]:
                break
            want = min(MAX_TIE_FETCH, want * 4)
        addrs = [a for _, a in hits]
        if not addrs:
            return []
        kinds_v = searcher.fast_field_values("kind", addrs)
        keys_v = searcher.fast_field_values("key", addrs)
        found = [(CODE_KINDS[k], key, score) for (score, _), k, key in zip(hits, kinds_v, keys_v, strict=True)]
        if not words:
            return sorted(found, key=lambda h: (h[0], -h[1]))[:limit]
        return sorted(found, key=lambda h: (-h[2], h[0], h[1]))[:limit]
