"""The LLM client: Anthropic's Messages API through the official SDK, imported lazily.

Model, timeout, retries and max tokens come from the caller's settings. The stable parts of
a prompt (instructions, schemas) go first as system blocks marked for prompt caching, so
repeated calls reuse the cached prefix; only the variable part follows. Usage (input,
output, cache read and cache write tokens) is recorded per call. Failures never escape as
SDK exceptions: they become `LLMUnavailable` with a stable kind, and the client remembers
the last one for `lore/status`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lore_sidecar.errors import LoreError


class LLMUnavailable(LoreError):
    pass


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage
    model: str
    took_ms: float


@dataclass(frozen=True)
class Turn:
    """One model turn of a tool-using conversation: its text, the tools it calls
    (`[(id, name, input)]`), why it stopped, and what it cost."""
    text: str
    calls: list[tuple[str, str, dict[str, Any]]]
    stop: str
    usage: Usage
    model: str
    took_ms: float


@dataclass
class LLMStatus:
    calls: int = 0
    failures: int = 0
    last_error: str | None = None
    totals: dict[str, int] = field(default_factory=lambda: {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0})


class AnthropicClient:
    def __init__(self, *, api_key: str, model: str, base_url: str | None = None, timeout_s: float = 60.0,
                 max_retries: int = 2, max_tokens: int = 2048):
        if not api_key:
            raise LLMUnavailable("noApiKey", "no Anthropic API key is set (ANTHROPIC_API_KEY)")
        self.model = model
        self.max_tokens = max_tokens
        self.status = LLMStatus()
        self._lock = threading.Lock()
        self._options = {"api_key": api_key, "base_url": base_url, "timeout": timeout_s, "max_retries": max_retries}
        self._anthropic: Any = None
        self._client: Any = None

    def prepare(self) -> None:
        """Import the SDK now (the memory thread does this when it starts, so the first
        distillation does not stall the process for the import while a session is live)."""
        self._sdk()

    def _sdk(self) -> Any:
        """The SDK is imported on the first call: start-up must not pay for it."""
        with self._lock:
            if self._client is None:
                import anthropic

                self._anthropic = anthropic
                self._client = anthropic.Anthropic(**self._options)
        return self._client

    def complete(self, *, stable: Sequence[str], prompt: str, max_tokens: int | None = None) -> Completion:
        """`stable`: prompt parts identical across calls (cached); `prompt`: this call's part."""
        system: list[dict[str, Any]] = [{"type": "text", "text": part} for part in stable]
        if system:
            system[-1]["cache_control"] = {"type": "ephemeral"}
        t0 = time.perf_counter()
        client = self._sdk()
        a = self._anthropic
        try:
            resp = client.messages.create(
                model=self.model,
                max_tokens=max_tokens or self.max_tokens,
                system=system,
                messages=[{"role": "user", "content": prompt}],
            )
        except a.AuthenticationError as exc:
            raise self._fail("authFailed", f"the Anthropic API refused the key: {exc}") from None
        except a.RateLimitError as exc:
            raise self._fail("rateLimited", f"rate limited by the Anthropic API (after retries): {exc}", retryable=True) from None
        except a.APIStatusError as exc:
            raise self._fail("llmError", f"the Anthropic API answered {exc.status_code}: {exc}", retryable=exc.status_code >= 500) from None
        except a.APIConnectionError as exc:
            raise self._fail("llmUnreachable", f"cannot reach the Anthropic API: {exc}", retryable=True) from None
        usage = self._count(resp.usage)
        text = "".join(b.text for b in resp.content if getattr(b, "type", "") == "text")
        return Completion(text=text, usage=usage, model=resp.model, took_ms=round((time.perf_counter() - t0) * 1000, 1))

    def converse(self, *, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]],
                 max_tokens: int | None = None, timeout_s: float | None = None) -> Turn:
        """One turn of a tool-using conversation, the blocks given as built (the caller
        places `cache_control`). `timeout_s`: this call's own bound, without retries — a
        caller with a deadline retries by itself or answers with what it has."""
        t0 = time.perf_counter()
        client = self._sdk()
        a = self._anthropic
        if timeout_s is not None:
            client = client.with_options(timeout=max(0.05, timeout_s), max_retries=0)
        try:
            resp = client.messages.create(model=self.model, max_tokens=max_tokens or self.max_tokens, system=system,
                                          tools=tools, messages=messages)
        except a.APITimeoutError:
            raise self._fail("llmTimeout", f"the model did not answer within {timeout_s:.1f} s", retryable=True) from None
        except a.AuthenticationError as exc:
            raise self._fail("authFailed", f"the Anthropic API refused the key: {exc}") from None
        except a.APIStatusError as exc:
            raise self._fail("llmError", f"the Anthropic API answered {exc.status_code}: {exc}",
                             retryable=exc.status_code == 429 or exc.status_code >= 500) from None
        except a.APIConnectionError as exc:
            raise self._fail("llmUnreachable", f"cannot reach the Anthropic API: {exc}", retryable=True) from None
        usage = self._count(resp.usage)
        text = "".join(b.text for b in resp.content if getattr(b, "type", "") == "text")
        calls = [(b.id, b.name, dict(b.input or {})) for b in resp.content if getattr(b, "type", "") == "tool_use"]
        return Turn(text=text, calls=calls, stop=resp.stop_reason or "", usage=usage, model=resp.model,
                    took_ms=round((time.perf_counter() - t0) * 1000, 1))

    def _count(self, u: Any) -> Usage:
        usage = Usage(
            input_tokens=u.input_tokens or 0,
            output_tokens=u.output_tokens or 0,
            cache_read_tokens=getattr(u, "cache_read_input_tokens", 0) or 0,
            cache_write_tokens=getattr(u, "cache_creation_input_tokens", 0) or 0,
        )
        with self._lock:
            s = self.status
            s.calls += 1
            s.last_error = None
            for key, value in (("input", usage.input_tokens), ("output", usage.output_tokens),
                               ("cacheRead", usage.cache_read_tokens), ("cacheWrite", usage.cache_write_tokens)):
                s.totals[key] += value
        return usage

    def _fail(self, kind: str, message: str, *, retryable: bool = False) -> LLMUnavailable:
        with self._lock:
            self.status.failures += 1
            self.status.last_error = f"{kind}: {message}"
        return LLMUnavailable(kind, message, retryable=retryable)
