#!/usr/bin/env bash
# Compare benchmark: faultline compare (full analysis) beside h5diff's plain exact compare and a
# numpy/h5py script, on the same pair, plus the page-cache read bandwidth of the same files (dd).
# Usage: bench/compare/run.sh [BUILD_DIR] [DATA_DIR] [float32|bfloat16] [TENSORS] [SIZE] [contiguous|chunked|gzip|fletcher32]
# (chunked, gzip and fletcher32: 512x512 chunks; gzip level 4 after the shuffle filter; fletcher32:
# HDF5's checksum on each chunk, no compression). NUMPY=0 leaves the
# numpy anchor out. REPEAT (default 3): runs of each tool, taking turns; the medians are reported.
# Prints one line per tool and the ratios; bench/RESULTS.md records the figures.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/ci}
data=${2:-/tmp/faultline-bench}
dtype=${3:-float32}
tensors=${4:-16}
size=${5:-4096}
layout=${6:-contiguous}
exe="$build/app/faultline"
dir="$data/$dtype-${tensors}x$size"
[ "$layout" = contiguous ] || dir="$dir-$layout"
if [ ! -f "$dir/suspect.h5" ]; then
  /usr/bin/python3 bench/compare/make_pair.py "$dir" --dtype "$dtype" --tensors "$tensors" --size "$size" \
    --layout "$layout" >/dev/null
fi
sus="$dir/suspect.h5"; ref="$dir/reference.h5"
bytes=$(( $(stat -c %s "$sus") + $(stat -c %s "$ref") ))
cat "$sus" "$ref" >/dev/null   # warm the page cache
load_before=$(cut -d" " -f1-3 /proc/loadavg)

now() { date +%s.%N; }
# Each tool runs REPEAT times (default 3), the tools taking turns, so that a burst of load on a
# shared machine falls on all of them; each line reports the median run (and its CPU time).
repeat=${REPEAT:-3}
median() { sort -g | awk '{v[NR] = $0} END {print v[int((NR + 1) / 2)]}'; }
: >"$dir/dd.times"; : >"$dir/h5diff.times"; : >"$dir/numpy.times"; : >"$dir/faultline.times"
for _ in $(seq "$repeat"); do
  t0=$(now); dd if="$sus" of=/dev/null bs=16M status=none; dd if="$ref" of=/dev/null bs=16M status=none; t1=$(now)
  echo "$t1 - $t0" | bc -l >>"$dir/dd.times"

  t0=$(now); /usr/bin/time -f "%U %S" -o "$dir/h5diff.cpu" h5diff "$ref" "$sus" >/dev/null || true; t1=$(now)
  echo "$(echo "$t1 - $t0" | bc -l) $(tail -n 1 "$dir/h5diff.cpu" | awk '{print $1 + $2}')" >>"$dir/h5diff.times"

  if [ "${NUMPY:-1}" != 0 ]; then
    t0=$(now); /usr/bin/python3 bench/compare/numpy_compare.py "$sus" "$ref" >/dev/null; t1=$(now)
    echo "$t1 - $t0" | bc -l >>"$dir/numpy.times"
  fi

  t0=$(now)
  /usr/bin/time -f "%M %U %S" -o "$dir/faultline.rss" "$exe" compare "$sus" "$ref" --json --quiet >"$dir/faultline.json" || true
  t1=$(now)
  echo "$(echo "$t1 - $t0" | bc -l) $(tail -n 1 "$dir/faultline.rss" | awk '{print $2 + $3, $1}')" >>"$dir/faultline.times"
done
dd_s=$(median <"$dir/dd.times")
h5diff_line=$(median <"$dir/h5diff.times"); h5diff_s=${h5diff_line%% *}; h5diff_cpu=${h5diff_line#* }
numpy_s=0
[ "${NUMPY:-1}" = 0 ] || numpy_s=$(median <"$dir/numpy.times")
fl_line=$(median <"$dir/faultline.times"); fl_s=$(echo "$fl_line" | cut -d" " -f1)
fl_cpu=$(echo "$fl_line" | cut -d" " -f2); rss_kib=$(echo "$fl_line" | cut -d" " -f3)

gib=$(echo "$bytes / 1073741824" | bc -l)
printf 'pair: %s, %s, %d tensors of %dx%d, %.2f GiB read in all, %d cores, median of %d runs each\n' \
  "$dtype" "$layout" "$tensors" "$size" "$size" "$gib" "$(nproc)" "$repeat"
printf '%-28s %8.2f s  %7.2f GiB/s\n' "dd (page cache)" "$dd_s" "$(echo "$gib / $dd_s" | bc -l)"
printf '%-28s %8.2f s  %7.2f GiB/s  CPU %.2f s\n' "h5diff (exact compare)" "$h5diff_s" "$(echo "$gib / $h5diff_s" | bc -l)" "$h5diff_cpu"
[ "${NUMPY:-1}" = 0 ] || printf '%-28s %8.2f s  %7.2f GiB/s\n' "numpy/h5py script" "$numpy_s" "$(echo "$gib / $numpy_s" | bc -l)"
printf '%-28s %8.2f s  %7.2f GiB/s  CPU %.2f s  peak RSS %d MiB\n' "faultline compare (full)" "$fl_s" "$(echo "$gib / $fl_s" | bc -l)" "$fl_cpu" "$((rss_kib / 1024))"
printf 'ratios: faultline vs h5diff %.1fx faster, %.0f%% of page-cache bandwidth\n' \
  "$(echo "$h5diff_s / $fl_s" | bc -l)" "$(echo "100 * $dd_s / $fl_s" | bc -l)"
[ "${NUMPY:-1}" = 0 ] || printf 'faultline vs numpy %.1fx faster\n' "$(echo "$numpy_s / $fl_s" | bc -l)"
printf 'CPU time: faultline %.1fx less than h5diff\n' "$(echo "$h5diff_cpu / $fl_cpu" | bc -l)"
printf 'load average before: %s, after: %s\n' "$load_before" "$(cut -d' ' -f1-3 /proc/loadavg)"
