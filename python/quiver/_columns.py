"""``QuerySolutions.to_arrow()`` and ``to_pandas()``: the result table as columns.

The native side fills one Arrow buffer set per variable (validity bitmap, int64 offsets,
UTF-8 values) in one pass over the rows; here they become ``pyarrow`` arrays without a
Python object per cell. A column whose bound values are all ``xsd:integer`` becomes int64;
the others hold each term's value (IRI, lexical form, blank node id) as strings.
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
    arrays, names = [], []
    for name, rows, nulls, validity, offsets, data, integers in solutions._columns():
        bitmap = pa.py_buffer(validity) if nulls else None
        if integers is not None:
            array = pa.Array.from_buffers(
                pa.int64(), rows, [bitmap, pa.py_buffer(integers)], null_count=nulls
            )
        else:
            array = pa.Array.from_buffers(
                pa.large_string(),
                rows,
                [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)],
                null_count=nulls,
            )
        arrays.append(array)
        names.append(name)
    return pa.Table.from_arrays(arrays, names=names)


def solutions_to_pandas(solutions):
    """The rows as a ``pandas.DataFrame`` (through ``to_arrow()``), one column per variable."""
    _require("pandas")
    table = solutions_to_arrow(solutions)
    # pyarrow's conversion threads only pay off on large tables.
    return table.to_pandas(use_threads=table.num_rows * table.num_columns > 200_000)
