"""The LLM client with the real Anthropic SDK against a fake Messages server on 127.0.0.1."""

from __future__ import annotations

import json
import socket

import pytest

from lore_sidecar.llm.anthropic_client import AnthropicClient, LLMUnavailable
from tests.support.fake_anthropic import FakeAnthropic

STABLE = ["You distil coding sessions into observation logs.", "Format: one observation per line."]


def client(url: str, **kw) -> AnthropicClient:
    return AnthropicClient(api_key="test-key-not-real", model="claude-test", base_url=url, **kw)


def test_a_call_sends_a_cache_friendly_body_and_records_usage():
    with FakeAnthropic(lambda body: "- observation: the export fails on S3 PutObject") as fake:
        c = client(fake.url, max_tokens=300)
        first = c.complete(stable=STABLE, prompt="session part one")
        second = c.complete(stable=STABLE, prompt="session part two")
    assert first.text.startswith("- observation") and first.model == "claude-test"
    body = fake.bodies[0]
    assert body["model"] == "claude-test" and body["max_tokens"] == 300
    assert [b["text"] for b in body["system"]] == STABLE
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    sent = fake.headers[0]  # the SDK sends the key in one of these, depending on its version
    assert "test-key-not-real" in (sent.get("x-api-key", ""), sent.get("authorization", "").removeprefix("Bearer "))
    # The prefix is byte-identical across calls: only the user part differs.
    assert fake.bodies[0]["system"] == fake.bodies[1]["system"]
    assert fake.bodies[0]["messages"] != fake.bodies[1]["messages"]
    assert first.usage.cache_write_tokens > 0 and second.usage.cache_read_tokens > 0
    assert c.status.calls == 2 and c.status.totals["output"] > 0 and c.status.last_error is None


def test_rate_limits_are_retried_then_reported_without_a_crash():
    with FakeAnthropic(lambda body: "fine") as fake:
        fake.script = [429]
        c = client(fake.url, max_retries=2)
        assert c.complete(stable=STABLE, prompt="x").text == "fine"  # retried by the SDK
        fake.script = [429, 429, 429]
        with pytest.raises(LLMUnavailable) as err:
            c.complete(stable=STABLE, prompt="y")
    assert err.value.kind == "rateLimited" and err.value.retryable
    assert c.status.failures == 1 and c.status.last_error.startswith("rateLimited")


def test_an_outage_and_a_missing_key_are_clear_errors():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = client(f"http://127.0.0.1:{port}", max_retries=0, timeout_s=2)
    with pytest.raises(LLMUnavailable) as err:
        c.complete(stable=STABLE, prompt="x")
    assert err.value.kind == "llmUnreachable"
    with pytest.raises(LLMUnavailable) as err:
        AnthropicClient(api_key="", model="claude-test")
    assert err.value.kind == "noApiKey"


def test_the_fake_records_exact_request_bytes():
    with FakeAnthropic() as fake:
        client(fake.url).complete(stable=STABLE, prompt="bytes")
    assert json.loads(fake.raw[0]) == fake.bodies[0]


def test_the_chat_backend_retries_with_max_completion_tokens_when_the_server_asks_for_it():
    from lore_sidecar.llm.openai_chat import OpenAIChatClient
    from tests.support.loopback import LoopbackServer, QuietHandler

    seen: list[dict] = []

    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            seen.append(body)
            if "max_tokens" in body:  # as OpenAI's reasoning models answer
                return self.send_json(400, {"error": {"message": "Unsupported parameter: 'max_tokens'. Use "
                                                                 "'max_completion_tokens' instead."}})
            self.send_json(200, {"model": "m", "choices": [{"message": {"role": "assistant", "content": "fine"},
                                                            "finish_reason": "stop"}],
                                 "usage": {"prompt_tokens": 50, "completion_tokens": 1,
                                           "prompt_tokens_details": {"cached_tokens": 40}}})

    with LoopbackServer(Handler, lifetime_s=60) as server:
        c = OpenAIChatClient(api_key="k", model="m", base_url=server.url + "/v1", max_tokens=99)
        turn = c.converse(system=[{"type": "text", "text": "s"}], tools=[], messages=[
            {"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    assert turn.text == "fine" and turn.usage.cache_read_tokens == 40 and turn.usage.input_tokens == 10
    assert "max_tokens" in seen[0] and seen[1]["max_completion_tokens"] == 99 and "max_tokens" not in seen[1]


@pytest.mark.parametrize("lone", ["\\ud800", "\\udbff", "\\udc00", "\\udfff"])
def test_a_lone_surrogate_of_either_half_becomes_U_FFFD_and_a_real_pair_stays(lone):
    """JSON's "\\udc00" decodes to a lone low surrogate just as "\\ud800" to a high one: either
    cannot be encoded as UTF-8, so either must go (text and tool-call input alike)."""
    body = ('{"type":"message","role":"assistant","id":"m","model":"claude-test","stop_reason":"end_turn",'
            '"content":[{"type":"text","text":"a LONE b \\ud83d\\ude00"},'
            '{"type":"tool_use","id":"t1","name":"Read","input":{"path":"x LONE y"}}],'
            '"usage":{"input_tokens":1,"output_tokens":1}}').replace("LONE", lone).encode()
    with FakeAnthropic(lambda b: {"raw": body}) as fake:
        c = client(fake.url)
        done = c.complete(stable=STABLE, prompt="p")
        turn = c.converse(system=[{"type": "text", "text": "s"}], tools=[], messages=[{"role": "user", "content": "q"}])
    assert done.text == "a \ufffd b \U0001F600"  # the pair (an emoji) is kept: the control
    assert turn.text == done.text and turn.calls == [("t1", "Read", {"path": "x \ufffd y"})]
    for s in (done.text, turn.text, turn.calls[0][2]["path"]):
        s.encode("utf-8")  # encodable: it can be stored and sent back
