#!/usr/bin/env python3
"""Latency of Wukong's q1-q12 over HTTP: `quiver serve` on a whole store beside
`quiver cluster` on the same store cut into partitions, one worker per process.

Usage: bench/cluster-latency.py WHOLE PARTITIONED_PREFIX [--processes 1,2,4] [--runs 5]
                                [--quiver target/release/quiver] [--markdown OUT]

PARTITIONED_PREFIX-N must hold the store cut into N partitions (`quiver partition
--location WHOLE --partitions N --output PREFIX-N`). Each query runs once to warm up, then
`--runs` times; the table gives the median in ms, end to end (request to the last byte of
TSV), and checks that every configuration returns the whole store's number of rows.
"""
import argparse
import re
import signal
import statistics
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def start(quiver, args):
    process = subprocess.Popen(
        [quiver, *args, "--bind", "127.0.0.1:0", "--timeout", "120"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    for line in process.stderr:
        found = re.search(r"listening on http://(\S+)", line)
        if found:
            threading.Thread(target=lambda: [None for _ in process.stderr], daemon=True).start()
            return process, found.group(1)
    raise SystemExit(f"{args}: the server did not start")


def run(address, query):
    data = urllib.parse.urlencode({"query": query}).encode()
    request = urllib.request.Request(
        f"http://{address}/query", data=data, headers={"Accept": "text/tab-separated-values"}
    )
    started = time.perf_counter()
    body = urllib.request.urlopen(request).read()
    return (time.perf_counter() - started) * 1e3, body.count(b"\n") - 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("whole")
    parser.add_argument("prefix")
    parser.add_argument("--processes", default="1,2,4")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quiver", default=str(ROOT / "target/release/quiver"))
    parser.add_argument("--markdown")
    args = parser.parse_args()
    queries = {
        f"q{i}": (ROOT / f"queries/lubm-basic/q{i}.rq").read_text() for i in range(1, 13)
    }
    configs = [("whole store", ["serve", "--location", args.whole])] + [
        (f"{n} processes", ["cluster", "--processes", n, "--location", f"{args.prefix}-{n}"])
        for n in args.processes.split(",")
    ]
    results = {}
    for name, command in configs:
        process, address = start(args.quiver, command)
        row = {}
        for query_name, query in queries.items():
            run(address, query)
            times, rows = [], 0
            for _ in range(args.runs):
                ms, rows = run(address, query)
                times.append(ms)
            row[query_name] = (statistics.median(times), rows)
        results[name] = row
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    lines = [
        "| query | rows | " + " | ".join(results) + " |",
        "|---|---:|" + "---:|" * len(results),
    ]
    for query_name in queries:
        rows = results["whole store"][query_name][1]
        for name in results:
            if results[name][query_name][1] != rows:
                raise SystemExit(f"{name}: {query_name} gave {results[name][query_name][1]} rows, not {rows}")
        lines.append(
            f"| {query_name} | {rows} | "
            + " | ".join(f"{results[name][query_name][0]:.2f}" for name in results)
            + " |"
        )
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        Path(args.markdown).write_text(table + "\n")


if __name__ == "__main__":
    main()
