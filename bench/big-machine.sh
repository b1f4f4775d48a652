#!/usr/bin/env bash
# The figures of a machine with many cores (and a GPU where it has one) in one run of under
# ten minutes on 16 cores at LUBM-2560: the load from the generator (seconds, peak RSS);
# the emulator's mix at 1, 2, 4, 8 and 16 clients; Wukong's queries executed, decoded and
# written as TSV on all cores (and on the GPU); the speedup curve over threads; the same
# queries on a cluster of 4 processes × 4 workers beside the whole store; a cluster loaded
# by 4 processes, each parsing its share (no process holding the whole graph); the
# emulator on that cluster's partitions; the mix over HTTP against `quiver serve`; and,
# given BIG_UNIVERSITIES, a cluster load of LUBM-BIG_UNIVERSITIES by 4 processes in the
# time left (the smaller stores removed first, to leave the disk to it).
#
#   bench/big-machine.sh [UNIVERSITIES] [OUT_DIR] [SECONDS] [BIG_UNIVERSITIES]
#
# QUIVER_BIN names the quiver binary (built with `--features quiver-cli/cuda` for the GPU
# columns); without it the script builds one. Stores go under QUIVER_STORES (default:
# target/big-machine-stores, apart from OUT_DIR, which holds only figures). Steps run in order of what matters most, each under its own time limit,
# and a step that cannot finish within SECONDS (default 540) of the start is skipped, so
# that the figures gathered so far are always written: tables, JSON, CSV and PNG files in
# OUT_DIR (default target/big-machine), and log.txt.
set -uo pipefail
cd "$(dirname "$0")/.."

universities="${1:-2560}"
out="${2:-target/big-machine}"
budget="${3:-540}"
big="${4:-}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
log="$out/log.txt"
: >"$log"
stores="${QUIVER_STORES:-target/big-machine-stores}"
mkdir -p "$stores"
stores="$(cd "$stores" && pwd)"
# The emulator and the cluster benchmarks cut partitions under the system temp dir.
export TMPDIR="$stores"
cache="$stores/quiver-bench-cache"
store="$cache/lubm-$universities"
mkdir -p "$cache"

if [ -z "${QUIVER_BIN:-}" ]; then
  cargo build --release --bin quiver || exit 1
  QUIVER_BIN=target/release/quiver
fi
threads=$(nproc)
gpu=()
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  gpu=(--device gpu)
fi
started=$SECONDS
failures=0
skipped=0

say() { echo "== $*" | tee -a "$log"; }
# step LIMIT COMMAND…: runs COMMAND for at most LIMIT seconds, or skips it when fewer than
# LIMIT seconds of the budget are left (a step's limit is what it needs at 16 cores).
step() {
  local limit=$1
  shift
  local left=$((budget - (SECONDS - started)))
  if [ "$left" -lt "$limit" ]; then
    say "skipped (needs $limit s, $left s left): $*"
    skipped=$((skipped + 1))
    return
  fi
  say "$*"
  local at=$SECONDS
  timeout --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$log"
  local status=${PIPESTATUS[0]}
  say "exit $status after $((SECONDS - at)) s"
  failures=$((failures + (status != 0)))
}

say "$(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, ${gpu[*]:-no GPU}; LUBM-$universities; $("$QUIVER_BIN" --version)"
[ ${#gpu[@]} -gt 0 ] && step 20 nvidia-smi -L
# The processor as the machine describes it (a virtual machine may show each thread of a
# core as a core; `bench scale` below measures which CPUs share one).
command -v lscpu >/dev/null && step 10 lscpu
# Whether a memory balloon reports free pages to its host (virtio device 0x0005, feature
# bit 5, the sixth character): the loader then lays indexes out in ordinary pages rather
# than huge ones (`crates/quiver-model/src/fresh_pages.rs`).
for device in /sys/bus/virtio/devices/*; do
  if [ "$(cat "$device/device" 2>/dev/null)" = 0x0005 ]; then
    say "virtio balloon $(basename "$device"): features $(cat "$device/features" 2>/dev/null)"
  fi
done

# The load from the generator: seconds and peak RSS (the loader prints its own; also
# `/usr/bin/time`'s maximum resident set where it is installed), the store kept for every
# step after it.
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -v)
if [ ! -f "$store/manifest.json" ]; then
  step 180 "${timer[@]}" "$QUIVER_BIN" load --lubm "$universities" --location "$store"
fi

# Light queries' throughput over clients (issue: throughput linear in cores).
for clients in 1 2 4 8 16; do
  [ "$clients" -le "$threads" ] || continue
  step 40 "$QUIVER_BIN" bench emulate --location "$store" --clients "$clients" --duration 5 \
    --json "$out/emulate-c$clients.json"
done

# Wukong's queries: executed, decoded and written as TSV, on every core and on the GPU.
step 120 "$QUIVER_BIN" bench lubm -u "$universities" --cache "$cache" --threads "$threads" \
  --runs 5 "${gpu[@]}" --json "$out/lubm.json" --markdown "$out/lubm.md"
# Where the GPU failed (no driver or NVRTC the build can use), the CPU's figures alone.
if [ ${#gpu[@]} -gt 0 ] && [ ! -s "$out/lubm.json" ]; then
  step 90 "$QUIVER_BIN" bench lubm -u "$universities" --cache "$cache" --threads "$threads" \
    --runs 5 --json "$out/lubm.json" --markdown "$out/lubm.md"
fi

# q2's rows written as TSV and JSON on every core: to a writer (the chunks handed over one
# after the other) and into memory (copied into place by the pool), beside the reference.
step 60 "$QUIVER_BIN" bench serialize --location "$store" --query-file queries/lubm-basic/q2.rq \
  --formats tsv,json --runs 5 --json "$out/serialize.json"

# The speedup curve over threads (q1's flattening past 8 threads), beside the machine's
# own: which CPUs share a core, and a compute and a random-read kernel at the same counts.
scale_threads=1
for n in 2 4 8 16 32 64; do
  [ "$n" -le "$threads" ] && scale_threads="$scale_threads,$n"
done
step 120 "$QUIVER_BIN" bench scale --location "$store" --threads "$scale_threads" --runs 3 \
  --csv "$out/scale.csv" --plot "$out/scale.png" --json "$out/scale.json"

# The same queries on 4 processes × 4 workers, the store cut into 16 partitions, beside
# the whole store; the rows moved per query.
workers=$(((threads / 4) > 0 ? threads / 4 : 1))
step 180 "$QUIVER_BIN" bench lubm -u "$universities" --cache "$cache" --threads "$threads" \
  --runs 5 --processes 4 --workers "$workers" --json "$out/cluster-lubm.json" \
  --markdown "$out/cluster-lubm.md"

# The emulator's mix on those partitions, through process 0.
step 60 "$QUIVER_BIN" bench emulate --location "$store" --clients "$threads" --duration 5 \
  --processes 4 --workers "$workers" --json "$out/cluster-emulate.json"

# A cluster loaded by 4 processes, each generating and parsing its own universities, each
# owning a share of the dictionary: seconds, triples per second, peak RSS per process.
rm -rf "$stores/cluster-load"
step 150 "$QUIVER_BIN" load --lubm "$universities" --processes 4 --workers "$workers" \
  --location "$stores/cluster-load" --json "$out/cluster-load.json"

# The emulator's mix over HTTP: `quiver serve` on the whole store, many keep-alive clients.
http_clients=1
for n in 4 16 64; do
  [ "$n" -le "$threads" ] && http_clients="$http_clients,$n"
done
step 45 python3 bench/serve-emulate.py "$store" "$out/http" quiver="$QUIVER_BIN" \
  --clients "$http_clients" --duration 3 --rounds 1

# A bigger cluster load in the time left: LUBM-BIG_UNIVERSITIES by 4 processes (the other
# stores removed first). A limit it cannot meet still says how long it took at least.
if [ -n "$big" ]; then
  rm -rf "$stores/cluster-load" "$cache"
  # What is left once the removal is done, less a margin for step's own check.
  left=$((budget - (SECONDS - started) - 5))
  step "$((left > 60 ? left : 60))" "$QUIVER_BIN" load --lubm "$big" --processes 4 \
    --workers "$workers" --location "$stores/cluster-load-$big" --json "$out/cluster-load-$big.json"
  rm -rf "$stores/cluster-load-$big"
fi

say "$failures step(s) failed, $skipped skipped, $((SECONDS - started)) s"
exit $((failures > 0))
