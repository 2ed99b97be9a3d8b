"""Independent review round: issue 38, GitHub Copilot CLI 1.0.102 and Hermes Agent 0.19.0
(setup/agents.py, setup/yaml_block.py, setup/commands.py, setup/doctor.py, hook/events.py,
hook/messages.py, hook/daemon.py, engine/capture/transcripts.py, mcp_face/handshake.py,
gateway/run.py, editors/hermes/lore/__init__.py). The bugs were chosen from the product code,
its docstrings and the docs (README.md, editors/README.md, docs/mcp.md, docs/context.md,
docs/security.md) before any test was read; the test files were chosen by name and grep.

First run (`python tools/mutations.py <the 17 names>`, 13 min 21 s, 2 cores at load 2-4): 15 of
17 caught (88 %); survived: hermes-assistant-ids-restart, doctor-hermes-config-unchecked. No
'error' or 'stale' outcomes. Each survivor has a test added (comments below)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: independent, copilot/hermes round"
AGENTS = "lore_sidecar/setup/agents.py"
YAML = "lore_sidecar/setup/yaml_block.py"
COMMANDS = "lore_sidecar/setup/commands.py"
DOCTOR = "lore_sidecar/setup/doctor.py"
EVENTS = "lore_sidecar/hook/events.py"
MESSAGES = "lore_sidecar/hook/messages.py"
DAEMON = "lore_sidecar/hook/daemon.py"
TRANSCRIPTS = "lore_sidecar/engine/capture/transcripts.py"
HANDSHAKE = "lore_sidecar/mcp_face/handshake.py"
RUN = "lore_sidecar/gateway/run.py"
PROVIDER = "editors/hermes/lore/__init__.py"

DIALECTS = "tests/unit/test_agent_dialects.py"
INSTALLS = "tests/integration/test_agent_installs.py"
INSTALL = "tests/integration/test_install.py"
DOCTOR_T = "tests/integration/test_doctor.py"
DISCOVER = "tests/integration/test_mcp_discover.py"
MCP = "tests/integration/test_mcp.py"
LIFECYCLE = "tests/integration/test_lifecycle.py"
PROVIDER_T = "tests/integration/test_hermes_provider.py"
COPILOT_E2E = "tests/e2e/test_copilot.py"
HERMES_E2E = "tests/e2e/test_hermes.py"
RUN_E2E = "tests/e2e/test_run_agents.py"

COPILOT_HOOKS = (DIALECTS, LIFECYCLE, COPILOT_E2E)  # -x: the fast files first
SETUP = (INSTALLS, INSTALL)
HERMES = (PROVIDER_T, HERMES_E2E)

ROUND = [
    # --- Copilot's hooks ----------------------------------------------------------------------
    # Copilot gets Claude Code's wrapped hookSpecificOutput, which it drops silently: no recall.
    Mutation("copilot-flat-context-wrapped", EVENTS, '        if harness == "copilot":\n',
             '        if harness == "copilot-cli":\n', COPILOT_HOOKS, by=BY),
    # The made-up call id forgets the event's time: the same command run twice is one message.
    Mutation("copilot-tool-id-no-timestamp", MESSAGES,
             'key = json.dumps([session_id, p.get("timestamp"), p.get("tool_name"), p.get("tool_input")]',
             'key = json.dumps([session_id, p.get("tool_name"), p.get("tool_input")]', COPILOT_HOOKS, by=BY),
    # events.jsonl's user message read from transformedContent: lore's own recall block (and
    # Copilot's reminders) recorded as what the user said.
    Mutation("copilot-transcript-transformed-content", TRANSCRIPTS,
             'return _message(COPILOT_TYPES[item["type"]], d.get("content"),',
             'return _message(COPILOT_TYPES[item["type"]], d.get("transformedContent") or d.get("content"),',
             COPILOT_HOOKS, by=BY),
    # events.jsonl's assistant messages skipped: only the prompts of a Copilot session are kept.
    Mutation("copilot-transcript-no-assistant", TRANSCRIPTS,
             'COPILOT_TYPES = {"user.message": "user", "assistant.message": "assistant"}',
             'COPILOT_TYPES = {"user.message": "user"}', COPILOT_HOOKS, by=BY),
    # The transcript read again only after SessionEnd, which Copilot's install does not hook:
    # the final assistant message Copilot flushes after Stop is lost.
    Mutation("copilot-no-reread-at-stop", DAEMON, '            if event in ("Stop", "SessionEnd"):\n',
             '            if event == "SessionEnd":\n', COPILOT_HOOKS, by=BY),
    # --- Hermes install (config.yaml) ---------------------------------------------------------
    # Another active memory provider replaced by lore (Hermes allows one): the user's choice lost.
    Mutation("hermes-other-provider-replaced", AGENTS,
             '        if not mcp_only:\n            text = y.set_child(text, "memory", "provider"',
             '        if True:\n            text = y.set_child(text, "memory", "provider"', SETUP, by=BY),
    # Uninstall takes out whatever memory provider is set, not only lore.
    Mutation("hermes-uninstall-drops-other-provider", AGENTS,
             'if y.get(text, "memory", "provider") == "lore":', 'if y.get(text, "memory", "provider"):', SETUP,
             by=BY),
    # A user's longer mcp_discovery_timeout lowered to lore's 15 s.
    Mutation("hermes-discovery-timeout-lowered", AGENTS, "float(current) < float(HERMES_DISCOVERY_S)",
             "float(current) != float(HERMES_DISCOVERY_S)", SETUP, by=BY),
    # LORE_STORE_DIR not passed to the MCP server (Hermes passes only what env: names): the
    # tools read another store than the provider's hooks.
    Mutation("hermes-mcp-env-no-store", AGENTS, 'HERMES_ENV_VARS = ("LORE_STORE_DIR", "XDG_DATA_HOME",',
             'HERMES_ENV_VARS = ("XDG_DATA_HOME",', SETUP, by=BY),
    # Removing mcp_servers.lore also removes every server written after it under mcp_servers.
    Mutation("yaml-remove-child-takes-siblings", YAML, "lines = [*lines[:c], *lines[_block_end(lines, c):]]",
             "lines = [*lines[:c], *lines[_block_end(lines, p):]]", SETUP, by=BY),
    # A parent in flow style with content (`mcp_servers: {other: ...}`) is rewritten as an
    # empty block instead of refused: the user's other servers are lost.
    Mutation("yaml-flow-parent-clobbered", YAML, "    if inline not in EMPTY:\n",
             '    if inline not in EMPTY and not inline.startswith("{"):\n', SETUP, by=BY),
    # --- MCP handshake for Copilot -----------------------------------------------------------
    # install keeps Copilot's handshake for 2025-11-25, not the 2026-07-28 it opens with.
    Mutation("copilot-install-keeps-wrong-protocol", COMMANDS, 'HOST_PROTOCOLS = {"copilot": ("2026-07-28",),',
             'HOST_PROTOCOLS = {"copilot": ("2025-11-25",),', (DISCOVER, *SETUP), by=BY),
    # A kept server/discover never answered early: Copilot waits for the SDK (and gives up at ~9 s).
    Mutation("discover-not-answered-early", HANDSHAKE,
             '            if msg["method"] in ("initialize", "server/discover"):\n                kept = self._load()',
             '            if msg["method"] == "initialize":\n                kept = self._load()', (DISCOVER, MCP), by=BY),
    # --- run copilot / run hermes -------------------------------------------------------------
    # COPILOT_PROVIDER_TYPE=anthropic not recognised: its base URL gets /v1 (Anthropic's SDK
    # adds /v1 itself: /v1/v1/messages).
    Mutation("run-copilot-anthropic-gets-v1", RUN, '.get("COPILOT_PROVIDER_TYPE", "").lower() == "anthropic"',
             '.get("COPILOT_PROVIDER_TYPE", "") == "anthropic-messages"', (DIALECTS, RUN_E2E), by=BY),
    # --- the Hermes memory provider -------------------------------------------------------------
    # Assistant ids counted from the turn's first new message, not the conversation's start:
    # every later turn's reply gets the same id, a duplicate of the last one kept.
    # SURVIVED at first (one sync_turn per test; the e2e runs one turn per session). Added:
    # test_hermes_provider.py::test_each_turns_reply_is_captured_as_the_conversation_grows (three
    # turns, three replies) -> caught. Reading the tests found the real bug behind it (e40bf26: a
    # place-only id made the reply after /undo a duplicate); the loop line is unchanged and the
    # planted bug still caught (rerun after e40bf26).
    Mutation("hermes-assistant-ids-restart", PROVIDER, "for i, m in enumerate(messages[start:], start):",
             "for i, m in enumerate(messages[start:]):", HERMES, by=BY),
    # on_pre_compress hands the conversation over as a SessionEnd: no distillation before compaction.
    Mutation("hermes-precompress-no-distill", PROVIDER, '            call("PreCompact", self._payload(',
             '            call("SessionEnd", self._payload(', HERMES, by=BY),
    # --- doctor ----------------------------------------------------------------------------------
    # config.yaml not checked for the command: Hermes set up as MCP only (no provider .py)
    # starting another lore-sidecar is reported fine.
    # SURVIVED at first (the doctor test has a provider .py, which names the command too). Added:
    # test_agent_installs.py::test_doctor_names_a_hermes_config_that_starts_another_lore_sidecar_when_
    # lore_is_mcp_only -> caught.
    Mutation("doctor-hermes-config-unchecked", DOCTOR, 'or Path(p).name == "config.yaml")', "or False)",
             (DOCTOR_T, INSTALLS), by=BY),
]
