#!/usr/bin/env python3
"""Quiver's Python package beside pyoxigraph, in one Python process, on LUBM-N.

    python python/bench/bench_vs_pyoxigraph.py [--universities 100] [--runs 5]

Loads LUBM-N into both: Quiver through ``Store.load_lubm`` (the generator in process) and
pyoxigraph through ``bulk_load`` of the N-Triples that ``quiver gen lubm`` writes (the same
triples; the `quiver` binary from QUIVER_BIN or target/release/quiver). Then, for each of
q1–q12 and each engine, the median of ``--runs`` runs (after a warm-up) of the time from
the query text to a Python list of solutions (``list(store.query(q))``, one object per
row, each term a Python object as it is read) and to a pandas DataFrame (Quiver's
``to_pandas()``; for pyoxigraph, a DataFrame built from its rows' term values). Prints a
table; the row counts of the two engines must agree or the run exits 1.
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import pandas
import pyoxigraph

import quiver

ROOT = pathlib.Path(__file__).resolve().parents[2]


def median_seconds(function, runs):
    function()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def oxigraph_frame(store, text):
    solutions = store.query(text)
    names = [v.value for v in solutions.variables]
    rows = [[None if t is None else t.value for t in row] for row in solutions]
    return pandas.DataFrame(rows, columns=names)


def quiver_list(store, text, threads):
    solutions = store.query(text, threads=threads)
    return [[solution[i] for i in range(len(solution))] for solution in solutions]


def oxigraph_list(store, text):
    solutions = store.query(text)
    width = len(solutions.variables)
    return [[solution[i] for i in range(width)] for solution in solutions]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--universities", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="Quiver's (default: all cores)")
    parser.add_argument("--queries", type=pathlib.Path, default=ROOT / "queries" / "lubm-basic")
    args = parser.parse_args()
    binary = pathlib.Path(os.environ.get("QUIVER_BIN", ROOT / "target" / "release" / "quiver"))
    if not binary.is_file():
        sys.exit(f"{binary} is missing: cargo build --release --bin quiver")
    queries = sorted(args.queries.glob("q*.rq"), key=lambda p: int(p.stem[1:]))

    ours = quiver.Store()
    started = time.perf_counter()
    ours.load_lubm(args.universities)
    our_load = time.perf_counter() - started

    theirs = pyoxigraph.Store()
    with tempfile.TemporaryDirectory() as scratch:
        data = pathlib.Path(scratch) / "lubm.nt"
        subprocess.run(
            [binary, "gen", "lubm", "--universities", str(args.universities), "--output", data],
            check=True,
        )
        started = time.perf_counter()
        theirs.bulk_load(path=str(data), format=pyoxigraph.RdfFormat.N_TRIPLES)
        their_load = time.perf_counter() - started

    print(f"LUBM-{args.universities}: {len(ours):,} triples")
    print(f"load: Quiver {our_load:.2f} s (from the generator), pyoxigraph {their_load:.2f} s (bulk_load of N-Triples)")
    print(f"medians of {args.runs} runs, ms; ratio = pyoxigraph / Quiver\n")
    header = f"{'query':<6} {'rows':>9} | {'list Q':>9} {'list O':>9} {'ratio':>7} | {'pandas Q':>9} {'pandas O':>9} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    mismatched = []
    for path in queries:
        text = path.read_text()
        rows = len(ours.query(text))
        if rows != len(list(theirs.query(text))):
            mismatched.append(path.stem)
        list_q = median_seconds(lambda: quiver_list(ours, text, args.threads), args.runs)
        list_o = median_seconds(lambda: oxigraph_list(theirs, text), args.runs)
        pandas_q = median_seconds(
            lambda: ours.query(text, threads=args.threads).to_pandas(), args.runs
        )
        pandas_o = median_seconds(lambda: oxigraph_frame(theirs, text), args.runs)
        print(
            f"{path.stem:<6} {rows:>9,} | {list_q * 1e3:>9.2f} {list_o * 1e3:>9.2f} {list_o / list_q:>6.1f}x"
            f" | {pandas_q * 1e3:>9.2f} {pandas_o * 1e3:>9.2f} {pandas_o / pandas_q:>6.1f}x"
        )
    if mismatched:
        sys.exit(f"row counts differ between the engines: {', '.join(mismatched)}")


if __name__ == "__main__":
    main()
