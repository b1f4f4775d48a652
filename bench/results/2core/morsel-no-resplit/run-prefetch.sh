#!/bin/sh
# The runs behind the second part of ../morsel-no-resplit.md (short morsels read ahead),
# the two builds alternating:
#   run-prefetch.sh BEFORE_BINARY AFTER_BINARY CACHE QUERIES_REPO_DIR QUERY_DIR OUT
# QUERIES_REPO_DIR is queries/lubm-basic; QUERY_DIR holds its q1 and q3.
set -e
before=$1 after=$2 cache=$3 basic=$4 queries=$5 out=$6
mkdir -p "$out"
printf 'sparql -f %s/q1.rq -n 300 -m 8\nsparql -f %s/q3.rq -n 300 -m 8\n' "$basic" "$basic" \
  > "$out/console-m8.txt"
for r in 1 2 3; do
  for b in before after; do
    eval bin=\$$b
    # Eight threads on the two cores: morsels of 156 rows at q1's third step. The
    # process's CPU time is the work, whatever the threads' turns on the cores.
    /usr/bin/time -f "cpu_s %U %S wall_s %e" "$bin" console --location "$cache/lubm-1000" \
      < "$out/console-m8.txt" > "$out/prefetch-m8-$b-$r.txt" 2>&1
    "$bin" bench scale --location "$cache/lubm-100" --queries "$queries" --threads 1,2 \
      --runs 41 --json "$out/prefetch-scale-lubm100-$b-$r.json" > /dev/null 2>&1
    "$bin" bench emulate --location "$cache/lubm-1000" --clients 2 --duration 5 \
      --json "$out/prefetch-emulate-$b-$r.json" > /dev/null 2>&1
  done
done
