#!/bin/bash
# Issue 37 item 2, as a new user meets it: CLI calls on a fresh copy of pip's own source.
# Each run: a new copy and a new store; the first recall (scan + words + answer), then calls
# made while the background indexer embeds (followers), with wall and CPU time. The last run
# waits for the background indexer to level the meaning index and exit (-n RUNS, default 4).
# Usage: bench/first_contact.sh [WORKDIR]   (default: a new temporary folder)
set -u
WORK=${1:-$(mktemp -d)}
RUNS=${RUNS:-4}
PIPSRC=$(python3 -c "import pip, os; print(os.path.dirname(pip.__file__))")
t() { /usr/bin/time -f "%e s wall, %U+%S s cpu" -o "$WORK/last.time" "$@" > "$WORK/last.out" 2> "$WORK/last.err"; cat "$WORK/last.time"; }
mkdir -p "$WORK/other"
for run in $(seq 1 "$RUNS"); do
  W=$WORK/run$run; rm -rf "$W"; mkdir -p "$W"; cp -r "$PIPSRC" "$W/pip"; git -C "$W/pip" init -q
  S=$W/store
  echo "run $run files $(find "$W/pip" -type f -not -path '*/.git/*' | wc -l) load $(cut -d' ' -f1-3 /proc/loadavg)"
  start=$(date +%s.%N)
  echo "first_recall $(t lore-sidecar --store-dir "$S" recall 'resolve a dependency conflict between two requirements' --workspace "$W/pip" --json)"
  tail -1 "$WORK/last.err"
  echo "second_recall $(t lore-sidecar --store-dir "$S" recall 'parse a wheel filename' --workspace "$W/pip" --json)"
  echo "ask $(t lore-sidecar --store-dir "$S" ask 'where are wheel filenames parsed?' --workspace "$W/pip" --json)"
  echo "status $(t lore-sidecar --store-dir "$S" status --workspace "$W/pip" --json)"
  echo "other_project_recall $(t lore-sidecar --store-dir "$S" recall 'wheel' --workspace "$WORK/other" --json)"
  if [ "$run" = "$RUNS" ]; then
    for _ in $(seq 1 120); do
      sleep 30
      m=$(lore-sidecar --store-dir "$S" status --workspace "$W/pip" --json | python3 -c \
        "import json,sys;d=json.load(sys.stdin);print(d['indexing']['message'] or 'level', '| bg', (d['backgroundIndexer'] or {}).get('pid'))")
      echo "  t+$(echo "$(date +%s.%N) - $start" | bc | cut -d. -f1) s: $m load $(cut -d' ' -f1 /proc/loadavg)"
      case "$m" in level*None) break;; esac
    done
    tail -1 "$S/indexer.log"
  fi
  lore-sidecar --store-dir "$S" indexer --stop --workspace "$W/pip"
done
