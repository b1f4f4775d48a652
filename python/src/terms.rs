//! RDF terms as Python objects: `NamedNode`, `BlankNode`, `Literal`, `Triple`, `Variable`.
//!
//! Each wraps its `oxrdf` counterpart, so conversion to and from the engine is a move, and
//! `str()`, `repr()`, equality and hashing follow pyoxigraph's (N-Triples text for `str()`,
//! `<Kind value=…>` for `repr()`, equal when the RDF terms are equal).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use oxrdf::vocab::xsd;
use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString, PyTuple};

fn hash_of(value: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

fn compare<T: PartialEq>(left: &T, right: Option<&T>, op: CompareOp) -> PyResult<bool> {
    match op {
        CompareOp::Eq => Ok(right == Some(left)),
        CompareOp::Ne => Ok(right != Some(left)),
        _ => Err(PyTypeError::new_err("RDF terms are not ordered")),
    }
}

/// An IRI: `NamedNode("http://example.com/")`.
#[pyclass(module = "quiver", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct NamedNode {
    pub inner: oxrdf::NamedNode,
}

#[pymethods]
impl NamedNode {
    #[new]
    fn new(value: String) -> PyResult<Self> {
        oxrdf::NamedNode::new(value)
            .map(|inner| Self { inner })
            .map_err(|e| PyValueError::new_err(format!("invalid IRI: {e}")))
    }

    /// The IRI.
    #[getter]
    fn value(&self) -> &str {
        self.inner.as_str()
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        format!("<NamedNode value={}>", self.inner.as_str())
    }

    fn __getnewargs__(&self) -> (String,) {
        (self.inner.as_str().to_owned(),)
    }

    /// The same term as an `rdflib.URIRef`.
    fn to_rdflib<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("rdflib")?
            .getattr("URIRef")?
            .call1((self.inner.as_str(),))
    }
}

/// A blank node: `BlankNode("b1")`, or `BlankNode()` for a fresh one.
#[pyclass(module = "quiver", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BlankNode {
    pub inner: oxrdf::BlankNode,
}

#[pymethods]
impl BlankNode {
    #[new]
    #[pyo3(signature = (value = None))]
    fn new(value: Option<String>) -> PyResult<Self> {
        let inner = match value {
            Some(value) => oxrdf::BlankNode::new(value)
                .map_err(|e| PyValueError::new_err(format!("invalid blank node id: {e}")))?,
            None => oxrdf::BlankNode::default(),
        };
        Ok(Self { inner })
    }

    /// The blank node's identifier (without `_:`).
    #[getter]
    fn value(&self) -> &str {
        self.inner.as_str()
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        format!("<BlankNode value={}>", self.inner.as_str())
    }

    fn __getnewargs__(&self) -> (String,) {
        (self.inner.as_str().to_owned(),)
    }

    /// The same term as an `rdflib.BNode`.
    fn to_rdflib<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("rdflib")?
            .getattr("BNode")?
            .call1((self.inner.as_str(),))
    }
}

/// A literal: `Literal("chat", language="fr")`, `Literal("1", datatype=NamedNode(xsd:integer))`,
/// or from a Python `bool`, `int` or `float` (`Literal(1)` is an `xsd:integer`).
#[pyclass(module = "quiver", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Literal {
    pub inner: oxrdf::Literal,
}

#[pymethods]
impl Literal {
    #[new]
    #[pyo3(signature = (value, *, datatype = None, language = None))]
    fn new(
        value: &Bound<'_, PyAny>,
        datatype: Option<NamedNode>,
        language: Option<String>,
    ) -> PyResult<Self> {
        let inner = if let Ok(text) = value.downcast::<PyString>() {
            let text = text.to_str()?.to_owned();
            match (language, datatype) {
                (Some(_), Some(datatype))
                    if datatype.inner.as_ref() != oxrdf::vocab::rdf::LANG_STRING =>
                {
                    return Err(PyValueError::new_err(
                        "a literal with a language tag has the datatype rdf:langString",
                    ))
                }
                (Some(language), _) => oxrdf::Literal::new_language_tagged_literal(text, language)
                    .map_err(|e| PyValueError::new_err(format!("invalid language tag: {e}")))?,
                (None, Some(datatype)) => oxrdf::Literal::new_typed_literal(text, datatype.inner),
                (None, None) => oxrdf::Literal::new_simple_literal(text),
            }
        } else {
            if language.is_some() || datatype.is_some() {
                return Err(PyTypeError::new_err(
                    "language and datatype go with a str value only",
                ));
            }
            if let Ok(flag) = value.downcast::<PyBool>() {
                oxrdf::Literal::from(flag.is_true())
            } else if value.is_instance_of::<PyInt>() {
                oxrdf::Literal::new_typed_literal(value.str()?.to_str()?, xsd::INTEGER)
            } else if let Ok(number) = value.downcast::<PyFloat>() {
                oxrdf::Literal::from(number.value())
            } else {
                return Err(PyTypeError::new_err(format!(
                    "a Literal is made from str, bool, int or float, not {}",
                    value.get_type().name()?
                )));
            }
        };
        Ok(Self { inner })
    }

    /// The lexical form.
    #[getter]
    fn value(&self) -> &str {
        self.inner.value()
    }

    /// The language tag, or None.
    #[getter]
    fn language(&self) -> Option<&str> {
        self.inner.language()
    }

    /// The datatype (`xsd:string` for a simple literal, `rdf:langString` with a language).
    #[getter]
    fn datatype(&self) -> NamedNode {
        NamedNode {
            inner: self.inner.datatype().into_owned(),
        }
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        let value = self.inner.value();
        match self.inner.language() {
            Some(language) => format!("<Literal value={value} language={language}>"),
            None => format!(
                "<Literal value={value} datatype=<NamedNode value={}>>",
                self.inner.datatype().as_str()
            ),
        }
    }

    /// The same term as an `rdflib.Literal` (with its language or datatype).
    fn to_rdflib<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let rdflib = py.import("rdflib")?;
        let class = rdflib.getattr("Literal")?;
        let kwargs = pyo3::types::PyDict::new(py);
        if let Some(language) = self.inner.language() {
            kwargs.set_item("lang", language)?;
        } else if self.inner.datatype() != xsd::STRING {
            let datatype = rdflib
                .getattr("URIRef")?
                .call1((self.inner.datatype().as_str(),))?;
            kwargs.set_item("datatype", datatype)?;
        }
        class.call((self.inner.value(),), Some(&kwargs))
    }
}

/// A triple of terms, as CONSTRUCT and DESCRIBE return them; unpacks as `s, p, o = triple`.
#[pyclass(module = "quiver", frozen)]
#[derive(Clone)]
pub struct Triple {
    pub inner: oxrdf::Triple,
}

#[pymethods]
impl Triple {
    #[new]
    fn new(
        subject: &Bound<'_, PyAny>,
        predicate: NamedNode,
        object: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let subject = match term_from_python(subject)? {
            oxrdf::Term::NamedNode(node) => oxrdf::NamedOrBlankNode::NamedNode(node),
            oxrdf::Term::BlankNode(node) => oxrdf::NamedOrBlankNode::BlankNode(node),
            _ => {
                return Err(PyTypeError::new_err(
                    "a subject is a NamedNode or BlankNode",
                ))
            }
        };
        Ok(Self {
            inner: oxrdf::Triple::new(subject, predicate.inner, term_from_python(object)?),
        })
    }

    #[getter]
    fn subject(&self, py: Python<'_>) -> PyResult<PyObject> {
        term_to_python(py, self.inner.subject.clone().into())
    }

    #[getter]
    fn predicate(&self) -> NamedNode {
        NamedNode {
            inner: self.inner.predicate.clone(),
        }
    }

    #[getter]
    fn object(&self, py: Python<'_>) -> PyResult<PyObject> {
        term_to_python(py, self.inner.object.clone())
    }

    fn __len__(&self) -> usize {
        3
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<PyObject> {
        let items = [
            self.subject(py)?,
            self.predicate().into_pyobject(py)?.into_any().unbind(),
            self.object(py)?,
        ];
        Ok(PyTuple::new(py, items)?
            .as_any()
            .try_iter()?
            .into_any()
            .unbind())
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<Triple subject={} predicate={} object={}>",
            self.subject(py)?.bind(py).repr()?,
            self.predicate().__repr__(),
            self.object(py)?.bind(py).repr()?
        ))
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<bool> {
        let other = other
            .downcast::<Triple>()
            .ok()
            .map(|t| t.get().inner.clone());
        compare(&self.inner, other.as_ref(), op)
    }

    fn __hash__(&self) -> u64 {
        hash_of(&self.inner)
    }
}

/// A query variable: `Variable("x")`.
#[pyclass(module = "quiver", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Variable {
    pub inner: oxrdf::Variable,
}

#[pymethods]
impl Variable {
    #[new]
    fn new(value: String) -> PyResult<Self> {
        oxrdf::Variable::new(value)
            .map(|inner| Self { inner })
            .map_err(|e| PyValueError::new_err(format!("invalid variable name: {e}")))
    }

    /// The name, without `?`.
    #[getter]
    fn value(&self) -> &str {
        self.inner.as_str()
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        format!("<Variable value={}>", self.inner.as_str())
    }
}

/// A Python object for an engine term.
pub fn term_to_python(py: Python<'_>, term: oxrdf::Term) -> PyResult<PyObject> {
    Ok(match term {
        oxrdf::Term::NamedNode(inner) => NamedNode { inner }.into_pyobject(py)?.into_any(),
        oxrdf::Term::BlankNode(inner) => BlankNode { inner }.into_pyobject(py)?.into_any(),
        oxrdf::Term::Literal(inner) => Literal { inner }.into_pyobject(py)?.into_any(),
        // An RDF 1.2 triple term.
        oxrdf::Term::Triple(inner) => Triple { inner: *inner }.into_pyobject(py)?.into_any(),
    }
    .unbind())
}

/// The engine term of a `NamedNode`, `BlankNode`, `Literal` or `Triple` (a triple term).
pub fn term_from_python(object: &Bound<'_, PyAny>) -> PyResult<oxrdf::Term> {
    if let Ok(node) = object.downcast::<NamedNode>() {
        Ok(node.get().inner.clone().into())
    } else if let Ok(node) = object.downcast::<BlankNode>() {
        Ok(node.get().inner.clone().into())
    } else if let Ok(literal) = object.downcast::<Literal>() {
        Ok(literal.get().inner.clone().into())
    } else if let Ok(triple) = object.downcast::<Triple>() {
        // An RDF 1.2 triple term (an object only).
        Ok(triple.get().inner.clone().into())
    } else {
        Err(PyTypeError::new_err(format!(
            "expected a NamedNode, BlankNode, Literal or Triple, not {}",
            object.get_type().name()?
        )))
    }
}
