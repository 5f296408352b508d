#!/usr/bin/env bash
# `faultline health` over big kernel logs: wall time and peak memory (/usr/bin/time) of the text
# and JSON reports of one generated log of SIZE (default 1G) and of the same text split into
# three files (the caps hold across files). bench/RESULTS.md records the figures.
# Usage: bench/health/run.sh [BUILD_DIR] [DATA_DIR] [SIZE]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/ci}
data=${2:-/tmp/faultline-bench}
size=${3:-1G}
exe="$build/app/faultline"
log="$data/health-xids-$size.log"
mkdir -p "$data"
if [ ! -f "$log" ]; then /usr/bin/python3 bench/health/make_xid_log.py "$log" "$size"; fi
if [ ! -f "$log.part-aa" ]; then split -n l/3 "$log" "$log.part-"; fi
echo "log: $log ($(stat -c %s "$log") bytes, $(grep -c 'NVRM: Xid' "$log") lines mentioning an Xid)"
run() {  # label, args...
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$data/health-bench.time" "$exe" health "$@" >/dev/null || true
  read -r wall rss < <(tail -n 1 "$data/health-bench.time")
  printf '%-24s %8.2f s %8d MiB\n' "$label" "$wall" "$((rss / 1024))"
}
run "text, one file" --logs "$log"
run "json, one file" --logs "$log" --json
run "json, three files" --logs "$log.part-aa" "$log.part-ab" "$log.part-ac" --json
