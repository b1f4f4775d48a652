"""An rdflib store backed by Quiver: ``rdflib.Graph(store="Quiver")``.

Registered through the ``rdflib.plugins.store`` entry point, so rdflib finds it by name once
the package is installed. ``graph.query(...)`` runs in Quiver (SPARQL text; rdflib's own
evaluator takes over for prepared query objects and ``initBindings``), and ``triples()``
patterns are answered by Quiver too.

Writes go to Quiver too: added triples are buffered and loaded in one go before the next
read or write (``graph.parse(...)`` is one bulk load), ``graph.remove(pattern)`` deletes
the matching triples in one transaction, and ``graph.update(...)`` runs SPARQL Update in
Quiver (rdflib's own evaluator takes over for prepared updates and ``initBindings``).

    >>> import rdflib
    >>> graph = rdflib.Graph(store="Quiver")
    >>> graph.parse(data="<http://e/a> <http://e/p> 1 .", format="nt")  # doctest: +ELLIPSIS
    <Graph ...>
    >>> [row.o.toPython() for row in graph.query("SELECT ?o { ?s ?p ?o }")]
    [1]
"""

import re

import rdflib
from rdflib.query import Result
from rdflib.store import VALID_STORE, Store as RdflibStore

import quiver

_DECLARED_PREFIX = re.compile(r"PREFIX\s+([A-Za-z][\w.-]*)?\s*:", re.IGNORECASE)


def to_rdflib(term):
    """The rdflib term of a Quiver term (None stays None)."""
    return None if term is None else term.to_rdflib()


def _prologue(text, namespaces):
    """PREFIX declarations of ``namespaces`` that ``text`` does not declare itself."""
    declared = {m.group(1) or "" for m in _DECLARED_PREFIX.finditer(text)}
    return "".join(
        f"PREFIX {prefix}: <{namespace}>\n"
        for prefix, namespace in (namespaces or {}).items()
        if prefix not in declared
    )


def _from_rdflib(term):
    """The Quiver term of an rdflib term."""
    if isinstance(term, rdflib.URIRef):
        return quiver.NamedNode(str(term))
    if isinstance(term, rdflib.BNode):
        return quiver.BlankNode(str(term))
    if isinstance(term, rdflib.Literal):
        if term.language:
            return quiver.Literal(str(term), language=term.language)
        if term.datatype:
            return quiver.Literal(str(term), datatype=quiver.NamedNode(str(term.datatype)))
        return quiver.Literal(str(term))
    raise TypeError(f"not an RDF term: {term!r}")


def _ntriples(triple):
    subject, predicate, obj = triple
    if isinstance(subject, rdflib.BNode):
        subject_text = f"_:{subject}"
    else:
        subject_text = subject.n3()
    object_text = f"_:{obj}" if isinstance(obj, rdflib.BNode) else obj.n3()
    return f"{subject_text} {predicate.n3()} {object_text} .\n"


class QuiverStore(RdflibStore):
    """rdflib's ``Store`` interface over a ``quiver.Store``.

    ``configuration`` is a store directory (``graph.open(path)`` too); without one the
    store is in memory. ``store.quiver`` is the underlying ``quiver.Store``.
    """

    context_aware = False
    formula_aware = False
    transaction_aware = False
    graph_aware = False

    def __init__(self, configuration=None, identifier=None):
        self.quiver = quiver.Store()
        self._pending = []
        self._namespaces = {}
        self._prefixes = {}
        super().__init__(configuration, identifier)

    def open(self, configuration, create=False):
        self.quiver = quiver.Store(configuration)
        return VALID_STORE

    def close(self, commit_pending_transaction=False):
        self._flush()
        # Releases the store directory (its write lock goes with the last reference), so
        # that it can be opened again, here or by another process.
        self.quiver = quiver.Store()

    # Writing: buffered, loaded before the next read.

    def add(self, triple, context=None, quoted=False):
        if quoted:
            raise NotImplementedError("Quiver does not store formulae")
        self._pending.append(_ntriples(triple))

    def addN(self, quads):
        for subject, predicate, obj, _context in quads:
            self._pending.append(_ntriples((subject, predicate, obj)))

    def remove(self, triple, context=None):
        self._flush()
        if not any(isinstance(term, rdflib.BNode) for term in triple):
            # One transaction: the pattern's triples, whatever their number.
            names = ("s", "p", "o")
            pattern = " ".join(
                f"?{name}" if term is None else term.n3()
                for name, term in zip(names, triple)
            )
            self.quiver.update("DELETE WHERE { %s }" % pattern)
            return
        # A blank node cannot be named in SPARQL: remove the matching triples one by one.
        for (subject, predicate, obj), _contexts in list(self.triples(triple)):
            self.quiver.remove(
                (_from_rdflib(subject), _from_rdflib(predicate), _from_rdflib(obj))
            )

    def update(self, update, initNs, initBindings, queryGraph, **kwargs):
        if not isinstance(update, str) or initBindings:
            raise NotImplementedError("rdflib evaluates prepared updates and initBindings")
        self._flush()
        self.quiver.update(_prologue(update, initNs) + update)

    def _flush(self):
        if self._pending:
            data = "".join(self._pending).encode()
            self._pending = []
            self.quiver.load(data, "nt")

    # Reading.

    def triples(self, triple_pattern, context=None):
        self._flush()
        names = ("s", "p", "o")
        # A blank node cannot be named in SPARQL: its position is a variable, and the
        # solutions are filtered on its label here.
        patterns = [
            f"?{name}" if term is None or isinstance(term, rdflib.BNode) else term.n3()
            for name, term in zip(names, triple_pattern)
        ]
        query = "SELECT * WHERE { %s }" % " ".join(patterns)
        for solution in self.quiver.query(query):
            terms = []
            for name, term in zip(names, triple_pattern):
                if term is None:
                    terms.append(to_rdflib(solution[name]))
                elif isinstance(term, rdflib.BNode):
                    value = solution[name]
                    if not isinstance(value, quiver.BlankNode) or value.value != str(term):
                        break
                    terms.append(term)
                else:
                    terms.append(term)
            else:
                yield tuple(terms), iter([None])

    def __len__(self, context=None):
        self._flush()
        return len(self.quiver)

    def contexts(self, triple=None):
        return iter([])

    def query(self, query, initNs, initBindings, queryGraph, **kwargs):
        if not isinstance(query, str) or initBindings:
            raise NotImplementedError("rdflib evaluates prepared queries and initBindings")
        self._flush()
        answer = self.quiver.query(_prologue(query, initNs) + query)
        if isinstance(answer, bool):
            result = Result("ASK")
            result.askAnswer = answer
        elif isinstance(answer, quiver.QuerySolutions):
            result = Result("SELECT")
            variables = [rdflib.Variable(v.value) for v in answer.variables]
            result.vars = variables
            result.bindings = [
                {
                    variable: to_rdflib(value)
                    for variable, value in zip(variables, solution)
                    if value is not None
                }
                for solution in answer
            ]
        else:
            result = Result("CONSTRUCT")
            graph = rdflib.Graph()
            for triple in answer:
                graph.add(tuple(to_rdflib(term) for term in triple))
            result.graph = graph
        return result

    # Namespaces, kept for rdflib's namespace manager.

    def bind(self, prefix, namespace, override=True):
        if not override and prefix in self._namespaces:
            return
        old = self._namespaces.get(prefix)
        if old is not None:
            self._prefixes.pop(old, None)
        self._namespaces[prefix] = namespace
        self._prefixes[namespace] = prefix

    def namespace(self, prefix):
        return self._namespaces.get(prefix)

    def prefix(self, namespace):
        return self._prefixes.get(namespace)

    def namespaces(self):
        yield from self._namespaces.items()
