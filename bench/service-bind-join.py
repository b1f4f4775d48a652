#!/usr/bin/env python3
"""SERVICE across two local servers on LUBM, beside the same queries on one store.

LUBM-N is split by predicate: the people's attributes (ub:name, ub:emailAddress,
ub:telephone) go to a "remote" store, everything else to a "local" one; a third store holds
both. Three servers run on loopback: the remote, the local (started with --allow-service)
and the whole. Each query joins local patterns with a SERVICE on the remote's attributes and
runs over HTTP on the local server (the bind join), and its SERVICE-free form on the whole
store; both answer TSV and must have the same row count. Reported per query: rows, the calls
the bind join made and the bindings it sent (from `quiver query --explain`), the median
seconds of RUNS runs after a warm-up, rows per second, and the ratio to the whole store.
With pyoxigraph installed, Oxigraph runs the same federated query on an in-memory store of
the local data, calling the same remote Quiver server (its own SERVICE client).

Usage: bench/service-bind-join.py [--universities 10] [--runs 5] [--json bench/results/2core/service-bind-join.json]
Needs a release build (cargo build --release --bin quiver) and python3.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUIVER = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "quiver")
UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
REMOTE_PREDICATES = {f"<{UB}name>", f"<{UB}emailAddress>", f"<{UB}telephone>"}
PREFIX = f"PREFIX ub: <{UB}> PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> "

# name, local patterns, remote patterns (the SERVICE's), projection
QUERIES = [
    ("course-takers' names (light)",
     "?x ub:takesCourse <http://www.Department0.University0.edu/GraduateCourse0> .",
     "?x ub:name ?n .", "?x ?n"),
    ("a department's graduate students' e-mails",
     "?x rdf:type ub:GraduateStudent . ?x ub:memberOf <http://www.Department0.University0.edu> .",
     "?x ub:emailAddress ?e .", "?x ?e"),
    ("advisors of University0's undergraduates, with names and phones (heavy)",
     "?x rdf:type ub:UndergraduateStudent . ?x ub:advisor ?a . ?x ub:memberOf ?d . "
     "?d ub:subOrganizationOf <http://www.University0.edu> .",
     "?a ub:name ?n . ?a ub:telephone ?t .", "?x ?a ?n ?t"),
    ("every graduate student's e-mail (many calls)",
     "?x rdf:type ub:GraduateStudent .",
     "?x ub:emailAddress ?e .", "?x ?e"),
]


def run(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


def load(location, path):
    run([QUIVER, "load", "--location", location, path])


class Server:
    def __init__(self, location, *flags):
        self.process = subprocess.Popen(
            [QUIVER, "serve", "--location", location, "--bind", "127.0.0.1:0", *flags],
            stderr=subprocess.PIPE, text=True)
        for line in self.process.stderr:
            match = re.search(r"listening on (http://\S+)", line)
            if match:
                self.url = match.group(1).rstrip("/")
                break
        else:
            raise RuntimeError("the server did not start")
        # Keep reading its log: a full pipe would block the server.
        threading.Thread(target=lambda: [None for _ in self.process.stderr], daemon=True).start()

    def query(self, text):
        body = urllib.parse.urlencode({"query": text}).encode()
        request = urllib.request.Request(
            self.url + "/query", data=body,
            headers={"Accept": "text/tab-separated-values",
                     "Content-Type": "application/x-www-form-urlencoded"})
        with urllib.request.urlopen(request, timeout=600) as reply:
            return reply.read()

    def stop(self):
        self.process.terminate()
        self.process.wait()


def timed(f, runs):
    f()
    times = []
    result = None
    for _ in range(runs):
        started = time.perf_counter()
        result = f()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--universities", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="service-bench-")
    whole_nt, local_nt, remote_nt = (os.path.join(work, f) for f in ("whole.nt", "local.nt", "remote.nt"))
    with open(whole_nt, "w") as out:
        subprocess.run([QUIVER, "gen", "lubm", "--universities", str(args.universities)], stdout=out, check=True)
    with open(whole_nt) as whole, open(local_nt, "w") as local, open(remote_nt, "w") as remote:
        for line in whole:
            predicate = line.split(" ", 2)[1]
            (remote if predicate in REMOTE_PREDICATES else local).write(line)
    stores = {}
    for name, path in (("whole", whole_nt), ("local", local_nt), ("remote", remote_nt)):
        stores[name] = os.path.join(work, name)
        load(stores[name], path)
    servers = []
    try:
        run_queries(args, stores, local_nt, servers)
    finally:
        for server in servers:
            server.stop()
        subprocess.run(["rm", "-rf", work])


def run_queries(args, stores, local_nt, servers):
    remote = Server(stores["remote"])
    servers.append(remote)
    local = Server(stores["local"], "--allow-service=127.0.0.1")
    servers.append(local)
    whole = Server(stores["whole"])
    servers.append(whole)
    endpoint = remote.url + "/query"
    try:
        import pyoxigraph
        oxigraph = pyoxigraph.Store()
        oxigraph.bulk_load(path=local_nt, format=pyoxigraph.RdfFormat.N_TRIPLES)
    except ImportError:
        oxigraph = None
    results = []
    for name, local_part, remote_part, projection in QUERIES:
        federated = f"{PREFIX}SELECT {projection} {{ {local_part} SERVICE <{endpoint}> {{ {remote_part} }} }}"
        single = f"{PREFIX}SELECT {projection} {{ {local_part} {remote_part} }}"
        explained = run([QUIVER, "query", "--location", stores["local"], "--explain",
                         "--results-format", "tsv", "--query", federated]).stderr
        calls = re.search(r"SERVICE <[^>]*>: (\d+) calls(?:, a bind join sending (\d+) bindings)?", explained)
        seconds, body = timed(lambda: local.query(federated), args.runs)
        rows = body.count(b"\n") - 1
        whole_seconds, whole_body = timed(lambda: whole.query(single), args.runs)
        whole_rows = whole_body.count(b"\n") - 1
        if rows != whole_rows:
            sys.exit(f"{name}: {rows} rows over SERVICE, {whole_rows} on one store")
        entry = {
            "query": name,
            "rows": rows,
            "calls": int(calls.group(1)) if calls else None,
            "bindings_sent": int(calls.group(2)) if calls and calls.group(2) else 0,
            "service_seconds": seconds,
            "service_rows_per_second": rows / seconds if seconds else None,
            "whole_store_seconds": whole_seconds,
            "slowdown_vs_whole_store": seconds / whole_seconds if whole_seconds else None,
        }
        if oxigraph is not None:
            ox_seconds, ox_rows = timed(lambda: sum(1 for _ in oxigraph.query(federated)),
                                        max(1, min(args.runs, 3)))
            if ox_rows != rows:
                sys.exit(f"{name}: Oxigraph answered {ox_rows} rows, Quiver {rows}")
            entry["oxigraph_service_seconds"] = ox_seconds
            entry["quiver_speedup_vs_oxigraph"] = ox_seconds / seconds if seconds else None
        results.append(entry)
        print(json.dumps(entry))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"universities": args.universities, "runs": args.runs, "queries": results}, out, indent=2)


if __name__ == "__main__":
    main()
