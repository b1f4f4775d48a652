#!/usr/bin/env bash
# A cluster loaded by its processes beside the single store, at scale: LUBM-UNIVERSITIES
# loaded by PROCESSES × WORKERS (each process generating and parsing its own universities,
# the dictionary partitioned: no process holds the whole graph or dictionary), then by one
# process, then Wukong's q1–q12 over HTTP on both, each answer checked row for row against
# the single store's (`bench/cluster-latency.py`), with the median latency of each.
#
#   bench/cluster-big.sh [UNIVERSITIES] [PROCESSES] [WORKERS] [OUT_DIR]
#
# Defaults: LUBM-10240 on 4 processes of nproc/4 workers, figures in target/cluster-big
# (log.txt, cluster-load.json, queries.md, queries.json). QUIVER_BIN names the binary
# (default target/release/quiver). The cluster goes under QUIVER_STORES (default
# target/cluster-big-stores) and the single store to WHOLE_STORE (default beside it): at
# LUBM-10240 the two take about 36 GB each, so on a machine whose disk cannot hold both,
# give WHOLE_STORE a directory in memory (`/dev/shm/…`, where a served store's pages are
# the file's own). Steps run in order and the script stops at the first that fails; both
# stores are removed at the end unless KEEP_STORES=1.
set -uo pipefail
cd "$(dirname "$0")/.."

universities="${1:-10240}"
processes="${2:-4}"
workers="${3:-$(($(nproc) / processes > 0 ? $(nproc) / processes : 1))}"
out="${4:-target/cluster-big}"
quiver="${QUIVER_BIN:-target/release/quiver}"
stores="${QUIVER_STORES:-target/cluster-big-stores}"
whole="${WHOLE_STORE:-$stores/whole}"
mkdir -p "$out" "$stores"
log="$out/log.txt"
: >"$log"
cluster="$stores/cluster-$processes"
rm -rf "$cluster" "$whole"

say() { echo "== $*" | tee -a "$log"; }
# run COMMAND…: runs it with its output in the log (and `/usr/bin/time`'s peak RSS where
# it is installed); stops the script when it fails.
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -v)
run() {
  say "$*"
  local at=$SECONDS
  "$@" 2>&1 | tee -a "$log"
  local status=${PIPESTATUS[0]}
  say "exit $status after $((SECONDS - at)) s"
  [ "$status" -eq 0 ] || exit "$status"
}

say "$(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; LUBM-$universities on $processes × $workers; $("$quiver" --version)"
run "${timer[@]}" "$quiver" load --lubm "$universities" --processes "$processes" \
  --workers "$workers" --location "$cluster" --json "$out/cluster-load.json"
run "${timer[@]}" "$quiver" load --lubm "$universities" --location "$whole"
run python3 bench/cluster-latency.py "$whole" "$stores/cluster" --processes "$processes" \
  --workers "$workers" --runs 5 --quiver "$quiver" --markdown "$out/queries.md" \
  --json "$out/queries.json"
[ "${KEEP_STORES:-0}" = 1 ] || rm -rf "$cluster" "$whole"
say "done in $SECONDS s"
