"""Query results: LUBM-1 q1–q12 and the SPARQL 1.1 queries give the same bag of rows as
pyoxigraph on the same data and as `quiver query`; ASK, CONSTRUCT, DESCRIBE, solution
access, loading by path and into a named graph (JSON-LD too), the store directory."""

import collections
import json
import subprocess

import pytest

import quiver
from conftest import lubm_queries, require

QUERIES = lubm_queries()
# Triangles through a university that need more than one university to close.
EMPTY_ON_LUBM1 = {"q1", "q3"}


def bag(solutions):
    """A bag of rows, each a tuple of N-Triples terms (None when unbound)."""
    return collections.Counter(
        tuple(None if term is None else str(term) for term in row) for row in solutions
    )


def json_term(cell):
    if cell["type"] == "uri":
        return str(quiver.NamedNode(cell["value"]))
    if cell["type"] == "bnode":
        return str(quiver.BlankNode(cell["value"]))
    if "xml:lang" in cell:
        return str(quiver.Literal(cell["value"], language=cell["xml:lang"]))
    if "datatype" in cell:
        datatype = quiver.NamedNode(cell["datatype"])
        return str(quiver.Literal(cell["value"], datatype=datatype))
    return str(quiver.Literal(cell["value"]))


@pytest.mark.parametrize("name,text", QUERIES, ids=[name for name, _ in QUERIES])
def test_same_rows_as_pyoxigraph(lubm1, lubm1_oxigraph, name, text):
    ours = lubm1.query(text)
    theirs = lubm1_oxigraph.query(text)
    assert [v.value for v in ours.variables] == [v.value for v in theirs.variables]
    expected = bag(theirs)
    assert (sum(expected.values()) == 0) == (name in EMPTY_ON_LUBM1), name
    assert bag(ours) == expected


@pytest.mark.parametrize("name,text", QUERIES, ids=[name for name, _ in QUERIES])
def test_same_rows_as_quiver_query(quiver_bin, lubm1_dir, name, text):
    # The directory written by `quiver load` opens here too.
    store = quiver.Store(lubm1_dir)
    output = subprocess.run(
        [quiver_bin, "query", "--location", lubm1_dir, "--query", text, "--results-format", "json"],
        check=True,
        capture_output=True,
    ).stdout
    document = json.loads(output)
    variables = document["head"]["vars"]
    expected = collections.Counter(
        tuple(json_term(row[v]) if v in row else None for v in variables)
        for row in document["results"]["bindings"]
    )
    ours = store.query(text)
    assert [v.value for v in ours.variables] == variables
    assert bag(ours) == expected


def test_solution_access(lubm1):
    solutions = lubm1.query(
        "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> "
        "SELECT ?course ?name ?none { ?course a ub:GraduateCourse ; ub:name ?name } "
        "ORDER BY ?name LIMIT 3"
    )
    assert [v.value for v in solutions.variables] == ["course", "name", "none"]
    assert solutions.variables[0] == quiver.Variable("course")
    assert len(solutions) == 3
    first = next(solutions)
    assert first["name"] == first.name == first[1] == first[quiver.Variable("name")]
    assert first["?name"] == first["name"]
    assert first["none"] is None and first.none is None
    assert isinstance(first["course"], quiver.NamedNode)
    course, name, none = first
    assert (course, name, none) == (first.course, first.name, None)
    assert first.name == quiver.Literal("GraduateCourse0")
    with pytest.raises(KeyError):
        first["missing"]
    with pytest.raises(AttributeError):
        first.missing
    with pytest.raises(IndexError):
        first[3]
    assert len(list(solutions)) == 2


def test_ask_construct_describe(lubm1):
    prefix = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> "
    assert lubm1.query(prefix + "ASK { ?x a ub:University }") is True
    assert lubm1.query(prefix + "ASK { ?x a ub:Nothing }") is False
    triples = list(
        lubm1.query(
            prefix + "CONSTRUCT { ?x ub:label ?n } WHERE { ?x a ub:Course ; ub:name ?n }"
        )
    )
    courses = lubm1.query(prefix + "SELECT ?x ?n { ?x a ub:Course ; ub:name ?n }")
    assert {(t.subject, t.object) for t in triples} == {(r.x, r.n) for r in courses}
    assert all(t.predicate == quiver.NamedNode(prefix[12:-2] + "label") for t in triples)
    described = list(lubm1.query("DESCRIBE <http://www.Department0.University0.edu>"))
    assert described and all(
        t.subject == quiver.NamedNode("http://www.Department0.University0.edu") for t in described
    )


def test_load_paths_formats_and_graphs(tmp_path):
    data = tmp_path / "data.ttl"
    data.write_text("@prefix e: <http://e/> . e:a e:p e:b , <c> .\n")
    store = quiver.Store()
    store.load(path=data, base_iri="http://base/")
    assert bag(store.query("SELECT ?o { ?s ?p ?o }")) == bag(
        [[quiver.NamedNode("http://e/b")], [quiver.NamedNode("http://base/c")]]
    )
    store.load(path=str(data), to_graph=quiver.NamedNode("http://e/g"), base_iri="http://b/")
    assert store.query("ASK { GRAPH <http://e/g> { <http://e/a> <http://e/p> <http://b/c> } }")
    with open(data, "rb") as file:
        store.load(file, "text/turtle", base_iri="http://f/")
    assert store.query("ASK { <http://e/a> <http://e/p> <http://f/c> }")
    assert store.query("SELECT (COUNT(*) AS ?n) { ?s ?p ?o }").__next__().n == quiver.Literal(3)


def test_triple_terms_come_back_as_triples(tmp_path):
    """RDF 1.2: a triple term of the data is a quiver.Triple in a solution, and one
    built in Python is an object that queries find."""
    data = tmp_path / "claims.ttl"
    data.write_text("@prefix e: <http://e/> . e:a e:said <<( e:b e:age 23 )>> .\n")
    store = quiver.Store()
    store.load(path=data)
    (row,) = list(store.query("SELECT ?t { <http://e/a> <http://e/said> ?t }"))
    e = lambda name: quiver.NamedNode("http://e/" + name)
    assert row.t == quiver.Triple(e("b"), e("age"), quiver.Literal(23))
    subject, predicate, obj = row.t
    assert (subject, predicate, obj) == (e("b"), e("age"), quiver.Literal(23))
    (row,) = list(store.query("SELECT ?x { ?x <http://e/said> <<( <http://e/b> ?p 23 )>> }"))
    assert row.x == e("a")


def test_json_ld_loads_like_pyoxigraph_reads_it(tmp_path):
    pyoxigraph = require("pyoxigraph")
    document = json.dumps(
        {
            "@context": {"e": "http://e/", "name": "http://e/name"},
            "@graph": [
                {"@id": "e:alice", "name": [{"@value": "Alice"}, {"@value": "Alicia", "@language": "es"}]},
                {"@id": "e:bob", "e:age": {"@value": "42", "@type": "http://www.w3.org/2001/XMLSchema#integer"}},
            ],
        }
    )
    path = tmp_path / "people.jsonld"
    path.write_text(document)
    store = quiver.Store()
    store.load(path=path)
    store.load(document.encode(), "application/ld+json", to_graph=quiver.NamedNode("http://e/g"))
    reference = pyoxigraph.Store()
    reference.load(document.encode(), pyoxigraph.RdfFormat.JSON_LD)
    query = "SELECT ?s ?p ?o { ?s ?p ?o }"
    expected = collections.Counter(
        tuple(str(term) for term in row) for row in reference.query(query)
    )
    got = collections.Counter(tuple(str(term) for term in row) for row in store.query(query))
    assert got == expected and len(expected) == 3
    assert store.query("ASK { GRAPH <http://e/g> { <http://e/alice> <http://e/name> 'Alice' } }")


def test_store_directory_persists_loads(tmp_path):
    location = tmp_path / "db"
    store = quiver.Store(location)
    assert len(store) == 0
    store.load(b"<http://e/a> <http://e/p> <http://e/b> .", "nt")
    store.load(b"<http://e/a> <http://e/p> <http://e/c> .", "nt")
    del store
    reopened = quiver.Store(str(location))
    assert len(reopened) == 2
    assert bag(reopened.query("SELECT ?o { <http://e/a> ?p ?o }")) == bag(
        [[quiver.NamedNode("http://e/b")], [quiver.NamedNode("http://e/c")]]
    )


def test_load_lubm_twice_keeps_one_copy_of_each_triple():
    store = quiver.Store()
    store.load_lubm(1)
    once = len(store)
    store.load_lubm(1)
    assert once > 100_000 and len(store) == once


def test_code_written_for_pyoxigraph_runs_by_changing_the_import(tmp_path):
    """The same calls on both packages: load with pyoxigraph's RdfFormat and keywords, query,
    read solutions by name, compare terms by their N-Triples text."""
    pyoxigraph = __import__("pyoxigraph")
    data = tmp_path / "data.ttl"
    data.write_text('@prefix e: <http://e/> . e:a e:p "x"@en , 3 ; e:q [ e:r e:b ] .\n')
    answers = []
    for package in (pyoxigraph, quiver):
        store = package.Store()
        store.load(path=str(data), format=pyoxigraph.RdfFormat.TURTLE, base_iri="http://e/")
        with open(data, "rb") as file:
            store.load(file, pyoxigraph.RdfFormat.TURTLE, to_graph=package.NamedNode("http://e/g"))
        rows = store.query(
            "SELECT ?o ?g { { ?s <http://e/p> ?o } UNION { GRAPH ?g { ?s <http://e/p> ?o } } }"
        )
        answers.append(
            collections.Counter((str(s["o"]), None if s["g"] is None else str(s["g"])) for s in rows)
        )
    assert answers[0] == answers[1] and sum(answers[0].values()) == 4


def test_results_keep_the_store_they_ran_on():
    store = quiver.Store()
    store.load(b"<http://e/a> <http://e/p> <http://e/b> .", "nt")
    solutions = store.query("SELECT ?o { ?s ?p ?o }")
    store.load(b"<http://e/a> <http://e/p> <http://e/c> .", "nt")
    assert [str(s.o) for s in solutions] == ["<http://e/b>"]
    assert len(store.query("SELECT ?o { ?s ?p ?o }")) == 2


def test_solutions_read_in_any_order_and_after_the_iteration(lubm1, lubm1_oxigraph):
    # Terms are decoded when read, in blocks of rows: solutions kept past the iteration,
    # read backwards, by name and by position, from several threads, with values repeated
    # across blocks (departments) and unique ones (students), give pyoxigraph's rows.
    import random
    import threading

    text = """PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>
        SELECT ?x ?c ?d WHERE { ?x ub:takesCourse ?c . ?x ub:memberOf ?d }"""
    solutions = list(lubm1.query(text))
    assert len(solutions) > 3 * 1024
    expected = bag(lubm1_oxigraph.query(text))
    order = list(range(len(solutions)))
    random.Random(7).shuffle(order)
    rows = [None] * len(solutions)

    def read(indexes):
        for i in indexes:
            s = solutions[i]
            rows[i] = (s["x"], s[1], s[-1]) if i % 2 else (s[0], s["?c"], s.d)

    threads = [threading.Thread(target=read, args=(order[k::4],)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert bag(rows) == expected
    # Read in order by one thread, a repeated value is one object within a column.
    departments = [s["d"] for s in lubm1.query(text)]
    assert len({id(d) for d in departments}) == len(set(departments)) < 100
