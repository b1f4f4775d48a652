"""Quiver, an in-memory RDF graph store and SPARQL engine, from Python.

    >>> import quiver
    >>> store = quiver.Store()
    >>> store.load(b'<http://example.com/a> <http://example.com/p> "x" .', "nt")
    >>> [s["o"].value for s in store.query("SELECT ?o { ?s ?p ?o }")]
    ['x']

``Store.query`` returns ``QuerySolutions`` for SELECT (iterate it, or take the whole table
with ``to_arrow()`` / ``to_pandas()``), a ``bool`` for ASK, ``QueryTriples`` for CONSTRUCT
and DESCRIBE. The rdflib store ``rdflib.Graph(store="Quiver")`` lives in
``quiver.rdflib_store``.
"""

from ._quiver import (
    BlankNode,
    Literal,
    NamedNode,
    QueryError,
    QuerySolution,
    QuerySolutions,
    QueryTimeout,
    QueryTriples,
    Store,
    Triple,
    Variable,
)

__all__ = [
    "BlankNode",
    "Literal",
    "NamedNode",
    "QueryError",
    "QuerySolution",
    "QuerySolutions",
    "QueryTimeout",
    "QueryTriples",
    "Store",
    "Triple",
    "Variable",
]
