#!/bin/sh
# The runs behind ../morsel-no-resplit.md, the two builds alternating:
#   run.sh BEFORE_BINARY AFTER_BINARY CACHE QUERY_DIR OUT
# CACHE is a `bench lubm --cache` directory holding lubm-100 and lubm-1000; QUERY_DIR holds
# q1 and q3 of queries/lubm-basic (bench scale's q2 and q7 checks used a directory of
# q2 and q7 the same way).
set -e
before=$1 after=$2 cache=$3 queries=$4 out=$5
mkdir -p "$out"
for r in 1 2 3; do
  for b in before after; do
    eval bin=\$$b
    "$bin" bench scale --location "$cache/lubm-1000" --queries "$queries" --threads 1,2 \
      --runs 21 --json "$out/scale-lubm1000-$b-$r.json" > /dev/null 2>&1
    "$bin" bench scale --location "$cache/lubm-100" --queries "$queries" --threads 1,2 \
      --runs 41 --json "$out/scale-lubm100-$b-$r.json" > /dev/null 2>&1
  done
done
for r in 1 2; do
  for b in before after; do
    eval bin=\$$b
    "$bin" bench lubm -u 1000 --cache "$cache" --runs 7 --json "$out/lubm1000-$b-$r.json" \
      > /dev/null 2>&1
  done
done
# Sixteen threads on the two cores: what the forks cost, not what the threads gain.
for r in 1 2 3; do
  for b in before after; do
    eval bin=\$$b
    "$bin" bench scale --location "$cache/lubm-1000" --queries "$queries" --threads 16 \
      --runs 21 --json "$out/t16-lubm1000-$b-$r.json" > /dev/null 2>&1
  done
done
