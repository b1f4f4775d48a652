#!/usr/bin/env python3
"""Quiver beside Oxigraph, OpenLink Virtuoso 7.2 and Apache Jena 5.6 (TDB2 and Fuseki),
each installed, loaded from the same N-Triples file and served on 127.0.0.1, then the same
workloads sent to every server over HTTP by one client (Quiver's own: `quiver bench bsbm
--endpoint` and `quiver bench log --endpoint`, keep-alive HTTP/1.1, results read to the
last byte).

    bench/peers/peers.py --bsbm 10000 [--clients 1,2] [--runs 20] [--warmup 5]
    bench/peers/peers.py --lubm 100 [--runs 5] [--analytics-runs 1] [--timeout 60]
    bench/peers/peers.py --bsbm 100 --dry-run     # print every command, run none

A BSBM dataset (`quiver gen bsbm --forward-chaining`) runs the explore and BI mixes
(workloads bsbm-explore, bsbm-bi) with each number of clients; a LUBM dataset (`quiver gen
lubm`) runs q1-q12 (queries/lubm-basic) and the analytics set (queries/lubm-analytics),
one client, median of --runs (--analytics-runs for the analytics set, whose slowest
queries take minutes on some peers) after a warm-up. Quiver runs first; every other engine's
rows must equal Quiver's query by query (`bench bsbm --expect`; row counts of `bench
log`), else the script stops naming the queries (`--keep-going` marks them and goes on).

Per engine: load seconds, store size on disk, peak resident memory of the loader (of the
server for Virtuoso, which loads inside it) and of the server over the workloads, and per
workload QMpH or per-query medians. Written to OUT/peers-<dataset>.md and .json.

How each peer is configured, as its documentation recommends for this machine:
- Virtuoso (Debian's virtuoso-opensource): a virtuoso.ini of our own with
  NumberOfBuffers = 85,000 per GB of --memory-gib and MaxDirtyBuffers three quarters of
  it (the packaged ini's table: 1,360,000 and 1,000,000 for 16 GB), ResultSetMaxRows
  and MaxQueryExecutionTime raised past any result and --timeout, the cost estimate
  off; loaded with ld_dir, one rdf_loader_run per core in parallel, then checkpoint.
- Jena: tdb2.tdbloader --loader=parallel, then tdb2.tdbstats into the database's
  stats.opt (TDB2's optimizer reads it), served by Fuseki main (FusekiMainCmd) on the
  TDB2 directory; both JVMs with -Xmx of a third of --memory-gib (TDB2 keeps its data
  in memory-mapped files, outside the heap).
- Oxigraph: `oxigraph load`, `oxigraph optimize` (which the loader advises before a
  read-heavy workload; counted in the load time), then `oxigraph serve-read-only`
  (oxigraph-cli from crates.io, built into target/peers/oxigraph).
- Quiver: `quiver load`, then `quiver serve`.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
ENGINES = ["quiver", "oxigraph", "virtuoso", "jena"]


class Run:
    """Runs (or, dry, prints) commands and keeps what they cost."""

    def __init__(self, dry, log_dir):
        self.dry = dry
        self.log_dir = log_dir

    def show(self, argv, note=""):
        print("+ " + " ".join(shlex.quote(str(a)) for a in argv) + (f"   # {note}" if note else ""), flush=True)

    def run(self, argv, note="", stdout=None, check=True):
        """Runs argv to its end; returns (seconds, peak RSS bytes of the process)."""
        self.show(argv, note)
        if self.dry:
            return 0.0, 0
        started = time.perf_counter()
        out = open(stdout, "wb") if stdout else None
        process = subprocess.Popen([str(a) for a in argv], stdout=out or None)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if out:
            out.close()
        seconds = time.perf_counter() - started
        if check and process.returncode != 0:
            sys.exit(f"peers: {argv[0]} failed with status {process.returncode}")
        return seconds, usage.ru_maxrss * 1024

    def spawn(self, argv, log_name, note=""):
        self.show(argv, note)
        if self.dry:
            return None
        log = open(self.log_dir / log_name, "wb")
        return subprocess.Popen([str(a) for a in argv], stdout=log, stderr=subprocess.STDOUT)


def peak_rss(pid):
    """VmHWM of a running process, in bytes."""
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def disk_usage(path):
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def wait_ready(url, process, seconds=600):
    """Until the endpoint answers ASK {} with 200."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if process is not None and process.poll() is not None:
            sys.exit(f"peers: the server for {url} exited with status {process.returncode}")
        try:
            request = urllib.request.Request(
                url, data=b"query=ASK%20%7B%7D", headers={"Content-Type": "application/x-www-form-urlencoded"}
            )
            with urllib.request.urlopen(request, timeout=5) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        time.sleep(0.5)
    sys.exit(f"peers: {url} did not answer within {seconds} s")


def stop(process):
    if process is None:
        return
    process.terminate()
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Engine:
    """An engine's commands: install, load, serve. `work` is its own directory."""

    name = ""

    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.db = work / "db"

    def installed(self):
        return True

    def install(self, run):
        pass

    def load(self, run, data):
        """Loads data into self.db; returns (seconds, peak RSS)."""
        raise NotImplementedError

    def serve(self, run, port):
        raise NotImplementedError

    def endpoint(self, port):
        return f"http://127.0.0.1:{port}/query"


class Quiver(Engine):
    name = "quiver"

    def load(self, run, data):
        return run.run([self.args.quiver, "load", "--location", self.db, data])

    def serve(self, run, port):
        argv = [self.args.quiver, "serve", "--location", self.db, "--bind", f"127.0.0.1:{port}",
                "--timeout", f"{self.args.timeout}s"]
        return run.spawn(argv, "quiver-serve.log")


class Oxigraph(Engine):
    name = "oxigraph"

    def binary(self):
        return self.work / "bin" / "oxigraph"

    def installed(self):
        return self.binary().exists()

    def install(self, run):
        # Its RocksDB bindings are generated by bindgen, which needs libclang.
        if not run.dry and not any(Path(d).glob("libclang*.so*") for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib")):
            run.run(["apt-get", "install", "-y", "libclang-dev"], "for bindgen")
        run.run(["cargo", "install", "oxigraph-cli", "--locked", "--root", self.work],
                "Oxigraph's server, from crates.io (builds RocksDB: many minutes)")

    def load(self, run, data):
        seconds, memory = run.run([self.binary(), "load", "--location", self.db, "--file", data])
        # As `oxigraph load` advises before a read-heavy workload; counted in the load.
        more, more_memory = run.run([self.binary(), "optimize", "--location", self.db])
        return seconds + more, max(memory, more_memory)

    def serve(self, run, port):
        argv = [self.binary(), "serve-read-only", "--location", self.db, "--bind", f"127.0.0.1:{port}"]
        return run.spawn(argv, "oxigraph-serve.log")


class Virtuoso(Engine):
    name = "virtuoso"
    isql_port = 1112

    def installed(self):
        return shutil.which("virtuoso-t") is not None and shutil.which("isql-vt") is not None

    def install(self, run):
        run.run(["apt-get", "install", "-y", "virtuoso-opensource"], "Debian's Virtuoso 7.2")

    def buffers(self):
        buffers = int(85_000 * self.args.memory_gib)
        return buffers, buffers * 3 // 4

    def ini(self, data_dir, http_port):
        buffers, dirty = self.buffers()
        db = self.db
        return f"""; Written by bench/peers/peers.py
[Database]
DatabaseFile = {db}/virtuoso.db
ErrorLogFile = {db}/virtuoso.log
LockFile = {db}/virtuoso.lck
TransactionFile = {db}/virtuoso.trx
xa_persistent_file = {db}/virtuoso.pxa
ErrorLogLevel = 7
FileExtend = 200
MaxCheckpointRemap = 2000
Striping = 0
TempStorage = TempDatabase

[TempDatabase]
DatabaseFile = {db}/virtuoso-temp.db
TransactionFile = {db}/virtuoso-temp.trx
MaxCheckpointRemap = 2000
Striping = 0

[Parameters]
ServerPort = {self.isql_port}
ServerThreads = 20
CheckpointInterval = 60
NumberOfBuffers = {buffers}
MaxDirtyBuffers = {dirty}
MaxQueryMem = 2G
DirsAllowed = ., {data_dir}, /usr/share/virtuoso-opensource-7/vad
ThreadCleanupInterval = 1
ResourcesCleanupInterval = 1

[HTTPServer]
ServerPort = {http_port}
ServerRoot = /var/lib/virtuoso-opensource-7/vsp
ServerThreads = 20
MaxClientConnections = 20
MaxKeepAlives = 20
KeepAliveTimeout = 10
EnabledDavVSP = 0

[SPARQL]
ResultSetMaxRows = 1000000000
MaxQueryCostEstimationTime = 0
MaxQueryExecutionTime = {self.args.timeout}
DefaultGraph = http://quiver.bench/peers
"""

    def start(self, run, data_dir, http_port):
        ini = self.work / "virtuoso.ini"
        print(f"# {ini}: NumberOfBuffers {self.buffers()[0]}, MaxDirtyBuffers {self.buffers()[1]}, "
              f"ResultSetMaxRows 1000000000, MaxQueryExecutionTime {self.args.timeout}", flush=True)
        if not run.dry:
            self.db.mkdir(parents=True, exist_ok=True)
            ini.write_text(self.ini(data_dir, http_port))
        # +foreground keeps it our child, so that its memory can be read and it can be stopped.
        return run.spawn(["virtuoso-t", "+configfile", ini, "+foreground", "+wait"], "virtuoso.log")

    def isql(self, run, statement, note="", check=True):
        return run.run(["isql-vt", str(self.isql_port), "dba", "dba", f"exec={statement}"], note, check=check)

    def load(self, run, data):
        data = Path(data)
        port = self.args.port + 1
        server = self.start(run, data.parent, port)
        if not run.dry:
            wait_ready(f"http://127.0.0.1:{port}/sparql", server)
        started = time.perf_counter()
        self.isql(run, f"ld_dir('{data.parent}', '{data.name}', 'http://quiver.bench/peers');")
        loaders = [["isql-vt", str(self.isql_port), "dba", "dba", "exec=rdf_loader_run();"]
                   for _ in range(os.cpu_count() or 1)]
        for argv in loaders:
            run.show(argv, "one loader per core, in parallel")
        if not run.dry:
            for process in [subprocess.Popen(argv, stdout=subprocess.DEVNULL) for argv in loaders]:
                if process.wait() != 0:
                    sys.exit("peers: rdf_loader_run failed")
        self.isql(run, "checkpoint;")
        seconds = time.perf_counter() - started
        memory = peak_rss(server.pid) if server else 0
        self.isql(run, "shutdown;", "stop the server; it serves from a fresh start", check=False)
        if server:
            server.wait(120)
        return seconds, memory

    def serve(self, run, port):
        return self.start(run, Path(self.args.data_dir), port)

    def endpoint(self, port):
        return f"http://127.0.0.1:{port}/sparql"


class Jena(Engine):
    name = "jena"

    def classpath_file(self):
        return self.work / "classpath.txt"

    def installed(self):
        return self.classpath_file().exists()

    def install(self, run):
        run.run(["mvn", "-B", "-q", "-f", HERE / "jena" / "pom.xml", "dependency:build-classpath",
                 f"-Dmdep.outputFile={self.classpath_file()}"], "Jena 5.6 from Maven Central")

    def java(self, main, *arguments):
        # The classpath goes in a java argument file (`@file`), not on the command line.
        argfile = self.work / "classpath.args"
        if not self.args.dry_run:
            argfile.write_text("-cp " + self.classpath_file().read_text().strip() + "\n")
        heap = max(1, int(self.args.memory_gib / 3))
        return ["java", f"-Xmx{heap}g", f"@{argfile}", main, *arguments]

    def load(self, run, data):
        seconds, memory = run.run(self.java("tdb2.tdbloader", "--loader=parallel", "--loc", self.db, data))
        # Written aside, then moved: tdbstats opens the database, which reads stats.opt.
        stats = self.db / "Data-0001" / "stats.opt"
        aside = self.work / "stats.opt"
        more, _ = run.run(self.java("tdb2.tdbstats", "--loc", self.db), f"then moved to {stats}", stdout=aside)
        if not run.dry:
            shutil.move(aside, stats)
        return seconds + more, memory

    def serve(self, run, port):
        argv = self.java("org.apache.jena.fuseki.main.cmds.FusekiMainCmd", "--port", str(port),
                         "--loc", self.db, "/ds")
        return run.spawn(argv, "fuseki.log")

    def endpoint(self, port):
        return f"http://127.0.0.1:{port}/ds/query"


def workloads(args):
    """(name, argv builder) per workload: the builder takes engine, endpoint, output, expected."""
    quiver = args.quiver
    out = []
    if args.bsbm:
        for mix, name in [("explore", "bsbm-explore"), ("bi", "bsbm-bi")]:
            bi = mix == "bi"
            for clients in (args.bi_clients if bi else args.clients):
                def build(engine, endpoint, json_out, expected, mix=mix, clients=clients, bi=bi):
                    argv = [quiver, "bench", "bsbm", "--products", str(args.bsbm), "--endpoint", endpoint,
                            "--mix", mix, "--clients", str(clients),
                            "--runs", str(args.bi_runs if bi and args.bi_runs else args.runs),
                            "--warmup", str(args.bi_warmup if bi and args.bi_warmup is not None else args.warmup),
                            "--timeout", f"{args.timeout}s",
                            "--label", engine, "--json", json_out]
                    return argv + (["--expect", expected] if expected else [])
                out.append((f"{name}-c{clients}", build))
    else:
        for directory, name in [("lubm-basic", "lubm"), ("lubm-analytics", "analytics")]:
            runs = args.analytics_runs if name == "analytics" and args.analytics_runs else args.runs
            def build(engine, endpoint, json_out, expected, directory=directory, runs=runs):
                return [quiver, "bench", "log", ROOT / "queries" / directory, "--endpoint", endpoint,
                        "--runs", str(runs), "--timeout", f"{args.timeout}s", "--json", json_out]
            out.append((name, build))
    return out


def bench_log_rows(path):
    report = json.loads(Path(path).read_text())
    return {q["name"]: (q["quiver"]["status"], q["quiver"]["rows"], q["quiver"]["micros"]) for q in report["queries"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    dataset = parser.add_mutually_exclusive_group(required=True)
    dataset.add_argument("--bsbm", type=int, metavar="PRODUCTS", help="BSBM with this many products")
    dataset.add_argument("--lubm", type=int, metavar="UNIVERSITIES", help="LUBM-N")
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated, of " + ", ".join(ENGINES))
    parser.add_argument("--clients", default="1,2", help="BSBM: numbers of concurrent clients")
    parser.add_argument("--runs", type=int, default=20, help="BSBM: measured mixes; LUBM: runs per query")
    parser.add_argument("--bi-runs", type=int, default=None, help="BSBM: measured BI mixes (default: --runs)")
    parser.add_argument("--analytics-runs", type=int, default=None,
                        help="LUBM: measured runs of each analytics query (default: --runs)")
    parser.add_argument("--bi-clients", default=None, help="BSBM: numbers of BI clients (default: --clients)")
    parser.add_argument("--bi-warmup", type=int, default=None, help="BSBM: warm-up BI mixes (default: --warmup)")
    parser.add_argument("--warmup", type=int, default=5, help="BSBM: warm-up mixes")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per query")
    parser.add_argument("--memory-gib", type=float, default=16, help="memory the servers may use (GiB)")
    parser.add_argument("--port", type=int, default=7410, help="HTTP port of the servers (one at a time)")
    parser.add_argument("--quiver", default=str(ROOT / "target" / "release" / "quiver"), help="the quiver binary")
    parser.add_argument("--work", default=str(ROOT / "target" / "peers"), help="data, stores and tools")
    parser.add_argument("--out", default=None, help="where the reports go (default: WORK/results)")
    parser.add_argument("--keep-going", action="store_true", help="mark rows that differ instead of stopping")
    parser.add_argument(
        "--remove-stores",
        action="store_true",
        help="remove each engine's store once measured (for datasets whose four stores do not fit on disk)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run none")
    args = parser.parse_args()
    engines = args.engines.split(",")
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        parser.error(f"unknown engines: {', '.join(unknown)} (known: {', '.join(ENGINES)})")
    if "quiver" in engines:
        engines = ["quiver"] + [e for e in engines if e != "quiver"]
    args.clients = [int(c) for c in args.clients.split(",")]
    args.bi_clients = [int(c) for c in args.bi_clients.split(",")] if args.bi_clients else args.clients
    work = Path(args.work)
    out = Path(args.out) if args.out else work / "results"
    dataset = f"bsbm{args.bsbm}" if args.bsbm else f"lubm{args.lubm}"
    args.data_dir = str(work / "data")
    data = work / "data" / f"{dataset}.nt"
    run = Run(args.dry_run, out)
    if not args.dry_run:
        for directory in (work / "data", out):
            directory.mkdir(parents=True, exist_ok=True)

    if args.dry_run or not data.exists():
        if args.bsbm:
            run.run([args.quiver, "gen", "bsbm", "--products", str(args.bsbm), "--forward-chaining", "--output", data])
        else:
            run.run([args.quiver, "gen", "lubm", "--universities", str(args.lubm), "--output", data])

    classes = {"quiver": Quiver, "oxigraph": Oxigraph, "virtuoso": Virtuoso, "jena": Jena}
    summary = {"dataset": dataset, "engines": {}}
    differences = []
    for name in engines:
        engine = classes[name](args, work / name)
        print(f"\n== {name}", flush=True)
        if not engine.installed():
            engine.install(run)
        if not args.dry_run and engine.db.exists():
            shutil.rmtree(engine.db)
        load_seconds, load_rss = engine.load(run, data)
        size = 0 if args.dry_run else disk_usage(engine.db)
        server = engine.serve(run, args.port)
        endpoint = engine.endpoint(args.port)
        if not args.dry_run:
            wait_ready(endpoint, server)
        results = {"load_seconds": load_seconds, "load_peak_rss": load_rss, "store_bytes": size, "workloads": {}}
        for workload, build in workloads(args):
            json_out = out / f"{dataset}-{workload}-{name}.json"
            expected = out / f"{dataset}-{workload}-quiver.json" if name != "quiver" and args.bsbm and "quiver" in engines else None
            argv = build(name, endpoint, json_out, expected)
            # `--expect` fails when rows differ, after writing the report: check_rows reads it.
            run.run(argv, check=False)
            if args.dry_run:
                continue
            if not json_out.exists():
                stop(server)
                sys.exit(f"peers: {workload} on {name} wrote no report")
            report = json.loads(json_out.read_text())
            if args.bsbm:
                use_case = report["use_cases"][0]
                results["workloads"][workload] = {
                    "qmph": use_case["qmph"],
                    "errors": len(use_case["errors"]),
                    "templates": {t["name"]: t["mean_ms"] for t in use_case["templates"]},
                }
            else:
                rows = bench_log_rows(json_out)
                results["workloads"][workload] = {n: {"status": s, "rows": r, "ms": m / 1e3} for n, (s, r, m) in rows.items()}
        results["server_peak_rss"] = peak_rss(server.pid) if server else 0
        stop(server)
        if args.remove_stores:
            run.run(["rm", "-rf", engine.db], check=False)
        summary["engines"][name] = results
        differences += check_rows(args, summary, name)
        if differences and not args.keep_going:
            for line in differences:
                print(line, file=sys.stderr)
            sys.exit("peers: rows differ from Quiver's (above); --keep-going to go on")
    if args.dry_run:
        return
    (out / f"peers-{dataset}.json").write_text(json.dumps(summary, indent=2) + "\n")
    table = markdown(args, summary, differences)
    (out / f"peers-{dataset}.md").write_text(table)
    print("\n" + table)


def check_rows(args, summary, name):
    """Differences of an engine's rows from Quiver's: BSBM's come from `--expect` (the
    report's errors say so), LUBM's are compared here."""
    if name == "quiver" or "quiver" not in summary["engines"]:
        return []
    ours, theirs = summary["engines"]["quiver"]["workloads"], summary["engines"][name]["workloads"]
    lines = []
    if args.bsbm:
        out = Path(args.out) if args.out else Path(args.work) / "results"
        for workload in theirs:
            report = out / f"{summary['dataset']}-{workload}-{name}.json"
            # The queries of both reports, matched by mix, position and text.
            mine = json.loads(report.read_text())["use_cases"][0]["queries"]
            quiver = json.loads((out / f"{summary['dataset']}-{workload}-quiver.json").read_text())["use_cases"][0]["queries"]
            expected = {(q[0], q[1]): (q[3], q[4]) for q in quiver}
            for q in mine:
                crc, rows = expected.get((q[0], q[1]), (None, None))
                # Explore Q9 is a DESCRIBE, whose answer SPARQL leaves to each engine.
                if workload.startswith("bsbm-explore") and q[2] == 9:
                    continue
                # A query that failed (a timeout) is counted among the errors, not here.
                if q[4] is None or rows is None:
                    continue
                if crc == q[3] and rows != q[4]:
                    lines.append(f"{name} {workload} mix {q[0]} query {q[1]} (template {q[2]}): {q[4]} rows, Quiver {rows}")
    else:
        for workload, queries in theirs.items():
            for query, outcome in queries.items():
                mine = ours.get(workload, {}).get(query)
                if mine and mine["status"] == "ok" and outcome["status"] == "ok" and mine["rows"] != outcome["rows"]:
                    lines.append(f"{name} {workload} {query}: {outcome['rows']} rows, Quiver {mine['rows']}")
    return lines


def markdown(args, summary, differences):
    engines = summary["engines"]
    names = list(engines)
    mib = lambda b: f"{b / 2**20:,.0f}"
    lines = [f"# {summary['dataset']}: Quiver beside its peers", ""]
    lines += ["| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    lines.append("| load (s) | " + " | ".join(f"{engines[n]['load_seconds']:.1f}" for n in names) + " |")
    lines.append("| store on disk (MiB) | " + " | ".join(mib(engines[n]["store_bytes"]) for n in names) + " |")
    lines.append("| loader peak RSS (MiB) | " + " | ".join(mib(engines[n]["load_peak_rss"]) for n in names) + " |")
    lines.append("| server peak RSS (MiB) | " + " | ".join(mib(engines[n]["server_peak_rss"]) for n in names) + " |")
    workloads_seen = list(next(iter(engines.values()))["workloads"])
    for workload in workloads_seen:
        lines += ["", f"## {workload}", "", "| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
        first = engines[names[0]]["workloads"][workload]
        if args.bsbm:
            lines.append("| QMpH | " + " | ".join(f"{engines[n]['workloads'][workload]['qmph']:,.0f}" for n in names) + " |")
            lines.append("| errors | " + " | ".join(str(engines[n]["workloads"][workload]["errors"]) for n in names) + " |")
            for template in first["templates"]:
                cells = []
                for n in names:
                    value = engines[n]["workloads"][workload]["templates"].get(template)
                    cells.append("-" if value is None else f"{value:.2f}")
                lines.append(f"| {template} mean ms | " + " | ".join(cells) + " |")
        else:
            for query in first:
                cells = []
                for n in names:
                    outcome = engines[n]["workloads"][workload].get(query, {})
                    cells.append(f"{outcome['ms']:.2f}" if outcome.get("status") == "ok" else outcome.get("status", "-"))
                lines.append(f"| {query} ms | " + " | ".join(cells) + " |")
    if differences:
        lines += ["", "Rows that differ from Quiver's:", ""] + [f"- {d}" for d in differences]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
