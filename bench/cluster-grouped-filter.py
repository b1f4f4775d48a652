#!/usr/bin/env python3
"""GROUP BYs with a FILTER inside, over HTTP: `quiver cluster` on a partitioned LUBM store
(or `quiver serve` on the whole store), the median latency and the rows the cluster's
workers moved per query (from `/metrics`).

Usage: bench/cluster-grouped-filter.py QUIVER LOCATION OUT.json [--whole] [--runs 15]

LOCATION is the store cut into 2 partitions (`quiver partition --partitions 2`), or with
--whole the whole store. Each query runs once to warm up and once to count the rows moved,
then --runs times.
"""
import argparse
import json
import re
import statistics
import subprocess
import threading
import time
import urllib.parse
import urllib.request

UB = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> "
QUERIES = {
    "students-per-department-filtered": UB
    + "SELECT ?d (COUNT(?x) AS ?n) WHERE { ?x a ub:UndergraduateStudent ; ub:memberOf ?d . "
    + 'FILTER(STRSTARTS(STR(?d), "http://www.Department1")) } GROUP BY ?d',
    "courses-per-department-filtered": UB
    + "SELECT ?d (COUNT(DISTINCT ?c) AS ?n) WHERE { ?x a ub:UndergraduateStudent ; "
    + "ub:memberOf ?d ; ub:takesCourse ?c . FILTER(?c != ?d) } GROUP BY ?d",
}


def start(command):
    process = subprocess.Popen(
        command + ["--bind", "127.0.0.1:0"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    for line in process.stderr:
        found = re.search(r"listening on http://(\S+)", line)
        if found:
            threading.Thread(target=lambda: [None for _ in process.stderr], daemon=True).start()
            return process, found.group(1)
    raise SystemExit(f"{command}: the server did not start")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("quiver")
    parser.add_argument("location")
    parser.add_argument("out")
    parser.add_argument("--whole", action="store_true")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    command = (
        [args.quiver, "serve", "--location", args.location]
        if args.whole
        else [args.quiver, "cluster", "--processes", "2", "--location", args.location]
    )
    process, address = start(command)

    def get(path):
        return urllib.request.urlopen(f"http://{address}{path}").read().decode()

    def moved_rows():
        for line in get("/metrics").splitlines():
            if line.startswith("quiver_cluster_exchanged_rows"):
                return float(line.split()[-1])
        return 0.0

    def run(query):
        data = urllib.parse.urlencode({"query": query}).encode()
        request = urllib.request.Request(f"http://{address}/query", data=data, headers={"Accept": "text/csv"})
        return urllib.request.urlopen(request).read()

    results = {}
    for name, query in QUERIES.items():
        run(query)
        before = moved_rows()
        body = run(query)
        moved = moved_rows() - before
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            run(query)
            times.append((time.perf_counter() - started) * 1e3)
        results[name] = {"rows": body.count(b"\n") - 1, "ms": statistics.median(times), "rows_moved": moved}
        print(name, results[name], flush=True)
    process.terminate()
    process.wait(timeout=60)
    with open(args.out, "w") as out:
        json.dump(results, out, indent=1)


if __name__ == "__main__":
    main()
