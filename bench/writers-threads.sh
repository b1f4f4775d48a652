#!/usr/bin/env bash
# Results written on one and on several threads, for two builds side by side: `quiver
# bench serialize` (the streaming writers alone, ns per row) with RAYON_NUM_THREADS=1 and
# with every core, and `quiver bench lubm`'s query text → TSV for LUBM q2, the builds
# alternating round by round. Prints one line per run and writes each run's JSON.
#
#   bench/writers-threads.sh BEFORE AFTER STORE UNIVERSITIES OUT_DIR [ROUNDS]
#
# STORE is a saved LUBM-UNIVERSITIES store (`quiver load --lubm N --location STORE`).
set -euo pipefail
cd "$(dirname "$0")/.."
before=$1 after=$2 store=$(cd "$3" && pwd) universities=$4 out=$5 rounds=${6:-3}
mkdir -p "$out"
cache=$(mktemp -d)
queries=$(mktemp -d)
trap 'rm -rf "$cache" "$queries"' EXIT
ln -s "$store" "$cache/lubm-$universities"
cp queries/lubm-basic/q2.rq "$queries/"
for round in $(seq "$rounds"); do
  for label in before after; do
    quiver=$before
    [ "$label" = after ] && quiver=$after
    for threads in 1 "$(nproc)"; do
      RAYON_NUM_THREADS=$threads "$quiver" bench serialize --location "$store" \
        --formats tsv,json --runs 7 --json "$out/serialize-$label-t$threads-$round.json" |
        grep -E "^(tsv|json)" | sed "s/^/$label round $round, $threads thread(s): /"
    done
    "$quiver" bench lubm -u "$universities" --cache "$cache" --queries "$queries" --runs 5 \
      --json "$out/q2-$label-$round.json" | grep "| q2" | sed "s/^/$label round $round, q2: /"
  done
done
