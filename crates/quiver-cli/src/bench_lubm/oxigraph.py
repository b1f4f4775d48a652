# Oxigraph's side of `quiver bench lubm --compare-oxigraph`, run with pyoxigraph.
# Arguments: the N-Triples file, the measured runs per query, a JSON file of [name, text].
# Each run is timed in-process from the query text to the whole result serialized as TSV
# in memory (N-Triples for a graph), after one warm-up run. Prints a JSON report.
import json
import statistics
import sys
import time

import pyoxigraph

data, runs, queries = sys.argv[1], int(sys.argv[2]), json.load(open(sys.argv[3]))
store = pyoxigraph.Store()
start = time.perf_counter()
store.bulk_load(path=data, format=pyoxigraph.RdfFormat.N_TRIPLES)
load = time.perf_counter() - start


def query_to_tsv(text):
    """Runs the query and serializes its whole result; returns the result's rows."""
    result = store.query(text)
    if isinstance(result, pyoxigraph.QuerySolutions):
        out = result.serialize(format=pyoxigraph.QueryResultsFormat.TSV)
        return out.count(b"\n") - 1  # a header line, then one line per solution
    if isinstance(result, pyoxigraph.QueryBoolean):
        result.serialize(format=pyoxigraph.QueryResultsFormat.TSV)
        return int(bool(result))
    out = result.serialize(format=pyoxigraph.RdfFormat.N_TRIPLES)
    return out.count(b"\n")


report = {
    "load_seconds": load,
    "triples": len(store),
    "version": pyoxigraph.__version__,
    "queries": {},
}
for name, text in queries:
    times, rows = [], 0
    for run in range(runs + 1):
        start = time.perf_counter()
        rows = query_to_tsv(text)
        if run > 0:
            times.append((time.perf_counter() - start) * 1e6)
    report["queries"][name] = {"median_us": statistics.median(times), "rows": rows}
print(json.dumps(report))
