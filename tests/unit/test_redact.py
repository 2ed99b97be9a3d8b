"""Secret redaction: secrets go, identifiers people search for stay."""

from __future__ import annotations

import pytest

from lore_sidecar.engine.redact import redact

# Each is a made-up credential in a real provider's shape.
SECRETS = [
    ("aws key AKIAZ7QX2JNV4TPLM3RD in the env", "AKIAZ7QX2JNV4TPLM3RD"),
    ("export ANTHROPIC_API_KEY=sk-ant-api03-Zx9fakefakefakefakefake_QQ", "sk-ant-api03-Zx9fakefakefakefakefake_QQ"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("STRIPE=sk_live_51HfakefakefakefakeAB", "sk_live_51HfakefakefakefakeAB"),
    ("postgres://admin:hunter2correct@db.internal:5432/app", "hunter2correct"),
    ('password = "Tr0ub4dor&3horse"', "Tr0ub4dor&3horse"),
    ("db_password: s3cr3t-value-9", "s3cr3t-value-9"),
    ("Authorization: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAfake\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAfake"),
    ("slack xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"),
]


@pytest.mark.parametrize("text, secret", SECRETS)
def test_secrets_are_redacted_with_their_kind(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out


KEEP = [
    "fixed in commit 3f9a2c41d0be7e0c6f2b1a9d8e7c6b5a4f3e2d1c",
    "token_sha: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed",
    "password: ${DB_PASSWORD}",
    "api_key: <your key here>",
    "the auth middleware rejects expired sessions",
    "TypeError: unsupported operand in tokenize.py line 42",
]


@pytest.mark.parametrize("text", KEEP)
def test_identifiers_and_prose_are_kept(text):
    assert redact(text) == text


def test_the_surrounding_text_survives():
    out = redact("connect with postgres://admin:hunter2correct@db.internal:5432/app then retry")
    assert out == "connect with postgres://admin:[REDACTED:url-password]@db.internal:5432/app then retry"
