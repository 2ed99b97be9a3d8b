"""Independent review round (issue 35: "a fresh independent round, planted by someone who did
not write the tests: >= 90% caught"): the gateway (proxy, guard, sessions, decoding, run), the
ask agent (tools, toolspec, loop, ledger), the jail, the never-read list, gitsafe, and the wire
(converter, handlers, results). The bugs were chosen from the product code and README.md,
docs/protocol.md, docs/security.md, docs/context.md and docs/architecture.md ("Promises,
guarded") before any test was read; bugs earlier rounds planted were left out. The test files
were chosen by name and by `grep -l <module>` only.

First run (`python tools/mutations.py <the 18 names>`, once, 2 cores at load 5-6, 16:34-16:45
UTC): 14 of 18 caught (78%); survived: gw-openai-cached-counted-twice,
ask-tool-result-unredacted, ask-read-lines-numbered-from-zero, ask-read-binary-as-text. No
error or stale outcome. Each survivor has a test added (comments below); rerun with the tests
added, each of the four is caught.

Real bugs found while reading (not planted), each fixed with a test that failed before:
toolspec's integer-as-text rule took "--5" and "²" (str.isdigit) and int() raised out of the
dispatch (555690e); `run`'s gateway probe went through an `http_proxy` of the environment,
secret included (b13a365); `run` printed the secret on stderr (9bdbb19).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: independent, fresh round (issue 35)"
PROXY, GUARD, SESS = "lore_sidecar/gateway/proxy.py", "lore_sidecar/gateway/guard.py", "lore_sidecar/gateway/sessions.py"
DECODE, RUN = "lore_sidecar/gateway/decoding.py", "lore_sidecar/gateway/run.py"
TOOLS, SPEC = "lore_sidecar/engine/ask/tools.py", "lore_sidecar/engine/ask/toolspec.py"
LOOP, LEDGER = "lore_sidecar/engine/ask/loop.py", "lore_sidecar/engine/ask/ledger.py"
JAIL, NR, GIT = "lore_sidecar/engine/jail.py", "lore_sidecar/engine/never_read.py", "lore_sidecar/engine/gitsafe.py"
CONV, HANDLERS = "lore_sidecar/wire/converter.py", "lore_sidecar/rpc/handlers.py"

GW_CALLERS = "tests/integration/test_gateway_callers.py"
GW = "tests/integration/test_gateway.py"
GW_PEERS = "tests/integration/test_gateway_peers.py"
ASK_RULES, TOOLSPEC = "tests/unit/test_ask_rules.py", "tests/unit/test_toolspec.py"
ASK_TOOLS, NEVER = "tests/integration/test_ask_tools.py", "tests/integration/test_never_read.py"
ASK_E2E, MALFORMED = "tests/e2e/test_ask.py", "tests/e2e/test_malformed_models.py"
TRUST, HOSTILE_GIT = "tests/integration/test_trust_boundaries.py", "tests/integration/test_hostile_git.py"
WIRE_UNIT, STDIO, LSP = "tests/unit/test_settings_and_wire.py", "tests/integration/test_stdio_contract.py", \
    "tests/e2e/test_lsp_session.py"

ROUND = [
    # --- the gateway --------------------------------------------------------------------------
    # Any x-lore-token header is taken for the store's secret (its value never compared).
    Mutation("gw-any-token-header-accepted", GUARD,
             "return bool(given) and hmac.compare_digest(str(given).encode(), secret.encode()), path",
             "return bool(given), path", (GW_CALLERS,), by=BY),
    # A conversation without a session id of its own is keyed by its whole history, not by how
    # it began: every turn lands in a new session.
    Mutation("gw-session-hash-of-whole-conversation", SESS, 'instructions"), first]', 'instructions"), conv]',
             (GW,), by=BY),
    # OpenAI usage: the cached prompt tokens are counted again as uncached input.
    # SURVIVED (the dialect test checked only cache_read_input_tokens). Added:
    # test_gateway.py::test_openai_usage_counts_cached_prompt_tokens_once_as_cache_reads_not_again_as_input -> caught.
    Mutation("gw-openai-cached-counted-twice", SESS, '"input_tokens": max(0, int(u.get(inp) or 0) - cached)',
             '"input_tokens": int(u.get(inp) or 0)', (GW, GW_PEERS), by=BY),
    # A gzip answer's private copy is decoded as zlib: its usage is never read.
    Mutation("gw-gzip-usage-unread", DECODE, "return 16 + zlib.MAX_WBITS", "return zlib.MAX_WBITS",
             (GW_PEERS,), by=BY),
    # `run codex`: the secret goes into the base URL on Codex's command line (/proc/<pid>/cmdline).
    Mutation("run-codex-secret-on-command-line", RUN, """f'{provider}.base_url="{base}/v1{"/codex" if chatgpt else ""}"'""",
             """f'{provider}.base_url="{url}/v1{"/codex" if chatgpt else ""}"'""", (GW_CALLERS, "tests/e2e/test_codex_run_secret.py"), by=BY),
    # --- the ask agent ------------------------------------------------------------------------
    # A tool's result reaches the model unredacted (a secret in an ordinary file goes to the model).
    # SURVIVED (the never-read tests refuse credential files before any text exists; no test put a
    # secret in an ordinary file). Added: test_ask_tools.py::test_what_a_tool_hands_the_model_is_
    # redacted_though_the_file_is_an_ordinary_one (its file added to this entry) -> caught.
    Mutation("ask-tool-result-unredacted", SPEC, "    text = redact(text)\n", "    text = text\n",
             (ASK_TOOLS, TOOLSPEC, NEVER, ASK_E2E), by=BY),
    # One model turn more than askMaxIterations.
    Mutation("ask-loop-one-turn-past-the-limit", LOOP, "for _ in range(max_iterations):",
             "for _ in range(max_iterations + 1):", (ASK_RULES, MALFORMED, ASK_E2E), by=BY),
    # A fact recorded again from the files as they are now stays stale.
    Mutation("ask-ledger-rerecorded-fact-stays-stale", LEDGER,
             "sources={**old.sources, **f.sources}, stale=False)", "sources={**old.sources, **f.sources}, stale=old.stale)",
             (ASK_RULES, ASK_E2E), by=BY),
    # Read numbers lines from 0: every path:line the model cites is one line early.
    # SURVIVED (no test read the numbers or the sources' `lines`). Added:
    # test_ask_tools.py::test_read_numbers_the_lines_from_one_as_the_model_cites_them -> caught.
    Mutation("ask-read-lines-numbered-from-zero", TOOLS, '"startLine": offset + 1,', '"startLine": offset,',
             (ASK_TOOLS, TOOLSPEC, ASK_E2E), by=BY),
    # Read hands a binary file to the model as text.
    # SURVIVED (the hostile reads were all refused earlier, by the jail or by size). Added: test_ask_tools.py::
    # test_a_binary_file_is_refused_as_not_text_and_the_same_bytes_without_a_nul_are_read -> caught.
    Mutation("ask-read-binary-as-text", TOOLS, 'if b"\\0" in data[:8192]:', "if False:",
             (ASK_TOOLS, TOOLSPEC), by=BY),
    # --- the jail, the never-read list, gitsafe -------------------------------------------------
    # A FIFO (or a device) is read as if it were a file.
    Mutation("jail-reads-a-fifo", JAIL,
             'if not stat.S_ISREG(st.st_mode):\n            raise LoreError("notAFile"',
             'if stat.S_ISLNK(st.st_mode):\n            raise LoreError("notAFile"', (TRUST, NEVER, ASK_TOOLS), by=BY),
    # An export walks into a folder that is a symlink (the write leaves the workspace).
    Mutation("jail-write-follows-a-folder-link", JAIL,
             'dir_flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)',
             'dir_flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)', (TRUST, NEVER), by=BY),
    # `.docker/config.json`, `.kube/config`, `gh/hosts.yml`, `.config/hub` are no longer never-read.
    Mutation("nr-file-tails-missed", NR, "if any(tuple(parts[-n:]) in tails",
             "if any(tuple(folders[-n:]) in tails", ("tests/unit/test_never_read.py", NEVER),
             by=BY),
    # config.worktree is never vetted (extensions.worktreeConfig makes git read it).
    Mutation("gitsafe-worktree-config-unvetted", GIT,
             'vet(root, [common_dir / "config", git_dir / "config.worktree"], env, git)',
             'vet(root, [common_dir / "config"], env, git)', (HOSTILE_GIT,), by=BY),
    # --- the wire --------------------------------------------------------------------------------
    # `true` is taken for an integer (limit: true -> 1).
    Mutation("wire-integer-accepts-bool", CONV,
             "if isinstance(value, bool) or not isinstance(value, int):\n            raise TypeError(f\"expected an integer",
             "if not isinstance(value, int):\n            raise TypeError(f\"expected an integer", (WIRE_UNIT, STDIO, LSP),
             by=BY),
    # The lower bound of every limit is gone (limit 0, a negative offset, priority -1 accepted).
    Mutation("wire-limits-without-lower-bound", CONV, "if v is not None and not lo <= v <= hi:",
             "if v is not None and v > hi:", (WIRE_UNIT, STDIO, LSP, "tests/integration/test_paging.py"), by=BY),
    # lore/recall with an asOf that is no time is answered instead of refused.
    Mutation("wire-recall-bad-asof-accepted", CONV,
             "if isinstance(value, t.RecallParams) and value.as_of is not None and not _is_time(value.as_of):",
             "if False:", (WIRE_UNIT, STDIO, LSP, TRUST), by=BY),
    # `lore.recall` with `[query]` (a bare string) is refused instead of read as {query}.
    Mutation("wire-command-bare-query-refused", HANDLERS, '            params = {"query": params}\n',
             "            pass\n", (LSP, "tests/e2e/test_helix.py"), by=BY),
]
