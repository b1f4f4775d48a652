"""Reasoning from Python: `Store.reason`, `query(reasoning=True)`, the entailment kept
current by loads and updates, and answers equal to those of owlrl's closure read by
pyoxigraph."""

import owlrl
import pyoxigraph
import pytest
import rdflib

import quiver

E = "http://example.org/"

ONTOLOGY = f"""
@prefix e: <{E}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
e:Student rdfs:subClassOf e:Person .
e:advisor rdfs:range e:Professor .
e:Professor rdfs:subClassOf e:Person .
e:advises owl:inverseOf e:advisor .
e:partOf a owl:TransitiveProperty .
"""

DATA = f"""
@prefix e: <{E}> .
e:ann a e:Student ; e:advisor e:bob .
e:lab e:partOf e:dept . e:dept e:partOf e:uni .
"""

PERSONS = f"SELECT ?x WHERE {{ ?x a <{E}Person> }}"


def names(solutions):
    return sorted(str(row[0]) for row in solutions)


def test_reason_and_query_with_reasoning():
    store = quiver.Store()
    store.load(ONTOLOGY + DATA, "text/turtle")
    assert store.reasoning is None
    with pytest.raises(ValueError, match="no entailment"):
        store.query(PERSONS, reasoning=True)
    store.reason("owl-rl")
    assert store.reasoning == "owl-rl"
    assert names(store.query(PERSONS)) == []
    assert names(store.query(PERSONS, reasoning=True)) == [f"<{E}ann>", f"<{E}bob>"]
    # Updates and loads keep it current.
    store.update(f"INSERT DATA {{ <{E}cy> a <{E}Student> }}")
    assert f"<{E}cy>" in names(store.query(PERSONS, reasoning=True))
    store.load(f"<{E}dan> <{E}advisor> <{E}eve> .", "application/n-triples")
    assert f"<{E}eve>" in names(store.query(PERSONS, reasoning=True))
    store.update(f"DELETE DATA {{ <{E}ann> <{E}advisor> <{E}bob> }}")
    assert f"<{E}bob>" not in names(store.query(PERSONS, reasoning=True))
    store.reason(None)
    assert store.reasoning is None
    with pytest.raises(ValueError):
        store.reason("owl-full")


def test_answers_equal_owlrl_closure_in_pyoxigraph():
    graph = rdflib.Graph()
    graph.parse(data=ONTOLOGY + DATA, format="turtle")
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(graph)
    reference = pyoxigraph.Store()
    reference.load(graph.serialize(format="nt"), pyoxigraph.RdfFormat.N_TRIPLES)
    store = quiver.Store()
    store.load(ONTOLOGY + DATA, "text/turtle")
    store.reason("owl-rl")
    for query in [
        PERSONS,
        f"SELECT ?x WHERE {{ <{E}bob> <{E}advises> ?x }}",
        f"SELECT ?x WHERE {{ <{E}lab> <{E}partOf> ?x }}",
        f"SELECT ?x WHERE {{ ?x a <{E}Professor> }}",
    ]:
        expected = sorted(str(s[0]) for s in reference.query(query))
        assert names(store.query(query, reasoning=True)) == expected, query
