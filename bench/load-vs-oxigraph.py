#!/usr/bin/env python3
"""Loads RDF files into Quiver and into Oxigraph (pyoxigraph, in-memory store, bulk_load)
in the same run, alternating the two, and reports the median of several runs as JSON.

Usage: PYTHON=/path/to/python-with-pyoxigraph \\
       bench/load-vs-oxigraph.py [--runs 3] [--oxigraph-runs N] [--json OUT]
                                 [--quiver [NAME=]BINARY]... FILE...

Several `--quiver NAME=BINARY` compare builds (say, before and after a change) in the same run.

FILE may be N-Triples (.nt), N-Quads (.nq), Turtle (.ttl), each optionally gzipped (.gz).
For each file and engine: the load's own seconds (Quiver's report, which leaves out saving
the store; Oxigraph's bulk_load), statements per second, and the CPU seconds of the whole
process (user + system), which show the work done when other processes share the cores.
"""

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

OXIGRAPH = r"""
import gzip, json, resource, sys, time, pyoxigraph
path = sys.argv[1]
name = path[:-3] if path.endswith(".gz") else path
format = {"nt": pyoxigraph.RdfFormat.N_TRIPLES, "nq": pyoxigraph.RdfFormat.N_QUADS,
          "ttl": pyoxigraph.RdfFormat.TURTLE}[name.rsplit(".", 1)[-1]]
store = pyoxigraph.Store()
start = time.time()
if path.endswith(".gz"):
    with gzip.open(path, "rb") as input:
        store.bulk_load(input=input, format=format)
else:
    store.bulk_load(path=path, format=format)
seconds = time.time() - start
print(json.dumps({"seconds": seconds, "statements": len(store)}))
"""


def cpu_of_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_quiver(quiver, path):
    directory = tempfile.mkdtemp(prefix="quiver-load-bench-")
    try:
        cpu = cpu_of_children()
        started = time.time()
        result = subprocess.run(
            [quiver, "load", "--location", os.path.join(directory, "store"), path],
            capture_output=True,
            text=True,
        )
        wall = time.time() - started
        cpu = cpu_of_children() - cpu
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    if result.returncode != 0:
        sys.exit(f"quiver load failed: {result.stderr}")
    match = re.search(r"loaded (\d+) statements in ([0-9.]+) s", result.stderr)
    return {
        "seconds": float(match.group(2)),
        "statements": int(match.group(1)),
        "wall_with_save": wall,
        "cpu_seconds": cpu,
    }


def run_oxigraph(python, path):
    cpu = cpu_of_children()
    result = subprocess.run([python, "-c", OXIGRAPH, path], capture_output=True, text=True)
    cpu = cpu_of_children() - cpu
    if result.returncode != 0:
        sys.exit(f"oxigraph load failed: {result.stderr}")
    report = json.loads(result.stdout)
    report["cpu_seconds"] = cpu
    return report


def summary(runs):
    median = lambda key: statistics.median(run[key] for run in runs)
    seconds = median("seconds")
    return {
        "seconds": round(seconds, 3),
        "statements_per_second": round(runs[0]["statements"] / seconds),
        "cpu_seconds": round(median("cpu_seconds"), 3),
        "statements": runs[0]["statements"],
        "runs": [round(run["seconds"], 3) for run in runs],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quiver", action="append", help="[NAME=]BINARY (repeatable)")
    parser.add_argument("--oxigraph-runs", type=int, help="Oxigraph's runs (default: --runs)")
    parser.add_argument("--python", default=os.environ.get("PYTHON", sys.executable))
    parser.add_argument("--json", help="also write the report to this file")
    parser.add_argument("--no-oxigraph", action="store_true")
    args = parser.parse_args()
    binaries = [
        tuple(spec.split("=", 1)) if "=" in spec else ("quiver", spec)
        for spec in (args.quiver or ["target/release/quiver"])
    ]
    oxigraph_runs = 0 if args.no_oxigraph else (args.oxigraph_runs or args.runs)
    report = {"cores": os.cpu_count(), "files": []}
    for path in args.files:
        quiver = {name: [] for name, _ in binaries}
        oxigraph = []
        for run in range(max(args.runs, oxigraph_runs)):
            if run < args.runs:
                for name, binary in binaries:
                    quiver[name].append(run_quiver(binary, path))
            if run < oxigraph_runs:
                oxigraph.append(run_oxigraph(args.python, path))
        entry = {"file": os.path.basename(path)}
        for name, runs in quiver.items():
            entry[name] = summary(runs)
        if oxigraph:
            entry["oxigraph"] = summary(oxigraph)
            for name in quiver:
                entry[f"oxigraph/{name}"] = round(
                    entry["oxigraph"]["seconds"] / entry[name]["seconds"], 2
                )
        report["files"].append(entry)
        print(json.dumps(entry), flush=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)


if __name__ == "__main__":
    main()
