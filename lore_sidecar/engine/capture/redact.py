"""Secret redaction: before anything is stored, indexed, exported, logged or sent to a model.

What counts as a secret: provider keys and tokens with a recognisable shape, private key
blocks, JWTs, credentials in URLs and command lines, `Authorization` values, and values
assigned to names that say they are secret (`password=`, `DD_API_KEY=`, `client_secret:`).
What does not: git SHAs, UUIDs and hashes on their own, code that merely *refers* to a
secret (`token = self._token`, `password: ${DB_PASSWORD}`), and prose. Each secret becomes
`[REDACTED:<kind>]`, so a reader still sees that something was there and what it was.

Linear time, always (hostile input reaches this from every entrance):
- every rule starts with a literal or a one-character class test and then scans forward
  with bounded or possessive quantifiers, so a failed attempt never backtracks;
- where a token could be re-tried from every position inside one long run ("eyJeyJeyJ…"),
  the rule only starts at the run's boundary (a negative look-behind), so each run is
  scanned once per rule;
- a single call scans at most `MAX_SCAN_CHARS`; anything past that is opaque and is replaced
  by a `[TRUNCATED: … not scanned]` marker, never passed on unscanned.
`bench/redact.py` measures every rule on 1 MB of its own worst case.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ahocorasick_rs import AhoCorasick

MAX_SCAN_CHARS = 1 << 20
MARKER = re.compile(r"\[REDACTED:[a-z0-9-]{1,40}\]")
MAX_FINDINGS = 4096  # candidates per rule per call; past that, the rest of the text is opaque
_TRUNCATED = "[TRUNCATED: {n} characters not scanned for secrets]"

# Characters of the token families below (a boundary is any other character).
_B64 = "A-Za-z0-9+/"
_TOK = "A-Za-z0-9_\\-"


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    # Extra test on a candidate (entropy, context); the match is kept when it says False.
    accept: Callable[[re.Match[str]], bool] | None = None
    # The rule cannot match a text that contains none of these (a cheap pre-check).
    needles: tuple[str, ...] = ()
    # Match against the lower-cased text (case-insensitive keywords at case-sensitive speed).
    fold: bool = False
    # A cheap test every text the rule can match passes (for a rule with no needles).
    gate: Callable[[str], bool] | None = None
    # Every match starts at most this many characters before one of the needles: matches are
    # then tried only there, not at each character (`_matches` finds what finditer finds).
    lead: int | None = None

    def sub(self, text: str, low: str | None = None, found: frozenset[str] | None = None) -> str:
        """`found`: every lower-cased needle in `low` (the plan's pass): only those are looked up."""
        low = text.lower() if low is None and (self.fold or self.needles) else low
        if self.needles:
            needles = self.needles if found is None else [n for n in self.needles if n.lower() in found]
            if not any(n in (low if self.fold else text) for n in needles):
                return text
        if self.gate is not None and not self.gate(text):
            return text
        # Trigger: lower() changed the length (a few non-ASCII letters). Why: the spans found
        # in the folded text must index the original. Outcome: match the original, ignoring case.
        if self.fold and len(low) != len(text):
            subject, pattern = text, re.compile(self.pattern.pattern, self.pattern.flags | re.I)
        else:
            subject, pattern = (low if self.fold else text), self.pattern
        out: list[str] = []
        last = seen = 0
        for m in self._matches(pattern, subject):
            seen += 1
            if seen > MAX_FINDINGS:
                # A text with this many candidates for one rule is not prose: the rest is opaque.
                out.append(_TRUNCATED.format(n=len(text) - last))
                return "".join(out)
            replacement = self._replacement(m, text)
            if replacement is None:
                continue
            out.append(text[last : m.start()])
            out.append(replacement)
            last = m.end()
        if not out:
            return text
        out.append(text[last:])
        return "".join(out)

    def _matches(self, pattern: re.Pattern[str], subject: str):
        """pattern.finditer(subject), tried only where a match can start when `lead` says
        where that is (a regex that opens with an alternation of words is tried at every
        character otherwise: ~30 ns each, the costliest rule on source files)."""
        if self.lead is None or pattern is not self.pattern:  # (the case-insensitive fallback)
            yield from pattern.finditer(subject)
            return
        starts: set[int] = set()
        for n in self.needles:
            i = subject.find(n)
            while i >= 0:
                starts.update(range(max(0, i - self.lead), i + 1))
                i = subject.find(n, i + 1)
        end = 0
        for at in sorted(starts):
            if at >= end and (m := pattern.match(subject, at)) is not None:
                yield m
                end = max(m.end(), at + 1)

    def _replacement(self, m: re.Match[str], original: str) -> str | None:
        """The text that replaces the match, or None to keep it."""
        if "secret" in m.re.groupindex:
            s, e = m.span("secret")
            if s < 0 or MARKER.fullmatch(original, s, e):
                return None
        if self.accept is not None and not self.accept(_Found(m, original)):
            return None
        if "secret" not in m.re.groupindex:
            return f"[REDACTED:{self.kind}]"
        return original[m.start() : s] + f"[REDACTED:{self.kind}]" + original[e : m.end()]


class _Found:
    """A match read against the original text (the match may have run on the folded copy)."""

    __slots__ = ("_m", "string")

    def __init__(self, m: re.Match[str], original: str):
        self._m, self.string = m, original

    def group(self, name: str | int = 0) -> str:
        s, e = self._m.span(name)
        return self.string[s:e]

    def start(self, name: str | int = 0) -> int:
        return self._m.start(name)


def _token(prefix: str, body: str, *, before: str = _TOK, after: str | None = None) -> re.Pattern[str]:
    """`prefix` + `body`, starting at a boundary of the `before` class. The look-behind sits
    after the literal so the engine can still search for the literal quickly."""
    width = len(prefix)
    look = f"(?<![{before}]{re.escape(prefix)})" if width and not any(c in prefix for c in "[(|?") else ""
    tail = f"(?![{after}])" if after else ""
    return re.compile(f"{prefix}{look}{body}{tail}")


# --- acceptance tests -----------------------------------------------------------------------

def _entropy(s: str) -> float:
    counts: dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _random_looking(s: str) -> bool:
    """Mixed classes and high entropy: generated, not written by a person."""
    classes = sum(bool(re.search(p, s)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
    return classes >= 3 and _entropy(s) >= 4.0


def _aws_secret(m: re.Match[str]) -> bool:
    s = m.group(0)
    return not re.fullmatch(r"[0-9a-fA-F]+", s) and _random_looking(s) and s.count("/") <= 4


def _basic_credentials(m: re.Match[str]) -> bool:
    value = m.group("secret")
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


def _has_digit(m: re.Match[str]) -> bool:
    return any(c.isdigit() for c in m.group("secret"))


def _mysql_context(m: re.Match[str]) -> bool:
    """`-pPASSWORD` only on a mysql/mariadb command line (elsewhere `-p` means many things)."""
    if m.group("secret").isdigit():
        return False  # a port (`ssh -p2222`)
    text = m.string
    start = max(0, m.start() - 200, text.rfind("\n", 0, m.start()) + 1)
    return re.search(r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b", text[start : m.start()]) is not None


# A name that says its value is secret, unless its last part says the value is about the
# secret instead (`token_sha`, `api_key_file`, `password_hash`, `secret_name`).
_SECRET_WORD = (
    r"passw(?:or)?d|passphrase|secret|token|api[_.\-]?key|apikey|access[_.\-]?key|private[_.\-]?key"
    r"|auth[_.\-]?key|account[_.\-]?key|credentials?|signing[_.\-]?key|encryption[_.\-]?key"
    r"|session[_.\-]?key|master[_.\-]?key"
)
# The furthest a needle of the assigned-secret rule lies into a secret word ("encryption_key":
# "key" at 11); test_redact.py derives it from _SECRET_WORD's words.
_SECRET_WORD_LEAD = 11
_NOT_SECRET_LAST = {
    "sha", "sha1", "sha256", "hash", "hashed", "digest", "id", "ids", "name", "names", "file", "files", "path",
    "dir", "url", "uri", "type", "types", "len", "length", "count", "expiry", "expires", "expiration", "ttl",
    "env", "var", "header", "prefix", "version", "field", "kind", "format", "min", "max", "size", "policy",
    "endpoint", "provider", "mode", "source", "timeout", "rotation", "required", "enabled", "set", "exists",
    "present", "store", "helper", "command", "cmd", "limit", "budget", "budgets", "usage", "estimate", "estimator",
    "counter", "tokens", "index", "pattern", "regex", "rule", "rules", "label", "placeholder", "class",
}
_PLACEHOLDER = re.compile(
    r"""^(?:
        \$\{?[A-Za-z_][A-Za-z0-9_]*\}?(?:\}|\))?            # ${ENV_VAR} / $VAR: a reference
      | \$\([^)]*\)? | %[A-Za-z_][A-Za-z0-9_]*%?             # $(cmd), %VAR%
      | <[^>]*>? | \*+ | x+ | X+ | \.+ | -+ | _+ | \?+       # placeholders
      | \{\{.*\}?\}? | \{[A-Za-z_]*\}?                       # templates
      | (?:true|false|null|nil|none|undefined|required|optional|changeme|redacted|secret|password|example)
    )$""",
    re.X | re.I,
)
_CODE_REFERENCE = re.compile(r"^[A-Za-z_][A-Za-z_]*(?:(?:\.|::|->)[A-Za-z_][A-Za-z0-9_]*)*(?:[(\[].*)?$")
_NAME_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def _assigned(m: re.Match[str]) -> bool:
    parts = [p.lower() for p in _NAME_PARTS.findall(m.group("name"))]
    if parts and parts[-1] in _NOT_SECRET_LAST:
        return False
    value = m.group("secret").rstrip(")]}>:|")
    if not value or re.match(r"(?:~|\.{1,2})?/[\w.\-]+/", value):
        return False  # a path (`PWD: /home/me/src`), not a credential
    if _PLACEHOLDER.match(value) or value.startswith(("[REDACTED", "[TRUNCATED")):
        return False
    if _CODE_REFERENCE.match(value) and any(c in value for c in "._([:"):
        return False  # `self._token`, `os.environ[`, `str(cwd)`: code naming a secret, not one
    if value.isalpha():
        return False  # `secret: provider`, `hasApiKey = restoredModel`: a word or a name, not a credential
    if "..." in value or "…" in value:
        return False  # `ANTHROPIC_API_KEY=sk-ant-...`: documentation elides the value
    if re.search(_SECRET_WORD, value, re.I) and not any(c.isdigit() for c in value):
        return False  # `api_key=api_key`, `token: tokenValue`
    return True


_ASSIGNED = re.compile(
    rf"""(?x)(?P<name>(?:{_SECRET_WORD})(?:s|key|keys)?(?![a-z])[a-z0-9_.\-]{{0,32}}+)
    ["']?[ \t]{{0,8}}+(?::=|=>|=|:)[ \t]{{0,8}}+["']?
    (?P<secret>[^\s"',;`]{{6,512}}+)"""
)

RULES: tuple[Rule, ...] = (
    Rule("private-key", re.compile(
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]{0,60}-----|\Z)", re.S),
        needles=("PRIVATE KEY",)),
    Rule("aws-access-key", re.compile(
        r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)(?<![A-Za-z0-9]....)[0-9A-Z]{16}(?![A-Za-z0-9])")),
    Rule("anthropic-key", _token("sk-ant-", f"[{_TOK}]{{20,}}+"), needles=("sk-ant-",)),
    Rule("openai-key", _token("sk-", f"(?:proj-|svcacct-|admin-)?[{_TOK}]{{20,}}+"), needles=("sk-",)),
    Rule("github-token", _token("gh", "[pousr]_[A-Za-z0-9]{30,}+"), needles=("gh",)),
    # Fine-grained tokens start "github_pat_", not "gh" + a letter: a rule of their own.
    Rule("github-token", _token("github_pat_", "[A-Za-z0-9_]{40,}+"), needles=("github_pat_",)),
    # Personal, deploy, runner, pipeline-trigger, CI-build, incoming-mail, OAuth-app, feed,
    # agent tokens; a routable one carries dot-separated parts ("glpat-….01.…").
    Rule("gitlab-token", _token("gl", f"(?:pat|dt|rt|ptt|cbt|imt|soat|oas|ffct|agent)-[{_TOK}]{{20,}}+"
                                      f"(?:\\.[{_TOK}]{{1,64}}+)*+"), needles=("glpat-", "gldt-", "glrt-", "glptt-",
                                                                       "glcbt-", "glimt-", "glsoat-", "gloas-",
                                                                       "glffct-", "glagent-")),
    Rule("slack-token", _token("xox", "[abposre]-[A-Za-z0-9\\-]{10,}+"), needles=("xox",)),
    Rule("slack-token", _token("xapp-", "[0-9]-[A-Za-z0-9\\-]{10,}+"), needles=("xapp-",)),
    Rule("slack-webhook", re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/\-]{20,}+"),
         needles=("hooks.slack.com",)),
    Rule("stripe-key", re.compile(rf"[rs]k_(?<![{_TOK}][rs]k_)(?:live|test)_[A-Za-z0-9]{{16,}}+"),
         needles=("k_live_", "k_test_")),
    Rule("stripe-key", _token("whsec_", "[A-Za-z0-9]{24,}+"), needles=("whsec_",)),
    Rule("google-api-key", _token("AIza", f"[{_TOK}]{{35}}", after=_TOK), needles=("AIza",)),
    Rule("google-oauth-token", _token("ya29.", f"[{_TOK}.]{{20,}}+"), needles=("ya29.",)),
    Rule("npm-token", _token("npm_", "[A-Za-z0-9]{36}", after=_TOK), needles=("npm_",)),
    Rule("pypi-token", _token("pypi-", f"AgE[{_TOK}]{{50,}}+"), needles=("pypi-AgE",)),
    Rule("huggingface-token", _token("hf_", "[A-Za-z0-9]{34}", after=_TOK), needles=("hf_",)),
    Rule("twilio-key", _token("SK", "[0-9a-fA-F]{32}", after=_TOK), needles=("SK",)),
    Rule("sendgrid-key", _token("SG.", f"[{_TOK}]{{22}}\\.[{_TOK}]{{43}}", after=_TOK), needles=("SG.",)),
    Rule("mailgun-key", _token("key-", "[0-9a-zA-Z]{32}", after=_TOK), needles=("key-",)),
    # Personal access (dop_), OAuth access (doo_) and OAuth refresh (dor_) tokens.
    Rule("digitalocean-token", _token("do", "[por]_v1_[a-f0-9]{64}", after=_TOK),
         needles=("dop_v1_", "doo_v1_", "dor_v1_")),
    Rule("databricks-token", _token("dapi", "[a-f0-9]{32}(?:-[0-9]{1,2})?", after=_TOK), needles=("dapi",)),
    # Entra ID (Azure AD) client secrets: three characters, a digit, "Q~", then 31-34 more.
    Rule("azure-client-secret", re.compile(r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}+"
                                           r"(?![A-Za-z0-9_~.\-])"), needles=("Q~",)),
    Rule("shopify-token", _token("shp", "(?:at|ss|ca|pa)_[a-fA-F0-9]{32}", after=_TOK), needles=("shp",)),
    Rule("jwt", _token("eyJ", f"[{_TOK}]{{8,}}+\\.eyJ[{_TOK}]{{8,}}+\\.[{_TOK}]{{8,}}+"), needles=("eyJ",)),
    Rule("azure-storage-key", re.compile(r"(?:Account|SharedAccess)Key=(?P<secret>[A-Za-z0-9+/]{20,}+={0,2})"),
         needles=("Key=",)),
    Rule("url-password", re.compile(r"://(?P<user>[^\s:/@]{0,256}+):(?P<secret>[^\s@/]{1,256}+)@"), needles=("://",)),
    Rule("basic-auth", re.compile(rf"basic(?<![a-z]basic)[ \t]{{1,4}}+(?P<secret>[{_B64}]{{8,}}+={{0,2}})"),
         _basic_credentials, needles=("basic",), fold=True),
    Rule("bearer-token", re.compile(r"bearer(?<![a-z]bearer)[ \t]{1,4}+(?P<secret>[a-z0-9._~+/\-]{16,}+=*)"),
         _has_digit, needles=("bearer",), fold=True),
    Rule("cli-user-password", re.compile(
        r"-(?<!\S-)(?:u|-user)[ =]{1,2}+[\"']?(?P<user>[A-Za-z0-9._@\-]{1,128}+):(?P<secret>[^\s\"']{1,256}+)"),
        needles=("-u", "--user")),
    Rule("cli-password", re.compile(r"-p(?<!\S-p)(?P<secret>[^\s\-][^\s]{2,127}+)"), _mysql_context,
         needles=("mysql", "mariadb")),
    Rule("assigned-secret", _ASSIGNED, _assigned, needles=("pass", "secret", "token", "key", "credential"),
         fold=True, lead=_SECRET_WORD_LEAD),
    # A match is 40 characters without a space: only a text with a word that long can hold
    # one (the regex costs ~25 ns a character, a third of what redacting source files cost).
    Rule("aws-secret-key", re.compile(rf"(?<![{_B64}=_\\-])[{_B64}]{{40}}(?![{_B64}=_\\-])"), _aws_secret,
         gate=lambda text: max(map(len, text.split()), default=0) >= 40),
)


class _Plan:
    """Which rules a text can need, found in one pass: every rule's needles, lower-cased, in
    one Aho-Corasick automaton run over the text's lower-cased copy. A superset test (an ASCII
    needle in the text is in its lower-cased copy too), and `Rule.sub` still checks its own
    needles exactly, so the output is every rule's run in order (test_redact_plan.py). Was one
    scan per needle (~45): half of redacting a 4 KB source file. Made from `RULES` as it is,
    so a process that swaps the rules (a test's control) gets a plan of its own."""

    def __init__(self, rules: tuple[Rule, ...]):
        self.rules = rules
        self.steps = tuple((r, frozenset(n.lower() for n in r.needles)) for r in rules)
        self.needles = tuple(sorted({n for _, needles in self.steps for n in needles}))
        self._automaton = AhoCorasick(list(self.needles))

    def present(self, low: str) -> frozenset[str]:
        """The (lower-cased) needles found in `low`."""
        needles = self.needles
        return frozenset(needles[i] for i, _, _ in self._automaton.find_matches_as_indexes(low, overlapping=True))


_plan = _Plan(RULES)


def _current_plan() -> _Plan:
    global _plan
    if _plan.rules is not RULES:
        _plan = _Plan(RULES)
    return _plan


def redact(text: str) -> str:
    """`text` with every secret replaced by `[REDACTED:<kind>]`; past `MAX_SCAN_CHARS`, the
    rest is replaced by a marker (never passed on unscanned)."""
    if not text:
        return text
    tail = ""
    if len(text) > MAX_SCAN_CHARS:
        text, tail = text[:MAX_SCAN_CHARS], _TRUNCATED.format(n=len(text) - MAX_SCAN_CHARS)
    plan = _current_plan()
    low = text.lower()
    present = plan.present(low)
    for rule, needles in plan.steps:
        if needles and present.isdisjoint(needles):
            continue
        out = rule.sub(text, low, present)
        if out is not text:
            # A rule replaced something: the text changed, so the needles are looked up again
            # (rare; markers hold needles of their own, "secret" among them).
            text, low = out, out.lower()
            present = plan.present(low)
    return text + tail


def redact_value(value: Any, budget: list[int] | None = None) -> Any:
    """Every string inside a JSON-like value redacted (keys too); one scan budget shared by
    the whole value, so a huge message costs what a huge string costs."""
    budget = budget if budget is not None else [MAX_SCAN_CHARS]
    if isinstance(value, str):
        if budget[0] <= 0:
            return _TRUNCATED.format(n=len(value)) if value else value
        out = redact(value[: budget[0]]) + (_TRUNCATED.format(n=len(value) - budget[0]) if len(value) > budget[0] else "")
        budget[0] -= len(value)
        return out
    if isinstance(value, list):
        return [redact_value(v, budget) for v in value]
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            key = base = redact_value(k, budget) if isinstance(k, str) else k
            # Two secrets used as keys redact alike: the later is numbered, its value kept.
            for n in itertools.count(2):
                if key not in out:
                    break
                key = f"{base}#{n}"
            out[key] = redact_value(v, budget)
        return out
    return value


def kinds() -> list[str]:
    return [r.kind for r in RULES]
