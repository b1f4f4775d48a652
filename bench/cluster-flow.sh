#!/usr/bin/env bash
# Flow control between a cluster's processes over a slow link: 2 processes in two network
# namespaces joined by a veth pair whose sending side is limited to RATE (a token bucket,
# `tc qdisc … tbf`), answering a query whose rows cross from process 1 to process 0 in
# hundreds of messages. Per run: the seconds, and each process's network buffers at their
# peak (`quiver_cluster_network_buffer_peak_bytes`, the most timely's byte slabs held at
# once) and peak RSS, process 1's flow control (messages held back, most in flight), and
# the answer's last line (the count, for the default query).
# Needs root (ip netns, tc); every namespace and link it makes is removed on exit.
#
# Usage: bench/cluster-flow.sh PARTITIONED_STORE [RATE] [RUNS] [QUIVER] [QUERY_FILE]
#   PARTITIONED_STORE: a store cut into 2 partitions (`quiver load --processes 2`).
#   RATE: the link's rate each way, as tc reads it (default 1gbit).
#   RUNS: runs of the query (default 3), each on the same processes.
#   QUERY_FILE: default, every takesCourse edge counted through a FILTER the coordinator
#   evaluates, so every process's rows go to process 0.
set -euo pipefail
store=${1:?usage: bench/cluster-flow.sh PARTITIONED_STORE [RATE] [RUNS] [QUIVER] [QUERY_FILE]}
rate=${2:-1gbit}
runs=${3:-3}
root="$(cd "$(dirname "$0")/.." && pwd)"
quiver=${4:-$root/target/release/quiver}
work=$(mktemp -d)
query=${5:-$work/query.rq}
pids=()
# shellcheck source=bench/netns-pair.sh
. "$root/bench/netns-pair.sh"

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  netns_pair_remove quiver-f
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/query.rq" <<'EOF'
PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>
SELECT (COUNT(*) AS ?n) WHERE { ?x ub:takesCourse ?c FILTER(?x != ?c) }
EOF

netns_pair quiver-f 10.214.0
ip netns exec quiver-f-a tc qdisc add dev quiver-f-va root tbf rate "$rate" burst 256kb latency 100ms
ip netns exec quiver-f-b tc qdisc add dev quiver-f-vb root tbf rate "$rate" burst 256kb latency 100ms

printf '10.214.0.1:7201\n10.214.0.2:7202\n' >"$work/hosts.txt"
ip netns exec quiver-f-b "$quiver" serve --location "$store" --cluster "$work/hosts.txt" \
  --process 1 --accept-queries --bind 127.0.0.1:7880 >"$work/p1.log" 2>&1 &
pids+=($!)
ip netns exec quiver-f-a "$quiver" serve --location "$store" --cluster "$work/hosts.txt" \
  --process 0 --bind 127.0.0.1:7879 >"$work/p0.log" 2>&1 &
pids+=($!)

ready() { ip netns exec "$1" curl -sf "http://127.0.0.1:$2/status" >/dev/null; }
for _ in $(seq 1 600); do
  ready quiver-f-a 7879 && ready quiver-f-b 7880 && break
  sleep 0.5
done
ready quiver-f-a 7879 || { echo "the cluster did not start:" >&2; cat "$work"/p*.log >&2; exit 1; }

metric() { # NAMESPACE PORT NAME
  ip netns exec "$1" curl -s "http://127.0.0.1:$2/metrics" |
    awk -v name="quiver_$3" '$1 ~ "^" name "[{ ]|^" name "$" { print $2; exit }'
}
mib() { awk -v b="${1:-0}" 'BEGIN { printf "%.1f", b / 1048576 }'; }
hwm() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
serving() { pgrep -f -- "--cluster $work/hosts.txt --process $1" | head -1; }

echo "run,seconds,last_line,p0_buffer_peak_mib,p1_buffer_peak_mib,p0_peak_rss_mib,p1_peak_rss_mib,p1_messages_waited,p1_most_in_flight"
for run in $(seq 1 "$runs"); do
  started=$(date +%s.%N)
  answer=$(ip netns exec quiver-f-a curl -s -H 'Accept: text/csv' \
    --data-urlencode "query@$query" http://127.0.0.1:7879/query | tail -1 | tr -d '\r' | tr ',' ' ')
  seconds=$(echo "$(date +%s.%N) - $started" | bc)
  echo "$run,$seconds,$answer,$(mib "$(metric quiver-f-a 7879 cluster_network_buffer_peak_bytes)"),$(mib "$(metric quiver-f-b 7880 cluster_network_buffer_peak_bytes)"),$(hwm "$(serving 0)"),$(hwm "$(serving 1)"),$(metric quiver-f-b 7880 cluster_messages_waited_total),$(metric quiver-f-b 7880 cluster_most_messages_in_flight)"
done
