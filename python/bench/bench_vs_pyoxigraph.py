#!/usr/bin/env python3
"""Quiver's Python package beside pyoxigraph, in one Python process, on LUBM-N.

    python python/bench/bench_vs_pyoxigraph.py [--universities 100] [--runs 5]

Loads LUBM-N into both: Quiver through ``Store.load_lubm`` (the generator in process) and
pyoxigraph through ``bulk_load`` of the N-Triples that ``quiver gen lubm`` writes (the same
triples; the `quiver` binary from QUIVER_BIN or target/release/quiver). Then, for each of
q1–q12 and each engine, the median of ``--runs`` runs (after a warm-up) of the time from
the query text to a Python list of solutions (``list(store.query(q))``: one solution
object per row, whose terms both engines make into Python objects when they are read),
to lists of every term of every row (``[[s[i] for i in range(len(s))] for s in ...]``:
the same Python loop on both sides, one Python object per term), and to a pandas
DataFrame (Quiver's ``to_pandas()``; for pyoxigraph, a DataFrame built from its rows'
term values). Prints a table (``--json`` also writes it); the row counts of the two
engines must agree or the run exits 1.
"""

import argparse
import json
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


def quiver_terms(store, text, threads):
    solutions = store.query(text, threads=threads)
    return [[solution[i] for i in range(len(solution))] for solution in solutions]


def oxigraph_terms(store, text):
    solutions = store.query(text)
    width = len(solutions.variables)
    return [[solution[i] for i in range(width)] for solution in solutions]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--universities", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="Quiver's (default: all cores)")
    parser.add_argument("--queries", type=pathlib.Path, default=ROOT / "queries" / "lubm-basic")
    parser.add_argument("--json", type=pathlib.Path, default=None, help="also write the table here")
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
    columns = ["list", "terms", "pandas"]
    header = f"{'query':<6} {'rows':>9}" + "".join(
        f" | {c + ' Q':>9} {c + ' O':>9} {'ratio':>7}" for c in columns
    )
    print(header)
    print("-" * len(header))
    mismatched = []
    table = []
    for path in queries:
        text = path.read_text()
        rows = len(ours.query(text))
        if rows != len(list(theirs.query(text))):
            mismatched.append(path.stem)
        timed = {
            "list": (
                lambda: list(ours.query(text, threads=args.threads)),
                lambda: list(theirs.query(text)),
            ),
            "terms": (
                lambda: quiver_terms(ours, text, args.threads),
                lambda: oxigraph_terms(theirs, text),
            ),
            "pandas": (
                lambda: ours.query(text, threads=args.threads).to_pandas(),
                lambda: oxigraph_frame(theirs, text),
            ),
        }
        entry = {"query": path.stem, "rows": rows}
        line = f"{path.stem:<6} {rows:>9,}"
        for column in columns:
            ours_s = median_seconds(timed[column][0], args.runs)
            theirs_s = median_seconds(timed[column][1], args.runs)
            entry[f"{column}_quiver_ms"] = ours_s * 1e3
            entry[f"{column}_oxigraph_ms"] = theirs_s * 1e3
            line += f" | {ours_s * 1e3:>9.2f} {theirs_s * 1e3:>9.2f} {theirs_s / ours_s:>6.1f}x"
        table.append(entry)
        print(line, flush=True)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "universities": args.universities,
                    "triples": len(ours),
                    "load_quiver_s": our_load,
                    "load_oxigraph_s": their_load,
                    "runs": args.runs,
                    "queries": table,
                },
                indent=2,
            )
        )
    if mismatched:
        sys.exit(f"row counts differ between the engines: {', '.join(mismatched)}")


if __name__ == "__main__":
    main()
