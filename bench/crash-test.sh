#!/usr/bin/env bash
# The database crash test at length: a writer process killed (SIGKILL) at random moments,
# the store reopened after each kill and checked (every acknowledged commit present, no
# commit present in part, the store validates).
# Usage: bench/crash-test.sh [TRIALS=100]
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-100}
QUIVER_CRASH_TRIALS="$trials" cargo test --release -p quiver-db --test all -- \
  --exact crash::killed_writers_lose_no_acknowledged_commit --nocapture 2>&1 |
  grep -E '^crash test|^test result|panicked|assert'
