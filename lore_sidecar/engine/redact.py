"""Secret redaction: rule-based, before anything is sent to a model or stored as a derivative.

What counts as a secret: provider API keys and tokens with a recognisable shape, private key
blocks, JWTs, passwords in URLs, and values assigned to names that say they are secret
(`password=`, `api_key:`, `SECRET_TOKEN=...`). What does not: git SHAs, UUIDs, hashes and
other identifiers people need to search for. Each secret becomes `[REDACTED:<kind>]`, so a
reader still sees that something was there and what kind of thing it was.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# (kind, pattern): the whole match is replaced, unless the pattern has a group named
# `secret`, in which case only that part is.
_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("private-key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S)),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("stripe-key", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("url-password", re.compile(r"(?<=://)(?P<user>[^\s:/@]+):(?P<secret>[^\s@/]+)(?=@)")),
    (
        "assigned-secret",
        re.compile(
            r"""(?ix)
            \b[\w.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth|credential)[\w.-]*
            ["']?\s*(?:=|:|=>)\s*["']?
            (?P<secret>[^\s"',;]{6,})
            """
        ),
    ),
]
# An assigned value that is really an identifier people search for, not a secret.
_NOT_SECRET = re.compile(
    r"""^(?:
        [0-9a-f]{7,40}                                   # a git SHA or hex digest
      | [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}   # a UUID
      | \$\{?[A-Za-z_][A-Za-z0-9_]*\}?                     # ${ENV_VAR}: a reference, no value
      | <[^>]*> | \*+ | x+ | \[REDACTED:[^\]]*\]           # placeholders
      | (?:true|false|null|none|required|optional)
    )$""",
    re.X | re.I,
)


def redact(text: str) -> str:
    """`text` with every secret replaced by `[REDACTED:<kind>]`."""
    for kind, pattern in _RULES:
        text = pattern.sub(_replacer(kind), text)
    return text


def _replacer(kind: str) -> Callable[[re.Match[str]], str]:
    def replace(m: re.Match[str]) -> str:
        if "secret" not in m.re.groupindex:
            return f"[REDACTED:{kind}]"
        value = m.group("secret")
        if _NOT_SECRET.match(value):
            return m.group(0)
        start, end = m.span("secret")
        whole = m.group(0)
        base = m.start()
        return whole[: start - base] + f"[REDACTED:{kind}]" + whole[end - base :]

    return replace
