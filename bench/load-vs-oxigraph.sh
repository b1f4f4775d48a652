#!/usr/bin/env bash
# Builds the release binary, then loads files into Quiver and Oxigraph in the same run
# (bench/load-vs-oxigraph.py: medians of several runs, JSON). PYTHON names a Python with
# pyoxigraph. Usage: bench/load-vs-oxigraph.sh [--runs N] [--json OUT] FILE...
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin quiver
exec "${PYTHON:-python3}" bench/load-vs-oxigraph.py "$@"
