#!/bin/sh
# The runs behind ../scattered-small-results.md, the two builds alternating:
#   run.sh BEFORE_BINARY AFTER_BINARY CACHE QUERY_DIR OUT
# CACHE is a `bench lubm --cache` directory holding lubm-1000; QUERY_DIR holds q1, q2, q7,
# q8 and q12 of queries/lubm-basic.
set -e
base=$1 after=$2 cache=$3 queries=$4 out=$5
store=$cache/lubm-1000
mkdir -p "$out"
for r in 1 2 3 4 5 6; do
  for b in base after; do
    eval bin=\$$b
    for q in q1 q8 q12; do
      "$bin" bench serialize --location "$store" --query-file "$queries/$q.rq" --runs 51 \
        --formats tsv,json --json "$out/ser-$q-$b-$r.json" > /dev/null 2>&1
    done
    for q in q7 q2; do
      "$bin" bench serialize --location "$store" --query-file "$queries/$q.rq" --runs 9 \
        --formats tsv,json --json "$out/ser-$q-$b-$r.json" > /dev/null 2>&1
    done
  done
done
for r in 1 2 3; do
  for b in base after; do
    eval bin=\$$b
    "$bin" bench lubm -u 1000 --cache "$cache" --runs 15 --json "$out/lubm-$b-$r.json" > /dev/null 2>&1
    "$bin" bench emulate --location "$store" --clients 2 --duration 5 \
      --json "$out/emulate-$b-$r.json" > /dev/null 2>&1
  done
done
