# Oxigraph's side of `quiver bench log --compare-oxigraph`, run with pyoxigraph.
# Arguments: a JSON file {"data": [paths], "queries": [texts], "runs": N, "timeout": seconds}.
# The data are loaded once; each query then runs in a forked child (sharing the loaded
# store), killed when it passes the timeout, so that one runaway query cannot stall the
# log. A child times each run from the query text to the whole result serialized as TSV
# in memory (N-Triples for a graph), one warm-up then N runs (one if the query fails),
# and reports on a pipe. Prints a JSON list with one entry per query.
import json
import os
import select
import signal
import statistics
import sys
import time

import pyoxigraph

job = json.load(open(sys.argv[1]))
store = pyoxigraph.Store()
for path in job["data"]:
    store.bulk_load(path=path, format=pyoxigraph.RdfFormat.from_extension(path.rsplit(".", 1)[-1]))


def run_once(text):
    """Runs the query and serializes its whole result; returns its rows."""
    result = store.query(text)
    if isinstance(result, pyoxigraph.QuerySolutions):
        out = result.serialize(format=pyoxigraph.QueryResultsFormat.TSV)
        return out.count(b"\n") - 1  # a header line, then one line per solution
    if isinstance(result, pyoxigraph.QueryBoolean):
        return int(bool(result))
    out = result.serialize(format=pyoxigraph.RdfFormat.N_TRIPLES)
    return out.count(b"\n")


def measure(text, runs, tick):
    times, rows = [], 0
    for run in range(runs + 1):
        tick()
        start = time.perf_counter()
        try:
            rows = run_once(text)
        except SyntaxError as error:
            return {"status": "syntax", "rows": 0, "micros": (time.perf_counter() - start) * 1e6, "error": str(error)}
        except Exception as error:  # noqa: BLE001 - every failure is a status of the log
            return {"status": "error", "rows": 0, "micros": (time.perf_counter() - start) * 1e6, "error": str(error)}
        if run > 0:
            times.append((time.perf_counter() - start) * 1e6)
    return {"status": "ok", "rows": rows, "micros": statistics.median(times), "error": None}


report = []
timeout = float(job["timeout"])
for text in job["queries"]:
    read, write = os.pipe()
    started = time.perf_counter()
    child = os.fork()
    if child == 0:
        os.close(read)
        # A line before each run: the parent gives each run its own timeout.
        outcome = measure(text, int(job["runs"]), lambda: os.write(write, b"\n"))
        os.write(write, json.dumps(outcome).encode())
        os._exit(0)
    os.close(write)
    chunks, deadline = [], started + timeout
    while True:
        left = deadline - time.perf_counter()
        ready, _, _ = select.select([read], [], [], max(left, 0))
        if not ready:
            os.kill(child, signal.SIGKILL)
            break
        chunk = os.read(read, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        deadline = time.perf_counter() + timeout
    os.close(read)
    _, status = os.waitpid(child, 0)
    body = b"".join(chunks).strip()
    if body:
        report.append(json.loads(body))
    elif os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
        report.append({"status": "timeout", "rows": 0, "micros": timeout * 1e6, "error": f"killed after {timeout} s"})
    else:
        report.append({"status": "error", "rows": 0, "micros": 0, "error": f"the query's process ended with status {status}"})
print(json.dumps(report))
