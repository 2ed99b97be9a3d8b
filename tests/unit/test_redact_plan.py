"""Redaction's one needle pass decides which rules run; it must never change what comes out.

The reference is every rule run in order, each with its own exact needle check
(`Rule.sub` with nothing known in advance): what `redact` did before the plan existed.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from lore_sidecar.engine.capture import redact as R
from lore_sidecar.engine.capture.redact import MAX_SCAN_CHARS, redact
from tests.support.secrets import KEEP, PLANTED

REPO = Path(__file__).resolve().parents[2]
NEEDLES = sorted({n for r in R.RULES for n in r.needles})


def every_rule_in_full(text: str) -> str:
    if not text:
        return text
    tail = ""
    if len(text) > MAX_SCAN_CHARS:
        text, tail = text[:MAX_SCAN_CHARS], R._TRUNCATED.format(n=len(text) - MAX_SCAN_CHARS)
    for rule in R.RULES:
        text = rule.sub(text)
    return text + tail


# Pieces that make rules run, half-match, or match across each other: planted secrets and
# their halves, every needle in three cases, markers, letters whose lower() is another
# length or another letter (İ, the Kelvin sign), separators, long token runs.
_pieces = st.one_of(
    st.sampled_from([t for _, t, _ in PLANTED]),
    st.sampled_from([t[: len(t) // 2] for _, t, _ in PLANTED] + [t[len(t) // 2 :] for _, t, _ in PLANTED]),
    st.sampled_from(NEEDLES + [n.upper() for n in NEEDLES] + [n.title() for n in NEEDLES]),
    st.sampled_from(list(KEEP)),
    st.sampled_from(["[REDACTED:jwt]", "[REDACTED:assigned-secret]", "[TRUNCATED: 12 characters not scanned for secrets]",
                     "İ", "\u212a", "Σ", " = ", ": ", "='", "\n", "\t", "@", "://", "-p", "-u ", "Basic ", "Bearer "]),
    st.text(alphabet=st.sampled_from("aA1/+=_-.:@ ~Q sk-antAKIeyJ\"'\nKkEeYy"), max_size=60),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20),
)


@settings(max_examples=600, deadline=None)
@given(st.lists(_pieces, max_size=12), st.sampled_from(["", " ", "\n", "_"]))
def test_one_needle_pass_redacts_byte_for_byte_as_every_rule_run_in_full(parts, sep):
    text = sep.join(parts)
    assert redact(text) == every_rule_in_full(text)


def test_on_long_texts_and_this_repository_the_needle_pass_changes_nothing():
    """Whole files (past the old 4 KB cut-over between two ways of looking up needles) and a
    text holding every planted secret, with the control that it was redacted at all."""
    texts = [p.read_text(errors="replace") for p in sorted(REPO.glob("lore_sidecar/engine/**/*.py"))]
    texts.append((REPO / "tests/support/secrets.py").read_text())
    planted = "\n".join(t for _, t, _ in PLANTED) * 20
    texts.append(planted)
    for text in texts:
        assert redact(text) == every_rule_in_full(text)
    assert all(secret not in redact(planted) for _, _, secret in PLANTED)
    assert sum(len(t) > 4096 for t in texts) >= 10


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("passkeytokensecretcredentialsk-antghxoxbasicbearerPRIVATE KEYAIzaSQ~_-.:/"),
               max_size=200))
def test_the_needle_pass_finds_exactly_the_needles_each_lookup_finds(text):
    """Overlapping needles too ("passkey", "sk-ant-" inside "sk-ant-sk-"): the automaton
    reports every needle that occurs, none that does not."""
    plan = R._current_plan()
    low = text.lower()
    assert plan.present(low) == {n for n in plan.needles if n in low}


def test_a_secret_far_into_a_long_text_is_found_by_the_needle_pass():
    """Each planted secret alone, at the very end of 9 KB of prose that holds no needle: the
    needle pass looks at the whole text, not only its start (rev11: with the pass cut to the
    first 4,096 characters, every rule with needles was skipped and the secret kept)."""
    prose = "the quick brown fox jumps over the lazy dog and rests in the shade\n" * 140
    assert len(prose) > 2 * 4096 and not R._current_plan().present(prose.lower())  # control: no needle in it
    for kind, text, secret in PLANTED:
        long_text = prose + text
        out = redact(long_text)
        assert secret not in out, kind
        assert out == every_rule_in_full(long_text), kind
