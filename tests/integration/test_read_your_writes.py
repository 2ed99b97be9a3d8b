"""Read-your-writes under a slow index (engine/service.py `fresh`): a recall waits up to
`readWaitMs` for the word index to hold this instance's own last write. On a loaded machine
the commit can take longer (CI missed a write once at a fixed 2 s); the recall then answers
without it, and must say so (`writesPending`), not return a silently wrong answer."""

from __future__ import annotations

import threading

from tests.integration.test_store_and_index import engine_for, record
from tests.support.hold import held

WORDS = "the quokka ledger balances on thursdays"


def hold_text_commits(engine) -> threading.Event:
    """The text leg's commits block until the returned event is set: a disk that is slow."""
    release = threading.Event()
    text = engine.view.indexer.text
    commit = text.commit

    def slow_commit(*args, **kwargs):
        release.wait(120)
        return commit(*args, **kwargs)

    text.commit = slow_commit
    return release


def test_a_recall_whose_wait_for_its_own_write_expires_says_so_and_finds_it_once_indexed(tmp_path, workspace):
    e = engine_for(tmp_path / "store", [str(workspace)], watch=False, readWaitMs=200)
    try:
        assert e.index.wait(60)
        control = e.recall("quokka ledger", sources=["messages"])
        assert control.hits == [] and not control.writes_pending  # nothing written yet: nothing pending
        release = hold_text_commits(e)
        try:
            record(e, "s", [WORDS])
            missed = e.recall("quokka ledger", sources=["messages"])
            assert missed.hits == [] and missed.writes_pending  # the write is not searchable yet, and it says so
        finally:
            release.set()
        # Control: the same query, given room to wait for the commit, finds the write.
        e.read_wait_s = 120
        e2 = e.recall("quokka ledger", sources=["messages"])
        assert [h.uri for h in e2.hits] == ["session://s/s-0"] and not e2.writes_pending
    finally:
        e.close()


def test_a_follower_recall_whose_wait_for_its_applied_write_expires_says_so(tmp_path, workspace):
    """The follower's path: its write was spooled and applied by the writer, whose text
    commit is slow; the follower's recall waits `readWaitMs` for `indexed_seq`, then says so."""
    store = tmp_path / "store"
    writer = engine_for(store, [str(workspace)], watch=False)
    try:
        assert writer.index.wait(60)
        follower = engine_for(store, [str(workspace)], watch=False, readWaitMs=200, applyWaitMs=30_000)
        try:
            assert not follower.role.writer
            release = hold_text_commits(writer)
            try:
                record(follower, "f", [WORDS])  # applied by the writer (applyWaitMs), not yet indexed
                missed = follower.recall("quokka ledger", sources=["messages"])
                assert missed.hits == [] and missed.writes_pending
            finally:
                release.set()
            follower.read_wait_s = 120  # control: room to wait for the commit
            found = follower.recall("quokka ledger", sources=["messages"])
            assert [h.uri for h in found.hits] == ["session://f/f-0"] and not found.writes_pending
        finally:
            follower.close()
    finally:
        writer.close()


def test_a_lexical_only_recall_whose_wait_for_its_own_write_expires_says_so_too(tmp_path, workspace):
    """Reviewer round rev24 (rev24-pending-not-on-lexical-only): `writesPending` is about the
    word index, which a `lexicalOnly` recall reads like any other (it is `densePartial`, about
    the meaning index, that a lexical recall never says): it says so too."""
    e = engine_for(tmp_path / "store", [str(workspace)], watch=False, readWaitMs=200)
    try:
        assert e.index.wait(60)
        release = hold_text_commits(e)
        try:
            record(e, "s", [WORDS])
            missed = e.recall("quokka ledger", sources=["messages"], lexical_only=True)
            assert missed.hits == [] and missed.writes_pending
        finally:
            release.set()
        e.read_wait_s = 120  # control: room to wait for the commit
        found = e.recall("quokka ledger", sources=["messages"], lexical_only=True)
        assert [h.uri for h in found.hits] == ["session://s/s-0"] and not found.writes_pending
    finally:
        e.close()


HIT = {"uri": "session://s/s-0", "source": "messages", "score": 0.02, "snippet": "the quokka ledger", "cues": [],
       "path": None, "range": None, "createdAt": "2026-12-07T22:00:00Z"}
RESULT = {"queryId": "q", "hits": [HIT], "total": 1, "truncated": False, "nextOffset": None, "timeWindows": [],
          "densePartial": False}
PENDING_LINE = "What was just recorded is not searchable yet"


def test_the_mcp_tool_result_says_when_the_callers_writes_are_not_searchable_yet():
    """Reviewer round rev24 (rev24-mcp-line-wrong-key): the model reading lore_recall's text
    learns what the wire's `writesPending` says; the control (false) adds nothing."""
    from lore_sidecar.mcp_face.render import recall
    assert PENDING_LINE in recall({**RESULT, "writesPending": True}, None)
    assert PENDING_LINE not in recall({**RESULT, "writesPending": False}, None)


def test_an_mcp_recall_that_finds_nothing_while_the_callers_writes_are_pending_says_so():
    """Found by reviewer round rev24: a model that just recorded something and recalls it at
    once on a loaded machine gets no hits and `writesPending: true`; the tool's text must not
    read as a plain "No memory matches"."""
    from lore_sidecar.mcp_face.render import recall
    assert PENDING_LINE in recall({**RESULT, "hits": [], "total": 0, "writesPending": True}, None)


def test_the_writer_asked_the_moment_a_followers_write_is_applied_waits_for_it(tmp_path, workspace):
    """CI failed twice on this race: the follower sees its write applied (the writer's commit)
    while the writer is still finishing the drain (removing the spool file, a directory
    fsync); a recall on the writer in that moment must still wait for the write's words. The
    drain is held here right after the commit."""
    store = tmp_path / "store"
    writer = engine_for(store, [str(workspace)], watch=False, readWaitMs=60_000)
    try:
        assert writer.index.wait(60)
        follower = engine_for(store, [str(workspace)], watch=False, applyWaitMs=60_000)
        try:
            assert not follower.role.writer
            spool = writer.applier.spool
            spool.remove, removing, go = held(spool.remove)
            try:
                out = record(follower, "race", [WORDS])
                assert out["applied"] and removing.is_set()  # applied, and the writer's drain not done
                hits = writer.recall("quokka ledger", sources=["messages"]).hits
                assert [h.uri for h in hits] == ["session://race/race-0"]
            finally:
                go.set()
        finally:
            follower.close()
    finally:
        writer.close()
