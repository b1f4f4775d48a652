#!/usr/bin/env bash
# What a 2-process cluster holds in network buffers and anonymous memory as it answers
# Wukong's q1–q12, one after the other.
#
#   bench/cluster-buffers.sh CLUSTER_DIR [OUT.csv]
#
# CLUSTER_DIR is a store cut into 2 partitions (`quiver load --processes 2` or
# `--partitions 2`). Starts `quiver cluster --processes 2` on it, then runs each query of
# queries/lubm-basic once over HTTP and, after each, reads process 0's network buffers (the
# `quiver_cluster_network_buffer_bytes` gauge: timely's byte slabs, which keep the size of
# the largest message they carried, and the most they held at once since it started: the
# `..._peak_bytes` gauge) and process 1's anonymous memory and peak RSS (from
# /proc). Writes one CSV row per query (default: bench/results/<cores>core/cluster-buffers.csv).
set -euo pipefail
dir=${1:?a store cut into 2 partitions}
cores=$(nproc)
out=${2:-bench/results/${cores}core/cluster-buffers.csv}
quiver=${QUIVER:-target/release/quiver}
port=${PORT:-7911}
queries=$(dirname "$0")/../queries/lubm-basic
mkdir -p "$(dirname "$out")"
"$quiver" cluster --processes 2 --location "$dir" --bind "127.0.0.1:$port" > /dev/null 2>&1 &
cluster=$!
trap 'kill $cluster 2> /dev/null; wait $cluster 2> /dev/null || true' EXIT
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$port/status" > /dev/null && break
  sleep 0.5
done
second=$(pgrep -f -- "--process 1" | head -1)
[ -n "$second" ] || { echo "process 1 not found" >&2; exit 1; }
gauge() {
  curl -s "http://127.0.0.1:$port/metrics" |
    awk -v name="quiver_cluster_network_buffer_$1" '$1 ~ "^" name "[{ ]|^" name "$" { printf "%.1f", $2 / 1048576; exit }'
}
buffers() { echo "$(gauge bytes),$(gauge peak_bytes)"; }
anonymous() { awk '/^Anonymous/ { printf "%.1f", $2 / 1024 }' "/proc/$second/smaps_rollup"; }
peak() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$second/status"; }
echo "query,rows,seconds,buffers_mib_process0,peak_buffers_mib_process0,anonymous_mib_process1,peak_rss_mib_process1" > "$out"
echo "start,0,0,$(buffers),$(anonymous),$(peak)" >> "$out"
for q in 1 2 3 4 5 6 7 8 9 10 11 12; do
  started=$(date +%s.%N)
  lines=$(curl -s -H 'Accept: text/csv' --data-urlencode "query@$queries/q$q.rq" \
    "http://127.0.0.1:$port/query" | wc -l)
  seconds=$(echo "$(date +%s.%N) - $started" | bc)
  echo "q$q,$((lines - 1)),$seconds,$(buffers),$(anonymous),$(peak)" >> "$out"
done
column -s, -t < "$out"
