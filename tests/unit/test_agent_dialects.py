"""Copilot CLI's and Hermes' shapes, pure: what the hook prints for each host, how a Copilot
tool call without a call id is recorded, Copilot's events.jsonl as messages, and the Hermes
provider's messages with ids that stay the same from one hand-over to the next."""

from __future__ import annotations

import importlib.util
import json

from lore_sidecar.engine.capture import transcripts
from lore_sidecar.hook.events import host_output
from lore_sidecar.hook.messages import tool_message
from tests.support.harness import ROOT


def test_copilot_gets_a_flat_additional_context_and_claude_code_the_wrapped_one():
    assert host_output("UserPromptSubmit", "<recall/>", "copilot") == {"additionalContext": "<recall/>"}
    assert host_output("SessionStart", "guide", "copilot") == {"additionalContext": "guide"}
    assert host_output("UserPromptSubmit", "<recall/>", "claude-code") == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "<recall/>"}}
    assert host_output("Stop", "x", "copilot") is None and host_output("UserPromptSubmit", "", "copilot") is None


def copilot_event(ts: str, command: str = "cat NOTES.md") -> dict:
    return {"hook_event_name": "PostToolUse", "session_id": "s1", "timestamp": ts, "cwd": "/w", "tool_name": "Bash",
            "tool_input": {"command": command}, "tool_result": {"result_type": "success",
                                                               "text_result_for_llm": "walrus weekly\n"}}


def test_a_copilot_tool_result_is_recorded_with_an_id_of_its_own_call():
    one = tool_message(copilot_event("2026-12-03T11:51:25.975Z"), "s1")
    assert one is not None and one["content"] == "walrus weekly\n" and one["tool_name"] == "Bash"
    assert tool_message(copilot_event("2026-12-03T11:51:25.975Z"), "s1")["msg_id"] == one["msg_id"]  # a retried hook
    assert tool_message(copilot_event("2026-12-03T11:52:00.000Z"), "s1")["msg_id"] != one["msg_id"]  # run again later
    no_text = copilot_event("2026-12-03T11:51:25.975Z")
    no_text["tool_result"] = {"result_type": "failure"}
    assert tool_message(no_text, "s1") is None
    claude = {"tool_name": "Read", "tool_use_id": "toolu_1", "tool_response": {"file": "x"}}
    assert tool_message(claude)["msg_id"] == "tool-toolu_1"  # Claude Code's own call id, as before


def test_copilot_events_jsonl_gives_the_prompt_with_the_hooks_id_and_the_replies():
    lines = [json.dumps(x) for x in (
        {"type": "session.start", "data": {"sessionId": "s1"}, "id": "e0"},
        {"type": "user.message", "data": {"content": "Show the notes.", "transformedContent": "…<system_reminder>…",
                                          "messageId": "m1"}, "id": "e1", "timestamp": "2026-12-03T11:51:25.689Z"},
        {"type": "assistant.message", "data": {"messageId": "m2", "content": "", "toolRequests": [{"name": "bash"}]},
         "id": "e2"},
        {"type": "tool.execution_complete", "data": {"toolCallId": "call_1", "result": {"content": "x"}}, "id": "e3"},
        {"type": "assistant.message", "data": {"messageId": "m3", "content": "Done."}, "id": "e4",
         "timestamp": "2026-12-03T11:51:26.100Z"})]
    got = transcripts.parse_lines(lines)
    assert [(m["role"], m["content"]) for m in got] == [("user", "Show the notes."), ("assistant", "Done.")]
    assert got[0]["msg_id"] == transcripts.prompt_id("Show the notes.")  # a duplicate of the prompt hook's capture
    assert got[1]["msg_id"] == "m3"


def provider():
    spec = importlib.util.spec_from_file_location("lore_hermes_provider", ROOT / "editors" / "hermes" / "lore" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_hermes_provider_hands_messages_over_with_stable_ids():
    hermes = provider()
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "Show the notes."},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "terminal"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "walrus weekly"},
                {"role": "assistant", "content": "Done."}]
    whole = hermes.as_transcript("s1", messages)
    assert [m["role"] for m in whole] == ["user", "tool", "assistant"]
    assert "id" not in whole[0]  # lore derives a prompt's id from its text, as the prefetch capture did
    assert whole[1] == {"role": "tool", "content": "walrus weekly", "id": "tool-c1", "toolCallId": "c1",
                        "toolName": "terminal"}
    assert hermes.as_transcript("s1", messages, 3) == whole[1:]  # a later hand-over: the same ids
    assert [transcripts.from_item(m)["msg_id"] for m in whole] == [transcripts.prompt_id("Show the notes."), "tool-c1",
                                                                  whole[2]["id"]]
    # A reply's id is not its place: with earlier turns before it (or cut away), the same id.
    longer = [messages[0], {"role": "user", "content": "Earlier."}, {"role": "assistant", "content": "Earlier reply."},
              *messages[1:]]
    assert hermes.as_transcript("s1", longer)[-1]["id"] == whole[2]["id"]
    assert len({m["id"] for m in hermes.as_transcript("s1", longer) if m["role"] == "assistant"}) == 2
