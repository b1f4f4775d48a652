#!/usr/bin/env python3
"""Hostile requests against a running `quiver serve`, one at a time, with a light query
answered beside each: the table of issue-style hostile inputs (status, time to answer, the
server's peak RSS while it ran, and the light query's worst latency meanwhile).

Usage: bench/hostile-inputs.py [--universities N] [--quiver BIN] [--json FILE] [-- SERVE_ARGS...]

It builds nothing: pass the binary (default target/release/quiver). The store is LUBM-N
(default 10) loaded into a temporary directory. Extra arguments after `--` go to
`quiver serve` (for example `--timeout 10 --max-memory 2G`); with none, the server's defaults
apply, which is what the table is meant to show. Standard library only.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

UB = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
LIGHT = UB + (
    "SELECT ?x WHERE { ?x ub:subOrganizationOf <http://www.Department0.University0.edu> . "
    "?x a ub:ResearchGroup }"
)
LIGHT_ROWS = None  # learnt from the idle server


def hostile_requests():
    """(name, body bytes, content type) of each hostile request."""
    # Just under the default 1 MiB body limit, so that the parser sees them.
    depth = (1 << 20) - 64
    nested_parens = b"SELECT * WHERE { FILTER(" + b"(" * depth + b") }"
    nested_braces = b"SELECT * WHERE " + b"{" * depth
    alternation = "/".join(["(ub:takesCourse|^ub:takesCourse)"] * 20)
    values = " ".join(f"<http://example.org/v{i}>" for i in range(30_000))
    query = "application/sparql-query"
    return [
        ("cross product", "SELECT * { ?a ?b ?c . ?d ?e ?f }", query),
        ("1 MiB of nested (", nested_parens, query),
        ("1 MiB of nested {", nested_braces, query),
        ("20-step (p|^p) sequence", UB + f"SELECT * {{ ?x {alternation} ?y }}", query),
        ("(p|^p)* closure", UB + "SELECT * { ?x (ub:takesCourse|^ub:takesCourse)* ?y }", query),
        ("ORDER BY every triple", "SELECT * { ?s ?p ?o } ORDER BY ?o ?s", query),
        ("GROUP BY every triple", "SELECT ?s ?p ?o (COUNT(*) AS ?n) { ?s ?p ?o } GROUP BY ?s ?p ?o", query),
        ("DISTINCT every triple", "SELECT DISTINCT ?s ?p ?o { ?s ?p ?o }", query),
        ("regex (a+)+$", 'SELECT * { ?s ?p ?o FILTER REGEX(STR(?o), "(a+)+$") }', query),
        ("regex a{1000}{1000}", 'SELECT * { ?s ?p ?o FILTER REGEX(STR(?o), "a{1000}{1000}") }', query),
        ("VALUES of 30,000 rows", f"SELECT * {{ VALUES ?v {{ {values} }} ?v ?p ?o }}", query),
        ("2 MiB body", b"#" * (2 << 20) + b"\nASK {}", query),
    ]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url, body, content_type, timeout=600):
    if isinstance(body, str):
        body = body.encode()
    request = urllib.request.Request(
        url, data=body, headers={"Content-Type": content_type, "Accept": "text/tab-separated-values"}
    )
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            payload = response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        payload = error.read()
        status = error.code
    except (urllib.error.URLError, ConnectionError, socket.timeout) as error:
        return None, time.monotonic() - started, str(error).encode()
    return status, time.monotonic() - started, payload


def proc_kib(pid, field):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--universities", type=int, default=10)
    parser.add_argument("--quiver", default="target/release/quiver")
    parser.add_argument("--json")
    parser.add_argument("serve_args", nargs="*")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="quiver-hostile-")
    store = os.path.join(work, "store")
    subprocess.run(
        [args.quiver, "load", "--location", store, "--lubm", str(args.universities)],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}/query"

    def start():
        log = open(os.path.join(work, "serve.log"), "a")
        server = subprocess.Popen(
            [args.quiver, "serve", "--location", store, "--bind", f"127.0.0.1:{port}", *args.serve_args],
            stdout=log, stderr=log,
        )
        for _ in range(600):
            if server.poll() is not None:
                with open(os.path.join(work, "serve.log")) as text:
                    sys.exit(f"the server exited: {text.read()[-2000:]}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=1).read()
                return server
            except OSError:
                time.sleep(0.1)
        sys.exit("the server did not answer /status within 60 s")

    server = start()
    try:
        status, _, payload = post(url, LIGHT, "application/sparql-query")
        assert status == 200, payload
        light_rows = payload.count(b"\n") - 1
        idle_kib = proc_kib(server.pid, "VmRSS")
        print(f"LUBM-{args.universities}, server RSS idle {idle_kib / 1024:.0f} MiB, "
              f"serve args: {' '.join(args.serve_args) or '(defaults)'}")
        print("| request | status | seconds | peak RSS MiB | light query worst ms | light answers ok |")
        print("|---|---|---|---|---|---|")
        results = []
        for name, body, content_type in hostile_requests():
            with open(f"/proc/{server.pid}/clear_refs", "w") as clear:
                clear.write("5")  # resets VmHWM to the current RSS
            done = threading.Event()
            light = {"worst": 0.0, "ok": True, "count": 0}

            def light_client():
                while not done.is_set():
                    s, seconds, p = post(url, LIGHT, "application/sparql-query", timeout=60)
                    light["worst"] = max(light["worst"], seconds)
                    light["ok"] &= s == 200 and p.count(b"\n") - 1 == light_rows
                    light["count"] += 1
                    time.sleep(0.05)

            helper = threading.Thread(target=light_client)
            helper.start()
            status, seconds, payload = post(url, body, content_type)
            done.set()
            helper.join()
            alive = server.poll() is None
            peak = proc_kib(server.pid, "VmHWM") / 1024 if alive else float("nan")
            row = {
                "request": name,
                "status": status if alive else "server died",
                "seconds": round(seconds, 3),
                "peak_rss_mib": round(peak),
                "light_worst_ms": round(light["worst"] * 1000, 1),
                "light_ok": light["ok"] and light["count"] > 0,
                "message": payload[:200].decode(errors="replace").strip(),
            }
            results.append(row)
            print(f"| {name} | {row['status']} | {row['seconds']} | {row['peak_rss_mib']} | "
                  f"{row['light_worst_ms']} | {row['light_ok']} |", flush=True)
            if not alive:
                server = start()  # a crash is the finding; the next request gets a fresh server
        for row in results:
            print(f"{row['request']}: {row['message']}")
        if args.json:
            with open(args.json, "w") as out:
                json.dump(results, out, indent=2)
    finally:
        server.terminate()
        server.wait()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
