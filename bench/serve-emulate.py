#!/usr/bin/env python3
"""The LUBM emulator's mix over HTTP against `quiver serve`, for one or more builds side by
side: throughput, latency, and the server's CPU time per query.

Usage: bench/serve-emulate.py STORE OUT_DIR LABEL=QUIVER [LABEL=QUIVER …]
                              [--clients 1,2] [--duration 5] [--rounds 3] [--client BIN]

Each round starts, for each build in turn, `quiver serve --location STORE` (read-only,
on a free port), runs `quiver bench emulate --location STORE --endpoint …` once per client
count, reads the server's user and system CPU time from /proc before and after, and
stops the server: the builds never share the cores, and alternating them spreads the
machine's drift over all of them. Writes each run's JSON to OUT_DIR and prints, per build
and client count, the medians over the rounds of throughput, p50 and p99 latency, and the
server's CPU µs per query (all in OUT_DIR/summary.json). `--client` runs the emulator
from one build for all (by default each build's own).
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import threading
from pathlib import Path


def start(quiver, store):
    """Starts `quiver serve`; returns it and its HTTP address."""
    server = subprocess.Popen(
        [quiver, "serve", "--location", store, "--bind", "127.0.0.1:0", "--log-level", "warn"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    for line in server.stderr:
        found = re.search(r"listening on http://(\S+)", line)
        if found:
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            return server, found.group(1)
    raise SystemExit(f"{quiver} serve: the server did not start")


def cpu_seconds(pid):
    """User and system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / ticks, int(fields[12]) / ticks


def stop(server):
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("out")
    parser.add_argument("builds", nargs="+", help="LABEL=QUIVER")
    parser.add_argument("--clients", default="1,2")
    parser.add_argument("--duration", type=float, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--client")
    args = parser.parse_args()
    builds = [build.split("=", 1) for build in args.builds]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    clients = [int(c) for c in args.clients.split(",")]
    runs = {}
    for round_ in range(1, args.rounds + 1):
        for label, quiver in builds:
            server, address = start(quiver, args.store)
            for count in clients:
                path = out / f"{label}-{count}-{round_}.json"
                user0, system0 = cpu_seconds(server.pid)
                subprocess.run(
                    [args.client or quiver, "bench", "emulate", "--location", args.store,
                     "--endpoint", f"http://{address}/query", "--clients", str(count),
                     "--duration", str(args.duration), "--json", str(path)],
                    check=True,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                user1, system1 = cpu_seconds(server.pid)
                figures = json.loads(path.read_text())
                queries = figures["queries"]
                run = {
                    "throughput": figures["throughput_qps"],
                    "p50_us": figures["overall"]["p50_us"],
                    "p99_us": figures["overall"]["p99_us"],
                    "server_user_us_per_query": (user1 - user0) * 1e6 / queries,
                    "server_system_us_per_query": (system1 - system0) * 1e6 / queries,
                }
                runs.setdefault((label, count), []).append(run)
                print(f"round {round_} {label} clients {count}: {run['throughput']:.0f} q/s, "
                      f"p50 {run['p50_us']:.1f} µs, server CPU "
                      f"{run['server_user_us_per_query'] + run['server_system_us_per_query']:.0f}"
                      " µs/query", flush=True)
            stop(server)
    summary = []
    print("| build | clients | queries/s | p50 µs | p99 µs | server CPU µs/query (user + system) |")
    print("|---|---:|---:|---:|---:|---:|")
    for (label, count), done in runs.items():
        median = {key: statistics.median(run[key] for run in done) for key in done[0]}
        summary.append({"build": label, "clients": count, "runs": done, "median": median})
        print(f"| {label} | {count} | {median['throughput']:,.0f} | {median['p50_us']:.1f} | "
              f"{median['p99_us']:.1f} | {median['server_user_us_per_query']:.0f} + "
              f"{median['server_system_us_per_query']:.0f} |")
    (out / "summary.json").write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
