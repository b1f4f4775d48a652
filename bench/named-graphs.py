#!/usr/bin/env python3
"""Stores of many named graphs, two builds side by side: load (and save), open and query.

Usage: bench/named-graphs.py BEFORE_BINARY AFTER_BINARY [--runs 3] [--out PREFIX]

For each dataset, each build loads the N-Quads file into a fresh directory under a limit
of open files (1,024, the usual default, or 20,000), then answers a query on one named
graph (opening the store included) and one over all graphs; the builds alternate, `--runs`
times each, and the medians are reported. A load that fails is reported with its error.
Datasets are generated here: graphs of 1 to 3 triples over 3 predicates, or over 3,000
predicates, and LUBM-100 (no named graphs) from `quiver load --lubm 100`'s own generator,
as a check that a store without named graphs is unchanged.

Writes PREFIX.json (every run) and prints a Markdown table.
"""

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def nquads(path, graphs, predicates):
    with open(path, "w") as out:
        for g in range(graphs):
            for i in range(1 + g % 3):
                p = (g * 3 + i) % predicates
                out.write(
                    f'<http://example.org/s{g}_{i}> <http://example.org/p{p}> '
                    f'"v{g} {i}" <http://example.org/g{g}> .\n'
                )


def limited(files):
    def apply():
        resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    return apply


def timed(command, files):
    """Wall seconds, peak RSS in MiB, exit code and stderr's last line of `command`."""
    start = time.monotonic()
    done = subprocess.run(
        ["/usr/bin/time", "-f", "PEAK %M"] + command,
        capture_output=True,
        text=True,
        preexec_fn=limited(files),
    )
    wall = time.monotonic() - start
    lines = done.stderr.strip().splitlines()
    peak = next((int(l.split()[1]) / 1024 for l in lines if l.startswith("PEAK ")), None)
    ours = [l for l in lines if not l.startswith(("PEAK ", "Command exited"))]
    message = ours[-1] if ours else ""
    return wall, peak, done.returncode, message


def directory(path):
    names = os.listdir(path) if os.path.isdir(path) else []
    size = sum(os.path.getsize(os.path.join(path, n)) for n in names)
    return len(names), size / (1 << 20)


def run_case(binary, source, files, work):
    store = os.path.join(work, "store")
    shutil.rmtree(store, ignore_errors=True)
    load = [binary, "load", "--location", store] + source
    wall, peak, code, message = timed(load, files)
    result = {"load_s": wall, "load_peak_mib": peak, "ok": code == 0}
    if code != 0:
        result["error"] = message
        return result
    result["files"], result["disk_mib"] = directory(store)
    one = "SELECT ?o { GRAPH <http://example.org/g77> { ?s ?p ?o } }"
    every = "SELECT (COUNT(*) AS ?n) { GRAPH ?g { ?s ?p ?o } }"
    for name, query in [("open_and_query_one_graph", one), ("count_all_graphs", every)]:
        command = [binary, "query", "--location", store, "--query", query]
        wall, peak, code, message = timed(command, files)
        result[name + "_s"] = wall if code == 0 else None
        result[name + "_peak_mib"] = peak
    shutil.rmtree(store, ignore_errors=True)
    return result


def main():
    args = sys.argv[1:]
    runs, prefix = 3, "named-graphs"
    if "--runs" in args:
        i = args.index("--runs")
        runs = int(args[i + 1])
        del args[i : i + 2]
    if "--out" in args:
        i = args.index("--out")
        prefix = args[i + 1]
        del args[i : i + 2]
    before, after = args
    work = tempfile.mkdtemp(prefix="quiver-named-graphs-")
    cases = []
    for graphs, predicates, files in [
        (2_000, 3, 1024),
        (15_000, 3, 20_000),
        (10_000, 3_000, 20_000),
        (100_000, 3, 20_000),
    ]:
        path = os.path.join(work, f"g{graphs}-p{predicates}.nq")
        nquads(path, graphs, predicates)
        name = f"{graphs:,} graphs, {predicates:,} predicates, {files:,} open files"
        cases.append((name, [path], files))
    cases.append(("LUBM-100, no named graph", ["--lubm", "100"], 20_000))
    results = []
    for name, source, files in cases:
        rows = {"before": [], "after": []}
        for _ in range(runs):
            for build, binary in [("before", before), ("after", after)]:
                rows[build].append(run_case(binary, source, files, work))
        results.append({"case": name, "runs": rows})
        print(f"{name}: done", file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    with open(prefix + ".json", "w") as out:
        json.dump({"before": before, "after": after, "cases": results}, out, indent=1)

    def median(rows, key):
        values = [r[key] for r in rows if r.get(key) is not None]
        return statistics.median(values) if values else None

    def show(value, unit):
        return "fails" if value is None else f"{value:,.2f} {unit}"

    print("| case | build | load + save | peak | files | on disk | open + one graph | all graphs |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for case in results:
        for build in ["before", "after"]:
            rows = case["runs"][build]
            if not all(r["ok"] for r in rows):
                error = next(r["error"] for r in rows if not r["ok"])
                print(f"| {case['case']} | {build} | fails: {error} | | | | | |")
                continue
            print(
                f"| {case['case']} | {build} | {show(median(rows, 'load_s'), 's')} "
                f"| {show(median(rows, 'load_peak_mib'), 'MiB')} | {rows[0]['files']} "
                f"| {show(median(rows, 'disk_mib'), 'MiB')} "
                f"| {show(median(rows, 'open_and_query_one_graph_s'), 's')} "
                f"| {show(median(rows, 'count_all_graphs_s'), 's')} |"
            )


if __name__ == "__main__":
    main()
