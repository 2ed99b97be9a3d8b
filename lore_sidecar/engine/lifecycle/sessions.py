"""The session lifecycle every host runs: start (guidance, boot block, startup recall), each
prompt (a bounded `<recall>` block plus standing directives), and the end (capture what was
not recorded yet). Runs on the Engine facade; formatting lives in `lifecycle`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lore_sidecar.engine.capture import transcripts
from lore_sidecar.engine.lifecycle import blocks as lifecycle
from lore_sidecar.engine.memory.knowledge import now_iso
from lore_sidecar.errors import LoreError

MAX_TRANSCRIPT_BYTES = 64 << 20

DEFAULT_BUDGET_TOKENS = 400


class Sessions:
    def __init__(self, engine, guidance: str = lifecycle.DEFAULT_GUIDANCE):
        self.engine = engine
        self.guidance = guidance

    def start(self, *, session_id: str, harness: str | None = None, cwd: str | None = None, repo: str | None = None,
              budget_tokens: int = DEFAULT_BUDGET_TOKENS) -> dict[str, Any]:
        e = self.engine
        root = e.projects.root(cwd)
        nodes = e.memory.store.boot_nodes(e.projects.ids(root, "project"), now_iso())
        boot = lifecycle.boot_block(Path(root).name, nodes)
        words = " ".join(w for w in (Path(cwd).name if cwd else "", repo or "") if w)
        block, query_id = "", None
        if words.strip():
            result = e.recall(words, project=root, limit=8)
            query_id = result.query_id
            hits = [h for h in result.hits if h.session_id != session_id]
            block = lifecycle.recall_block(session_id, query_id, hits, budget_tokens=budget_tokens)
            self._log_recalled(query_id, session_id, harness, block.count("\n") - 1 if block else 0)
        return {"context": lifecycle.session_start_text(self.guidance, boot, block), "queryId": query_id,
                "boot": boot.count("\n") - 1 if boot else 0}

    def prompt(self, *, session_id: str, prompt: str, harness: str | None = None, project: str | None = None,
               budget_tokens: int = DEFAULT_BUDGET_TOKENS) -> dict[str, Any]:
        """Leads for this prompt from earlier work (not from this session, which the agent
        already has in context), and the standing directives in scope; empty when nothing
        is relevant."""
        e = self.engine
        result = e.recall(prompt, project=project, limit=12)
        hits = [h for h in result.hits if h.session_id != session_id][:8]
        block = lifecycle.recall_block(session_id, result.query_id, hits, budget_tokens=budget_tokens)
        words = lifecycle.scope_words(prompt)
        nodes = [n for n in e.memory.store.boot_nodes(e.projects.ids(project, "project"), now_iso(), min_priority=4)
                 if lifecycle.is_directive(n) and lifecycle.in_scope(n, words)]
        directives = lifecycle.directives_block(nodes)
        leads = block.count("\n") - 1 if block else 0
        self._log_recalled(result.query_id, session_id, harness, leads)
        context = "\n\n".join(part for part in (directives, block) if part)
        return {"context": context, "queryId": result.query_id, "leads": leads}

    def end(self, *, session_id: str, harness: str | None = None, project: str | None = None,
            transcript: list[dict] | None = None, transcript_path: str | None = None) -> dict[str, Any]:
        """Capture the transcript; messages already recorded (same ids) are duplicates."""
        if transcript is None and transcript_path is None:
            return {"recorded": 0, "duplicates": 0, "captured": 0}
        if transcript_path is not None:
            messages = transcripts.parse_lines(read_transcript(self.engine.projects.jail, transcript_path).splitlines())
        else:
            messages = [m for m in (transcripts.from_item(item, i) for i, item in enumerate(transcript or [])) if m]
        if not messages:
            return {"recorded": 0, "duplicates": 0, "captured": 0}
        out = self.engine.capture.record_messages(project=project, session_id=session_id, harness=harness, messages=messages)
        return {"recorded": out["recorded"], "duplicates": out["duplicates"], "captured": len(messages),
                "applied": out["applied"]}

    def _log_recalled(self, query_id: str, session_id: str, harness: str | None, leads: int) -> None:
        if leads:
            self.engine.memory.log_recall(query_id, session_id, harness, leads)


def read_transcript(jail, path: str) -> str:
    """A host's transcript: only under an opened folder or a harness's own transcript folder
    (anything else is `outsideWorkspace`, whether or not it exists)."""
    try:
        data = jail.read_bytes(path, max_bytes=MAX_TRANSCRIPT_BYTES, transcripts=True)
    except LoreError as exc:
        if exc.kind not in ("notFound", "notAFile", "fileTooLarge", "unreadable"):
            raise  # outsideWorkspace stays what it is
        raise LoreError("invalidTranscript", exc.message, path=str(path)[:200]) from None
    return data.decode("utf-8", errors="replace")
