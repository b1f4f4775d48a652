#!/usr/bin/env python3
"""rdflib's SPARQLUpdateStore against `quiver serve --writable`: triples added and removed
through rdflib (SPARQL Update, form-encoded and direct POST) must be seen by queries, in the
default graph and in a named graph.

Run by crates/quiver-cli/tests/serve_clients.rs, which starts the server:
    sparql_update_client.py --query URL --update URL [--token TOKEN]
Exits non-zero on the first mismatch; prints one line per check and a summary.
"""

import argparse
import sys

try:
    import rdflib
    from rdflib import Graph, Literal, URIRef
    from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
    from rdflib.plugins.stores.sparqlstore import SPARQLUpdateStore
except ImportError as error:
    sys.exit(f"missing Python package ({error}): python3 -m pip install rdflib")

EX = "http://example.org/rdflib/"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--query", required=True)
    parser.add_argument("--update", required=True)
    parser.add_argument("--token")
    args = parser.parse_args()
    passed = 0

    def check(name, condition, detail=""):
        nonlocal passed
        if not condition:
            sys.exit(f"FAIL {name}: {detail}")
        passed += 1
        print(f"ok {name}")

    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    for encoded in (True, False):
        store = SPARQLUpdateStore(
            query_endpoint=args.query,
            update_endpoint=args.update,
            postAsEncoded=encoded,
            headers=headers,
        )
        how = "form" if encoded else "direct"
        alice = URIRef(f"{EX}alice-{how}")
        name = Literal(f"Alice ({how})", lang="en")
        default = Graph(store=store, identifier=DATASET_DEFAULT_GRAPH_ID)
        default.add((alice, URIRef(f"{EX}name"), name))
        # Through the store: Graph.query would name the graph as a default-graph-uri.
        rows = list(store.query(f"SELECT ?n WHERE {{ <{alice}> <{EX}name> ?n }}"))
        check(f"{how}: added triple is queried back", [row[0] for row in rows] == [name], rows)
        check(f"{how}: triple membership", (alice, URIRef(f"{EX}name"), name) in default)
        named = Graph(store=store, identifier=URIRef(f"{EX}graph-{how}"))
        named.add((alice, URIRef(f"{EX}age"), Literal(30)))
        ask = store.query(f"ASK {{ GRAPH <{EX}graph-{how}> {{ <{alice}> <{EX}age> 30 }} }}")
        check(f"{how}: named graph written", ask.askAnswer, ask.askAnswer)
        check(f"{how}: named graph length", len(named) == 1, len(named))
        default.remove((alice, None, None))
        rows = list(store.query(f"SELECT ?p WHERE {{ <{alice}> ?p ?o }}"))
        check(f"{how}: removed triple is gone", rows == [], rows)
        store.close()
    print(f"rdflib {rdflib.__version__}: {passed} passed, 0 failed")


if __name__ == "__main__":
    main()
