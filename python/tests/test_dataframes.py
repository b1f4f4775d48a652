"""to_arrow() and to_pandas(): the same cells as iterating the solutions, integers as int64,
unbound cells as nulls, and a clear ImportError naming the package when it is missing."""

import builtins
import os
import subprocess
import sys

import pytest

import quiver
from conftest import QUERIES

PREFIX = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> "


def expected_columns(store, query):
    solutions = store.query(query)
    names = [v.value for v in solutions.variables]
    columns = {name: [] for name in names}
    for row in solutions:
        for name, term in zip(names, row):
            columns[name].append(None if term is None else term.value)
    return columns


def test_to_arrow_matches_iteration(lubm1):
    query = PREFIX + "SELECT ?x ?y { ?x a ub:GraduateStudent ; ub:takesCourse ?y }"
    table = lubm1.query(query).to_arrow()
    assert table.column_names == ["x", "y"]
    assert table.to_pydict() == expected_columns(lubm1, query)
    assert table.num_rows > 1000


def test_to_pandas_with_integers_and_unbound_cells():
    store = quiver.Store()
    store.load(
        b'<http://e/a> <http://e/n> 1 .\n<http://e/b> <http://e/n> -7 .\n'
        b'<http://e/a> <http://e/l> "x"@en .\n<http://e/c> <http://e/n> "y" .\n',
        "ttl",
    )
    frame = store.query(
        "SELECT ?s ?n ?l { ?s <http://e/n> ?n FILTER(isNumeric(?n)) "
        "OPTIONAL { ?s <http://e/l> ?l } } ORDER BY ?s"
    ).to_pandas()
    assert list(frame.columns) == ["s", "n", "l"]
    assert list(frame["s"]) == ["http://e/a", "http://e/b"]
    assert str(frame["n"].dtype) == "int64" and list(frame["n"]) == [1, -7]
    assert frame["l"][0] == "x" and frame["l"].isna().tolist() == [False, True]
    mixed = store.query("SELECT ?n { ?s <http://e/n> ?n } ORDER BY ?n").to_pandas()
    assert sorted(mixed["n"]) == ["-7", "1", "y"]


def test_pandas_of_q2_matches_rows(lubm1):
    text = (QUERIES / "lubm-basic" / "q2.rq").read_text()
    frame = lubm1.query(text).to_pandas()
    columns = expected_columns(lubm1, text)
    assert list(frame.columns) == list(columns)
    assert {c: list(frame[c]) for c in frame.columns} == columns


# Run in a process of its own, whose pool has 4 threads whatever the machine's cores.
CHUNKED = r"""
import quiver
rows = 40_003
lines = []
z = '"z"'
for i in range(rows):
    lines.append(f"<http://e/s{i}> <http://e/n> {i} .")
    lines.append(f"<http://e/s{i}> <http://e/m> {i if i < rows - 1 else z} .")
    if i % 3 == 0:
        lines.append(f'<http://e/s{i}> <http://e/l> "v{i}" .')
store = quiver.Store()
store.load("\n".join(lines).encode(), "ttl")
query = (
    "SELECT ?s ?n ?l ?m { ?s <http://e/n> ?n ; <http://e/m> ?m "
    "OPTIONAL { ?s <http://e/l> ?l } }"
)
table = store.query(query).to_arrow()
expected = {"s": [], "n": [], "l": [], "m": []}
for s, n, l, m in store.query(query):
    expected["s"].append(s.value)
    expected["n"].append(int(n.value))
    expected["l"].append(None if l is None else l.value)
    expected["m"].append(m.value)
assert table.num_rows == rows, table.num_rows
assert str(table.schema.field("n").type) == "int64", table.schema
assert str(table.schema.field("m").type) == "large_string", table.schema
assert table.column("l").null_count == rows - len(range(0, rows, 3))
assert table.to_pydict() == expected, "the columns differ from the rows"
print("same")
"""


def test_to_arrow_of_a_result_decoded_in_chunks_on_several_threads():
    """40,003 rows (results of 32,768 and more are decoded in chunks on every thread) on a
    pool of 4 threads, 8 chunks of 5,001 rows: integers, strings and unbound cells in order,
    and a column of integers but for one row, of strings in every chunk."""
    result = subprocess.run(
        [sys.executable, "-c", CHUNKED],
        env=dict(os.environ, RAYON_NUM_THREADS="4"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0 and result.stdout.strip() == "same", result.stderr


@pytest.mark.parametrize("method,package", [("to_arrow", "pyarrow"), ("to_pandas", "pandas")])
def test_missing_package_raises_import_error_naming_it(monkeypatch, method, package):
    real_import = builtins.__import__

    def without(name, *args, **kwargs):
        if name == package:
            raise ImportError(f"No module named '{package}'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without)
    store = quiver.Store()
    with pytest.raises(ImportError, match=f"pip install {package}"):
        getattr(store.query("SELECT ?x { VALUES ?x { 1 } }"), method)()
