//! Query results as Python objects: `QuerySolutions` (an iterator of `QuerySolution`),
//! `QueryTriples` (an iterator of `Triple`), and the columnar buffers behind `to_arrow()`.
//!
//! The engine's solutions stay in their id table and are decoded row by row as Python
//! iterates, or column by column into Arrow buffers (no Python object per cell).

use std::collections::HashMap;
use std::sync::Arc;

use oxrdf::vocab::xsd;
use oxrdf::TermRef;
use pyo3::exceptions::{PyAttributeError, PyIndexError, PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use quiver_sparql::Solutions;
use quiver_store::Store;

use crate::terms::{term_to_python, Triple, Variable};

/// Solutions together with the store they borrow from.
pub struct OwnedSolutions {
    // Declared before `_store`, so it is dropped first.
    solutions: Solutions<'static>,
    _store: Arc<Store>,
}

impl OwnedSolutions {
    /// Runs `execute` on the store and keeps the store alive beside its solutions.
    pub fn new(store: Arc<Store>, solutions: Solutions<'_>) -> Self {
        // SAFETY: `solutions` borrows the store behind `store`, an `Arc` whose pointee
        // never moves; the `Arc` is kept in the same struct and dropped after the
        // solutions, so the borrow outlives every use.
        let solutions =
            unsafe { std::mem::transmute::<Solutions<'_>, Solutions<'static>>(solutions) };
        Self {
            solutions,
            _store: store,
        }
    }
}

/// The rows of a SELECT query. Iterate it for `QuerySolution`s; `variables` names the
/// columns; `to_arrow()` and `to_pandas()` give the whole table at once.
#[pyclass(module = "quiver")]
pub struct QuerySolutions {
    owned: OwnedSolutions,
    variables: Arc<Vec<Variable>>,
    /// The first row not yet decoded.
    next: usize,
    /// Rows decoded ahead, in reverse order (the next one last).
    decoded: Vec<Vec<Option<PyObject>>>,
    /// Per column, the Python term of each id met so far: a value that repeats across
    /// rows (a university, a department) becomes one Python object, shared.
    objects: Vec<HashMap<u64, PyObject>>,
}

/// Rows decoded at once while iterating: the dictionary is read through one cursor per
/// column for the whole batch instead of a lookup per term.
const BATCH: usize = 1024;

/// Python terms remembered per column; past this the column's cache starts over, so a
/// result of distinct values holds at most this many extra references.
const OBJECTS_PER_COLUMN: usize = 1 << 16;

impl QuerySolutions {
    pub fn new(owned: OwnedSolutions) -> Self {
        let variables = owned
            .solutions
            .variables
            .iter()
            .map(|v| Variable { inner: v.clone() })
            .collect();
        let width = owned.solutions.variables.len();
        Self {
            owned,
            variables: Arc::new(variables),
            next: 0,
            decoded: Vec::new(),
            objects: (0..width).map(|_| HashMap::new()).collect(),
        }
    }

    /// Decodes the next batch of rows into Python terms, reusing the object of an id seen
    /// before in the same column.
    fn decode_batch(&mut self, py: Python<'_>) -> PyResult<()> {
        let solutions = &self.owned.solutions;
        let start = self.next;
        let end = solutions.len().min(start + BATCH);
        let objects = &mut self.objects;
        let decoded = &mut self.decoded;
        let mut failure = None;
        let mut row = start;
        solutions.for_each_row_in(start..end, |terms| {
            let mut values = Vec::with_capacity(terms.len());
            for (column, (term, cache)) in terms.iter().zip(objects.iter_mut()).enumerate() {
                let id = u64::from(solutions.id(row, column));
                let Some(term) = term else {
                    values.push(None);
                    continue;
                };
                if let Some(object) = cache.get(&id) {
                    values.push(Some(object.clone_ref(py)));
                    continue;
                }
                match term_to_python(py, term.into_owned()) {
                    Ok(object) => {
                        if cache.len() >= OBJECTS_PER_COLUMN {
                            cache.clear();
                        }
                        cache.insert(id, object.clone_ref(py));
                        values.push(Some(object));
                    }
                    Err(error) => {
                        failure.get_or_insert(error);
                        values.push(None);
                    }
                }
            }
            decoded.push(values);
            row += 1;
        });
        if let Some(error) = failure {
            return Err(error);
        }
        decoded.reverse();
        self.next = end;
        Ok(())
    }
}

#[pymethods]
impl QuerySolutions {
    /// The variables of the result, in order.
    #[getter]
    fn variables(&self) -> Vec<Variable> {
        self.variables.as_ref().clone()
    }

    /// Rows in total (iterated or not).
    fn __len__(&self) -> usize {
        self.owned.solutions.len()
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<QuerySolution>> {
        if self.decoded.is_empty() {
            self.decode_batch(py)?;
        }
        Ok(self.decoded.pop().map(|values| QuerySolution {
            variables: Arc::clone(&self.variables),
            values,
        }))
    }

    /// The columns as Arrow buffers, for `to_arrow()`: for each variable a tuple
    /// `(name, rows, null_count, validity, offsets, data, integers)` where `validity` is a
    /// bitmap, `offsets` little-endian int64 offsets into the UTF-8 `data` of each term's
    /// value (IRI, lexical form, blank node id), and `integers` little-endian int64 values
    /// when every bound cell is an `xsd:integer` that fits (else None).
    fn _columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let solutions = &self.owned.solutions;
        let width = solutions.variables.len();
        let rows = solutions.len();
        let mut columns: Vec<Column> = (0..width).map(|_| Column::new(rows)).collect();
        py.allow_threads(|| {
            solutions.for_each_row(|terms| {
                for (column, term) in columns.iter_mut().zip(terms) {
                    column.push(*term);
                }
            })
        });
        let list = PyList::empty(py);
        for (variable, column) in self.variables.iter().zip(columns) {
            let integers = column
                .integers
                .as_ref()
                .map(|values| PyBytes::new(py, bytemuck_i64(values)));
            list.append((
                variable.inner.as_str(),
                rows,
                column.nulls,
                PyBytes::new(py, &column.validity),
                PyBytes::new(py, bytemuck_i64(&column.offsets)),
                PyBytes::new(py, &column.data),
                integers,
            ))?;
        }
        Ok(list)
    }

    /// All rows as a `pyarrow.Table`, one column per variable (needs pyarrow).
    fn to_arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py()
            .import("quiver._columns")?
            .call_method1("solutions_to_arrow", (slf,))
    }

    /// All rows as a `pandas.DataFrame`, one column per variable (needs pandas, pyarrow).
    fn to_pandas<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py()
            .import("quiver._columns")?
            .call_method1("solutions_to_pandas", (slf,))
    }

    fn __repr__(&self) -> String {
        let names: Vec<String> = self.variables.iter().map(|v| v.inner.to_string()).collect();
        format!(
            "<QuerySolutions variables=[{}] rows={}>",
            names.join(", "),
            self.owned.solutions.len()
        )
    }
}

fn bytemuck_i64(values: &[i64]) -> &[u8] {
    // SAFETY: any i64 slice is a valid byte slice of 8 times its length; Arrow buffers are
    // little-endian, which is every target this package is built for.
    unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    }
}

/// One column being turned into Arrow buffers.
struct Column {
    validity: Vec<u8>,
    offsets: Vec<i64>,
    data: Vec<u8>,
    nulls: usize,
    integers: Option<Vec<i64>>,
    row: usize,
}

impl Column {
    fn new(rows: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Self {
            validity: vec![0; rows.div_ceil(8)],
            offsets,
            data: Vec::new(),
            nulls: 0,
            integers: Some(Vec::with_capacity(rows)),
            row: 0,
        }
    }

    fn push(&mut self, term: Option<TermRef<'_>>) {
        match term {
            Some(term) => {
                self.validity[self.row / 8] |= 1 << (self.row % 8);
                let value = match term {
                    TermRef::NamedNode(node) => node.as_str(),
                    TermRef::BlankNode(node) => node.as_str(),
                    TermRef::Literal(literal) => {
                        if let Some(integers) = &mut self.integers {
                            match literal.value().parse::<i64>() {
                                Ok(n) if literal.datatype() == xsd::INTEGER => integers.push(n),
                                _ => self.integers = None,
                            }
                        }
                        literal.value()
                    }
                    #[allow(unreachable_patterns)]
                    _ => "",
                };
                if !matches!(term, TermRef::Literal(_)) {
                    self.integers = None;
                }
                self.data.extend_from_slice(value.as_bytes());
            }
            None => {
                self.nulls += 1;
                if let Some(integers) = &mut self.integers {
                    integers.push(0);
                }
            }
        }
        self.offsets.push(self.data.len() as i64);
        self.row += 1;
    }
}

/// One row of a SELECT result: `solution["x"]`, `solution.x`, `solution[0]`, or unpack it
/// (`for x, y in store.query(...)`). An unbound variable gives None.
#[pyclass(module = "quiver", frozen)]
pub struct QuerySolution {
    variables: Arc<Vec<Variable>>,
    values: Vec<Option<PyObject>>,
}

impl QuerySolution {
    fn position(&self, name: &str) -> Option<usize> {
        self.variables.iter().position(|v| v.inner.as_str() == name)
    }

    fn value(&self, py: Python<'_>, index: usize) -> PyResult<PyObject> {
        Ok(match &self.values[index] {
            Some(term) => term.clone_ref(py),
            None => py.None(),
        })
    }
}

#[pymethods]
impl QuerySolution {
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        // Names first: a failed integer extraction would build an exception each time.
        let name = if let Ok(name) = key.downcast::<PyString>() {
            name.to_str()?.trim_start_matches(['?', '$']).to_owned()
        } else if let Ok(variable) = key.downcast::<Variable>() {
            variable.get().inner.as_str().to_owned()
        } else if let Ok(index) = key.extract::<isize>() {
            let len = self.values.len() as isize;
            let position = if index < 0 { index + len } else { index };
            if !(0..len).contains(&position) {
                return Err(PyIndexError::new_err(format!(
                    "solution index {index} out of range for {len} variables"
                )));
            }
            return self.value(py, position as usize);
        } else {
            return Err(PyTypeError::new_err(
                "a solution is indexed by a variable name, a Variable or a position",
            ));
        };
        match self.position(&name) {
            Some(index) => self.value(py, index),
            None => Err(PyKeyError::new_err(format!(
                "no variable ?{name} in this solution"
            ))),
        }
    }

    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<PyObject> {
        match self.position(name) {
            Some(index) => self.value(py, index),
            None => Err(PyAttributeError::new_err(format!(
                "no variable ?{name} in this solution"
            ))),
        }
    }

    fn __len__(&self) -> usize {
        self.values.len()
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<PyObject> {
        let values = (0..self.values.len())
            .map(|i| self.value(py, i))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, values)?
            .as_any()
            .try_iter()?
            .into_any()
            .unbind())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut cells = Vec::new();
        for (variable, value) in self.variables.iter().zip(&self.values) {
            if let Some(term) = value {
                cells.push(format!(
                    "{}={}",
                    variable.inner.as_str(),
                    term.bind(py).str()?
                ));
            }
        }
        Ok(format!("<QuerySolution {}>", cells.join(" ")))
    }
}

/// The triples of a CONSTRUCT or DESCRIBE query.
#[pyclass(module = "quiver")]
pub struct QueryTriples {
    triples: std::vec::IntoIter<oxrdf::Triple>,
}

impl QueryTriples {
    pub fn new(triples: Vec<oxrdf::Triple>) -> Self {
        Self {
            triples: triples.into_iter(),
        }
    }
}

#[pymethods]
impl QueryTriples {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self) -> Option<Triple> {
        self.triples.next().map(|inner| Triple { inner })
    }

    /// Triples not yet iterated.
    fn __len__(&self) -> usize {
        self.triples.len()
    }
}
