"""The rdflib store plugin: found by name through its entry point, it answers the same rows
as rdflib's own in-memory store for a set of queries, and its triples() patterns too; adds,
removals and SPARQL updates leave it with the same triples as rdflib's store."""

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


def all_triples(graph):
    return rows(graph.triples((None, None, None)))


E = rdflib.Namespace("http://example.com/")

# (operation, argument): graph.add, graph.remove (a pattern), graph.update (SPARQL).
WRITES = [
    ("add", (E.erin, E.knows, E.alice)),
    ("add", (E.erin, E.name, rdflib.Literal("Erin", lang="en"))),
    ("remove", (E.alice, E.knows, E.bob)),
    ("update", "INSERT DATA { e:frank e:knows e:erin ; e:age 19 }"),
    ("remove", (None, E.age, None)),
    ("update", "DELETE { ?a e:knows ?b } INSERT { ?b e:knownBy ?a } WHERE { ?a e:knows ?b }"),
    ("add", (E.gina, E.knows, E.frank)),
    ("remove", (E.carol, None, None)),
    ("update", "DELETE WHERE { ?s e:label ?l }"),
    ("update", "PREFIX x: <http://example.com/> INSERT { ?s x:named true } WHERE { ?s x:name ?n }"),
]


def test_writes_leave_the_same_triples_as_rdflib():
    ours, theirs = graphs()
    before = all_triples(ours)
    for operation, argument in WRITES:
        for graph in (ours, theirs):
            getattr(graph, operation)(argument)
        now = all_triples(ours)
        assert now == all_triples(theirs), (operation, argument)
        assert now != before, f"the step changed nothing: {operation} {argument}"
        assert len(ours) == len(theirs)
        before = now
    # Reads after writes go through Quiver's SPARQL too.
    query = "SELECT ?a ?b WHERE { ?a e:knownBy ?b }"
    assert rows(ours.query(query)) == rows(theirs.query(query))


def test_removing_triples_with_a_blank_node():
    ours, theirs = graphs()
    for graph in (ours, theirs):
        ((_, _, made),) = list(graph.triples((None, E.made, None)))
        graph.remove((made, None, None))
        assert list(graph.objects(made, E.year)) == []
    assert all_triples(ours) == all_triples(theirs)


def test_update_errors_raise_and_change_nothing():
    ours, _ = graphs()
    before = all_triples(ours)
    with pytest.raises(SyntaxError):
        ours.update("INSERT DATA { e:a e:b ?c }")
    with pytest.raises(quiver.QueryError):
        ours.update("CREATE GRAPH <http://example.com/g> ; CREATE GRAPH <http://example.com/g>")
    assert all_triples(ours) == before


def test_a_store_directory_keeps_rdflib_writes(tmp_path):
    graph = rdflib.Graph(store="Quiver")
    graph.open(str(tmp_path / "store"))
    graph.parse(data=DATA, format="turtle")
    graph.update("INSERT DATA { <http://example.com/x> <http://example.com/y> 1 }")
    graph.remove((E.dave, None, None))
    expected = all_triples(graph)
    graph.close()

    again = rdflib.Graph(store="Quiver")
    again.open(str(tmp_path / "store"))
    assert all_triples(again) == expected
