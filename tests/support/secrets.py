"""Planted secrets: made-up credentials in real providers' shapes, each with the exact
secret part that must never survive redaction. Shared by the unit, integration and e2e
tests of redaction (messages, tool output, hook prompts, facts, nodes, workspace files)."""

from __future__ import annotations

# (kind, text as it would appear, the secret substring that must not survive)
PLANTED: list[tuple[str, str, str]] = [
    ("aws-access-key", "aws key AKIAZ7QX2JNV4TPLM3RD in the env", "AKIAZ7QX2JNV4TPLM3RD"),
    ("aws-secret-key", "the secret is 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 there", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYQ9ZLMK4EY2"),
    ("anthropic-key", "export ANTHROPIC_API_KEY=sk-ant-api03-Zx9fakefakefakefakefake_QQ", "sk-ant-api03-Zx9fakefakefakefakefake_QQ"),
    ("openai-key", "OPENAI key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w"),
    ("github-token", "token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("gitlab-token", "gitlab glpat-x7Kq2Lm9Np4Rs6Tv8Wy1", "glpat-x7Kq2Lm9Np4Rs6Tv8Wy1"),
    ("slack-token", "slack xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"),
    ("slack-webhook", "post to https://hooks.slack.com/services/T0FAKE123/B0FAKE456/q8Zr3Kx9Lm2Np4Vt7Wy1Ab5c",
     "T0FAKE123/B0FAKE456/q8Zr3Kx9Lm2Np4Vt7Wy1Ab5c"),
    ("stripe-key", "STRIPE=sk_live_51HfakefakefakefakeAB", "sk_live_51HfakefakefakefakeAB"),
    ("google-api-key", "maps key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q here", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("npm-token", "//registry.npmjs.org/:_authToken npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    ("twilio-key", "twilio SK0123456789abcdef0123456789abcdef ok", "SK0123456789abcdef0123456789abcdef"),
    ("sendgrid-key", "sendgrid SG.aBcDeFgHiJkLmNoPqRsTuV.aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdefg",
     "SG.aBcDeFgHiJkLmNoPqRsTuV.aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdefg"),
    ("mailgun-key", "mailgun key-0123456789abcdef0123456789abcdef", "key-0123456789abcdef0123456789abcdef"),
    ("jwt", "Authorization: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
     "eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
    ("private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAfakeRSAbody\n-----END RSA PRIVATE KEY-----",
     "MIIEowIBAAKCAQEAfakeRSAbody"),
    ("pgp-private-key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGfakePGPbodyXYZ\n-----END PGP PRIVATE KEY BLOCK-----",
     "lQOYBGfakePGPbodyXYZ"),
    ("azure-storage-key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyZmFrZWtleTEyMzQ1Njc4OTBhYmNkZWY=;",
     "Zm9vYmFyZmFrZWtleTEyMzQ1Njc4OTBhYmNkZWY="),
    ("url-password", "postgres://admin:hunter2correct@db.internal:5432/app", "hunter2correct"),
    ("basic-auth", "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1lMTIz", "YWxhZGRpbjpvcGVuc2VzYW1lMTIz"),
    ("bearer-token", "curl -H 'Authorization: Bearer 9fQ2xK7mLp3RtV8wZb4N' https://api", "9fQ2xK7mLp3RtV8wZb4N"),
    ("cli-user-password", "curl -u deploy:Sup3rS3cretPw https://ci.example/api", "Sup3rS3cretPw"),
    ("cli-password", "mysql -h db -u root -pDbPa55word42 shop", "DbPa55word42"),
    ("assigned-password", 'password = "Tr0ub4dor&3horse"', "Tr0ub4dor&3horse"),
    ("assigned-yaml", "db_password: s3cr3t-value-9", "s3cr3t-value-9"),
    ("heroku-uuid", "HEROKU_API_KEY=7c9e6679-7425-40de-944b-e07fc1f90ae7", "7c9e6679-7425-40de-944b-e07fc1f90ae7"),
    ("datadog-hex", "DD_API_KEY=0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"),
    ("client-secret-hex", "client_secret=9f86d081884c7d659a2feaa0c55ad015", "9f86d081884c7d659a2feaa0c55ad015"),
    ("api-key-entropy", 'api_key: "Qm9vZ2llV29vZ2llQm9vZ2llMTIz"', "Qm9vZ2llV29vZ2llQm9vZ2llMTIz"),
    ("json-secret", '{"client_secret": "x8Yv2Lq9Zr4Kp7Wm3Nt6"}', "x8Yv2Lq9Zr4Kp7Wm3Nt6"),
    ("huggingface-token", "HF hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"),
    ("pypi-token", "pypi-AgEIcHlwaS5vcmcCJGZha2UtdG9rZW4tZm9yLXRlc3RzLW9ubHktMTIzNDU2Nzg5MA", "AgEIcHlwaS5vcmcCJGZha2UtdG9rZW4tZm9yLXRlc3RzLW9ubHktMTIzNDU2Nzg5MA"),
]

# Text people need to find again that must survive redaction byte for byte.
KEEP: list[str] = [
    "fixed in commit 3f9a2c41d0be7e0c6f2b1a9d8e7c6b5a4f3e2d1c",
    "token_sha: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed",
    "password: ${DB_PASSWORD}",
    "api_key: <your key here>",
    "the auth middleware rejects expired sessions",
    "TypeError: unsupported operand in tokenize.py line 42",
    "token = self._token",
    'password = os.environ["DB_PASSWORD"]',
    "api_key_file: /run/secrets/api",
    "max_tokens: 2048",
    "Bearer tokens expire after an hour",
    "Basic configuration lives in settings.py",
    "mkdir -p build/output && ssh -p2222 host",
    "python -m pytest -p no:cacheprovider",
    "src/components/HeaderNavigation/MenuButton.tsx",
    "sha256: e3b0c44298fc1c149afbfc8996fb92427ae41e4649b934ca495991b7852b855",
]


def all_secrets() -> list[str]:
    return [secret for _, _, secret in PLANTED]


def planted_text() -> str:
    """Every planted secret, one per line, as a single document."""
    return "\n".join(text for _, text, _ in PLANTED)
