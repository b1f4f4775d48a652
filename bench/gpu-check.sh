#!/usr/bin/env bash
# The GPU checks and figures of Quiver on a machine with an NVIDIA GPU: the device path's
# tests (rows equal to the CPU's on LUBM-1, the SPARQL 1.1 queries and random graphs;
# batched lookups equal to the CPU's for batches of 1 to 2^20 keys), then on LUBM-N
# (default 2560) the query table on the CPU's threads and on the GPU in one run, the
# batched key/value lookups per batch size, and the speedup curve of the CPU threads.
#
#   bench/gpu-check.sh [UNIVERSITIES] [OUT_DIR]
#
# Builds with `--features cuda` unless QUIVER_BIN (the quiver binary) and QUIVER_GPU_TESTS
# (the quiver-gpu test binary of `cargo test -p quiver-gpu --features cuda --no-run`, whose
# module `gpu` holds the device's tests) name
# binaries built already. NVRTC must be findable (see README: GPU). Writes the tables,
# JSON, CSV and PNG files into OUT_DIR (default: target/gpu-check), and a log.
set -uo pipefail
cd "$(dirname "$0")/.."

universities="${1:-2560}"
out="${2:-target/gpu-check}"
mkdir -p "$out"
log="$out/log.txt"
: >"$log"

say() { echo "== $*" | tee -a "$log"; }
step() {
  say "$*"
  local started=$SECONDS
  "$@" 2>&1 | tee -a "$log"
  local status=${PIPESTATUS[0]}
  say "exit $status after $((SECONDS - started)) s"
  failures=$((failures + (status != 0)))
}
failures=0

if [ -z "${QUIVER_BIN:-}" ] || [ -z "${QUIVER_GPU_TESTS:-}" ]; then
  cargo build --release --features quiver-cli/cuda --bin quiver || exit 1
  QUIVER_BIN=target/release/quiver
  QUIVER_GPU_TESTS=$(cargo test --release -p quiver-gpu --features cuda --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "all" and m.get("executable"):
        print(m["executable"])')
fi
threads=$(nproc)
cache="${QUIVER_STORE_CACHE:-$out/stores}"

step nvidia-smi -L
step "$QUIVER_BIN" info --devices
export QUIVER_ROOT="$PWD"
step "$QUIVER_GPU_TESTS" gpu:: --test-threads 1
step "$QUIVER_BIN" bench lubm -u "$universities" --threads "$threads" --runs 5 --device gpu \
  --gpu-sweep 1024,4096,65536,262144 \
  --cache "$cache" --json "$out/lubm-gpu.json" --markdown "$out/lubm-gpu.md"
# The heavy queries with the index on the GPU by predicate segments, within 2 GiB.
heavy=$(mktemp -d)
cp queries/lubm-basic/q1.rq queries/lubm-basic/q2.rq queries/lubm-basic/q3.rq \
  queries/lubm-basic/q7.rq "$heavy"
step "$QUIVER_BIN" bench lubm -u "$universities" --threads "$threads" --runs 5 --device gpu \
  --gpu-memory 2G --queries "$heavy" --cache "$cache"
# Where each step of the heavy queries ran and what the transfers took (rows discarded).
for q in q1 q2 q3 q7; do
  step sh -c "\"\$0\" query --location \"\$1\" --device gpu --explain --threads $threads \
    --query-file queries/lubm-basic/$q.rq --results-format tsv >/dev/null" \
    "$QUIVER_BIN" "$cache/lubm-$universities"
done
step "$QUIVER_BIN" bench kv --engine gpu --location "$cache/lubm-$universities" \
  --csv "$out/kv-gpu.csv" --plot "$out/kv-gpu.png"
scale_threads=1
for n in 2 4 8 16 32 64; do
  [ "$n" -le "$threads" ] && scale_threads="$scale_threads,$n"
done
step "$QUIVER_BIN" bench scale --location "$cache/lubm-$universities" --threads "$scale_threads" \
  --runs 3 --csv "$out/scale.csv" --plot "$out/scale.png" --json "$out/scale.json"
say "$failures step(s) failed"
exit $((failures > 0))
