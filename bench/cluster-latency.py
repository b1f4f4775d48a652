#!/usr/bin/env python3
"""Latency of Wukong's q1-q12 over HTTP: `quiver serve` on a whole store beside
`quiver cluster` on the same data in partitions, `--workers` workers per process.

Usage: bench/cluster-latency.py WHOLE PARTITIONED_PREFIX [--processes 1,2,4] [--workers 1]
                                [--runs 5] [--quiver target/release/quiver]
                                [--markdown OUT] [--json OUT]

PARTITIONED_PREFIX-N must hold the data in N × workers partitions: the store cut
(`quiver partition --location WHOLE --partitions N --output PREFIX-N`), or a cluster
loaded by its processes (`quiver load --processes N --workers W --location PREFIX-N`),
whose dictionary is partitioned too. Each query runs once to warm up, then `--runs` times;
the table gives the median in ms, end to end (request to the last byte of TSV), and checks
that every configuration returns the whole store's rows, terms included: the rows of each
answer, sorted, are compared by their digest.
"""
import argparse
import hashlib
import json
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
    """Milliseconds from request to the last byte, and the body (TSV)."""
    data = urllib.parse.urlencode({"query": query}).encode()
    request = urllib.request.Request(
        f"http://{address}/query", data=data, headers={"Accept": "text/tab-separated-values"}
    )
    started = time.perf_counter()
    body = urllib.request.urlopen(request).read()
    return (time.perf_counter() - started) * 1e3, body


def rows_and_digest(body):
    """The rows of a TSV answer, and the digest of its rows sorted: equal answers in any
    order digest alike (LUBM has no blank nodes, whose labels could differ)."""
    rows = [row for row in body.split(b"\n")[1:] if row]
    return len(rows), hashlib.sha256(b"\n".join(sorted(rows))).hexdigest()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("whole")
    parser.add_argument("prefix")
    parser.add_argument("--processes", default="1,2,4")
    parser.add_argument("--workers", default="1")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quiver", default=str(ROOT / "target/release/quiver"))
    parser.add_argument("--markdown")
    parser.add_argument("--json")
    args = parser.parse_args()
    queries = {
        f"q{i}": (ROOT / f"queries/lubm-basic/q{i}.rq").read_text() for i in range(1, 13)
    }
    configs = [("whole store", ["serve", "--location", args.whole])] + [
        (
            f"{n} processes" if args.workers == "1" else f"{n} × {args.workers} workers",
            ["cluster", "--processes", n, "--workers", args.workers, "--location", f"{args.prefix}-{n}"],
        )
        for n in args.processes.split(",")
    ]
    results = {}
    for name, command in configs:
        process, address = start(args.quiver, command)
        row = {}
        for query_name, query in queries.items():
            # The warm-up's answer is the one checked; the timed runs are not read again.
            rows, digest = rows_and_digest(run(address, query)[1])
            times = [run(address, query)[0] for _ in range(args.runs)]
            row[query_name] = (statistics.median(times), rows, digest)
        results[name] = row
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    lines = [
        "| query | rows | " + " | ".join(results) + " |",
        "|---|---:|" + "---:|" * len(results),
    ]
    for query_name in queries:
        _, rows, digest = results["whole store"][query_name]
        for name in results:
            if results[name][query_name][1] != rows:
                raise SystemExit(f"{name}: {query_name} gave {results[name][query_name][1]} rows, not {rows}")
            if results[name][query_name][2] != digest:
                raise SystemExit(f"{name}: {query_name} gave other rows than the whole store")
        lines.append(
            f"| {query_name} | {rows} | "
            + " | ".join(f"{results[name][query_name][0]:.2f}" for name in results)
            + " |"
        )
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        Path(args.markdown).write_text(table + "\n")
    if args.json:
        figures = {
            name: {query: {"median_ms": ms, "rows": rows} for query, (ms, rows, _) in row.items()}
            for name, row in results.items()
        }
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
