#!/usr/bin/env python3
"""Reasoning on LUBM: materialisation, the 14 original queries over the entailment, and
updates kept current, beside owlrl (RDFLib's OWL 2 RL reasoner) with Oxigraph.

1. Materialisation of LUBM-N with univ-bench.owl under OWL 2 RL by `quiver reason` on a
   store loaded without reasoning: seconds, derived triples, derived triples per second,
   rounds, peak memory (the command's own report), and the command's wall time.
2. q1-q14 of queries/lubm-original on the entailment (Python package, in memory, each
   result read to its last row): rows and median milliseconds of RUNS runs after 3
   warm-ups; the rows must equal the LUBM authors' published counts on LUBM-1.
3. Updates on the same in-memory store: INSERT DATA of 10,000 triples (2,500 new graduate
   students: type, course, department, advisor), then DELETE DATA of the same triples,
   each one transaction kept current incrementally (DRed), beside computing the
   entailment again from scratch (`Store.reason`, which also rebuilds the indexes).
4. The peers, on LUBM-P (default 1): owlrl's OWL-RL closure of the same data and ontology
   (seconds, derived triples) beside Quiver's, and q1-q14 on Oxigraph (pyoxigraph, in
   memory) over owlrl's closure beside Quiver over its own, same rows required; with
   --jena, Apache Jena 5.6's OWL Micro reasoner too (bench/peers/jena-reasoner.sh: its
   materialisation, then q1-q14 on the materialised model), same rows required.

   --no-owlrl leaves owlrl and Oxigraph out (owlrl takes hours past LUBM-5): Jena's rows
   are then checked against Quiver's.

Usage: bench/reasoning.py [--universities 100] [--peer-universities 1] [--runs 5] [--jena]
                          [--no-owlrl] [--json bench/results/2core/reasoning-lubm100.json]
Needs a release build (cargo build --release --bin quiver) and the Python package with
owlrl and pyoxigraph (scripts/test installs them into target/test-venv: run this script
with target/test-venv/bin/python3); --jena needs Java 17 and Maven.
"""

import argparse
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import owlrl
import pyoxigraph
import rdflib

import quiver

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("QUIVER_SHARED", os.path.join(ROOT, "..", "shared"))
QUIVER = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "quiver")
ONTOLOGY = os.path.join(SHARED, "lubm", "univ-bench.owl")
UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
# The complete answers on LUBM(1,0) published with the benchmark (Guo, Pan, Heflin 2005).
PUBLISHED_LUBM1 = [4, 0, 6, 34, 719, 7790, 67, 7790, 208, 4, 224, 15, 1, 5916]


def queries():
    out = []
    for n in range(1, 15):
        with open(os.path.join(SHARED, "queries", "lubm-original", f"q{n}.rq")) as f:
            out.append((f"q{n}", f.read()))
    return out


def run(command):
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
    return done.stderr, seconds


def materialise(universities, scratch):
    location = os.path.join(scratch, f"lubm{universities}")
    run([QUIVER, "load", "--lubm", str(universities), "--ontology", ONTOLOGY, "--location", location])
    stderr, wall = run([QUIVER, "reason", "--location", location, "--profile", "owl-rl"])
    summary = re.search(
        r"entailment \(owl-rl\): (\d+) triples derived in ([\d.]+) s \([\d.]+/s, (\d+) rounds\); "
        r"(\d+) triples entailed.*peak memory ([\d.]+) MiB",
        stderr,
    )
    if not summary:
        sys.exit(f"unexpected report of quiver reason:\n{stderr}")
    derived, seconds, rounds, entailed, peak = summary.groups()
    return {
        "universities": universities,
        "derived_triples": int(derived),
        "entailed_triples": int(entailed),
        "materialise_seconds": float(seconds),
        "derived_per_second": int(derived) / float(seconds),
        "rounds": int(rounds),
        "reason_command_seconds": wall,
        "peak_rss_mib": float(peak),
    }


def timed(function, runs, warmups=3):
    for _ in range(warmups):
        function()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return result, statistics.median(times) * 1e3


def quiver_store(universities):
    store = quiver.Store()
    store.load_lubm(universities)
    store.load(path=ONTOLOGY)
    started = time.perf_counter()
    store.reason("owl-rl")
    return store, time.perf_counter() - started


def query_latencies(store, runs, reasoning):
    rows = {}
    for name, text in queries():
        count, ms = timed(lambda: len(list(store.query(text, reasoning=reasoning))), runs)
        rows[name] = {"rows": count, "median_ms": ms}
    return rows


def updates(store):
    triples = []
    for i in range(2500):
        student = f"<http://www.Department0.University0.edu/NewGraduateStudent{i}>"
        triples += [
            f"{student} <{RDF_TYPE}> <{UB}GraduateStudent>",
            f"{student} <{UB}takesCourse> <http://www.Department0.University0.edu/GraduateCourse{i % 50}>",
            f"{student} <{UB}memberOf> <http://www.Department0.University0.edu>",
            f"{student} <{UB}advisor> <http://www.Department0.University0.edu/FullProfessor{i % 7}>",
        ]
    body = " .\n".join(triples)
    students = f"SELECT (COUNT(*) AS ?n) {{ ?x a <{UB}Student> }}"
    before = int(next(iter(store.query(students, reasoning=True)))[0].value)
    started = time.perf_counter()
    store.update(f"INSERT DATA {{ {body} }}")
    insert = time.perf_counter() - started
    after_insert = int(next(iter(store.query(students, reasoning=True)))[0].value)
    started = time.perf_counter()
    store.update(f"DELETE DATA {{ {body} }}")
    delete = time.perf_counter() - started
    after_delete = int(next(iter(store.query(students, reasoning=True)))[0].value)
    if after_insert != before + 2500 or after_delete != before:
        sys.exit(f"students {before} -> {after_insert} -> {after_delete}: the entailment is not current")
    started = time.perf_counter()
    store.reason("owl-rl")
    recompute = time.perf_counter() - started
    return {
        "triples": len(triples),
        "insert_seconds": insert,
        "delete_seconds": delete,
        "recompute_seconds": recompute,
        "students_before_after_insert": [before, after_insert],
    }


def jena(data, runs):
    """Jena's OWL Micro reasoner on `data` and the ontology (bench/peers/jena-reasoner.sh)."""
    script = os.path.join(ROOT, "bench", "peers", "jena-reasoner.sh")
    done = subprocess.run([script, "--runs", str(runs), data, ONTOLOGY], capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        sys.exit(f"{script} failed:\n{done.stderr}")
    return json.loads(lines[-1])


def peer(universities, runs, scratch, with_jena, with_owlrl):
    """owlrl's closure and Oxigraph's answers over it, beside Quiver on the same data."""
    data = os.path.join(scratch, f"peer-lubm{universities}.nt")
    if universities == 1:
        with gzip.open(os.path.join(SHARED, "lubm", "lubm1-uba-sorted.nt.gz"), "rb") as f:
            open(data, "wb").write(f.read())
    else:
        subprocess.run([QUIVER, "gen", "lubm", "--universities", str(universities), "--output", data], check=True)
    asserted = owlrl_seconds = closure_triples = oxigraph = None
    if with_owlrl:
        graph = rdflib.Graph()
        graph.parse(data, format="nt")
        graph.parse(ONTOLOGY, format="xml")
        asserted = len(graph)
        started = time.perf_counter()
        owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(graph)
        owlrl_seconds = time.perf_counter() - started
        closure_triples = len(graph)
        closure = os.path.join(scratch, "closure.nt")
        with open(closure, "w", encoding="utf-8") as out:
            for s, p, o in graph:
                if not isinstance(s, rdflib.Literal):
                    out.write(f"{s.n3()} {p.n3()} {o.n3()} .\n")
        del graph
        oxigraph = pyoxigraph.Store()
        oxigraph.bulk_load(path=closure, format=pyoxigraph.RdfFormat.N_TRIPLES)

    store = quiver.Store()
    store.load(path=data)
    store.load(path=ONTOLOGY)
    started = time.perf_counter()
    store.reason("owl-rl")
    quiver_seconds = time.perf_counter() - started
    ours = query_latencies(store, runs, True)
    theirs = {}
    for name, text in queries() if oxigraph is not None else []:
        count, ms = timed(lambda: len(list(oxigraph.query(text))), runs)
        theirs[name] = {"rows": count, "median_ms": ms}
        if count != ours[name]["rows"]:
            sys.exit(f"{name}: Quiver {ours[name]['rows']} rows, Oxigraph over owlrl's closure {count}")
    jena_result = None
    if with_jena:
        jena_result = jena(data, runs)
        for name, q in jena_result["queries"].items():
            if q["rows"] != ours[name]["rows"]:
                sys.exit(f"{name}: Quiver {ours[name]['rows']} rows, Jena {q['rows']}")
    if universities == 1:
        got = [ours[f"q{n}"]["rows"] for n in range(1, 15)]
        if got != PUBLISHED_LUBM1:
            sys.exit(f"LUBM-1 rows {got} differ from the published {PUBLISHED_LUBM1}")
    return {
        "universities": universities,
        "asserted_triples_rdflib": asserted,
        "owlrl_closure_seconds": owlrl_seconds,
        "owlrl_closure_triples": closure_triples,
        "quiver_reason_seconds": quiver_seconds,
        "quiver": ours,
        "oxigraph_over_owlrl": theirs,
        "jena_owl_micro": jena_result,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--universities", type=int, default=100)
    parser.add_argument("--peer-universities", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jena", action="store_true", help="also run Jena's OWL Micro reasoner")
    parser.add_argument("--no-owlrl", action="store_true", help="leave owlrl and Oxigraph out")
    parser.add_argument("--json")
    args = parser.parse_args()
    result = {"machine": f"{os.cpu_count()} cores", "quiver": os.path.relpath(QUIVER, ROOT)}
    with tempfile.TemporaryDirectory(prefix="quiver-reasoning-") as scratch:
        result["materialisation"] = materialise(args.universities, scratch)
        m = result["materialisation"]
        print(f"LUBM-{args.universities} materialisation: {m['derived_triples']} derived in "
              f"{m['materialise_seconds']:.2f} s ({m['derived_per_second']:.0f}/s, {m['rounds']} rounds), "
              f"`quiver reason` {m['reason_command_seconds']:.1f} s, peak {m['peak_rss_mib']:.0f} MiB", flush=True)
        store, seconds = quiver_store(args.universities)
        result["queries"] = query_latencies(store, args.runs, True)
        for name, q in result["queries"].items():
            print(f"  {name}: {q['rows']} rows, {q['median_ms']:.3f} ms", flush=True)
        result["updates"] = updates(store)
        u = result["updates"]
        print(f"updates of {u['triples']} triples: insert {u['insert_seconds']:.3f} s, delete "
              f"{u['delete_seconds']:.3f} s, recompute {u['recompute_seconds']:.2f} s", flush=True)
        del store
        result["peer"] = peer(args.peer_universities, args.runs, scratch, args.jena, not args.no_owlrl)
        p = result["peer"]
        if p["owlrl_closure_seconds"] is not None:
            print(f"LUBM-{p['universities']} peer: owlrl closure {p['owlrl_closure_seconds']:.1f} s, "
                  f"Quiver reason {p['quiver_reason_seconds']:.3f} s "
                  f"({p['owlrl_closure_seconds'] / p['quiver_reason_seconds']:.0f}x)")
        else:
            print(f"LUBM-{p['universities']} peer: Quiver reason {p['quiver_reason_seconds']:.3f} s")
        j = p["jena_owl_micro"]
        if j:
            print(f"  Jena OWL Micro: materialised in {j['materialise_seconds']:.1f} s "
                  f"({j['materialise_seconds'] / p['quiver_reason_seconds']:.0f}x Quiver's reason), "
                  f"{j['entailed_triples']} triples entailed")
        for name in p["quiver"]:
            ours, theirs = p["quiver"][name], p["oxigraph_over_owlrl"].get(name)
            line = f"  {name}: {ours['rows']} rows, Quiver {ours['median_ms']:.3f} ms"
            if theirs:
                line += (f", Oxigraph {theirs['median_ms']:.3f} ms "
                         f"({theirs['median_ms'] / max(ours['median_ms'], 1e-9):.0f}x)")
            if j:
                ms = j["queries"][name]["median_ms"]
                line += f", Jena {ms:.3f} ms ({ms / max(ours['median_ms'], 1e-9):.0f}x)"
            print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
