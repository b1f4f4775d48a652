#!/usr/bin/env bash
# Distributed loading beside the single-process loader, on the same N-Triples files.
#
#   bench/cluster-load.sh UNIVERSITIES FILES_DIR [RUNS] [PROCESSES...]
#
# FILES_DIR holds LUBM-UNIVERSITIES as N-Triples files (made here when absent: ten files of
# UNIVERSITIES/10 universities each, with `quiver gen lubm`). Each configuration loads
# them RUNS times (default 3) into a fresh location: the single-process loader
# (`quiver load`), then a cluster of each of PROCESSES (default 1 2 4) loading its shares
# (`quiver load --processes P`). Writes bench/results/<cores>core/cluster-load-lubmN.csv
# with one row per run: wall seconds of the whole command, M statements/s, the largest
# peak RSS of a process, the store's bytes on disk, and bytes sent between processes.
set -euo pipefail
universities=${1:?universities}
files=${2:?directory of N-Triples files}
runs=${3:-3}
shift $(( $# >= 3 ? 3 : $# ))
processes=("${@:-1 2 4}")
[ ${#processes[@]} -eq 1 ] && read -r -a processes <<< "${processes[0]}"
quiver=${QUIVER:-target/release/quiver}
cores=$(nproc)
out=bench/results/${cores}core/cluster-load-lubm${universities}.csv
mkdir -p "$(dirname "$out")" "$files"
if ! ls "$files"/*.nt > /dev/null 2>&1; then
  step=$(( (universities + 9) / 10 ))
  for ((start = 0; start < universities; start += step)); do
    count=$(( universities - start < step ? universities - start : step ))
    "$quiver" gen lubm -u "$count" --start-index "$start" -o "$files/part$start.nt"
  done
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "loader,processes,run,wall_s,m_statements_per_s,statements,peak_rss_bytes_max,bytes_on_disk,bytes_sent" > "$out"
statements_of() { grep -o 'loaded [0-9]* statements' "$1" | grep -o '[0-9]*'; }
for run in $(seq 1 "$runs"); do
  rm -rf "$work/single"
  /usr/bin/time -f '%e %M' -o "$work/time" "$quiver" load --location "$work/single" "$files"/*.nt 2> "$work/log"
  read -r wall rss_kb < "$work/time"
  statements=$(statements_of "$work/log")
  disk=$(du -sb "$work/single" | cut -f1)
  echo "single,1,$run,$wall,$(echo "$statements / $wall / 1000000" | bc -l | cut -c1-6),$statements,$((rss_kb * 1024)),$disk,0" >> "$out"
  for p in "${processes[@]}"; do
    rm -rf "$work/cluster"
    /usr/bin/time -f '%e %M' -o "$work/time" "$quiver" load --processes "$p" --location "$work/cluster" --json "$work/load.json" "$files"/*.nt 2> "$work/log"
    read -r wall _ < "$work/time"
    python3 - "$work/load.json" "$p" "$run" "$wall" "$(du -sb "$work/cluster" | cut -f1)" >> "$out" <<'PY'
import json, sys
load = json.load(open(sys.argv[1]))
p, run, wall, disk = sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
parts = load["partitions"]
rss = max(x["peak_rss"] or 0 for x in parts)
sent = sum(x["bytes_sent"] for x in parts)
print(f"cluster,{p},{run},{wall},{load['statements'] / wall / 1e6:.3f},{load['statements']},{rss},{disk},{sent}")
PY
  done
done
echo "wrote $out"
column -s, -t < "$out"
