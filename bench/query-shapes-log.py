#!/usr/bin/env python3
"""A synthetic query log of the shapes real logs hold and benchmarks do not, over LUBM.

Writes a JSON list of {"name", "query"} for `quiver bench log`: VALUES written after the
patterns they constrain, FILTERs comparing a variable to one term after OPTIONALs and
unconnected patterns, unconnected patterns under LIMIT, an empty (or absent) pattern
after a large one, a UNION beside an empty side, cross products, DISTINCT and joins under
LIMIT. Each shape is instantiated with constants drawn from LUBM's naming scheme for the
given number of universities (seeded, so the log is the same every time).

Usage: bench/query-shapes-log.py [--universities 10] [--per-shape 20] [--seed 1] OUT.json
"""
import argparse
import json
import random

UB = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"

SHAPES = {
    # VALUES after the pattern: must seed it (the Wikidata shape, on LUBM).
    "values-after": "SELECT ?x ?p ?y ?z WHERE {{ ?x ?p ?y . ?z ?p ?y . "
    "VALUES (?p) {{ (ub:advisor) }} VALUES (?x) {{ ({student}) }} }} LIMIT 5",
    "values-first": "SELECT ?x ?p ?y ?z WHERE {{ VALUES (?p) {{ (ub:advisor) }} "
    "VALUES (?x) {{ ({student}) }} ?x ?p ?y . ?z ?p ?y }} LIMIT 5",
    # FILTER on one variable after an OPTIONAL and an unconnected pattern.
    "filter-after-optional": "SELECT * WHERE {{ ?x ub:takesCourse ?c . "
    "OPTIONAL {{ ?x ub:emailAddress ?e }} ?d ub:name ?n . "
    "FILTER (?x = {student} && sameTerm(?d, {department})) }}",
    # Unconnected patterns and an OPTIONAL under LIMIT.
    "unconnected-optional-limit": "SELECT * WHERE {{ ?x ub:takesCourse ?c . "
    "?y a ub:FullProfessor . OPTIONAL {{ ?y ub:headOf ?d }} }} LIMIT {limit}",
    # An absent constant after a large pattern and a path.
    "absent-after-path": "SELECT * WHERE {{ ?x ub:takesCourse ?c . "
    "?d ub:subOrganizationOf+ {university} . ?d ub:name \"noSuchName{k}\" }}",
    # A name the store has, on nobody advised: an empty side beside a UNION.
    "union-beside-empty": "SELECT * WHERE {{ {{ ?a ub:takesCourse ?c }} UNION "
    "{{ ?a ub:advisor ?c }} ?x ub:name \"{department_name}\" . ?x ub:advisor ?a }}",
    # Groups joined only by a cross product, under LIMIT.
    "cross-product-limit": "SELECT * WHERE {{ {{ ?x ub:takesCourse ?c }} "
    "{{ ?y a ub:FullProfessor }} }} LIMIT {limit}",
    # A pattern after an OPTIONAL that cuts its required side.
    "pattern-after-optional": "SELECT ?x ?c ?n WHERE {{ ?x ub:takesCourse ?c . "
    "OPTIONAL {{ ?x ub:name ?n }} ?x ub:advisor {professor} }}",
    # DISTINCT and a filter under LIMIT.
    "distinct-filter-limit": "SELECT DISTINCT ?c WHERE {{ ?x ub:takesCourse ?c . "
    "?x ub:advisor ?p FILTER (?c != {course}) }} LIMIT {limit}",
    # An empty group last among unconnected groups.
    "empty-group-last": "SELECT * WHERE {{ {{ ?x ub:takesCourse ?c }} "
    "{{ ?y a ub:FullProfessor }} {{ ?y ub:headOf {absent_department} }} }}",
}


def constants(rng, universities):
    u = rng.randrange(universities)
    d = rng.randrange(15)
    dept = f"http://www.Department{d}.University{u}.edu"
    return {
        "student": f"<{dept}/GraduateStudent{rng.randrange(20)}>",
        "professor": f"<{dept}/FullProfessor{rng.randrange(7)}>",
        "course": f"<{dept}/Course{rng.randrange(10)}>",
        "department": f"<{dept}>",
        "department_name": f"Department{d}",
        "absent_department": f"<http://www.Department99.University{u}.edu>",
        "university": f"<http://www.University{u}.edu>",
        "limit": rng.choice([1, 10, 100, 1000, 10000]),
        "k": rng.randrange(1000),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--universities", type=int, default=10)
    parser.add_argument("--per-shape", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("out")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    log = []
    for name, shape in SHAPES.items():
        for i in range(args.per_shape):
            query = UB + shape.format(**constants(rng, args.universities))
            log.append({"name": f"{name}-{i + 1}", "query": query})
    with open(args.out, "w") as out:
        json.dump(log, out, indent=1)
    print(f"{len(log)} queries of {len(SHAPES)} shapes written to {args.out}")


if __name__ == "__main__":
    main()
