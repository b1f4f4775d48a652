#!/usr/bin/env bash
# Apache Jena 5.6's text search (jena-text, Lucene 9) on LUBM beside `quiver bench text`:
# resolves the classpath from Maven Central with the pom.xml in jena-text/ (once, cached
# under target/jena-text), builds the Lucene index of ub:name, ub:emailAddress and
# ub:researchInterest over a TDB2 database already loaded with LUBM (`jena.textindexer`,
# timed), then times the queries of jena-text/queries in one JVM (TextBench.java: median of
# RUNS runs after a warm-up, text to rows): text:query word and prefix searches, and the
# CONTAINS and REGEX filters Quiver's index narrows, which Jena scans.
#
# Usage: bench/peers/jena-text.sh TDB2_DIRECTORY [RUNS]   (e.g. target/peers/jena/db, loaded
# by bench/peers/peers.py --lubm 100 or tdb2.tdbloader). Needs Java 17 and Maven.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tdb="$(cd "$1" && pwd)"
runs="${2:-5}"
work="$root/target/jena-text"
mkdir -p "$work"
if [ ! -s "$work/classpath.txt" ]; then
  (cd "$here/jena-text" && mvn -B -q dependency:build-classpath -Dmdep.outputFile="$work/classpath.txt") >&2
fi
echo "-cp $(cat "$work/classpath.txt")" > "$work/classpath.args"
rm -rf "$work/lucene"
sed -e "s|TDB2_LOCATION|$tdb|" -e "s|LUCENE_DIRECTORY|$work/lucene|" "$here/jena-text/config.ttl" > "$work/config.ttl"
start=$(date +%s.%N)
java -Xmx8g "@$work/classpath.args" jena.textindexer --desc="$work/config.ttl" >&2
end=$(date +%s.%N)
echo "jena.textindexer: $(echo "$end - $start" | bc) s, $(du -sb "$work/lucene" | cut -f1) bytes" >&2
cd "$here/jena-text/queries"
exec java -Xmx8g "@$work/classpath.args" "$here/jena-text/TextBench.java" "$work/config.ttl" "$runs" \
  word.rq prefix.rq word-scan.rq contains.rq regex.rq
