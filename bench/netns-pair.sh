# Two network namespaces joined by a veth pair, for the cluster benchmarks that put a
# cluster's 2 processes on either side of a link (sourced by bench/cluster-netns.sh and
# bench/cluster-flow.sh; needs root).
#
#   netns_pair NAME SUBNET   namespaces NAME-a and NAME-b, the pair's ends NAME-va (in a,
#                            SUBNET.1/30) and NAME-vb (in b, SUBNET.2/30), all up
#   netns_pair_remove NAME   removes both namespaces (and with them the pair)

netns_pair() {
  local name=$1 subnet=$2
  ip netns add "$name-a"
  ip netns add "$name-b"
  ip link add "$name-va" type veth peer name "$name-vb"
  ip link set "$name-va" netns "$name-a"
  ip link set "$name-vb" netns "$name-b"
  ip -n "$name-a" addr add "$subnet.1/30" dev "$name-va"
  ip -n "$name-b" addr add "$subnet.2/30" dev "$name-vb"
  for side in a b; do
    ip -n "$name-$side" link set lo up
    ip -n "$name-$side" link set "$name-v$side" up
  done
}

netns_pair_remove() {
  ip netns del "$1-a" 2>/dev/null || true
  ip netns del "$1-b" 2>/dev/null || true
}
