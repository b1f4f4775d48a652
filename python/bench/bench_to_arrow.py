#!/usr/bin/env python3
"""``to_arrow()`` on LUBM-N, in one Python process: the median time to turn a query's
solutions into a ``pyarrow.Table``, for LUBM q1, q2 and q7.

    python python/bench/bench_to_arrow.py [--universities 100] [--runs 21] [--json FILE]

Loads LUBM-N with ``Store.load_lubm``, runs each query once, then times ``to_arrow()`` on
its solutions ``--runs`` times, the last table kept alive while the next is made (as a
program holding its results does). Prints each query's rows and median milliseconds.
"""

import argparse
import json
import pathlib
import statistics
import time

import quiver

QUERIES = pathlib.Path(__file__).resolve().parents[2] / "queries" / "lubm-basic"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--universities", type=int, default=100)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    store = quiver.Store()
    store.load_lubm(args.universities)
    figures = {}
    for name in ["q1", "q2", "q7"]:
        solutions = store.query((QUERIES / f"{name}.rq").read_text())
        times = []
        table = None
        for _ in range(args.runs):
            started = time.perf_counter()
            table = solutions.to_arrow()
            times.append(time.perf_counter() - started)
        figures[name] = {
            "rows": table.num_rows,
            "median_ms": statistics.median(times) * 1e3,
            "runs_ms": [round(t * 1e3, 3) for t in times],
        }
        print(f"{name}: {table.num_rows} rows, to_arrow() {figures[name]['median_ms']:.2f} ms")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
