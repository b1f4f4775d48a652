#!/usr/bin/env python3
"""A query's latency while another client runs heavy queries: do concurrent queries share
the cores, or does one queue behind the other's parallel work?

Starts `quiver serve` read-only on a store, then measures the SHORT query (default
short.rq beside this script: courses taken per department, parallel, tens of ms at
LUBM-100) RUNS times alone, and RUNS times again while a second client sends the HEAVY
query (default heavy.rq: the pairs of students sharing a course, counted, about a second)
back to back on its own connection. Each client keeps one HTTP/1.1 connection.
Prints the short query's median, p90 and maximum latency in ms alone and beside the heavy
client, the ratio of the medians, and the heavy queries completed per second meanwhile;
--json writes them. Run it with two binaries (--quiver) to compare.

Usage: bench/two-clients/two-clients.py STORE [--runs 30] [--short FILE] [--heavy FILE]
                            [--quiver BIN] [--json OUT]
"""
import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ask(conn, path):
    started = time.perf_counter()
    conn.request("GET", path, headers={"Accept": "text/tab-separated-values"})
    response = conn.getresponse()
    body = response.read()
    if response.status != 200:
        sys.exit(f"{response.status} {body[:200]!r}")
    return (time.perf_counter() - started) * 1e3


def summary(times):
    ordered = sorted(times)
    return {
        "median_ms": statistics.median(ordered),
        "p90_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))],
        "max_ms": ordered[-1],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--short", default=os.path.join(HERE, "short.rq"))
    parser.add_argument("--heavy", default=os.path.join(HERE, "heavy.rq"))
    parser.add_argument("--quiver", default=os.path.join(ROOT, "target/release/quiver"))
    parser.add_argument("--json")
    args = parser.parse_args()
    short = "/query?" + urllib.parse.urlencode({"query": open(args.short).read()})
    heavy = "/query?" + urllib.parse.urlencode({"query": open(args.heavy).read()})
    port = free_port()
    log = tempfile.TemporaryFile()
    server = subprocess.Popen(
        [args.quiver, "serve", "--location", args.store, "--bind", f"127.0.0.1:{port}", "--timeout", "600"],
        stdout=log, stderr=log,
    )
    try:
        deadline = time.time() + 120
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port)
                conn.request("GET", "/status")
                conn.getresponse().read()
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    log.seek(0)
                    sys.exit(f"the server did not start:\n{log.read().decode(errors='replace')}")
                time.sleep(0.2)
        for _ in range(3):
            ask(conn, short)
        alone = [ask(conn, short) for _ in range(args.runs)]

        stop = threading.Event()
        heavy_times = []

        def heavy_client():
            other = http.client.HTTPConnection("127.0.0.1", port)
            while not stop.is_set():
                heavy_times.append(ask(other, heavy))

        thread = threading.Thread(target=heavy_client)
        thread.start()
        time.sleep(0.5)
        started = time.perf_counter()
        beside = [ask(conn, short) for _ in range(args.runs)]
        elapsed = time.perf_counter() - started
        stop.set()
        thread.join()
    finally:
        server.terminate()
        server.wait()
    result = {
        "quiver": os.path.relpath(os.path.abspath(args.quiver), ROOT),
        "machine": f"{os.cpu_count()} cores",
        "short": os.path.relpath(args.short, ROOT),
        "heavy": os.path.relpath(args.heavy, ROOT),
        "runs": args.runs,
        "alone": summary(alone),
        "beside_heavy": summary(beside),
        "beside_heavy_ms": [round(t, 2) for t in beside],
        "heavy_median_ms": statistics.median(heavy_times) if heavy_times else None,
        "heavy_per_second_meanwhile": len(heavy_times) / elapsed,
    }
    result["median_ratio"] = result["beside_heavy"]["median_ms"] / result["alone"]["median_ms"]
    a, b = result["alone"], result["beside_heavy"]
    print(f"short query alone: median {a['median_ms']:.1f} ms, p90 {a['p90_ms']:.1f}, max {a['max_ms']:.1f}")
    print(f"beside the heavy client: median {b['median_ms']:.1f} ms, p90 {b['p90_ms']:.1f}, max {b['max_ms']:.1f} "
          f"({result['median_ratio']:.1f}x); heavy queries {result['heavy_per_second_meanwhile']:.2f}/s, "
          f"median {result['heavy_median_ms']:.0f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
