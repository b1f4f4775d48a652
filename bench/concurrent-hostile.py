#!/usr/bin/env python3
"""Eight hostile queries at once against one `quiver serve`, beside a light client.

Starts `quiver serve --threads THREADS --max-memory POOL` on a store, sends the heavy
queries at once (eight, repeated to THREADS) (cross products, with DISTINCT, ORDER BY, GROUP BY and COUNT over them,
closures over both directions of every predicate) while a ninth client repeats a light
query and checks each answer against the first. Prints one Markdown row per heavy query
(status, seconds, the start of the reply), the server's resident memory before and at
its peak, the memory pool's peak from /status, and the light client's answers and worst
latency.

    bench/concurrent-hostile.py STORE [--quiver target/release/quiver] [--pool 1G] [--threads 8]
"""
import argparse
import json
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
HEAVY = [
    "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }",
    "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }",
    "SELECT DISTINCT ?a ?d WHERE { ?a ?b ?c . ?d ?e ?f }",
    "SELECT ?a ?d WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?f ?c",
    "SELECT ?a (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f } GROUP BY ?a ?d",
    "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f }",
    "SELECT ?x ?y WHERE { ?x (!<http://x>|^!<http://x>)+ ?y }",
    "SELECT ?x ?y WHERE { ?x (!<http://x>|^!<http://x>)* ?y }",
]
LIGHT = (f"SELECT ?x WHERE {{ ?x a <{UB}FullProfessor> ; "
         f"<{UB}worksFor> <http://www.Department0.University0.edu> }} ORDER BY ?x")


def rss(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0


def post(url, query):
    body = urllib.parse.urlencode({"query": query}).encode()
    request = urllib.request.Request(url, data=body, headers={"Accept": "text/csv"})
    started = time.time()
    try:
        with urllib.request.urlopen(request, timeout=600) as reply:
            return reply.status, time.time() - started, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, time.time() - started, error.read()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--quiver", default="target/release/quiver")
    parser.add_argument("--pool", default="1G")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--port", type=int, default=7411)
    args = parser.parse_args()
    server = subprocess.Popen(
        [args.quiver, "serve", "--location", args.store, "--bind", f"127.0.0.1:{args.port}",
         "--threads", str(args.threads), "--max-memory", args.pool],
        stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{args.port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/status", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        url = base + "/query"
        status, _, expected = post(url, LIGHT)
        assert status == 200, expected
        before = rss(server.pid)
        results, lights, done = {}, [], threading.Event()
        heavy_queries = [HEAVY[i % len(HEAVY)] for i in range(max(args.threads, len(HEAVY)))]

        def heavy(i):
            results[i] = post(url, heavy_queries[i])

        def light():
            while not done.is_set():
                status, seconds, body = post(url, LIGHT)
                lights.append((status == 200 and body == expected, seconds))

        threads = [threading.Thread(target=heavy, args=(i,)) for i in range(len(heavy_queries))]
        client = threading.Thread(target=light)
        client.start()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        done.set()
        client.join()
        peak = rss(server.pid, "VmHWM")
        memory = json.loads(urllib.request.urlopen(base + "/status").read())["memory"]
    finally:
        server.kill()
    print("| query | status | seconds | reply |")
    print("|---|---:|---:|---|")
    for i, query in enumerate(heavy_queries):
        status, seconds, body = results[i]
        reply = body.decode(errors="replace").strip().split("\n")[0][:60]
        print(f"| `{query}` | {status} | {seconds:.1f} | {reply} |")
    gib = 2 ** 30
    print(f"\nresident memory: {before / gib:.2f} GiB before, {peak / gib:.2f} GiB at the peak; "
          f"pool peak {memory['peak_bytes'] / gib:.2f} GiB of {memory['limit_bytes'] / gib:.2f}, "
          f"{memory['refused']} refusals")
    correct = sum(1 for ok, _ in lights if ok)
    worst = max((seconds for _, seconds in lights), default=0) * 1000
    print(f"light client: {len(lights)} answers, {correct} correct, worst {worst:.1f} ms")


if __name__ == "__main__":
    main()
