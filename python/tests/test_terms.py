"""Terms: construction, str/repr/eq/hash like pyoxigraph's, rdflib conversion, and round
trips of every kind through a load and a query."""

import pickle

import pytest

import quiver
from quiver import BlankNode, Literal, NamedNode

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"

# Every kind of term, and literals with characters that need escaping.
OBJECTS = [
    NamedNode("http://example.com/o"),
    NamedNode("http://example.com/é?x=1#f"),
    BlankNode("b1"),
    Literal("plain"),
    Literal("chat", language="fr"),
    Literal("colour", language="en-GB"),
    Literal("42", datatype=NamedNode(XSD + "integer")),
    Literal("-1.5", datatype=NamedNode(XSD + "decimal")),
    Literal("2024-01-31", datatype=NamedNode(XSD + "date")),
    Literal("x", datatype=NamedNode("http://example.com/custom")),
    Literal('quote " backslash \\ newline \n tab \t return \r'),
    Literal("unicode é ☃ 😀"),
    Literal(""),
]


def test_named_node():
    node = NamedNode("http://example.com/a")
    assert node.value == "http://example.com/a"
    assert str(node) == "<http://example.com/a>"
    assert repr(node) == "<NamedNode value=http://example.com/a>"
    assert node == NamedNode("http://example.com/a")
    assert node != NamedNode("http://example.com/b")
    assert node != "http://example.com/a"
    assert len({node, NamedNode("http://example.com/a")}) == 1
    with pytest.raises(ValueError, match="IRI"):
        NamedNode("not an iri")


def test_blank_node():
    node = BlankNode("b1")
    assert (node.value, str(node), repr(node)) == ("b1", "_:b1", "<BlankNode value=b1>")
    assert node == BlankNode("b1") and hash(node) == hash(BlankNode("b1"))
    assert BlankNode() != BlankNode()


def test_literal():
    simple = Literal("a")
    assert (simple.value, simple.language, simple.datatype) == ("a", None, NamedNode(XSD + "string"))
    assert str(simple) == '"a"'
    assert repr(simple) == f"<Literal value=a datatype=<NamedNode value={XSD}string>>"
    tagged = Literal("chat", language="fr")
    assert (tagged.language, tagged.datatype) == ("fr", NamedNode(RDF + "langString"))
    assert str(tagged) == '"chat"@fr' and repr(tagged) == "<Literal value=chat language=fr>"
    assert Literal("1", datatype=NamedNode(XSD + "integer")) == Literal(1)
    assert Literal(True) == Literal("true", datatype=NamedNode(XSD + "boolean"))
    assert Literal(1.5).datatype == NamedNode(XSD + "double")
    assert Literal("a") != Literal("a", language="en")
    assert str(Literal('a"b\n')) == '"a\\"b\\n"'
    with pytest.raises(TypeError):
        Literal(b"bytes")


def test_triple():
    triple = quiver.Triple(BlankNode("s"), NamedNode("http://e/p"), Literal(1))
    subject, predicate, obj = triple
    assert (subject, predicate, obj) == (BlankNode("s"), NamedNode("http://e/p"), Literal(1))
    assert triple == quiver.Triple(BlankNode("s"), NamedNode("http://e/p"), Literal(1))
    assert len({triple, quiver.Triple(BlankNode("s"), NamedNode("http://e/p"), Literal(1))}) == 1
    assert str(triple) == '_:s <http://e/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer>'


def test_pickle_round_trip():
    for term in [NamedNode("http://e/a"), BlankNode("x")]:
        assert pickle.loads(pickle.dumps(term)) == term


def test_to_rdflib():
    import rdflib

    assert NamedNode("http://e/a").to_rdflib() == rdflib.URIRef("http://e/a")
    assert BlankNode("b").to_rdflib() == rdflib.BNode("b")
    assert Literal("chat", language="fr").to_rdflib() == rdflib.Literal("chat", lang="fr")
    assert Literal(42).to_rdflib() == rdflib.Literal(42)
    assert Literal(42).to_rdflib().toPython() == 42
    assert Literal("s").to_rdflib() == rdflib.Literal("s")
    custom = Literal("x", datatype=NamedNode("http://e/t")).to_rdflib()
    assert custom.datatype == rdflib.URIRef("http://e/t")


def _document():
    lines = []
    for i, obj in enumerate(OBJECTS):
        lines.append(f"<http://example.com/s{i}> <http://example.com/p> {obj} .")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("format", ["nt", "application/n-triples", "ttl"])
def test_every_kind_round_trips_through_load_and_query(format):
    store = quiver.Store()
    store.load(_document().encode(), format)
    assert len(store) == len(OBJECTS)
    rows = store.query("SELECT ?s ?o { ?s <http://example.com/p> ?o }")
    got = {row["s"].value: row["o"] for row in rows}
    assert got == {f"http://example.com/s{i}": obj for i, obj in enumerate(OBJECTS)}


def test_every_kind_round_trips_through_values():
    store = quiver.Store()
    for obj in OBJECTS:
        if isinstance(obj, BlankNode):
            continue  # a blank node in VALUES is not SPARQL
        (row,) = list(store.query(f"SELECT ?x {{ VALUES ?x {{ {obj} }} }}"))
        assert row["x"] == obj
        assert type(row["x"]) is type(obj)


def test_same_terms_as_rdflib_reads():
    import rdflib

    graph = rdflib.Graph()
    graph.parse(data=_document(), format="nt")
    store = quiver.Store()
    store.load(_document(), "nt")
    ours = {
        (row["s"].to_rdflib(), row["o"].to_rdflib())
        for row in store.query("SELECT ?s ?o { ?s ?p ?o }")
    }
    theirs = {(s, o) for s, _, o in graph}
    # rdflib renames blank nodes: compare those by kind only.
    def strip(pairs):
        return {(s, "bnode" if isinstance(o, rdflib.BNode) else o) for s, o in pairs}

    assert strip(ours) == strip(theirs)
