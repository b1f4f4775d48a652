"""The independent reasoner of the reasoning tests: RDFLib's `owlrl` package.

Usage: owlrl_closure.py PROFILE IN OUT [IN OUT ...]

PROFILE is rdfs or owl-rl. Each IN (N-Triples) is closed under owlrl's RDFS or OWL 2 RL
semantics and written to OUT as N-Triples; triples with a literal subject, which owlrl's
datatype rules make and RDF does not allow, are left out. One process serves many files,
so that the interpreter and rdflib start once.
"""
import sys

import owlrl
import rdflib


def main():
    profile = sys.argv[1]
    semantics = {"rdfs": owlrl.RDFS_Semantics, "owl-rl": owlrl.OWLRL_Semantics}[profile]
    pairs = sys.argv[2:]
    for source, target in zip(pairs[::2], pairs[1::2]):
        graph = rdflib.Graph()
        graph.parse(source, format="nt")
        owlrl.DeductiveClosure(semantics).expand(graph)
        with open(target, "w", encoding="utf-8") as out:
            for s, p, o in graph:
                if isinstance(s, rdflib.Literal):
                    continue
                out.write(f"{s.n3()} {p.n3()} {o.n3()} .\n")


if __name__ == "__main__":
    main()
