#!/usr/bin/env python3
"""Loading on top of a saved store, two builds side by side.

Usage: bench/load-on-top.py BEFORE_BINARY AFTER_BINARY [--runs 3] [--lubm 100,1000]
                            [--products 1000,20000] [--work DIR] [--out PREFIX]

For each LUBM scale, a store is loaded once from the generator (`quiver load --lubm N`,
with the AFTER build) and kept; for each BSBM file (`quiver gen bsbm -p P`, written once),
each run copies that store to a fresh directory and times `quiver load --location COPY
FILE.nt`, the two builds alternating, `--runs` times each. Reported: the load's own figure
(first statement read to the store built, as the command prints it), the wall time (adding
the opening of the store and the writing of its new snapshot) and the peak RSS, medians,
and whether the two builds wrote the same store: its files compared byte for byte, all but
`manifest.json`, which records the load's seconds.

Writes PREFIX.json (every run) and PREFIX.md (the table).
"""

import argparse
import filecmp
import json
import os
import re
import shutil
import statistics
import subprocess
import time


def timed(command):
    """Wall seconds, peak RSS in MiB and the load's own seconds of `command`."""
    start = time.monotonic()
    done = subprocess.run(
        ["/usr/bin/time", "-f", "PEAK %M"] + command, capture_output=True, text=True
    )
    wall = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()[-400:]}")
    peak = int(re.search(r"PEAK (\d+)", done.stderr).group(1)) / 1024
    load = float(re.search(r"statements in ([0-9.]+) s", done.stdout + done.stderr).group(1))
    return wall, peak, load


def same_store(a, b):
    names = sorted(n for n in os.listdir(a) if n != "manifest.json")
    if names != sorted(n for n in os.listdir(b) if n != "manifest.json"):
        return False
    return all(filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False) for n in names)


def store_mib(path):
    return sum(os.path.getsize(os.path.join(path, n)) for n in os.listdir(path)) / (1 << 20)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lubm", default="100,1000")
    parser.add_argument("--products", default="1000,20000")
    parser.add_argument("--work", default="target/bench-load-on-top")
    parser.add_argument("--out", default="load-on-top")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    builds = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}

    files = {}
    for products in map(int, args.products.split(",")):
        path = os.path.join(args.work, f"bsbm{products}.nt")
        if not os.path.exists(path):
            subprocess.run(
                [builds["after"], "gen", "bsbm", "-p", str(products), "--output", path],
                check=True,
            )
        files[products] = path

    runs = []
    rows = []
    for scale in map(int, args.lubm.split(",")):
        base = os.path.join(args.work, f"lubm{scale}")
        if not os.path.exists(os.path.join(base, "manifest.json")):
            shutil.rmtree(base, ignore_errors=True)
            subprocess.run(
                [builds["after"], "load", "--lubm", str(scale), "--location", base],
                check=True,
                capture_output=True,
            )
        for products, path in files.items():
            case = f"lubm{scale}+bsbm{products}"
            written = {}
            for run in range(args.runs):
                for build, binary in builds.items():
                    copy = os.path.join(args.work, f"copy-{build}")
                    shutil.rmtree(copy, ignore_errors=True)
                    shutil.copytree(base, copy)
                    subprocess.run(["sync"], check=True)
                    wall, peak, load = timed([binary, "load", "--location", copy, path])
                    runs.append(
                        {"case": case, "build": build, "run": run, "load_s": load,
                         "wall_s": round(wall, 3), "peak_mib": round(peak, 1)}
                    )
                    print(f"{case} {build} run {run}: load {load:.2f} s, wall {wall:.2f} s, "
                          f"peak {peak:.0f} MiB", flush=True)
                    written[build] = copy
            same = same_store(written["before"], written["after"])
            size = store_mib(written["after"])
            row = {"case": case, "store_mib": round(size), "same_files": same}
            for build in builds:
                ours = [r for r in runs if r["case"] == case and r["build"] == build]
                for figure in ("load_s", "wall_s", "peak_mib"):
                    row[f"{figure}_{build}"] = statistics.median(r[figure] for r in ours)
            rows.append(row)
            for build in builds:
                shutil.rmtree(os.path.join(args.work, f"copy-{build}"), ignore_errors=True)

    with open(f"{args.out}.json", "w") as out:
        names = {build: os.path.basename(binary) for build, binary in builds.items()}
        json.dump({"machine": f"{os.cpu_count()} cores", "builds": names,
                   "command": "quiver load --location COPY_OF_STORE FILE.nt",
                   "rows": rows, "runs": runs}, out, indent=1)
    lines = [
        "| store + file | store after | load before | load after | wall before | wall after "
        "| peak before | peak after | same files |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['case']} | {row['store_mib']:,} MiB | {row['load_s_before']:.2f} s "
            f"| {row['load_s_after']:.2f} s | {row['wall_s_before']:.2f} s "
            f"| {row['wall_s_after']:.2f} s | {row['peak_mib_before']:,.0f} MiB "
            f"| {row['peak_mib_after']:,.0f} MiB | {'yes' if row['same_files'] else 'NO'} |"
        )
    with open(f"{args.out}.md", "w") as out:
        out.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
