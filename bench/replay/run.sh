#!/usr/bin/env bash
# Replay benchmark: a campaign of many repetitions on the cpu target, as campaigns run (a
# repetition the target finds bitwise identical to the judged first one is not copied to the
# host) beside `--copy-all` (every repetition's output written, read back and judged on the
# host: the anchor). Same trace, one invocation. Each mode runs once with 1 repetition and once
# with REPS, so the cost of one more repetition (the difference over the added runs) is
# separated from the fixed cost (golden references, the first judgement).
# Usage: bench/replay/run.sh [BUILD_DIR] [DATA_DIR] [REPS] [SIZE] [OPS]
# Prints wall and CPU seconds, the cost per added repetition of both and their ratio;
# bench/RESULTS.md records the figures.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/ci}
data=${2:-/tmp/faultline-bench}
reps=${3:-10}
size=${4:-4096}
ops=${5:-2}
exe="$build/app/faultline"
trace="$data/replay-add-${ops}x$size.h5"
mkdir -p "$data"
if [ ! -f "$trace" ]; then /usr/bin/python3 bench/replay/make_trace.py "$trace" --size "$size" --ops "$ops"; fi
cat "$trace" >/dev/null  # warm the page cache
export FAULTLINE_WORKER="$build/app/faultline-worker"

run() {  # label, repetitions, extra args...
  local label=$1 reps=$2
  shift 2
  local out="$data/replay-bench-$label.json"
  /usr/bin/time -f "%e %U %S %M" -o "$data/replay-bench-$label.time" \
    "$exe" replay "$trace" --targets cpu --reps "$reps" --quiet --json "$@" >"$out" || true
  read -r wall user sys rss <"$data/replay-bench-$label.time"
  local skipped
  skipped=$(/usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1])); \
print(sum(1 for x in r['runs'] if x.get('host_copy') is False), len(r['runs']), r['targets'][0]['verdict'])" "$out")
  printf '%-22s wall %7.2f s  cpu %7.2f s  rss %6d MiB  (not copied, runs, verdict: %s)\n' "$label" "$wall" \
    "$(echo "$user + $sys" | bc -l)" "$((rss / 1024))" "$skipped"
  echo "$wall" >"$data/replay-bench-$label.wall"
}

printf 'trace: %d add ops of %dx%d float32, 1 and %d repetitions, cpu target, %d cores\n' "$ops" "$size" "$size" "$reps" "$(nproc)"
run default-1 1
run default "$reps"
run copy-all-1 1 --copy-all
run copy-all "$reps" --copy-all
w() { cat "$data/replay-bench-$1.wall"; }
added=$(( (reps - 1) * ops ))
per_default=$(echo "($(w default) - $(w default-1)) / $added" | bc -l)
per_copy=$(echo "($(w copy-all) - $(w copy-all-1)) / $added" | bc -l)
printf 'per added repetition: default %.3f s, copy-all %.3f s: %.2fx\n' "$per_default" "$per_copy" \
  "$(echo "$per_copy / $per_default" | bc -l)"
printf 'whole campaign of %d repetitions: copy-all / default wall time %.2fx\n' "$reps" \
  "$(echo "$(w copy-all) / $(w default)" | bc -l)"
