"""Redaction (engine/capture/redact.py) at the edges of each token shape: a body of exactly
the length a provider's format gives (or its shortest) is redacted, one character short is
not a token (nor, for a fixed-length format, one character long), and a token's prefix
counts only at the start of a word. Each case is its own control: the same prefix and
alphabet on both sides of the boundary."""

from __future__ import annotations

from itertools import cycle, islice

import pytest

from lore_sidecar.engine.capture import redact as R
from lore_sidecar.engine.capture.redact import redact

ALNUM = "aB3dE6gH9kLm2nOp5qRs8tUv1wXy4ZcF7"
HEX = "0123456789abcdef"


def body(n: int, alphabet: str = ALNUM) -> str:
    return "".join(islice(cycle(alphabet), n))


# (kind, prefix, alphabet, shortest body, longest body or None when open-ended)
SHAPES = [
    ("anthropic-key", "sk-ant-", ALNUM, 20, None),
    ("openai-key", "sk-", ALNUM, 20, None),
    ("github-token", "ghp_", ALNUM, 30, None),
    ("github-token", "github_pat_", ALNUM, 40, None),
    ("gitlab-token", "glpat-", ALNUM, 20, None),
    ("slack-token", "xoxb-", ALNUM, 10, None),
    ("slack-token", "xapp-1-", ALNUM, 10, None),
    ("slack-webhook", "https://hooks.slack.com/services/", ALNUM, 20, None),
    ("stripe-key", "sk_live_", ALNUM, 16, None),
    ("stripe-key", "whsec_", ALNUM, 24, None),
    ("google-api-key", "AIza", ALNUM, 35, 35),
    ("google-oauth-token", "ya29.", ALNUM, 20, None),
    ("npm-token", "npm_", ALNUM, 36, 36),
    ("pypi-token", "pypi-AgE", ALNUM, 50, None),
    ("huggingface-token", "hf_", ALNUM, 34, 34),
    ("twilio-key", "SK", HEX, 32, 32),
    ("mailgun-key", "key-", ALNUM, 32, 32),
    ("digitalocean-token", "dop_v1_", HEX, 64, 64),
    ("digitalocean-token", "dor_v1_", HEX, 64, 64),
    ("databricks-token", "dapi", HEX, 32, 32),
    ("shopify-token", "shpat_", HEX, 32, 32),
    ("aws-access-key", "AKIA", "Z7QX2JNV4TPLM3RD", 16, 16),
    ("azure-client-secret", "xY71Q~", ALNUM, 31, 34),
    ("azure-storage-key", "AccountKey=", ALNUM, 20, None),
    ("bearer-token", "Authorization: Bearer ", ALNUM, 16, None),
]


@pytest.mark.parametrize(("kind", "prefix", "alphabet", "shortest", "longest"), SHAPES,
                         ids=[f"{s[0]}:{s[1][:12]}" for s in SHAPES])
def test_a_token_body_at_its_formats_length_is_redacted_and_one_off_it_is_not(kind, prefix, alphabet, shortest,
                                                                             longest):
    marker = f"[REDACTED:{kind}]"
    for n in {shortest, longest or shortest + 7}:
        token = prefix + body(n, alphabet)
        out = redact(f"use {token} now")
        assert marker in out and body(n, alphabet) not in out, (n, out)
    short = redact(f"use {prefix}{body(shortest - 1, alphabet)} now")
    assert marker not in short, short
    if longest is not None:
        long = redact(f"use {prefix}{body(longest + 1, alphabet)} now")
        assert marker not in long, long


def test_a_databricks_token_takes_its_numbered_suffix_with_it():
    token = "dapi" + body(32, HEX)
    assert redact(f"DATABRICKS {token}-2 ok") == "DATABRICKS [REDACTED:databricks-token] ok"
    assert redact(f"DATABRICKS {token}-12 ok") == "DATABRICKS [REDACTED:databricks-token] ok"


def test_a_jwt_needs_eight_characters_in_each_of_its_three_parts():
    whole = f"eyJ{body(8)}.eyJ{body(8)}.{body(8)}"
    assert redact(f"t {whole} x") == "t [REDACTED:jwt] x"
    for short in (f"eyJ{body(7)}.eyJ{body(8)}.{body(8)}", f"eyJ{body(8)}.eyJ{body(7)}.{body(8)}",
                  f"eyJ{body(8)}.eyJ{body(8)}.{body(7)}"):
        assert redact(f"t {short} x") == f"t {short} x"


def test_a_prefix_inside_a_longer_word_is_not_a_token():
    # "task-…", "disk_live_…", "ask-ant-…": the letters before the prefix make it a word
    for word in ("task-" + body(24), "mask_live_" + body(20), "flask-ant-" + body(24), "xghp_" + body(36)):
        assert redact(f"id {word} ok") == f"id {word} ok", word
    # the control: the same tokens after a space are tokens
    assert "[REDACTED:openai-key]" in redact("id sk-" + body(24) + " ok")
    assert "[REDACTED:github-token]" in redact("id ghp_" + body(36) + " ok")


def test_a_mysql_password_of_three_to_128_characters_is_redacted_whole():
    for n in (3, 128):
        pw = body(n)
        assert redact(f"mysql -h db -u root -p{pw} shop") == "mysql -h db -u root -p[REDACTED:cli-password] shop", n
    assert redact("mysql -h db -u root -pAb shop") == "mysql -h db -u root -pAb shop"  # two: not a password


def test_a_named_secret_needs_six_characters_and_a_relative_path_is_not_one():
    assert redact("db_password: x9y8z7") == "db_password: [REDACTED:assigned-secret]"
    assert redact("db_password: x9y8z") == "db_password: x9y8z"
    # a path, relative or absolute, names where a secret lives: kept (the control above is redacted)
    for path in ("../config/creds/", "./config/creds/", "~/config/creds/", "/run/secrets/db/"):
        assert redact(f"credentials: {path}") == f"credentials: {path}", path


def test_a_long_run_with_one_or_two_letter_classes_is_no_aws_secret_and_with_three_it_is():
    # _random_looking: generated text mixes lower case, upper case and digits
    lower_digits = body(40, "k3j5h7g9f2d4s6a8q1w3e5r7t9y2u4i6o8p0zmxn")
    mixed = body(40, "k3J5h7G9f2D4s6A8q1W3e5R7t9Y2u4I6o8P0zMxN")
    assert redact(f"blob {lower_digits} end") == f"blob {lower_digits} end"
    assert redact(f"blob {mixed} end") == "blob [REDACTED:aws-secret-key] end"


# The limits as the module sets them, written out: a change to either is a deliberate one.
FINDINGS, SCAN = 4096, 1 << 20


def test_the_candidate_limit_is_exactly_4096_per_rule():
    key = "AKIAZ7QX2JNV4TPLM3RD"
    whole = redact(f"{key} " * FINDINGS)
    assert whole.count("[REDACTED:aws-access-key]") == FINDINGS and "not scanned" not in whole
    over = redact(f"{key} " * (FINDINGS + 1))
    assert over.count("[REDACTED:aws-access-key]") == FINDINGS and key not in over
    # the rest from the end of the last match: " AKIA… " (22 characters) is opaque
    assert over.endswith("[REDACTED:aws-access-key][TRUNCATED: 22 characters not scanned for secrets]")


def test_a_text_of_exactly_the_scan_limit_is_scanned_whole_and_one_more_character_is_cut():
    exact = "x" * (SCAN - 21) + " AKIAZ7QX2JNV4TPLM3RD"
    assert redact(exact) == "x" * (SCAN - 21) + " [REDACTED:aws-access-key]"
    assert redact(exact + "y").endswith("[REDACTED:aws-access-key][TRUNCATED: 1 characters not scanned for secrets]")


def test_redact_value_shares_one_budget_across_the_strings_of_a_value():
    key = "AKIAZ7QX2JNV4TPLM3RD"
    assert R.redact_value(["abcd", "efgh", key, ""], [8]) == [
        "abcd", "efgh", "[TRUNCATED: 20 characters not scanned for secrets]", ""]
    assert R.redact_value(["abcdef"], [4]) == ["abcd[TRUNCATED: 2 characters not scanned for secrets]"]
    # the control: a budget that reaches the key scans it
    assert R.redact_value(["abcd", key], [24]) == ["abcd", "[REDACTED:aws-access-key]"]
    assert R.redact_value({"n": 3, "t": True, "k": None}) == {"n": 3, "t": True, "k": None}


def test_a_placeholder_that_is_not_a_word_is_kept_and_a_value_beside_it_is_not():
    for text in ("db_password: ********", "API_KEY=<paste-key-2>", "client_secret=%CLIENT_SECRET_2%",
                 "token: ${VAULT_TOKEN_2}", "password=------"):
        assert redact(text) == text, text
    assert redact("db_password: ****1234") == "db_password: [REDACTED:assigned-secret]"  # the control
