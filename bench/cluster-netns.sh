#!/usr/bin/env bash
# Light queries on a 2-process cluster whose processes sit in two network namespaces joined
# by a veth pair, without and then with an added delay on each side (netem), so that the
# latency added per query, divided by the round-trip time added, counts the round trips a
# query makes between the processes. Needs root (ip netns, tc); every namespace and link it
# makes is removed on exit.
#
# Usage: bench/cluster-netns.sh PARTITIONED_STORE [DELAY_US] [RUNS] [QUIVER]
#   PARTITIONED_STORE: a store cut into 2 partitions (`quiver partition --partitions 2`).
#   DELAY_US: the delay added on each side, in µs (default 100: 200 µs per round trip).
#   RUNS: requests per query and setting (default 200), after 20 to warm up.
set -euo pipefail
store=${1:?usage: bench/cluster-netns.sh PARTITIONED_STORE [DELAY_US] [RUNS] [QUIVER]}
delay=${2:-100}
runs=${3:-200}
root="$(cd "$(dirname "$0")/.." && pwd)"
quiver=${4:-$root/target/release/quiver}
work=$(mktemp -d)
pids=()
# shellcheck source=bench/netns-pair.sh
. "$root/bench/netns-pair.sh"

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  netns_pair_remove quiver
  rm -rf "$work"
}
trap cleanup EXIT

netns_pair quiver 10.213.0

printf '10.213.0.1:7101\n10.213.0.2:7102\n' >"$work/hosts.txt"
ip netns exec quiver-b "$quiver" serve --location "$store" --cluster "$work/hosts.txt" \
  --process 1 2>"$work/p1.log" &
pids+=($!)
ip netns exec quiver-a "$quiver" serve --location "$store" --cluster "$work/hosts.txt" \
  --process 0 --bind 127.0.0.1:7878 2>"$work/p0.log" &
pids+=($!)

measure() {
  ip netns exec quiver-a python3 - "$root/queries/lubm-basic" "$runs" "$1" <<'EOF'
import statistics, sys, time, urllib.parse, urllib.request
from pathlib import Path
queries, runs, label = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for _ in range(100):
    try:
        urllib.request.urlopen("http://127.0.0.1:7878/status", timeout=1).read()
        break
    except Exception:
        time.sleep(0.1)
for name in ["q4", "q5", "q6", "q9", "q10", "q11"]:
    body = urllib.parse.urlencode({"query": (queries / f"{name}.rq").read_text()}).encode()
    times = []
    for i in range(20 + runs):
        request = urllib.request.Request(
            "http://127.0.0.1:7878/sparql", data=body,
            headers={"Content-Type": "application/x-www-form-urlencoded",
                     "Accept": "text/tab-separated-values"})
        started = time.perf_counter()
        urllib.request.urlopen(request).read()
        if i >= 20:
            times.append((time.perf_counter() - started) * 1e6)
    print(f"{label}\t{name}\t{statistics.median(times):.0f}")
EOF
}

echo -e "setting\tquery\tmedian µs"
measure "no delay"
if ! ip netns exec quiver-a tc qdisc add dev quiver-va root netem delay "${delay}us" ||
  ! ip netns exec quiver-b tc qdisc add dev quiver-vb root netem delay "${delay}us"; then
  echo "bench/cluster-netns.sh: this kernel has no netem queueing discipline (sch_netem):" \
    "only the figures without a delay" >&2
  exit 1
fi
measure "+${delay} µs each way"
