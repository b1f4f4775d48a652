#!/usr/bin/env python3
"""The LUBM emulator's mix over HTTP: the whole store beside a cluster whose queries all
enter through process 0, and the same cluster with every process accepting queries.

Usage: bench/cluster-coordinators.py QUIVER WHOLE PARTITIONED OUT_DIR
                                     [--processes 2] [--clients 2,4] [--duration 10]
                                     [--rounds 3] [--client BIN]
                                     [--only whole,process-0,every-process]

WHOLE is a store (`quiver load`), PARTITIONED the same store cut into --processes
partitions (`quiver partition --location WHOLE --partitions N --output PARTITIONED`).
Each round starts, in turn, `quiver serve` on WHOLE, `quiver cluster` on PARTITIONED
(every client sends to process 0) and `quiver cluster --accept-queries` (client i sends to
process i mod N), and runs `quiver bench emulate --endpoint …` against each, once per
client count; the servers are stopped between configurations, so the three never share
the cores. Writes each run's JSON to OUT_DIR and prints, per configuration and client
count, the median throughput over the rounds and the median p50 and p99 latencies (all
of them in OUT_DIR/summary.json).
`--client` runs `bench emulate` from another binary than the servers' (a build from
before `--endpoint` existed can then be measured); `--only` runs some configurations.
"""
import argparse
import json
import re
import signal
import statistics
import subprocess
import threading
from pathlib import Path


def start(command, processes):
    """Starts a server; returns it and the HTTP address of each of its processes."""
    server = subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    addresses = {}
    for line in server.stderr:
        found = re.search(r"^(?:process (\d+): )?listening on http://(\S+)", line)
        if found:
            addresses[int(found.group(1) or 0)] = found.group(2)
        if len(addresses) == processes:
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            return server, [addresses[p] for p in sorted(addresses)]
    raise SystemExit(f"{command}: the server did not start")


def stop(server):
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("quiver")
    parser.add_argument("whole")
    parser.add_argument("partitioned")
    parser.add_argument("out")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--clients", default="2,4")
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--client")
    parser.add_argument("--only", default="whole,process-0,every-process")
    args = parser.parse_args()
    client = args.client or args.quiver
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    clients = [int(c) for c in args.clients.split(",")]
    bind = ["--bind", "127.0.0.1:0", "--timeout", "60"]
    configurations = {
        "whole": ([args.quiver, "serve", "--location", args.whole, *bind], 1),
        "process-0": (
            [args.quiver, "cluster", "--processes", str(args.processes),
             "--location", args.partitioned, *bind],
            1,
        ),
        "every-process": (
            [args.quiver, "cluster", "--processes", str(args.processes),
             "--location", args.partitioned, "--accept-queries", *bind],
            args.processes,
        ),
    }
    configurations = {
        name: configurations[name] for name in args.only.split(",")
    }
    results = {}
    for round_ in range(args.rounds):
        for name, (command, listening) in configurations.items():
            server, addresses = start(command, listening)
            try:
                for count in clients:
                    path = out / f"{name}-c{count}-r{round_}.json"
                    endpoints = []
                    for address in addresses:
                        endpoints += ["--endpoint", f"http://{address}/query"]
                    subprocess.run(
                        [client, "bench", "emulate", "--location", args.whole,
                         "--clients", str(count), "--duration", str(args.duration),
                         "--json", str(path), *endpoints],
                        check=True,
                        stdout=subprocess.DEVNULL,
                    )
                    report = json.loads(path.read_text())
                    results.setdefault((name, count), []).append(report)
                    print(
                        f"round {round_} {name} {count} clients: "
                        f"{report['throughput_qps']:.0f} queries/s",
                        flush=True,
                    )
            finally:
                stop(server)
    print("| configuration | clients | queries/s (median) | p50 µs | p99 µs |")
    print("|---|---:|---:|---:|---:|")
    summary = []
    for (name, count), reports in results.items():
        median = lambda key: statistics.median(r["overall"][key] for r in reports)
        qps = statistics.median(r["throughput_qps"] for r in reports)
        print(f"| {name} | {count} | {qps:,.0f} | {median('p50_us'):.0f} | {median('p99_us'):.0f} |")
        summary.append({
            "configuration": name,
            "clients": count,
            "throughput_qps": [r["throughput_qps"] for r in reports],
            "p50_us": [r["overall"]["p50_us"] for r in reports],
            "p99_us": [r["overall"]["p99_us"] for r in reports],
        })
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
