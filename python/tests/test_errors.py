"""Errors raise Python exceptions with the message and location, and leave the interpreter
and the store working: bad SPARQL, malformed RDF, missing files, timeouts, result caps,
failed updates."""

import re
import time

import pytest

import quiver

TRIPLE = b"<http://e/a> <http://e/p> <http://e/b> .\n"


@pytest.fixture
def store():
    store = quiver.Store()
    store.load(TRIPLE, "nt")
    return store


def test_bad_sparql_raises_syntax_error_with_line_and_column(store):
    with pytest.raises(SyntaxError) as caught:
        store.query("SELECT ?x\nWHERE {\n  ?x ?p }")
    message = str(caught.value)
    assert re.search(r"\b3:\d+", message), message
    with pytest.raises(SyntaxError, match=r"1:\d+: undeclared prefix 'ex:'"):
        store.query("SELECT * { ?s ex:p ?o }")
    # The store still answers.
    assert store.query("ASK { ?s ?p ?o }") is True


def test_malformed_rdf_raises_syntax_error_with_location_and_keeps_the_store(store, tmp_path):
    with pytest.raises(SyntaxError, match=r"input:2:\d+"):
        store.load(TRIPLE + b"<http://e/a> <http://e/p> .\n", "nt")
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix e: <http://e/> .\ne:a e:p e:b .\ne:c e:p\n")
    with pytest.raises(SyntaxError, match=re.escape(str(bad)) + r":\d+:\d+"):
        store.load(path=bad)
    assert len(store) == 1


def test_missing_file_raises_file_not_found_with_the_path(store, tmp_path):
    missing = tmp_path / "missing.nt"
    with pytest.raises(FileNotFoundError) as caught:
        store.load(path=missing)
    assert str(missing) in str(caught.value)
    assert caught.value.filename == str(missing)
    with pytest.raises(FileNotFoundError):
        store.load(path=missing, base_iri="http://e/")
    assert len(store) == 1


def test_bad_arguments(store):
    with pytest.raises(ValueError, match="format"):
        store.load(TRIPLE)
    with pytest.raises(ValueError, match="unknown RDF format 'nope'"):
        store.load(TRIPLE, "nope")
    with pytest.raises(ValueError):
        store.query("ASK {}", timeout=-1)
    with pytest.raises(ValueError):
        store.query("ASK {}", threads=0)
    with pytest.raises(TypeError):
        store.load(12, "nt")


# A cross product of every triple with every triple, counted: billions of pairs on LUBM-1.
ENDLESS = "SELECT (COUNT(*) AS ?n) { ?a ?p ?b . ?c ?q ?d }"


def test_timeout_raises_query_timeout(lubm1):
    started = time.monotonic()
    with pytest.raises(quiver.QueryTimeout, match="timed out") as caught:
        lubm1.query(ENDLESS, timeout=0.2, threads=1)
    assert isinstance(caught.value, TimeoutError)
    assert time.monotonic() - started < 10
    assert len(list(lubm1.query("SELECT * { ?s ?p ?o } LIMIT 2"))) == 2


def test_max_results_raises_query_error(lubm1):
    with pytest.raises(quiver.QueryError, match="limit of 10 rows"):
        lubm1.query("SELECT * { ?s ?p ?o }", max_results=10)


def test_max_memory_raises_query_error_and_changes_nothing(lubm1):
    cross = "SELECT * { ?a ?b ?c . ?d ?e ?f }"
    with pytest.raises(quiver.QueryError, match="memory limit of 1048576 bytes"):
        lubm1.query(cross, max_memory=1 << 20)
    # Within the limit, the same store answers.
    assert len(list(lubm1.query("SELECT * { ?s ?p ?o } LIMIT 5", max_memory=1 << 20))) == 5
    store = quiver.Store()
    store.update("INSERT DATA { <http://e/a> <http://e/p> 1, 2, 3 }")
    with pytest.raises(quiver.QueryError, match="memory limit"):
        store.update(
            "INSERT { ?a <http://e/q> ?x } WHERE { ?a ?b ?x . ?c ?d ?e . ?f ?g ?h }",
            max_memory=64,
        )
    assert len(store) == 3


def test_invalid_update_raises_syntax_error_with_location(store):
    with pytest.raises(SyntaxError) as caught:
        store.update("INSERT DATA {\n  <http://e/x> <http://e/p> ?y }")
    assert re.search(r"\b2:\d+", str(caught.value)), str(caught.value)
    with pytest.raises(SyntaxError, match="x:"):
        store.update("INSERT DATA { x:a <http://e/p> 1 }")
    assert len(store) == 1


def test_failed_update_raises_and_changes_nothing(store):
    store.update("CREATE GRAPH <http://e/g>")
    with pytest.raises(quiver.QueryError, match="http://e/g"):
        store.update(
            "INSERT DATA { <http://e/x> <http://e/p> <http://e/y> } ; CREATE GRAPH <http://e/g>"
        )
    assert len(store) == 1
    assert not store.query("ASK { <http://e/x> ?p ?o }")
    with pytest.raises(quiver.QueryError):
        store.update("LOAD <file:///nonexistent/quiver-test.ttl>")
    with pytest.raises(ValueError):
        store.update("CLEAR ALL", timeout=-1)
    with pytest.raises(TypeError):
        store.add("not a quad")
    with pytest.raises(ValueError):
        store.add((quiver.NamedNode("http://e/a"), quiver.NamedNode("http://e/p")))
    with pytest.raises(TypeError):
        store.add((quiver.Literal("x"), quiver.NamedNode("http://e/p"), quiver.Literal("y")))
    assert len(store) == 1
