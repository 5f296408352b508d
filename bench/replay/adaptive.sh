#!/usr/bin/env bash
# Adaptive replay benchmark: runs per second of `replay --until-rate RATE` on small ops (an add of
# SIZE x SIZE float32), anchored to a fixed `--reps N` campaign of the same number of runs on the
# same trace and target (N = the runs the adaptive campaign made per op). The ratio says what
# deciding after every run costs. Both write a results file and its journal, as campaigns do.
# Usage: bench/replay/adaptive.sh [BUILD_DIR] [DATA_DIR] [RATE] [SIZE] [OPS] [TARGET]
# Prints wall and CPU seconds, runs and runs per second of both and their ratios (per wall second
# and per CPU second of the orchestrator, which a loaded machine disturbs less);
# bench/RESULTS.md records the figures.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/ci}
data=${2:-/tmp/faultline-bench}
rate=${3:-1e-3}
size=${4:-64}
ops=${5:-2}
target=${6:-cpu}
exe="$build/app/faultline"
trace="$data/replay-add-${ops}x$size.h5"
mkdir -p "$data"
if [ ! -f "$trace" ]; then /usr/bin/python3 bench/replay/make_trace.py "$trace" --size "$size" --ops "$ops"; fi
export FAULTLINE_WORKER="$build/app/faultline-worker"

run() {  # label, args...
  local label=$1
  shift
  local out="$data/adaptive-bench-$label"
  rm -f "$out.h5" "$out.h5.journal.jsonl"
  /usr/bin/time -f "%e %U %S" -o "$out.time" \
    "$exe" replay "$trace" --targets "$target" --quiet --json --out "$out.h5" "$@" >"$out.json" || true
  read -r wall user sys <"$out.time"
  local runs
  runs=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['runs_total'])" "$out.json")
  printf '%-10s wall %7.2f s  cpu %7.2f s  runs %7d  runs/s %8.1f\n' "$label" "$wall" \
    "$(echo "$user + $sys" | bc -l)" "$runs" "$(echo "$runs / $wall" | bc -l)"
  echo "$runs $wall $(echo "$user + $sys" | bc -l)" >"$out.figures"
}

printf 'trace: %d add ops of %dx%d float32, target %s, --until-rate %s, %d cores, load %s\n' "$ops" "$size" \
  "$size" "$target" "$rate" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
run adaptive --until-rate "$rate"
read -r runs_a wall_a cpu_a <"$data/adaptive-bench-adaptive.figures"
reps=$((runs_a / ops))
run fixed --reps "$reps"
read -r runs_f wall_f cpu_f <"$data/adaptive-bench-fixed.figures"
printf 'adaptive / fixed runs per second: %.3f wall, %.3f per CPU second\n' \
  "$(echo "($runs_a / $wall_a) / ($runs_f / $wall_f)" | bc -l)" "$(echo "($runs_a / $cpu_a) / ($runs_f / $cpu_f)" | bc -l)"
