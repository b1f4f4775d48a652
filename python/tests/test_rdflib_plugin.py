"""The rdflib store plugin: found by name through its entry point, it answers the same rows
as rdflib's own in-memory store for a set of queries, and its triples() patterns too."""

import collections

import pytest
import rdflib

import quiver
from quiver.rdflib_store import QuiverStore

DATA = """
@prefix e: <http://example.com/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
e:alice a e:Person ; e:name "Alice" ; e:age 34 ; e:knows e:bob , e:carol ; e:label "Alicia"@es .
e:bob a e:Person ; e:name "Bob" ; e:age 27 ; e:knows e:carol .
e:carol a e:Person ; e:name "Carol" ; e:age "41"^^xsd:integer .
e:dave a e:Robot ; e:name "Dave" ; e:made [ e:year 1999 ] .
"""

QUERIES = [
    "SELECT ?s ?p ?o WHERE { ?s ?p ?o }",
    "SELECT ?n WHERE { ?p a e:Person ; e:name ?n }",
    "SELECT ?a ?b WHERE { ?a e:knows ?b . ?b e:knows ?c }",
    "SELECT ?n ?age WHERE { ?p e:name ?n OPTIONAL { ?p e:age ?age } }",
    "SELECT ?n WHERE { ?p e:name ?n ; e:age ?age FILTER(?age > 30) } ORDER BY ?n",
    "SELECT (COUNT(?b) AS ?c) ?a WHERE { ?a e:knows ?b } GROUP BY ?a",
    "SELECT ?x WHERE { e:alice e:knows+ ?x }",
    "SELECT ?l WHERE { ?p e:label ?l FILTER(lang(?l) = 'es') }",
    "SELECT DISTINCT ?t WHERE { ?x a ?t }",
    "SELECT ?y WHERE { ?r e:made ?m . ?m e:year ?y }",
]


def graphs():
    ours = rdflib.Graph(store="Quiver")
    ours.bind("e", "http://example.com/")
    ours.parse(data=DATA, format="turtle")
    theirs = rdflib.Graph()
    theirs.bind("e", "http://example.com/")
    theirs.parse(data=DATA, format="turtle")
    return ours, theirs


def rows(result):
    def key(term):
        return "bnode" if isinstance(term, rdflib.BNode) else term

    return collections.Counter(tuple(key(t) for t in row) for row in result)


def test_store_is_found_by_name():
    graph = rdflib.Graph(store="Quiver")
    assert isinstance(graph.store, QuiverStore)
    assert isinstance(graph.store.quiver, quiver.Store)


@pytest.mark.parametrize("query", QUERIES)
def test_same_rows_as_rdflib_memory_store(query):
    ours, theirs = graphs()
    expected = rows(theirs.query(query))
    assert sum(expected.values()) > 0
    assert rows(ours.query(query)) == expected


def test_queries_run_in_quiver(monkeypatch):
    ours, _ = graphs()
    calls = []
    original = quiver.Store.query

    class Spy:
        def __init__(self, store):
            self.store = store

        def query(self, text, **kwargs):
            calls.append(text)
            return original(self.store, text, **kwargs)

        def __getattr__(self, name):
            return getattr(self.store, name)

    ours.store.quiver = Spy(ours.store.quiver)
    list(ours.query("SELECT ?n WHERE { ?p e:name ?n }"))
    assert any("e:name" in text for text in calls)


def test_ask_and_construct():
    ours, theirs = graphs()
    for query in ["ASK { e:alice e:knows e:bob }", "ASK { e:bob e:knows e:alice }"]:
        assert ours.query(query).askAnswer == theirs.query(query).askAnswer
    construct = "CONSTRUCT { ?b e:knownBy ?a } WHERE { ?a e:knows ?b }"
    assert set(ours.query(construct).graph) == set(theirs.query(construct).graph)


PATTERNS = [
    (None, None, None),
    (rdflib.URIRef("http://example.com/alice"), None, None),
    (None, rdflib.URIRef("http://example.com/knows"), None),
    (None, None, rdflib.URIRef("http://example.com/carol")),
    (None, rdflib.URIRef("http://example.com/name"), rdflib.Literal("Bob")),
    (None, None, rdflib.Literal(34)),
    (rdflib.URIRef("http://example.com/bob"), rdflib.URIRef("http://example.com/age"), None),
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_triple_patterns_match_rdflib(pattern):
    ours, theirs = graphs()
    expected = rows(theirs.triples(pattern))
    assert sum(expected.values()) > 0
    assert rows(ours.triples(pattern)) == expected
    assert len(ours) == len(theirs)


def test_blank_node_patterns():
    ours, _ = graphs()
    ((_, _, made),) = list(ours.triples((None, rdflib.URIRef("http://example.com/made"), None)))
    assert isinstance(made, rdflib.BNode)
    assert list(ours.objects(made, rdflib.URIRef("http://example.com/year"))) == [
        rdflib.Literal(1999)
    ]


def test_removal_is_not_supported_yet():
    ours, _ = graphs()
    with pytest.raises(NotImplementedError):
        ours.remove((None, None, None))
