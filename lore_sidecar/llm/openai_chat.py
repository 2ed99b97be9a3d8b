"""An OpenAI-compatible `/chat/completions` backend for tool-using conversations (OpenAI,
OpenRouter, vLLM, llama.cpp's server, Ollama's OpenAI endpoint, …).

It takes the same conversation the Anthropic client does — system blocks, tool schemas and
messages in Anthropic's block shape — and translates: system blocks become one system
message, `tool_use` blocks become `tool_calls`, `tool_result` blocks become `tool` messages.
Providers of this API cache a repeated prefix by themselves, so `cache_control` marks are
dropped. Plain HTTP from the standard library: one POST per turn, bounded by the caller's
timeout, no retries (a caller with a deadline decides what to do with the time left).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

from lore_sidecar.llm.anthropic_client import LLMStatus, LLMUnavailable, Turn, Usage, well_formed


class OpenAIChatClient:
    def __init__(self, *, api_key: str, model: str, base_url: str, timeout_s: float = 60.0, max_tokens: int = 2048):
        if not api_key:
            raise LLMUnavailable("noApiKey", "no API key is set for the OpenAI-compatible backend "
                                 "(LORE_ASK_API_KEY or OPENAI_API_KEY)")
        if not base_url:
            raise LLMUnavailable("noBaseUrl", "askBaseUrl is needed for the OpenAI-compatible backend")
        self.model = model
        self.max_tokens = max_tokens
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.timeout_s = timeout_s
        self.status = LLMStatus()
        self._key = api_key
        self._lock = threading.Lock()

    def converse(self, *, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]],
                 max_tokens: int | None = None, timeout_s: float | None = None) -> Turn:
        body = {"model": self.model, "max_tokens": max_tokens or self.max_tokens,
                "messages": chat_messages(system, messages),
                "tools": [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                                             "parameters": t["input_schema"]}} for t in tools]}
        t0 = time.perf_counter()
        limit = max(0.05, timeout_s if timeout_s is not None else self.timeout_s)
        try:
            try:
                data = self._post(body, limit)
            except urllib.error.HTTPError as exc:
                # Trigger: OpenAI's newer models refuse `max_tokens` (a 400 naming its successor).
                # Outcome: the same turn once more with `max_completion_tokens`; other servers never see it.
                if exc.code != 400 or b"max_completion_tokens" not in exc.read():
                    raise
                body["max_completion_tokens"] = body.pop("max_tokens")
                data = self._post(body, max(0.05, limit - (time.perf_counter() - t0)))
        except urllib.error.HTTPError as exc:
            kind = "authFailed" if exc.code in (401, 403) else "llmError"
            raise self._fail(kind, f"the model endpoint answered {exc.code}", retryable=exc.code == 429 or exc.code >= 500) from None
        except TimeoutError:
            raise self._fail("llmTimeout", f"the model did not answer within {limit:.1f} s", retryable=True) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            if isinstance(getattr(exc, "reason", None), TimeoutError):
                raise self._fail("llmTimeout", f"the model did not answer within {limit:.1f} s", retryable=True) from None
            raise self._fail("llmUnreachable", f"cannot reach the model endpoint: {exc}", retryable=True) from None
        try:
            choice = data["choices"][0]
            message = choice.get("message") or {}
            calls = []
            for call in message.get("tool_calls") or []:
                fn = call.get("function") or {}
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    args = {"_unparsed": fn.get("arguments")}
                calls.append((str(call.get("id") or f"call_{len(calls)}"), str(fn.get("name")),
                              args if isinstance(args, dict) else {"value": args}))
        except (KeyError, IndexError, TypeError, AttributeError):
            raise self._fail("llmError", "the model endpoint answered something that is not a chat completion") from None
        u = data.get("usage") or {}
        cached = ((u.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0
        usage = Usage(input_tokens=max(0, (u.get("prompt_tokens") or 0) - cached), output_tokens=u.get("completion_tokens") or 0,
                      cache_read_tokens=cached, cache_write_tokens=0)
        with self._lock:
            self.status.calls += 1
            self.status.last_error = None
            for key, value in (("input", usage.input_tokens), ("output", usage.output_tokens), ("cacheRead", cached)):
                self.status.totals[key] += value
        return Turn(text=well_formed(str(message.get("content") or "")), calls=well_formed(calls), stop=str(choice.get("finish_reason") or ""),
                    usage=usage, model=str(data.get("model") or self.model), took_ms=round((time.perf_counter() - t0) * 1000, 1))

    def _post(self, body: dict[str, Any], limit: float) -> Any:
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), method="POST", headers={
            "content-type": "application/json", "authorization": f"Bearer {self._key}"})
        with urllib.request.urlopen(request, timeout=limit) as resp:  # noqa: S310 (a user-chosen endpoint)
            return json.loads(resp.read())

    def _fail(self, kind: str, message: str, *, retryable: bool = False) -> LLMUnavailable:
        with self._lock:
            self.status.failures += 1
            self.status.last_error = f"{kind}: {message}"
        return LLMUnavailable(kind, message, retryable=retryable)


def chat_messages(system: list[dict[str, Any]], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic-shaped system blocks and messages as Chat Completions messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": "\n\n".join(b.get("text", "") for b in system)}]
    for m in messages:
        content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        if m["role"] == "assistant":
            text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
            calls = [{"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {})}}
                     for b in content if b.get("type") == "tool_use"]
            out.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
            continue
        texts = []
        for b in content:
            if b.get("type") == "tool_result":
                out.append({"role": "tool", "tool_call_id": b["tool_use_id"], "content": _text(b.get("content"))})
            elif b.get("type") == "text":
                texts.append(b.get("text", ""))
        if texts:
            out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return str(content or "")
