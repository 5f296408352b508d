#!/usr/bin/env bash
# Explore benchmark: the cost of `faultline explore` on one op (every condition of --vary, RUNS
# runs each on TARGET), anchored to one plain `replay` of the same op with the same number of runs
# per target as one condition (`--reps RUNS`). The ratio is what exploring costs against replaying
# the op as recorded: about the number of conditions, plus a worker start per condition.
# Usage: bench/replay/explore.sh [BUILD_DIR] [DATA_DIR] [SIZE] [RUNS] [TARGET] [VARY]
# Prints wall seconds of both, the conditions and the ratio; bench/RESULTS.md records the figures.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/ci}
data=${2:-/tmp/faultline-bench}
size=${3:-64}
runs=${4:-40}
target=${5:-cpu}
vary=${6:-scale,block,dtype}
exe="$build/app/faultline"
trace="$data/replay-add-1x$size.h5"
mkdir -p "$data"
if [ ! -f "$trace" ]; then /usr/bin/python3 bench/replay/make_trace.py "$trace" --size "$size" --ops 1; fi
export FAULTLINE_WORKER="$build/app/faultline-worker"

printf 'trace: one add of %dx%d float32, target %s, %d runs per condition, --vary %s, %d cores, load %s\n' \
  "$size" "$size" "$target" "$runs" "$vary" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f "%e" -o "$data/explore-bench-replay.time" \
  "$exe" replay "$trace" --targets "$target" --ops 0 --reps "$runs" --quiet --json >/dev/null || true
/usr/bin/time -f "%e" -o "$data/explore-bench-explore.time" \
  "$exe" explore "$trace" --op 0 --targets "$target" --runs "$runs" --vary "$vary" --json \
  >"$data/explore-bench.json" || true
replay=$(tail -1 "$data/explore-bench-replay.time")
explore=$(tail -1 "$data/explore-bench-explore.time")
conditions=$(/usr/bin/python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['conditions']))" \
  "$data/explore-bench.json")
printf 'replay (one op, %d runs): %.2f s\nexplore (%d conditions x %d runs): %.2f s\n' "$runs" "$replay" \
  "$conditions" "$runs" "$explore"
printf 'explore / replay: %.1f (%.2f per condition)\n' "$(echo "$explore / $replay" | bc -l)" \
  "$(echo "$explore / $replay / $conditions" | bc -l)"
