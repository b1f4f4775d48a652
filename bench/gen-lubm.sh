#!/usr/bin/env bash
# Generator throughput: `quiver gen lubm` for LUBM-N written to /dev/null, median of R runs.
# Usage: bench/gen-lubm.sh [UNIVERSITIES=100] [RUNS=5] [THREADS=all]
set -euo pipefail
cd "$(dirname "$0")/.."
universities=${1:-100}
runs=${2:-5}
threads=${3:-}
cargo build --release --quiet --bin quiver
quiver=target/release/quiver
thread_flag=()
[[ -n "$threads" ]] && thread_flag=(--threads "$threads")

triples=$("$quiver" gen lubm --universities "$universities" "${thread_flag[@]}" | wc -l)
times=()
for _ in $(seq "$runs"); do
  start=$(date +%s.%N)
  "$quiver" gen lubm --universities "$universities" "${thread_flag[@]}" >/dev/null
  end=$(date +%s.%N)
  times+=("$(echo "$end - $start" | bc -l)")
done
median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
rate=$(echo "$triples / $median / 1000000" | bc -l)
printf 'LUBM-%s: %s triples, median %.3f s of %s runs, %.2f M triples/s\n' \
  "$universities" "$triples" "$median" "$runs" "$rate"
