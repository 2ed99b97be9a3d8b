"""A 50,000-file synthetic monorepo, scanned from scratch (issue 37 item 3): how long until
every file is searchable by its words, the indexing process's peak RSS during that scan,
and an unchanged rescan of it.

The tree (seeded, generated on the fly, ~45% of it never indexed by design): Python, TypeScript
and Go packages under `services/` and `libs/`, markdown docs under `docs/`, a vendored Python
tree under `services/*/_vendor/` (indexed: vendored code is still code), `node_modules/`
trees with their `package.json` files (skipped by the walk), lock files (skipped by name), a
few minified bundles (`*.min.js` skipped by suffix; one without that suffix, a single 300 KB
line, is indexed as text).

The scan runs in a child process, the engine opened as a sidecar opens it (the meaning leg
on, waiting behind the words), so its VmHWM is the indexing process's own peak:

    python bench/monorepo.py [--files 50000] [--out bench/results/monorepo.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine, rss_mb, write_result  # noqa: E402
from bench.corpus import MODULES, WORDS, _fn, note_file, source_file  # noqa: E402

SEED = 20261207


def _ts(rng: random.Random, name: str) -> str:
    out = [f"import {{ {rng.choice(WORDS)} }} from './{rng.choice(MODULES)}';", ""]
    for _ in range(rng.randint(2, 8)):
        fn = _fn(rng).replace("_", "")
        out += [f"export function {fn}({rng.choice(WORDS)}: string): number {{",
                *[f"  const {rng.choice(WORDS)} = {rng.choice(WORDS)}.{_fn(rng)}();" for _ in range(rng.randint(2, 10))],
                f"  return {rng.choice(WORDS)}.length;", "}", ""]
    return "\n".join(out)


def _go(rng: random.Random, pkg: str) -> str:
    out = [f"package {pkg}", "", 'import "fmt"', ""]
    for _ in range(rng.randint(2, 8)):
        out += [f"func {_fn(rng).title().replace('_', '')}({rng.choice(WORDS)} string) error {{",
                *[f'\tfmt.Println("{rng.choice(WORDS)} {rng.choice(WORDS)}")' for _ in range(rng.randint(2, 10))],
                "\treturn nil", "}", ""]
    return "\n".join(out)


def monorepo_file(rng: random.Random, i: int) -> tuple[str, str]:
    """The i-th file of the tree: its relative path and text."""
    svc = f"svc{i % 40:02d}"
    r = rng.random()
    if r < 0.22:
        rel, text = source_file(rng, i)
        return f"services/{svc}/{rel}", text
    if r < 0.32:
        return f"libs/web{i % 25}/src/{rng.choice(MODULES)}/{_fn(rng)}_{i}.ts", _ts(rng, svc)
    if r < 0.38:
        pkg = rng.choice(MODULES)
        return f"libs/go{i % 15}/{pkg}/{pkg}_{i}.go", _go(rng, pkg)
    if r < 0.48:
        rel, text = note_file(rng, i)
        return f"docs/{rel}", text
    if r < 0.58:  # vendored third-party code: indexed (its words are searchable)
        rel, text = source_file(rng, i)
        return f"services/{svc}/_vendor/{rng.choice(MODULES)}lib/{Path(rel).name}", text
    if r < 0.95:  # dependency trees: never walked
        pkg = f"{rng.choice(WORDS)}-{rng.choice(MODULES)}"
        if rng.random() < 0.2:
            return f"libs/web{i % 25}/node_modules/{pkg}/package.json", json.dumps({"name": pkg, "version": f"1.{i % 9}.0"})
        return f"libs/web{i % 25}/node_modules/{pkg}/lib/index_{i}.js", _ts(rng, svc)
    if r < 0.99:  # lock files: skipped by name
        name = rng.choice(["package-lock.json", "yarn.lock", "poetry.lock", "Cargo.lock", "go.sum"])
        return f"locks/{i}/{name}", "\n".join(f"{rng.choice(WORDS)}@1.{j}.0 sha512-{i:08x}{j:08x}" for j in range(200))
    if r < 0.995:  # minified bundles, skipped by suffix
        return f"web/static/bundle_{i}.min.js", ";".join(f"var a{j}=function(b){{return b+{j}}}" for j in range(8000))
    return f"web/static/legacy_{i}.js", ";".join(f"var a{j}=function(b){{return b+{j}}}" for j in range(8000))


def write_monorepo(ws: Path, n_files: int) -> None:
    rng = random.Random(SEED)
    for i in range(n_files):
        rel, text = monorepo_file(rng, i)
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (ws / ".git").mkdir()


def child(ws: str, store: str) -> None:
    """In the child: a first scan until searchable by words, then an unchanged rescan."""
    from bench.core import _timed_scan, engine

    e = engine(Path(store), [ws])
    try:
        first = _timed_scan(e)
        peak = rss_mb("self", "VmHWM")
        # CPU of this process and of the preparation workers it waited for (a loaded
        # machine stretches the wall time; this it does not).
        cpu = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                  for f in ("ru_utime", "ru_stime"))
        counts = e.records.counts(None)
        rescans, rescan_cpu = [], []
        for _ in range(3):
            t = time.thread_time()  # the scan runs on this thread: its CPU alone, not the dense leg's
            rescans.append(_timed_scan(e))
            rescan_cpu.append(time.thread_time() - t)
    finally:
        e.close()
    rescans.sort()
    rescan_cpu.sort()
    print(json.dumps({"indexed_files": counts["files"], "chunks": counts["chunks"], "searchable_s": round(first, 2),
                      "cpu_s_until_searchable": round(cpu, 1),
                      "peak_rss_mb_at_searchable": peak, "peak_rss_mb": rss_mb("self", "VmHWM"),
                      "unchanged_rescan_ms": round(rescans[1] * 1000, 1),
                      "unchanged_rescan_cpu_ms": round(rescan_cpu[1] * 1000, 1)}))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=50_000)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "monorepo.json"))
    ap.add_argument("--tree", help="generate the tree here once and keep it (before/after runs on the same files)")
    ap.add_argument("--child", nargs=2, metavar=("WORKSPACE", "STORE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="lore-monorepo-"))
    try:
        ws = Path(args.tree) if args.tree else tmp / "mono"
        t0 = time.perf_counter()
        if not (ws / ".git").is_dir():
            write_monorepo(ws, args.files)
        generated = time.perf_counter() - t0
        load = os.getloadavg()[0]
        got = subprocess.run([sys.executable, __file__, "--child", str(ws), str(tmp / "store")],
                             check=True, stdout=subprocess.PIPE, text=True)
        result = {"machine": machine(), "files_generated": args.files, "generate_s": round(generated, 1),
                  "load_before": round(load, 1), "load_after": round(os.getloadavg()[0], 1),
                  **json.loads(got.stdout.strip().splitlines()[-1])}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_result(args.out, result)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
