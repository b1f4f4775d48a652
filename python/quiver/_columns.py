"""``QuerySolutions.to_arrow()`` and ``to_pandas()``: the result table as columns.

The native side fills Arrow buffers per variable (validity bitmap, int64 offsets, UTF-8
values), one set per chunk of rows that the results writers would cut, decoded on several
threads for a large result; here they become the chunks of ``pyarrow`` chunked arrays
without a Python object per cell and without a copy to join them. A column whose bound
values are all ``xsd:integer`` becomes int64; the others hold each term's value (IRI,
lexical form, blank node id) as strings.
"""


def _require(module):
    try:
        return __import__(module)
    except ImportError as error:
        raise ImportError(
            f"QuerySolutions.to_arrow()/to_pandas() need the '{module}' package: "
            f"pip install {module}"
        ) from error


def solutions_to_arrow(solutions):
    """All rows as a ``pyarrow.Table``, one column per variable."""
    pa = _require("pyarrow")
    columns, names = [], []
    for name, integers, pieces in solutions._columns():
        kind = pa.int64() if integers else pa.large_string()
        arrays = []
        for rows, nulls, validity, offsets, data, values in pieces:
            bitmap = pa.py_buffer(validity) if nulls else None
            if integers:
                buffers = [bitmap, pa.py_buffer(values)]
            else:
                buffers = [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)]
            arrays.append(pa.Array.from_buffers(kind, rows, buffers, null_count=nulls))
        columns.append(pa.chunked_array(arrays, type=kind))
        names.append(name)
    return pa.Table.from_arrays(columns, names=names)


def solutions_to_pandas(solutions):
    """The rows as a ``pandas.DataFrame`` (through ``to_arrow()``), one column per variable."""
    _require("pandas")
    table = solutions_to_arrow(solutions)
    # pyarrow's conversion threads only pay off on large tables.
    return table.to_pandas(use_threads=table.num_rows * table.num_columns > 200_000)
