"""Secret redaction: secrets go, identifiers people search for stay, and no input makes it slow
or unstable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lore_sidecar.engine.capture import redact as R
from lore_sidecar.engine.capture.redact import MARKER, redact, redact_value
from tests.support.secrets import KEEP, PLANTED

REPO = Path(__file__).resolve().parents[2]
TRANSCRIPTS = REPO.parent / "shared" / "data" / "transcripts"


@pytest.mark.parametrize("kind, text, secret", PLANTED, ids=[p[0] for p in PLANTED])
def test_each_planted_kind_is_redacted(kind, text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out


def test_the_planted_corpus_covers_at_least_27_kinds():
    assert len({kind for kind, _, _ in PLANTED}) >= 27


@pytest.mark.parametrize("text", KEEP)
def test_identifiers_code_and_prose_are_kept(text):
    assert redact(text) == text


def test_the_surrounding_text_survives():
    out = redact("connect with postgres://admin:hunter2correct@db.internal:5432/app then retry")
    assert out == "connect with postgres://admin:[REDACTED:url-password]@db.internal:5432/app then retry"


def test_only_the_value_of_a_named_secret_goes():
    assert redact("DD_API_KEY=0123456789abcdef0123456789abcdef ok") == "DD_API_KEY=[REDACTED:assigned-secret] ok"
    # Control: the same hex after a name that is not secret is an identifier and stays.
    assert redact("commit_sha=0123456789abcdef0123456789abcdef ok") == "commit_sha=0123456789abcdef0123456789abcdef ok"


def test_a_mysql_password_flag_is_redacted_only_on_a_mysql_command_line():
    assert "DbPa55word42" not in redact("mysql -u root -pDbPa55word42 shop")
    assert redact("gcc -pDbPa55word42 x.c") == "gcc -pDbPa55word42 x.c"


def test_text_past_the_scan_limit_is_opaque_not_passed_on():
    secret = "AKIAZ7QX2JNV4TPLM3RD"
    text = "x" * R.MAX_SCAN_CHARS + " " + secret
    out = redact(text)
    assert secret not in out and "not scanned" in out


def test_a_flood_of_candidates_makes_the_rest_opaque():
    text = "password=Abc12345 " * (R.MAX_FINDINGS + 10) + "AKIAZ7QX2JNV4TPLM3RD"
    out = redact(text)
    assert "Abc12345" not in out and "AKIAZ7QX2JNV4TPLM3RD" not in out


def test_redact_value_reaches_every_string_in_a_message_body():
    body = [{"type": "text", "text": "key sk-ant-api03-Zx9fakefakefakefakefake_QQ"},
            {"type": "tool_result", "content": [{"type": "text", "text": "password = 'Tr0ub4dor&3horse'"}]}]
    out = json.dumps(redact_value(body))
    assert "Zx9fake" not in out and "Tr0ub4dor" not in out and out.count("[REDACTED:") == 2


def test_redact_value_redacts_a_secret_used_as_a_key_and_keeps_plain_keys():
    body = {"ghp_abcdefghijklmnopqrstuvwxyz0123456789": "a token pasted as a header name", "type": "text"}
    out = redact_value(body)
    assert not any("ghp_abcdefghijklmnopqrstuvwxyz0123456789" in k for k in out)
    assert any(MARKER.search(k) for k in out) and out["type"] == "text"  # control: an ordinary key stays



def test_two_secrets_used_as_keys_of_one_object_keep_both_values():
    body = {"ghp_abcdefghijklmnopqrstuvwxyz0123456789": "first", "ghp_zyxwvutsrqponmlkjihgfedcba9876543210": "second",
            "type": "text"}
    out = redact_value(body)
    assert sorted(v for k, v in out.items() if k != "type") == ["first", "second"]  # neither value lost
    assert all(MARKER.search(k) for k in out if k != "type") and out["type"] == "text"
    assert redact_value(out) == out  # a second pass changes nothing

_secret_texts = st.sampled_from([t for _, t, _ in PLANTED])
_noise = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_secret_texts, _noise), max_size=6))
def test_redaction_is_idempotent_and_never_lets_a_planted_secret_through(parts):
    text = " ".join(parts)
    once = redact(text)
    assert redact(once) == once
    for _, planted, secret in PLANTED:
        if planted in parts:
            assert secret not in once


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("aA1/+=_-.:@ sk-antAKIeyJ\"'\n"), max_size=300))
def test_redaction_of_token_soup_is_idempotent_and_never_grows_markers_into_secrets(text):
    once = redact(text)
    assert redact(once) == once
    # Every marker is whole: redaction never splices a secret's pieces around a marker.
    assert "[REDACTED:" not in MARKER.sub("", once)


def _redactions(text: str) -> int:
    return len(MARKER.findall(redact(text))) - len(MARKER.findall(text))


def test_false_positives_on_this_repository_are_only_its_own_fake_credentials():
    """Every redaction in the project's own sources is a fake credential the tests plant:
    none lands on ordinary code or prose."""
    hits = {}
    paths = [*REPO.glob("lore_sidecar/**/*.py"), *REPO.glob("docs/*.md"), *REPO.glob("editors/*/*.ts"),
             *REPO.glob("editors/*/src/*.ts"), *REPO.glob("editors/nvim/**/*.lua")]
    for path in sorted(paths):
        n = _redactions(path.read_text(errors="replace"))
        if n:
            hits[str(path.relative_to(REPO))] = n
    assert hits == {}


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="shared transcripts are not beside this checkout")
def test_false_positives_on_real_agent_transcripts_are_zero():
    total = 0
    for path in sorted(TRANSCRIPTS.rglob("*.jsonl")):
        for line in path.read_text(errors="replace").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            total += len(MARKER.findall(json.dumps(redact_value(item))))
    assert total == 0


def _secret_words() -> list[str]:
    """Every literal word the assigned-secret rule's name can start with."""
    import itertools
    import re

    words = []
    for alt in R._SECRET_WORD.split("|"):
        parts = re.split(r"(\[_\.\\-\]\?|\(\?:or\)\?|s\?)", alt)
        choices = [{"[_.\\-]?": ["", "_", ".", "-"], "(?:or)?": ["", "or"], "s?": ["", "s"]}.get(p, [p]) for p in parts]
        words += ["".join(c) for c in itertools.product(*choices)]
    assert all(re.fullmatch(R._SECRET_WORD, w) for w in words)
    return words


def test_the_assigned_secret_rule_is_tried_wherever_a_match_can_start():
    """Its matches are tried only up to `lead` characters before a needle: every secret word
    must hold a needle that early, and each is found in a sentence as by a full scan."""
    rule = next(r for r in R.RULES if r.kind == "assigned-secret")
    for word in _secret_words():
        assert min((i for n in rule.needles if (i := word.find(n)) >= 0), default=None) is not None, word
        assert min(i for n in rule.needles if (i := word.find(n)) >= 0) <= rule.lead, word
        text = f"x = 1; my_{word} = 'Zq8vR2mT5wLp9' and later {word.upper()}: Zq8vR2mT5wLp9x"
        low = text.lower()
        assert [m.span() for m in rule._matches(rule.pattern, low)] == [m.span() for m in rule.pattern.finditer(low)]
        assert "Zq8vR2mT5wLp9" not in redact(text), word
    # A match can hold the start of another (a name inside a value): finditer's matches do not
    # overlap, and neither do these.
    nested = "token=secret_key=abc123def passwd: passwd_token=Zq8vR2mT5wLp9"
    assert [m.span() for m in rule._matches(rule.pattern, nested)] == [m.span() for m in rule.pattern.finditer(nested)]


def test_a_secret_after_letters_that_lower_lengthens_is_redacted_whole():
    """The case-insensitive rules (bearer, basic, assigned secrets) match a lower-cased copy;
    "İ".lower() is two characters, so spans found there would cut the original in the wrong
    places. The control: the same line without those letters, redacted the same way."""
    token = "tok3nValue0123456789abcdefXYZ"
    line = f"curl -H 'Authorization: Bearer {token}' && export DB_PASSWORD=Zq9secretValue77"
    prefix = "İstanbul İzmir İİİİİİ: "
    assert redact(prefix + line) == prefix + redact(line)
    out = redact(prefix + line)
    assert token[:6] not in out and token[-6:] not in out and "Zq9secret" not in out, out
    assert "[REDACTED:bearer-token]" in out and "[REDACTED:assigned-secret]" in out, out


def test_a_private_key_block_cut_before_its_end_line_is_still_redacted():
    """Tool output is often cut short: a key block with no END line is redacted to the end of
    the text. The control: a whole block is redacted up to its END line and what follows stays."""
    body = "MIIEowIBAAKCAQEAu3Zq9XvL2mN8pQ4rT6wY1sB5dF7hJ0kL3nP6qS9tV2xZ4cE8gI\nfH2jK5mN8pR1sU4vX7yA0bD3eG6hJ9kM2nQ5rT8uW1xZ4"
    cut = redact(f"cat ~/.ssh/deploy\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n[output truncated]")
    assert "MIIEowIBAAKCAQEA" not in cut and "xZ4" not in cut and cut == "cat ~/.ssh/deploy\n[REDACTED:private-key]", cut
    whole = redact(f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\nnext line stays")
    assert whole == "[REDACTED:private-key]\nnext line stays", whole
