"""Redaction under hostile input: every rule on 1 MB of its own worst case.

For each rule the adversarial inputs are repeats of the characters its pattern starts with
(its literal prefix, its prefix plus body characters with no terminator, its separators),
plus generic shapes known to make backtracking engines quadratic ("a." * n, "=" * n, ...).
Each input is timed through that rule alone and through the whole `redact()`; the worst
case per MB is what counts (target: <= 50 ms per MB per rule). Then the hook with a 30 KB
and a 10 MB hostile prompt, degraded path, against its timeout.

    python bench/redact.py [--mb 1] [--hook]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, write_result  # noqa: E402
from lore_sidecar.engine.capture import redact as R  # noqa: E402

GENERIC = ["a.", "a ", "a=", "=", "a:", "://", "-p", "-u a:", "Basic ", "Bearer ", "password=", "x" * 7 + "=",
           "-----BEGIN ", "eyJ", "eyJa.", "AKIA", "sk-", "a/", "A1/", "key=\"", "token: ", "\\\"", "'a'="]
PREFIXES = {
    "private-key": ["-----BEGIN ", "-----BEGIN PRIVATE KEY-----", "-----BEGIN A"],
    "aws-access-key": ["AKIA", "AKIAAAAAAAAAAAAAAAAA", "A"],
    "anthropic-key": ["sk-ant-", "sk-ant-a", "sk-"],
    "openai-key": ["sk-", "sk-proj-", "sk-a"],
    "github-token": ["ghp_", "ghp_a", "github_pat_", "github_pat_a"],
    "gitlab-token": ["glpat-", "glpat-a", "gldt-a", "glpat-aaaaaaaaaaaaaaaaaaaa.", "glpat-aaaaaaaaaaaaaaaaaaaa.a"],
    "slack-token": ["xoxb-", "xoxb-a", "xapp-", "xapp-1-", "xapp-1-a"],
    "databricks-token": ["dapi", "dapi0", "dapi" + "0" * 32 + "-"],
    "azure-client-secret": ["Q~", "a8Q~", "aaa8Q~a", "~", "."],
    "slack-webhook": ["https://hooks.slack.com/services/", "https://hooks.slack.com/services/a"],
    "stripe-key": ["sk_live_", "sk_live_a", "whsec_"],
    "google-api-key": ["AIza", "AIzaa"],
    "google-oauth-token": ["ya29.", "ya29.a"],
    "npm-token": ["npm_", "npm_a"],
    "pypi-token": ["pypi-AgE", "pypi-AgEa"],
    "huggingface-token": ["hf_", "hf_a"],
    "twilio-key": ["SK", "SK0"],
    "sendgrid-key": ["SG.", "SG.a", "SG.aaaaaaaaaaaaaaaaaaaaaa."],
    "mailgun-key": ["key-", "key-a"],
    "digitalocean-token": ["dop_v1_", "dop_v1_a"],
    "shopify-token": ["shpat_", "shpat_a"],
    "jwt": ["eyJ", "eyJa", "eyJaaaaaaaaa.eyJ", "eyJaaaaaaaaa."],
    "azure-storage-key": ["AccountKey=", "AccountKey=a"],
    "url-password": ["://", "://a", "://a:", "://a:b"],
    "basic-auth": ["Basic ", "basic a", "Basic YWxh"],
    "bearer-token": ["Bearer ", "bearer a", "Bearer a1"],
    "cli-user-password": ["-u ", "-u a", "-u a:", " -u a:b"],
    "cli-password": [" -p", " -pa", "mysql -pa "],
    "assigned-secret": ["password", "password=", "a_password", "token:", "apikey", "secret ", "a.", "a-", "passw"],
    "aws-secret-key": ["a", "A1/", "aA1+", "a/"],
}


def inputs_for(kind: str, size: int) -> list[tuple[str, str]]:
    seeds = PREFIXES.get(kind, []) + GENERIC
    return [(s, (s * (size // len(s) + 1))[:size]) for s in seeds]


def timed(fn, text: str) -> float:
    t0 = time.perf_counter()
    fn(text)
    return (time.perf_counter() - t0) * 1000


def rules(size: int) -> dict:
    out = {}
    mb = size / (1 << 20)
    for rule in R.RULES:
        worst, worst_seed = 0.0, ""
        for seed, text in inputs_for(rule.kind, size):
            ms = timed(rule.sub, text) / mb
            if ms > worst:
                worst, worst_seed = ms, seed
        out[rule.kind] = {"worstMsPerMb": round(worst, 1), "worstInput": worst_seed}
        print(f"  {rule.kind:20s} worst {worst:7.1f} ms/MB  on {worst_seed!r} repeated", flush=True)
    return out


def whole(size: int) -> dict:
    mb = size / (1 << 20)
    worst, worst_seed = 0.0, ""
    for seed in sorted({s for seeds in PREFIXES.values() for s in seeds} | set(GENERIC)):
        text = (seed * (size // len(seed) + 1))[:size]
        ms = timed(R.redact, text) / mb
        if ms > worst:
            worst, worst_seed = ms, seed
    prose = (Path(R.__file__).read_text() * 40)[:size]
    return {"worstMsPerMb": round(worst, 1), "worstInput": worst_seed,
            "proseMsPerMb": round(timed(R.redact, prose) / mb, 1)}


def hook(timeout_ms: int) -> dict:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "LORE_STORE_DIR": str(Path(tmp) / "store"), "LORE_HOOK_TIMEOUT_MS": str(timeout_ms),
               "LORE_HOOK_DAEMON": "0"}
        for label, size in (("30KB", 30_000), ("10MB", 10_000_000)):
            prompt = ("a." * (size // 2))
            event = json.dumps({"session_id": "s", "prompt": prompt, "cwd": tmp, "hook_event_name": "UserPromptSubmit"})
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "lore_sidecar", "hook", "UserPromptSubmit"], input=event, text=True,
                           capture_output=True, env=env, timeout=120)
            ms = (time.perf_counter() - t0) * 1000
            out[label] = {"ms": round(ms), "timeoutMs": timeout_ms, "withinTimeoutPlus300": ms <= timeout_ms + 300}
            print(f"  hook {label:5s} hostile prompt: {ms:7.0f} ms (timeout {timeout_ms} ms)", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--hook", action="store_true", help="also time the hook command with hostile prompts")
    ap.add_argument("--hook-timeout-ms", type=int, default=2000)
    ap.add_argument("--out", default="bench/results/redact.json")
    args = ap.parse_args()
    size = int(args.mb * (1 << 20))
    print(f"each rule on {args.mb} MB of its own worst case:")
    result = {"machine": machine(), "mb": args.mb, "rules": rules(size)}
    result["redact"] = whole(size)
    print(f"  whole redact(): worst {result['redact']['worstMsPerMb']} ms/MB on {result['redact']['worstInput']!r}; "
          f"source text {result['redact']['proseMsPerMb']} ms/MB")
    if args.hook:
        result["hook"] = hook(args.hook_timeout_ms)
    worst = max(r["worstMsPerMb"] for r in result["rules"].values())
    result["worstRuleMsPerMb"] = worst
    print(f"worst rule: {worst} ms/MB (target <= 50)")
    write_result(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
