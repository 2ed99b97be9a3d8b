"""A seeded, synthetic but realistic coding-session corpus (messages, queries, files)."""

from __future__ import annotations

import random

MODULES = ["billing", "auth", "search", "indexer", "webhooks", "payments", "scheduler", "cache",
           "parser", "exporter", "importer", "session", "storage", "router", "metrics", "config"]
VERBS = ["fix", "refactor", "add", "remove", "debug", "profile", "rename", "document", "test", "optimise"]
ERRORS = ["KeyError: 'user_id'", "TimeoutError: read timed out after 30s", "sqlite3.OperationalError: database is locked",
          "TypeError: 'NoneType' object is not subscriptable", "ConnectionResetError: [Errno 104]",
          "AssertionError: expected 200, got 503", "ModuleNotFoundError: No module named 'yaml'",
          "ValueError: invalid literal for int() with base 10", "PermissionError: [Errno 13] Permission denied"]
COMMANDS = ["pytest -x tests/{m}", "git diff src/{m}.py", "ruff check src/{m}", "python -m {m} --dry-run",
            "grep -rn {f} src/", "npm run build", "docker compose up {m}", "make bench-{m}"]
WORDS = ("retry backoff queue worker thread lock index schema migration cursor batch commit rollback "
         "token header payload webhook signature invoice refund tax currency latency timeout memory "
         "leak cache eviction shard replica snapshot journal config flag feature rollout deploy "
         "pipeline buildkite docker image tag version release changelog benchmark profile trace").split()


def _fn(rng: random.Random) -> str:
    return f"{rng.choice(VERBS)}_{rng.choice(WORDS)}_{rng.choice(WORDS)}"


def message(rng: random.Random, i: int) -> tuple[str, str]:
    m = rng.choice(MODULES)
    f = _fn(rng)
    kind = rng.random()
    if kind < 0.3:
        role = "user"
        text = f"Can you {rng.choice(VERBS)} the {rng.choice(WORDS)} handling in src/{m}.py? {f} is {rng.choice(['slow', 'flaky', 'wrong', 'failing'])} when {rng.choice(WORDS)} {rng.choice(WORDS)}."
    elif kind < 0.6:
        role = "assistant"
        text = (f"I looked at src/{m}/{rng.choice(WORDS)}.py. The {f} function "
                f"{rng.choice(['holds the', 'drops the', 'retries the', 'caches the'])} {rng.choice(WORDS)} "
                f"{rng.choice(['before', 'after', 'without'])} the {rng.choice(WORDS)}. "
                f"I'll change it to use a {rng.choice(WORDS)} {rng.choice(WORDS)} and add a test.")
    elif kind < 0.85:
        role = "tool"
        cmd = rng.choice(COMMANDS).format(m=m, f=f)
        text = f"$ {cmd}\n" + "\n".join(
            f"src/{m}/{rng.choice(WORDS)}.py:{rng.randint(1, 400)}: {rng.choice(WORDS)} {rng.choice(WORDS)}"
            for _ in range(rng.randint(1, 6))
        )
        if rng.random() < 0.4:
            text += f"\nTraceback (most recent call last):\n  File \"src/{m}.py\", line {rng.randint(1, 300)}, in {f}\n{rng.choice(ERRORS)}"
    else:
        role = "assistant"
        text = f"Decision: {m} keeps {rng.choice(WORDS)} {rng.choice(WORDS)} in {rng.choice(WORDS)} for now; revisit after the {rng.choice(WORDS)} rollout."
    return role, text


def queries(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.3:
            out.append(f"why is {_fn(rng)} {rng.choice(['slow', 'failing', 'flaky'])}")
        elif r < 0.5:
            out.append(rng.choice(ERRORS).split(":")[0] + " in " + rng.choice(MODULES))
        elif r < 0.8:
            out.append(f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.choice(MODULES)}")
        else:
            out.append(f"what did we decide about {rng.choice(WORDS)} in {rng.choice(MODULES)}")
    return out


def source_file(rng: random.Random, i: int) -> tuple[str, str]:
    m = rng.choice(MODULES)
    lines = [f'"""{m}: {" ".join(rng.choice(WORDS) for _ in range(8))}."""', "", "import os", ""]
    for _ in range(rng.randint(3, 12)):
        fn = _fn(rng)
        lines += [f"def {fn}({rng.choice(WORDS)}, {rng.choice(WORDS)}=None):",
                  f'    """{" ".join(rng.choice(WORDS) for _ in range(10))}."""']
        lines += [f"    {rng.choice(WORDS)} = {rng.choice(WORDS)}.{_fn(rng)}()" for _ in range(rng.randint(3, 15))]
        lines += [f"    return {rng.choice(WORDS)}", "", ""]
    return f"src/{m}/mod_{i}.py", "\n".join(lines)


def note_file(rng: random.Random, i: int) -> tuple[str, str]:
    """A markdown note as people keep them: a heading, a few short paragraphs, a list, now
    and then a fenced command (~1 KB)."""
    m = rng.choice(MODULES)

    def sentence() -> str:
        return f"The {rng.choice(WORDS)} {rng.choice(WORDS)} in {m} {rng.choice(['needs', 'keeps', 'drops', 'caches'])} " \
               f"the {rng.choice(WORDS)} {rng.choice(['before', 'after', 'without'])} {rng.choice(WORDS)}."

    lines = [f"# {m.title()}: {rng.choice(WORDS)} {rng.choice(WORDS)}", ""]
    for _ in range(rng.randint(1, 3)):
        lines += [" ".join(sentence() for _ in range(rng.randint(2, 4))), ""]
    if rng.random() < 0.7:
        lines += [f"## {rng.choice(VERBS).title()} {rng.choice(WORDS)}", ""]
        lines += [f"- {rng.choice(VERBS)} `{_fn(rng)}` {rng.choice(['first', 'later', 'weekly'])}" for _ in range(rng.randint(2, 6))]
        lines.append("")
    if rng.random() < 0.3:
        lines += ["```sh", rng.choice(COMMANDS).format(m=m, f=_fn(rng)), "```", ""]
    return f"notes/{m}/note-{i}.md", "\n".join(lines)
