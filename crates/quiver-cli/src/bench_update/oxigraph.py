# Oxigraph's side of `quiver bench update --compare-oxigraph`, run with pyoxigraph's
# persistent store (RocksDB). Arguments: the N-Triples file of LUBM-N, seconds per
# throughput figure, a scratch directory, a JSON file of the queries {name: text}.
# The same work as Quiver's side, each figure timed from SPARQL text to the end of
# `store.update` / the query result serialized as TSV. Prints a JSON report.
import json
import shutil
import sys
import threading
import time

import pyoxigraph

data, seconds, workdir, queries = (
    sys.argv[1],
    float(sys.argv[2]),
    sys.argv[3],
    json.load(open(sys.argv[4])),
)
UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
DELETE_INSERT = queries.pop("delete_insert")

shutil.rmtree(workdir, ignore_errors=True)
store = pyoxigraph.Store(workdir)
start = time.perf_counter()
store.bulk_load(path=data, format=pyoxigraph.RdfFormat.N_TRIPLES)
report = {"load_seconds": time.perf_counter() - start, "version": pyoxigraph.__version__}


def insert_data(first, count):
    lines = "".join(
        f'<http://bench.quiver.example/s{n}> <{UB}name> "bench {n}" .\n'
        for n in range(first, first + count)
    )
    return "INSERT DATA {\n" + lines + "}"


counter = [0]


def throughput(batch):
    """Commits for about `seconds` of commit time (request texts made outside it)."""
    commits, elapsed = 0, 0.0
    while elapsed < seconds or commits < 3:
        text = insert_data(counter[0], batch)
        counter[0] += batch
        started = time.perf_counter()
        store.update(text)
        elapsed += time.perf_counter() - started
        commits += 1
    return {
        "batch": batch,
        "commits": commits,
        "triples_per_second": commits * batch / elapsed,
        "commits_per_second": commits / elapsed,
    }


report["insert_data"] = [throughput(batch) for batch in (1, 100, 10_000)]

commits = [0] * 16
started = time.perf_counter()


def writer(w):
    n = (1 << 40) + w * 1_000_000_000
    while time.perf_counter() - started < seconds:
        store.update(insert_data(n, 1))
        n += 1
        commits[w] += 1


threads = [threading.Thread(target=writer, args=(w,)) for w in range(16)]
for t in threads:
    t.start()
for t in threads:
    t.join()
report["group_commit"] = {
    "writers": 16,
    "commits": sum(commits),
    "commits_per_second": sum(commits) / (time.perf_counter() - started),
}

start = time.perf_counter()
store.update(DELETE_INSERT)
report["delete_insert_where"] = {"seconds": time.perf_counter() - start}


def query_us(text):
    start = time.perf_counter()
    store.query(text).serialize(format=pyoxigraph.QueryResultsFormat.TSV)
    return (time.perf_counter() - start) * 1e6


def percentile(values, p):
    values = sorted(values)
    return values[round((len(values) - 1) * p)]


def latencies():
    out = {}
    for name in ("q4", "q5"):
        times, begin = [], time.perf_counter()
        while time.perf_counter() - begin < seconds or len(times) < 100:
            times.append(query_us(queries[name]))
        out[name] = {
            "p50_us": percentile(times, 0.5),
            "p99_us": percentile(times, 0.99),
            "runs": len(times),
        }
    for name in ("q1", "q7"):
        out[name] = {"median_us": percentile([query_us(queries[name]) for _ in range(5)], 0.5)}
    return out


report["idle"] = latencies()
stop, ingested = threading.Event(), [0]


def ingest():
    n, due = 1 << 50, time.perf_counter()
    while not stop.is_set():
        store.update(insert_data(n, 1000))
        n += 1000
        ingested[0] += 1000
        due += 0.010
        wait = due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)


thread = threading.Thread(target=ingest)
begin = time.perf_counter()
thread.start()
under = latencies()
elapsed = time.perf_counter() - begin
stop.set()
thread.join()
report["under_ingest"] = {"queries": under, "ingest_triples_per_second": ingested[0] / elapsed}
del store
shutil.rmtree(workdir, ignore_errors=True)
print(json.dumps(report))
