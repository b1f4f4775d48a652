#!/usr/bin/env python3
"""Real SPARQL clients against `quiver serve`: SPARQLWrapper (JSON and XML results, GET and
POST) and rdflib's SPARQLStore must see exactly the rows `quiver query` prints.

Run by crates/quiver-cli/tests/serve_clients.rs, which starts the server:
    sparql_clients.py --endpoint URL --quiver BIN --location STORE --queries DIR
Exits non-zero on the first mismatch; prints one line per check and a summary.
"""

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

try:
    from SPARQLWrapper import GET, JSON, N3, POST, RDFXML, TURTLE, XML, SPARQLWrapper
    from SPARQLWrapper.SPARQLExceptions import QueryBadFormed
    import rdflib
    from rdflib.plugins.stores.sparqlstore import SPARQLStore
except ImportError as error:
    sys.exit(f"missing Python package ({error}): python3 -m pip install SPARQLWrapper rdflib")

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


def term_key(kind, value, datatype=None, lang=None):
    """One RDF term, normalised across result formats and libraries."""
    if kind in ("typed-literal", "literal"):
        kind = "literal"
        if datatype == XSD_STRING:
            datatype = None
    return (kind, value, datatype, lang.lower() if lang else None)


def rows_from_json(document):
    rows = []
    for binding in document["results"]["bindings"]:
        row = {}
        for var, term in binding.items():
            row[var] = term_key(term["type"], term["value"], term.get("datatype"), term.get("xml:lang"))
        rows.append(tuple(sorted(row.items())))
    return Counter(rows)


def rows_from_xml(document):
    rows = []
    for result in document.getElementsByTagName("result"):
        row = {}
        for binding in result.getElementsByTagName("binding"):
            node = next(n for n in binding.childNodes if n.nodeType == n.ELEMENT_NODE)
            text = "".join(c.data for c in node.childNodes if c.nodeType == c.TEXT_NODE)
            row[binding.getAttribute("name")] = term_key(
                node.tagName,
                text,
                node.getAttribute("datatype") or None,
                node.getAttribute("xml:lang") or None,
            )
        rows.append(tuple(sorted(row.items())))
    return Counter(rows)


def rdflib_key(term):
    if isinstance(term, rdflib.URIRef):
        return term_key("uri", str(term))
    if isinstance(term, rdflib.BNode):
        return term_key("bnode", str(term))
    datatype = str(term.datatype) if term.datatype else None
    return term_key("literal", str(term), datatype, term.language)


def rows_from_rdflib(result):
    rows = []
    for solution in result:
        row = {}
        for var in result.vars:
            value = solution[var]
            if value is not None:
                row[str(var)] = rdflib_key(value)
        rows.append(tuple(sorted(row.items())))
    return Counter(rows)


class Checker:
    def __init__(self, args):
        self.args = args
        self.passed = 0
        self.failed = 0

    def cli(self, query, fmt):
        return subprocess.run(
            [self.args.quiver, "query", "--location", self.args.location, "--query", query,
             "--results-format", fmt],
            check=True, capture_output=True,
        ).stdout

    def check(self, name, got, expected):
        if got == expected:
            self.passed += 1
            print(f"ok   {name}: {sum(expected.values()) if isinstance(expected, Counter) else len(expected)} results")
        else:
            self.failed += 1
            missing = expected - got if isinstance(expected, Counter) else expected
            extra = got - expected if isinstance(got, Counter) else got
            print(f"FAIL {name}: {len(missing)} missing, {len(extra)} unexpected; e.g. "
                  f"missing {list(missing)[:2]}, unexpected {list(extra)[:2]}")

    def wrapper(self, method, fmt):
        sparql = SPARQLWrapper(self.args.endpoint)
        sparql.setMethod(method)
        sparql.setReturnFormat(fmt)
        return sparql

    def select(self, name, query):
        expected = rows_from_json(json.loads(self.cli(query, "json")))
        for method, method_name in ((GET, "GET"), (POST, "POST")):
            sparql = self.wrapper(method, JSON)
            sparql.setQuery(query)
            self.check(f"{name} SPARQLWrapper JSON {method_name}", rows_from_json(sparql.queryAndConvert()), expected)
            sparql = self.wrapper(method, XML)
            sparql.setQuery(query)
            self.check(f"{name} SPARQLWrapper XML {method_name}", rows_from_xml(sparql.queryAndConvert()), expected)
        for fmt in ("xml", "json"):
            store = SPARQLStore(query_endpoint=self.args.endpoint, returnFormat=fmt)
            result = rdflib.Graph(store=store).query(query)
            self.check(f"{name} rdflib SPARQLStore ({fmt})", rows_from_rdflib(result), expected)

    def ask(self):
        for query, expected in (("ASK { ?s ?p ?o }", True), ("ASK { <urn:none> ?p ?o }", False)):
            for fmt in (JSON, XML):
                sparql = self.wrapper(GET, fmt)
                sparql.setQuery(query)
                got = sparql.queryAndConvert()
                value = got["boolean"] if fmt == JSON else \
                    got.getElementsByTagName("boolean")[0].firstChild.data == "true"
                self.check(f"ASK {expected} SPARQLWrapper {fmt}", Counter([value]), Counter([expected]))
            store = SPARQLStore(query_endpoint=self.args.endpoint)
            got = rdflib.Graph(store=store).query(query).askAnswer
            self.check(f"ASK {expected} rdflib", Counter([got]), Counter([expected]))

    def construct(self):
        query = ("PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> "
                 "CONSTRUCT { ?x ub:name ?n } WHERE { ?x a ub:FullProfessor ; ub:name ?n }")
        expected = rdflib.Graph().parse(data=self.cli(query, "nt"), format="nt")
        expected = Counter(tuple(map(rdflib_key, t)) for t in expected)
        for fmt, name in ((RDFXML, "RDF/XML"), (TURTLE, "Turtle"), (N3, "N3")):
            sparql = self.wrapper(GET, fmt)
            sparql.setQuery(query)
            graph = sparql.queryAndConvert()
            if isinstance(graph, bytes):  # SPARQLWrapper hands Turtle/N3 back as text
                graph = rdflib.Graph().parse(data=graph, format="turtle")
            got = Counter(tuple(map(rdflib_key, t)) for t in graph)
            self.check(f"CONSTRUCT SPARQLWrapper {name}", got, expected)
        store = SPARQLStore(query_endpoint=self.args.endpoint)
        got = Counter(tuple(map(rdflib_key, t)) for t in rdflib.Graph(store=store).query(query))
        self.check("CONSTRUCT rdflib", got, expected)

    def errors(self):
        sparql = self.wrapper(GET, JSON)
        sparql.setQuery("SELECT ?x WHERE { ?x }")
        try:
            sparql.queryAndConvert()
            self.check("malformed query raises QueryBadFormed", Counter(["no error"]), Counter(["400"]))
        except QueryBadFormed as error:
            self.check("malformed query raises QueryBadFormed", Counter(["400"]), Counter(["400"]))
            if "1:" not in str(error):
                print(f"note: error message without position: {error}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--quiver", required=True)
    parser.add_argument("--location", required=True)
    parser.add_argument("--queries", required=True, type=Path)
    args = parser.parse_args()
    checker = Checker(args)
    for path in sorted(args.queries.glob("q*.rq"), key=lambda p: int(p.stem[1:])):
        checker.select(path.stem, path.read_text())
    checker.select("optional+literals", (
        "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> "
        "SELECT ?x ?name ?mail WHERE { ?x a ub:Course ; ub:name ?name "
        "OPTIONAL { ?x ub:emailAddress ?mail } } LIMIT 50"))
    checker.select("typed+lang literals", (
        "SELECT ?v WHERE { VALUES ?v { 42 \"x\"@en \"y\" 2.5 true <urn:z> } }"))
    checker.ask()
    checker.construct()
    checker.errors()
    print(f"{checker.passed} passed, {checker.failed} failed")
    sys.exit(1 if checker.failed else 0)


if __name__ == "__main__":
    main()
