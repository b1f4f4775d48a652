"""Type stubs of the ``quiver`` package (the native module ``quiver._quiver``)."""

import os
import pathlib
from typing import IO, Any, Iterator, List, Optional, Tuple, Union

_Term = Union["NamedNode", "BlankNode", "Literal"]

class NamedNode:
    """An IRI."""

    def __init__(self, value: str) -> None: ...
    @property
    def value(self) -> str: ...
    def to_rdflib(self) -> Any: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class BlankNode:
    """A blank node; ``BlankNode()`` makes a fresh one."""

    def __init__(self, value: Optional[str] = None) -> None: ...
    @property
    def value(self) -> str: ...
    def to_rdflib(self) -> Any: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Literal:
    """A literal: a str with a language or datatype, or a bool, int or float."""

    def __init__(
        self,
        value: Union[str, bool, int, float],
        *,
        datatype: Optional[NamedNode] = None,
        language: Optional[str] = None,
    ) -> None: ...
    @property
    def value(self) -> str: ...
    @property
    def language(self) -> Optional[str]: ...
    @property
    def datatype(self) -> NamedNode: ...
    def to_rdflib(self) -> Any: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Triple:
    """A triple; unpacks as ``subject, predicate, object``."""

    def __init__(
        self, subject: Union[NamedNode, BlankNode], predicate: NamedNode, object: _Term
    ) -> None: ...
    @property
    def subject(self) -> Union[NamedNode, BlankNode]: ...
    @property
    def predicate(self) -> NamedNode: ...
    @property
    def object(self) -> _Term: ...
    def __iter__(self) -> Iterator[_Term]: ...
    def __len__(self) -> int: ...

class Variable:
    """A query variable."""

    def __init__(self, value: str) -> None: ...
    @property
    def value(self) -> str: ...

class QuerySolution:
    """One row: ``solution["x"]``, ``solution.x``, ``solution[0]``; None when unbound."""

    def __getitem__(self, key: Union[str, int, Variable]) -> Optional[_Term]: ...
    def __getattr__(self, name: str) -> Optional[_Term]: ...
    def __iter__(self) -> Iterator[Optional[_Term]]: ...
    def __len__(self) -> int: ...

class QuerySolutions:
    """The rows of a SELECT query."""

    @property
    def variables(self) -> List[Variable]: ...
    def __iter__(self) -> Iterator[QuerySolution]: ...
    def __next__(self) -> QuerySolution: ...
    def __len__(self) -> int: ...
    def to_arrow(self) -> Any:
        """All rows as a ``pyarrow.Table`` (ImportError naming pyarrow without it)."""
    def to_pandas(self) -> Any:
        """All rows as a ``pandas.DataFrame`` (needs pandas and pyarrow)."""

class QueryTriples:
    """The triples of a CONSTRUCT or DESCRIBE query."""

    def __iter__(self) -> Iterator[Triple]: ...
    def __next__(self) -> Triple: ...
    def __len__(self) -> int: ...

class QueryError(Exception):
    """A query that could not run: too many results, its memory limit, a cancellation."""

class QueryTimeout(TimeoutError):
    """A query that ran past its ``timeout``."""

class Store:
    """An RDF store, in memory or in a directory (opened, or created when missing)."""

    def __init__(self, path: Union[str, os.PathLike, None] = None) -> None: ...
    @property
    def path(self) -> Optional[pathlib.Path]: ...
    def load(
        self,
        input: Union[bytes, str, IO[bytes], IO[str], None] = None,
        format: Any = None,
        *,
        path: Union[str, os.PathLike, None] = None,
        base_iri: Optional[str] = None,
        to_graph: Union[NamedNode, BlankNode, None] = None,
    ) -> None:
        """Loads RDF from ``input`` in ``format``, or from the file at ``path``.

        Malformed input raises SyntaxError (``line:column``), a missing file
        FileNotFoundError; the store is then unchanged, and after Ctrl-C too.
        """
    def load_lubm(self, universities: int) -> None:
        """Adds LUBM-``universities``, generated in process."""
    def reason(self, profile: Optional[str] = "owl-rl") -> None:
        """Computes the entailment of the default graph under ``profile`` ("rdfs" or
        "owl-rl"), reading the ontology from the store's own triples; ``None`` drops it.
        Later loads and updates keep it current."""
    def build_text_index(self) -> None:
        """Builds the full-text index of the store's string literals, searched with
        ``?literal quiver:matches "words"`` (and ``?literal quiver:score ?score``); later
        loads and updates keep it current."""
    @property
    def reasoning(self) -> Optional[str]:
        """The profile of the store's entailment, or None."""
    def query(
        self,
        query: str,
        *,
        base_iri: Optional[str] = None,
        timeout: Optional[float] = None,
        max_results: Optional[int] = None,
        threads: Optional[int] = None,
        max_memory: Optional[int] = None,
        reasoning: bool = False,
    ) -> Union[QuerySolutions, bool, QueryTriples]:
        """Runs SPARQL, the GIL released; Ctrl-C cancels it. With ``reasoning=True`` it
        reads the entailment of the default graph (see ``reason``).

        SELECT gives QuerySolutions, ASK a bool, CONSTRUCT/DESCRIBE QueryTriples. Invalid
        SPARQL raises SyntaxError (``line:column``), a time limit QueryTimeout, a result
        over ``max_results`` QueryError, a query whose operators would hold more than
        ``max_memory`` bytes QueryError.
        """
    def update(
        self,
        update: str,
        *,
        base_iri: Optional[str] = None,
        timeout: Optional[float] = None,
        max_memory: Optional[int] = None,
    ) -> None:
        """Runs a SPARQL Update request as one transaction, the GIL released.

        Every operation or none: on any error the store is unchanged. Invalid SPARQL raises
        SyntaxError (``line:column``), a failed operation QueryError, a time limit
        QueryTimeout. On a directory the update is logged there before the call returns.
        """
    def add(
        self,
        quad: Union[
            Triple,
            Tuple[Union[NamedNode, BlankNode], NamedNode, _Term],
            Tuple[
                Union[NamedNode, BlankNode], NamedNode, _Term, Union[NamedNode, BlankNode, None]
            ],
        ],
    ) -> None:
        """Adds a quad (a Triple, or subject, predicate, object[, graph]); one transaction."""
    def remove(
        self,
        quad: Union[
            Triple,
            Tuple[Union[NamedNode, BlankNode], NamedNode, _Term],
            Tuple[
                Union[NamedNode, BlankNode], NamedNode, _Term, Union[NamedNode, BlankNode, None]
            ],
        ],
    ) -> None:
        """Removes a quad if the store has it; one transaction."""
    def __len__(self) -> int: ...

__all__: List[str]
