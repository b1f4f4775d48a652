#!/usr/bin/env bash
# Results of several sizes written by two builds side by side: `quiver bench serialize`
# (the streaming writers alone, ns per row, into a writer and into memory) for LUBM q1, q7,
# q8, q12 and q2, then `quiver bench lubm`'s query text → TSV for the same queries, the
# builds alternating round by round. Prints one line per run and writes each run's JSON.
#
#   bench/writers-queries.sh BEFORE AFTER STORE UNIVERSITIES OUT_DIR [ROUNDS]
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
for q in q1 q2 q7 q8 q12; do cp "queries/lubm-basic/$q.rq" "$queries/"; done # for bench lubm
for round in $(seq "$rounds"); do
  for label in before after; do
    quiver=$before
    [ "$label" = after ] && quiver=$after
    for q in q1 q7 q8 q12 q2; do
      runs=41
      [ "$q" = q2 ] && runs=9
      "$quiver" bench serialize --location "$store" --query-file "queries/lubm-basic/$q.rq" \
        --formats tsv,json --runs "$runs" --json "$out/serialize-$q-$label-$round.json" |
        grep -E "^(tsv|json)" | sed "s/^/$label round $round, $q: /"
    done
    "$quiver" bench lubm -u "$universities" --cache "$cache" --queries "$queries" --runs 21 \
      --json "$out/lubm-$label-$round.json" | grep -E "^\| q" | sed "s/^/$label round $round: /"
  done
done
