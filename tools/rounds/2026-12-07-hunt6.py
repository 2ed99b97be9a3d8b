"""Independent review round (issue 35), hunt round 6: 16 bugs over context assembly, the
gateway, the ask agent's tools (with the jail and gitsafe), the PostgreSQL team record, and
recall/paging/progress.

Method: the bugs were chosen from the product code (lore_sidecar/) and its docstrings only,
with README.md and docs/ for what is promised, before any test was opened;
tools/mutations.py and the earlier rounds under tools/rounds/ were read only for the format
and to leave out a bug already planted (same text or same idea). The guarding test files
were chosen by file name and `grep -l <module or function name> tests/` only.

First run: (pending)
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: hunt6"

CTX_REQ, STUBS = "lore_sidecar/engine/context/requests.py", "lore_sidecar/engine/context/stubs.py"
SAVINGS = "lore_sidecar/engine/context/savings.py"
SESS, PROXY, LEASES = "lore_sidecar/gateway/sessions.py", "lore_sidecar/gateway/proxy.py", "lore_sidecar/gateway/leases.py"
JAIL, TOOLS, GITSAFE = "lore_sidecar/engine/jail.py", "lore_sidecar/engine/ask/tools.py", "lore_sidecar/engine/gitsafe.py"
REPLICA = "lore_sidecar/shared/replica.py"
PROGRESS, READER = "lore_sidecar/engine/indexing/progress.py", "lore_sidecar/engine/recall/node_reader.py"
RECALLER = "lore_sidecar/engine/recall/recaller.py"

CTX, LAYERS = "tests/e2e/test_context_assembly.py", "tests/e2e/test_context_layers.py"
ECON = "tests/unit/test_context_window_economics.py"
SAV_UNIT, SAV_E2E, GW_SAVINGS = "tests/unit/test_savings_rules.py", "tests/e2e/test_savings.py", "tests/integration/test_gateway_savings.py"
GW, GW_CODEX = "tests/integration/test_gateway.py", "tests/integration/test_gateway_codex.py"
LEASE_UNIT = "tests/unit/test_gateway_route_and_leases.py"
TRUST, ASK_TOOLS, HOSTILE = "tests/integration/test_trust_boundaries.py", "tests/integration/test_ask_tools.py", \
    "tests/integration/test_hostile_git.py"
SHR, SHR_UNIT = "tests/integration/test_shared.py", "tests/unit/test_shared_replica.py"
FIRST, WS = "tests/integration/test_first_contact.py", "tests/integration/test_workspace_indexing.py"
GETNODE, PAGING, INV = "tests/integration/test_get_node_redaction.py", "tests/integration/test_paging.py", \
    "tests/integration/test_invariants.py"

ROUND = [
    # --- context assembly (5) --------------------------------------------------------------------
    # The harness's last message may have grown since the last call (a merged turn): it must be
    # captured again, else what was added to it never reaches memory.
    Mutation("h6-ctx-grown-last-item-not-recaptured", CTX_REQ,
             "            return n - 1  # the last one may have grown (a merged turn): counted again",
             "            return n  # the last one may have grown (a merged turn): counted again",
             (CTX, LAYERS), by=BY),
    # An appended digest part must fit in what the earlier parts left of the prefix budget.
    Mutation("h6-ctx-appended-part-overruns-the-prefix-budget", CTX_REQ,
             "kept, left = stubs.fit(lines, room - len(earlier) - PART_OVERHEAD)",
             "kept, left = stubs.fit(lines, room - PART_OVERHEAD)",
             (CTX, LAYERS, ECON), by=BY),
    # A tool result flagged is_error with no exit code in its text: the digest says "error".
    Mutation("h6-ctx-digest-failed-command-ok", STUBS,
             '    return "error" if flagged else "ok"', '    return "ok"',
             (CTX, LAYERS), by=BY),
    # Chat Completions tool calls carry "id": the digest pairs each command with its output by it.
    Mutation("h6-ctx-chat-digest-commands-lose-their-output", STUBS,
             'found = [(c.get("id", ""), (c.get("function") or {}).get("name", "")',
             'found = [(c.get("call_id", ""), (c.get("function") or {}).get("name", "")',
             (CTX, LAYERS), by=BY),
    # L0's estimate reads the last body from cache only while the cache is warm.
    Mutation("h6-savings-l0-reads-a-cold-cache", SAVINGS,
             "    read = min(tokens, last_l0) if warm and prior.calls and price.caching else 0",
             "    read = min(tokens, last_l0) if prior.calls and price.caching else 0",
             (SAV_UNIT, SAV_E2E, GW_SAVINGS), by=BY),

    # --- gateway (3) -------------------------------------------------------------------------------
    # Codex names its conversation by prompt_cache_key: two conversations that begin alike stay two.
    Mutation("h6-gw-codex-cache-key-ignored", SESS,
             '    if body.get("prompt_cache_key"):\n        return str(body["prompt_cache_key"])[:200]\n', "",
             (GW_CODEX, GW), by=BY),
    # /v1/codex/responses goes to the ChatGPT backend's /codex/responses (only /v1 dropped).
    Mutation("h6-gw-chatgpt-path-loses-codex", PROXY,
             '        return chatgpt, path[len("/v1"):]', "        return chatgpt, path[len(prefix):]",
             (GW_CODEX, "tests/e2e/test_codex_run_secret.py"), by=BY),
    # A leased gateway is never quiet while a request is in flight (a long streamed answer).
    Mutation("h6-gw-leased-gateway-leaves-mid-answer", LEASES,
             "        return 0.0 if self.inflight else time.monotonic() - self.last",
             "        return time.monotonic() - self.last",
             (LEASE_UNIT, GW), by=BY),

    # --- ask tools, jail, gitsafe (3) ----------------------------------------------------------------
    # The harnesses' transcript folders are readable only where a caller asks for them.
    Mutation("h6-jail-transcripts-open-to-every-read", JAIL,
             "*(self.transcript_roots if transcripts else ())]\n        if not _within(p, allowed):",
             "*self.transcript_roots]\n        if not _within(p, allowed):",
             (TRUST, ASK_TOOLS, "tests/integration/test_never_read.py"), by=BY),
    # find_paths(depth=1) lists the folder's own entries, not its grandchildren.
    Mutation("h6-ask-find-paths-one-level-deeper", TOOLS,
             "                    if level + 1 < depth:", "                    if level < depth:",
             (ASK_TOOLS,), by=BY),
    # A PATH entry that is itself a repository's root (it holds .git) is dropped like its subfolders.
    Mutation("h6-gitsafe-path-entry-at-a-repo-root-kept", GITSAFE,
             'if any(os.path.lexists(folder / ".git") for folder in (here, *here.parents)):',
             'if any(os.path.lexists(folder / ".git") for folder in here.parents):',
             (HOSTILE,), by=BY),

    # --- team record (2) ---------------------------------------------------------------------------
    # Another machine's operation is applied under this machine's root for the project.
    Mutation("h6-team-replay-under-the-writers-path", REPLICA,
             '        local = {**op, "project": root}', "        local = op",
             (SHR_UNIT, SHR), by=BY),
    # A usage event kept in the outbox while away is pushed to the team's usage stream.
    Mutation("h6-team-offline-usage-filed-under-the-project", REPLICA,
             '        name = USAGE if op.get("method") in USAGE_METHODS else project_name(op["project"])',
             '        name = project_name(op["project"])',
             (SHR_UNIT, SHR), by=BY),

    # --- recall, paging, progress (3) --------------------------------------------------------------
    # A project whose first scan finished is not "still being indexed" on a later full scan.
    Mutation("h6-progress-rescan-marked-first", PROGRESS,
             "    if records.meta(_key(project_id)) != DONE:\n        records.fenced(lambda c: records.set_meta(c, _key(project_id), FIRST))",
             "    records.fenced(lambda c: records.set_meta(c, _key(project_id), FIRST))",
             (FIRST, WS), by=BY),
    # getNode of a file range that is no stored chunk serves exactly lines start..end (1-based).
    Mutation("h6-getnode-file-lines-off-by-one", READER,
             '.splitlines()[start - 1 : end]', '.splitlines()[start:end]',
             (GETNODE, TRUST, "tests/integration/test_never_read.py"), by=BY),
    # A short page that is truncated only because the word leg was cut: the next page starts
    # right after its last hit.
    Mutation("h6-recall-next-offset-by-limit", RECALLER,
             "            next_offset=offset + len(hits) if truncated else None,",
             "            next_offset=offset + limit if truncated else None,",
             (PAGING, INV), by=BY),
]
