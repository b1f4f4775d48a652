#!/usr/bin/env python3
"""Latency of light queries over HTTP beside `/status`, on one keep-alive connection.

Starts `quiver serve` read-only on a store, then sends REQUESTS requests one after the
other on a single HTTP/1.1 connection: GET /status, then each light query as
GET /query (SPARQL JSON). Prints the p50 and p90 latency in µs of each and the query's
overhead over /status (what the query path adds: admission, preparing, executing,
serializing, the hand-offs between threads), and writes them as JSON when asked.

Usage: bench/serve-light-latency.py STORE [REQUESTS=2000] [--json OUT] [--quiver BIN]
"""
import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

QUERIES = {
    # LUBM q5-like lookups: one constant, one or two steps.
    "one-star": "SELECT ?X WHERE { ?X <http://swat.cse.lehigh.edu/onto/univ-bench.owl#worksFor> <http://www.Department0.University0.edu> }",
    "q5": None,  # queries/lubm-basic/q5.rq
    "point": "ASK { <http://www.Department0.University0.edu/FullProfessor0> <http://swat.cse.lehigh.edu/onto/univ-bench.owl#name> \"FullProfessor0\" }",
}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def timed(conn, path, n):
    times = []
    for _ in range(n):
        started = time.perf_counter()
        conn.request("GET", path, headers={"Accept": "application/sparql-results+json"})
        response = conn.getresponse()
        body = response.read()
        times.append((time.perf_counter() - started) * 1e6)
        if response.status != 200:
            sys.exit(f"{path}: {response.status} {body[:200]!r}")
    return times


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("requests", nargs="?", type=int, default=2000)
    parser.add_argument("--json")
    parser.add_argument("--quiver", default=os.path.join(root, "target/release/quiver"))
    args = parser.parse_args()
    with open(os.path.join(root, "queries/lubm-basic/q5.rq")) as f:
        QUERIES["q5"] = f.read()

    port = free_port()
    # The server logs every request: to a file, so that it never waits on a full pipe.
    log = tempfile.NamedTemporaryFile("w+", prefix="quiver-serve-", suffix=".log")
    server = subprocess.Popen(
        [args.quiver, "serve", "--location", args.store, "--bind", f"127.0.0.1:{port}"],
        stderr=log,
    )
    try:
        for _ in range(600):
            with open(log.name) as f:
                if any(line.startswith("listening on") for line in f):
                    break
            if server.poll() is not None:
                sys.exit(f"the server stopped:\n{open(log.name).read()}")
            time.sleep(0.1)
        conn = http.client.HTTPConnection("127.0.0.1", port)
        timed(conn, "/status", 200)  # warm-up
        figures = {}
        status = timed(conn, "/status", args.requests)
        figures["status"] = {"p50_us": percentile(status, 0.5), "p90_us": percentile(status, 0.9)}
        print(f"{'request':<10} {'p50 µs':>8} {'p90 µs':>8} {'over /status':>13}")
        print(f"{'/status':<10} {figures['status']['p50_us']:>8.1f} {figures['status']['p90_us']:>8.1f}")
        for name, text in QUERIES.items():
            path = "/query?query=" + urllib.parse.quote(text)
            timed(conn, path, 200)  # warm-up
            times = timed(conn, path, args.requests)
            p50 = percentile(times, 0.5)
            over = p50 - figures["status"]["p50_us"]
            figures[name] = {"p50_us": p50, "p90_us": percentile(times, 0.9), "over_status_us": over}
            print(f"{name:<10} {p50:>8.1f} {percentile(times, 0.9):>8.1f} {over:>13.1f}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"requests": args.requests, "figures": figures}, f, indent=2)
    finally:
        server.terminate()
        server.wait()
        log.close()


if __name__ == "__main__":
    main()
