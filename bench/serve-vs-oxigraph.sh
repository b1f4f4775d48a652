#!/usr/bin/env bash
# HTTP throughput of `quiver serve` beside Oxigraph's server, both read-only on loopback, on
# the same LUBM store: LUBM q5 (a light lookup) as GET /query, SPARQL JSON, at C connections
# for D seconds with wrk. Prints requests/s, p50/p99 latency, non-2xx responses and the
# server's RSS before and after the run.
#
# Usage: bench/serve-vs-oxigraph.sh [UNIVERSITIES=10] [SECONDS=20] [CONNECTIONS=256]
# Needs wrk (installed with apt-get when missing and run as root) and, for the comparison,
# Oxigraph's CLI server (`pip install oxigraph`, a binary wheel; skipped if unavailable).
# Quiver runs with --queue >= CONNECTIONS so that no request is refused with 503: with the
# default queue (8 per thread) the excess connections would measure fast 503s instead.
set -euo pipefail
cd "$(dirname "$0")/.."
universities=${1:-10}
seconds=${2:-20}
connections=${3:-256}
threads=$(nproc)

target=${CARGO_TARGET_DIR:-target}
cargo build --release --quiet --bin quiver
quiver="$target/release/quiver"
if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
  else
    echo "wrk is required (apt-get install wrk)" >&2
    exit 1
  fi
fi
# The wheel's binary itself (not a pyenv shim), so that $! is the server's pid.
oxigraph="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/oxigraph"
if [ ! -x "$oxigraph" ]; then
  python3 -m pip install --quiet oxigraph >/dev/null 2>&1 || true
fi
[ -x "$oxigraph" ] || oxigraph=""

work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
urlencode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.stdin.read()))'; }
query=$(urlencode < queries/lubm-basic/q5.rq)

# Runs wrk against $1 (base URL) for server pid $2 and prints one summary line named $3.
measure() {
  local base=$1 pid=$2 name=$3
  local url="$base/query?query=$query"
  local check
  check=$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept: application/sparql-results+json' "$url")
  [ "$check" = 200 ] || { echo "$name: q5 answered $check" >&2; return 1; }
  # Warm-up, then the measured run.
  wrk -t2 -c"$connections" -d3s -H 'Accept: application/sparql-results+json' "$url" >/dev/null
  local before after out
  before=$(rss_kib "$pid")
  out=$(wrk -t2 -c"$connections" -d"${seconds}s" --latency --timeout 10s \
    -H 'Accept: application/sparql-results+json' "$url")
  after=$(rss_kib "$pid")
  local rps p50 p99 non2xx errors
  rps=$(awk '/^Requests\/sec/ { print $2 }' <<<"$out")
  p50=$(awk '$1 == "50%" { print $2 }' <<<"$out")
  p99=$(awk '$1 == "99%" { print $2 }' <<<"$out")
  non2xx=$(awk '/Non-2xx/ { print $NF }' <<<"$out")
  errors=$(awk '/Socket errors/ { print $0 }' <<<"$out" | sed 's/^ *//')
  printf '%-9s %12s %10s %10s %9s %12s %12s %s\n' "$name" "$rps" "$p50" "$p99" \
    "${non2xx:-0}" "$((before / 1024)) MiB" "$((after / 1024)) MiB" "${errors}"
}

echo "LUBM-$universities, q5, $connections connections, ${seconds} s, wrk -t2, $threads cores (servers and wrk share them)"
"$quiver" load --location "$work/quiver" --lubm "$universities" 2>&1 | tail -1
printf '%-9s %12s %10s %10s %9s %12s %12s\n' server "requests/s" p50 p99 non-2xx "RSS before" "RSS after"

port=$(free_port)
"$quiver" serve --location "$work/quiver" --bind "127.0.0.1:$port" --queue "$((connections * 2))" \
  2>"$work/quiver.log" &
server=$!
for _ in $(seq 100); do grep -q '^listening on' "$work/quiver.log" && break; sleep 0.1; done
measure "http://127.0.0.1:$port" "$server" quiver
kill -INT "$server"; wait "$server" || true; server=""

if [ -n "$oxigraph" ]; then
  "$quiver" gen lubm --universities "$universities" --output "$work/lubm.nt"
  "$oxigraph" load --location "$work/oxigraph" --file "$work/lubm.nt" >/dev/null 2>&1
  rm -f "$work/lubm.nt"
  port=$(free_port)
  "$oxigraph" serve-read-only --location "$work/oxigraph" --bind "127.0.0.1:$port" \
    >"$work/oxigraph.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
  measure "http://127.0.0.1:$port" "$server" oxigraph
else
  echo "oxigraph: skipped (no oxigraph CLI: pip install oxigraph failed or no PyPI access)"
fi
