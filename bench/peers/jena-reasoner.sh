#!/usr/bin/env bash
# Apache Jena 5.6's OWL rule reasoner on LUBM, for bench/reasoning.py --jena: resolves
# Jena's classpath from Maven Central with the pom.xml beside this script (once, cached
# under target/jena-reasoner), compiles LubmReasoner.java with javac, and runs it on the
# files given, printing one JSON object: the triples asserted and entailed, the seconds to
# load and to materialise (the inference model prepared and copied whole into a plain
# model), and per original LUBM query the rows and the median milliseconds of RUNS runs on
# the materialised model.
#
# Usage: bench/peers/jena-reasoner.sh [--reasoner micro|mini|rdfs] [--runs 5] [--heap 8g] FILE...
# Needs Java 17 and Maven. Jena's documentation recommends the OWL Micro reasoner for
# performance (OWL Mini adds someValuesFrom and minCardinality and runs far slower).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
shared="${QUIVER_SHARED:-$root/../shared}"
reasoner=micro runs=5 heap=8g
while [ $# -gt 0 ]; do
  case "$1" in
    --reasoner) reasoner="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --heap) heap="$2"; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--reasoner micro|mini|rdfs] [--runs N] [--heap SIZE] FILE..." >&2; exit 2; }
work="$root/target/jena-reasoner"
mkdir -p "$work/classes"
if [ ! -s "$work/classpath.txt" ]; then
  (cd "$here/jena-reasoner" && mvn -B -q dependency:build-classpath -Dmdep.outputFile="$work/classpath.txt") >&2
fi
classpath="$(cat "$work/classpath.txt")"
if [ ! -f "$work/classes/LubmReasoner.class" ] || [ "$here/jena-reasoner/LubmReasoner.java" -nt "$work/classes/LubmReasoner.class" ]; then
  javac -cp "$classpath" -d "$work/classes" "$here/jena-reasoner/LubmReasoner.java" >&2
fi
exec java "-Xmx$heap" -cp "$work/classes:$classpath" LubmReasoner "$reasoner" \
  "$shared/queries/lubm-original" "$runs" "$@" 2>/dev/null
