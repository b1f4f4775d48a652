#!/usr/bin/env bash
# Load one N-Triples file into Quiver and into Oxigraph (pyoxigraph, in-memory store,
# bulk_load) in the same run; prints seconds, triples/s and peak RSS of each.
# Usage: bench/load-vs-oxigraph.sh FILE.nt
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:?usage: bench/load-vs-oxigraph.sh FILE.nt}
cargo build --release --quiet --bin quiver
python3 -c "import pyoxigraph" 2>/dev/null || pip install --quiet pyoxigraph
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT

/usr/bin/time -f "quiver   wall %e s, peak RSS %M KiB" target/release/quiver load --location "$db/q" "$file" 2>&1 | tail -2
/usr/bin/time -f "oxigraph wall %e s, peak RSS %M KiB" python3 - "$file" <<'PY' 2>&1
import sys, time, pyoxigraph
store = pyoxigraph.Store()
start = time.time()
store.bulk_load(path=sys.argv[1], format=pyoxigraph.RdfFormat.N_TRIPLES)
seconds = time.time() - start
print(f"oxigraph loaded {len(store)} triples in {seconds:.2f} s ({len(store)/seconds:.0f} triples/s)")
PY
