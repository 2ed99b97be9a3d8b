"""The LLM client: Anthropic's Messages API through the official SDK, imported lazily.

Model, timeout, retries and max tokens come from the caller's settings. The stable parts of
a prompt (instructions, schemas) go first as system blocks marked for prompt caching, so
repeated calls reuse the cached prefix; only the variable part follows. Usage (input,
output, cache read and cache write tokens) is recorded per call. Failures never escape as
SDK exceptions: they become `LLMUnavailable` with a stable kind, and the client remembers
the last one for `lore/status`.
"""

from __future__ import annotations

import re
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
    stop: str = ""  # why the model stopped: end_turn, max_tokens, refusal, …


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
        except (a.APIError, ValueError) as exc:  # an answer the SDK cannot read (not JSON, not a message)
            raise self._bad(exc) from None
        try:
            text = _text_of(resp.content)
            usage = self._count(resp.usage)
            return Completion(text=text, usage=usage, model=str(resp.model or self.model),
                              took_ms=round((time.perf_counter() - t0) * 1000, 1), stop=str(resp.stop_reason or ""))
        except (AttributeError, TypeError, ValueError) as exc:
            raise self._bad(exc) from None

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
        except (a.APIError, ValueError) as exc:
            raise self._bad(exc) from None
        try:
            text = _text_of(resp.content)
            # A tool call's input is passed on as the model sent it (an object, or a string of
            # truncated JSON, or nothing): the tool dispatch says what is wrong with it.
            calls = [well_formed((getattr(b, "id", None), getattr(b, "name", None), getattr(b, "input", None)))
                     for b in resp.content or [] if getattr(b, "type", "") == "tool_use"]
            usage = self._count(resp.usage)
            return Turn(text=text, calls=calls, stop=str(resp.stop_reason or ""), usage=usage,
                        model=str(resp.model or self.model), took_ms=round((time.perf_counter() - t0) * 1000, 1))
        except (AttributeError, TypeError, ValueError) as exc:
            raise self._bad(exc) from None

    def _count(self, u: Any) -> Usage:
        usage = Usage(
            input_tokens=getattr(u, "input_tokens", 0) or 0,
            output_tokens=getattr(u, "output_tokens", 0) or 0,
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

    def _bad(self, exc: Exception) -> LLMUnavailable:
        """Trigger: a 200 whose body is not a Messages answer (not JSON, bytes that are not
        UTF-8, blocks of the wrong shape). Why: a peer's garbage must not become our internal
        error. Outcome: `llmBadResponse`, retryable (the next answer may be fine)."""
        return self._fail("llmBadResponse", f"the Anthropic API answered something that is not a message: "
                                            f"{type(exc).__name__}: {str(exc)[:200]}", retryable=True)

    def _fail(self, kind: str, message: str, *, retryable: bool = False) -> LLMUnavailable:
        with self._lock:
            self.status.failures += 1
            self.status.last_error = f"{kind}: {message}"
        return LLMUnavailable(kind, message, retryable=retryable)


def _text_of(content: Any) -> str:
    """The text blocks of an answer, joined (other blocks — tool calls, thinking — are not text)."""
    return well_formed("".join(t for b in content or []
                               if getattr(b, "type", "") == "text" and isinstance(t := getattr(b, "text", ""), str)))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def well_formed(value: Any) -> Any:
    """`value` with every lone surrogate (JSON's "\\ud800" decodes to one) made U+FFFD, in
    strings at any depth. Trigger: a model wrote one. Why: it cannot be encoded as UTF-8, so
    the next request that carries it back (the ask window), or the row that stores it, fails,
    and every later question with it. Outcome: the text stays, minus that one code unit."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, (list, tuple)):
        return type(value)(well_formed(v) for v in value)
    if isinstance(value, dict):
        return {well_formed(k): well_formed(v) for k, v in value.items()}
    return value
