//! Query results as Python objects: `QuerySolutions` (an iterator of `QuerySolution`),
//! `QueryTriples` (an iterator of `Triple`), and the columnar buffers behind `to_arrow()`.
//!
//! The engine's solutions stay in their id table: a solution is a row number, and each term
//! is decoded when Python reads it, or column by column into Arrow buffers (no Python
//! object per cell).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use oxrdf::vocab::xsd;
use oxrdf::TermRef;
use pyo3::exceptions::{PyAttributeError, PyIndexError, PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyList, PyString};
use quiver_sparql::Solutions;

use crate::terms::{term_to_python, Triple, Variable};

/// Solutions that hold the store they read from (an `Arc`), so Python can keep them.
pub struct OwnedSolutions {
    solutions: Solutions<'static>,
}

impl OwnedSolutions {
    pub fn new(solutions: Solutions<'static>) -> Self {
        Self { solutions }
    }
}

/// What the solutions of one query share: the id table, the variables, and the Python
/// terms decoded so far.
struct SharedSolutions {
    owned: OwnedSolutions,
    variables: Arc<Vec<Variable>>,
    /// Per column, its blocks of rows as Python terms, each set once, the first time one of
    /// its cells is read; reading a decoded cell takes no lock.
    blocks: Vec<Vec<OnceLock<Vec<PyObject>>>>,
    /// Per column, the Python term of each id met so far, so a value that repeats across
    /// rows (a university, a department) becomes one Python object, shared.
    objects: Vec<Mutex<HashMap<u64, PyObject>>>,
}

/// Rows of one column decoded together: one dictionary cursor walks the block instead of
/// a lookup per cell.
const BLOCK: usize = 1024;

/// Python terms remembered per column; past this the column's cache starts over, so a
/// result of distinct values holds at most this many extra references.
const OBJECTS_PER_COLUMN: usize = 1 << 16;

impl SharedSolutions {
    fn new(owned: OwnedSolutions, variables: Vec<Variable>) -> Self {
        let width = variables.len();
        let blocks = owned.solutions.len().div_ceil(BLOCK);
        Self {
            owned,
            variables: Arc::new(variables),
            blocks: (0..width)
                .map(|_| (0..blocks).map(|_| OnceLock::new()).collect())
                .collect(),
            objects: (0..width).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    /// The Python term in row `row`, column `column` (None when unbound).
    fn value(&self, py: Python<'_>, row: usize, column: usize) -> PyResult<PyObject> {
        let block = &self.blocks[column][row / BLOCK];
        let terms = match block.get() {
            Some(terms) => terms,
            None => {
                let terms = self.decode_block(py, row / BLOCK, column)?;
                // Another thread may have set it meanwhile: its terms are the same.
                let _ = block.set(terms);
                block.get().expect("set above")
            }
        };
        Ok(terms[row % BLOCK].clone_ref(py))
    }

    fn decode_block(&self, py: Python<'_>, block: usize, column: usize) -> PyResult<Vec<PyObject>> {
        let solutions = &self.owned.solutions;
        let rows = block * BLOCK..((block + 1) * BLOCK).min(solutions.len());
        // Taken out while Python objects are made: the lock is never held across a call
        // into Python (creating an object may run a collection, and a thread taking the
        // lock then would wait holding the GIL). A thread decoding the same column
        // meanwhile only misses the sharing.
        let mut objects = std::mem::take(&mut *lock(&self.objects[column]));
        let mut terms = Vec::with_capacity(rows.len());
        let mut failure = None;
        solutions.for_each_term_in(column, rows, |id, term| {
            let Some(term) = term else {
                terms.push(py.None());
                return;
            };
            let key = u64::from(id);
            if let Some(object) = objects.get(&key) {
                terms.push(object.clone_ref(py));
                return;
            }
            match term_to_python(py, term.into_owned()) {
                Ok(object) => {
                    if objects.len() >= OBJECTS_PER_COLUMN {
                        objects.clear();
                    }
                    objects.insert(key, object.clone_ref(py));
                    terms.push(object);
                }
                Err(error) => {
                    failure.get_or_insert(error);
                    terms.push(py.None());
                }
            }
        });
        *lock(&self.objects[column]) = objects;
        match failure {
            Some(error) => Err(error),
            None => Ok(terms),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while the lock was held left only a cache behind: keep using it.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The rows of a SELECT query. Iterate it for `QuerySolution`s; `variables` names the
/// columns; `to_arrow()` and `to_pandas()` give the whole table at once.
///
/// A solution is a row number over the shared id table: iterating builds no term, and a
/// term becomes a Python object only when it is read (as pyoxigraph's solutions convert
/// theirs on access).
#[pyclass(module = "quiver")]
pub struct QuerySolutions {
    shared: Arc<SharedSolutions>,
    /// The first row not yet iterated.
    next: usize,
}

impl QuerySolutions {
    pub fn new(owned: OwnedSolutions) -> Self {
        let variables: Vec<Variable> = owned
            .solutions
            .variables
            .iter()
            .map(|v| Variable { inner: v.clone() })
            .collect();
        Self {
            shared: Arc::new(SharedSolutions::new(owned, variables)),
            next: 0,
        }
    }
}

#[pymethods]
impl QuerySolutions {
    /// The variables of the result, in order.
    #[getter]
    fn variables(&self) -> Vec<Variable> {
        self.shared.variables.as_ref().clone()
    }

    /// Rows in total (iterated or not).
    fn __len__(&self) -> usize {
        self.shared.owned.solutions.len()
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self) -> Option<QuerySolution> {
        let row = self.next;
        if row >= self.shared.owned.solutions.len() {
            return None;
        }
        self.next += 1;
        Some(QuerySolution {
            shared: Arc::clone(&self.shared),
            row,
        })
    }

    /// The columns as Arrow buffers, for `to_arrow()`: for each variable a tuple
    /// `(name, integers, chunks)`, `integers` telling whether every bound cell is an
    /// `xsd:integer` that fits an int64, and `chunks` the column's consecutive pieces, each
    /// a tuple `(rows, null_count, validity, offsets, data, integers)` where `validity` is a
    /// bitmap, `offsets` little-endian int64 offsets into the UTF-8 `data` of each term's
    /// value (IRI, lexical form, blank node id), and `integers` little-endian int64 values
    /// (None unless the whole column is of integers).
    ///
    /// The pieces are the chunks the results writers would cut, decoded on the threads they
    /// would use (a large result, or one of scattered ids, on every core); they become the
    /// chunks of a `pyarrow.ChunkedArray`, so nothing is copied to join them.
    fn _columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let solutions = &self.shared.owned.solutions;
        let width = solutions.variables.len();
        let chunks = py.allow_threads(|| {
            quiver_sparql::results::map_row_chunks(solutions, |range| {
                let mut columns: Vec<Column> =
                    (0..width).map(|_| Column::new(range.len())).collect();
                solutions.for_each_row_in(range, |terms| {
                    for (column, term) in columns.iter_mut().zip(terms) {
                        column.push(*term);
                    }
                });
                columns
            })
        });
        let list = PyList::empty(py);
        for (c, variable) in self.shared.variables.iter().enumerate() {
            let integers = chunks.iter().all(|chunk| chunk[c].integers.is_some());
            let pieces = PyList::empty(py);
            for chunk in &chunks {
                let column = &chunk[c];
                let values = column
                    .integers
                    .as_ref()
                    .filter(|_| integers)
                    .map(|values| PyBytes::new(py, bytemuck_i64(values)));
                pieces.append((
                    column.row,
                    column.nulls,
                    PyBytes::new(py, &column.validity),
                    PyBytes::new(py, bytemuck_i64(&column.offsets)),
                    PyBytes::new(py, &column.data),
                    values,
                ))?;
            }
            list.append((variable.inner.as_str(), integers, pieces))?;
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
        let names: Vec<String> = self
            .shared
            .variables
            .iter()
            .map(|v| v.inner.to_string())
            .collect();
        format!(
            "<QuerySolutions variables=[{}] rows={}>",
            names.join(", "),
            self.shared.owned.solutions.len()
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
                let triple;
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
                    TermRef::Triple(t) => {
                        triple = t.to_string();
                        &triple
                    }
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
    shared: Arc<SharedSolutions>,
    row: usize,
}

impl QuerySolution {
    fn position(&self, name: &str) -> Option<usize> {
        self.shared
            .variables
            .iter()
            .position(|v| v.inner.as_str() == name)
    }

    fn width(&self) -> usize {
        self.shared.variables.len()
    }

    fn value(&self, py: Python<'_>, index: usize) -> PyResult<PyObject> {
        self.shared.value(py, self.row, index)
    }
}

#[pymethods]
impl QuerySolution {
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        // Type checks first: a failed extraction would build an exception each time.
        if key.is_instance_of::<PyInt>() {
            let index = key.extract::<isize>()?;
            let len = self.width() as isize;
            let position = if index < 0 { index + len } else { index };
            if !(0..len).contains(&position) {
                return Err(PyIndexError::new_err(format!(
                    "solution index {index} out of range for {len} variables"
                )));
            }
            return self.value(py, position as usize);
        }
        let found = if let Ok(name) = key.downcast::<PyString>() {
            let name = name.to_str()?.trim_start_matches(['?', '$']);
            self.position(name).ok_or_else(|| name.to_owned())
        } else if let Ok(variable) = key.downcast::<Variable>() {
            let name = variable.get().inner.as_str();
            self.position(name).ok_or_else(|| name.to_owned())
        } else {
            return Err(PyTypeError::new_err(
                "a solution is indexed by a variable name, a Variable or a position",
            ));
        };
        match found {
            Ok(index) => self.value(py, index),
            Err(name) => Err(PyKeyError::new_err(format!(
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
        self.width()
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<PyObject> {
        let values = (0..self.width())
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
        for (index, variable) in self.shared.variables.iter().enumerate() {
            let term = self.value(py, index)?;
            if !term.is_none(py) {
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
