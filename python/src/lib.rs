//! `quiver._quiver`: the native part of the Python package `quiver`.
//!
//! A store (`store.rs`) runs SPARQL with the GIL released and Ctrl-C polled (`run.rs`);
//! its answers (`results.rs`) are made of RDF terms (`terms.rs`); failures become Python
//! exceptions (`errors.rs`). The pure-Python part (`quiver/`) adds `to_arrow()`,
//! `to_pandas()` and the rdflib store.

mod errors;
mod results;
mod run;
mod store;
mod terms;

use pyo3::prelude::*;

#[pymodule]
fn _quiver(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<store::Store>()?;
    m.add_class::<terms::NamedNode>()?;
    m.add_class::<terms::BlankNode>()?;
    m.add_class::<terms::Literal>()?;
    m.add_class::<terms::Triple>()?;
    m.add_class::<terms::Variable>()?;
    m.add_class::<results::QuerySolutions>()?;
    m.add_class::<results::QuerySolution>()?;
    m.add_class::<results::QueryTriples>()?;
    let py = m.py();
    m.add("QueryError", py.get_type::<errors::QueryError>())?;
    m.add("QueryTimeout", py.get_type::<errors::QueryTimeout>())?;
    // Whether this build has the workspace tests' feature set (`test-build`), the simulated
    // full disk of `QUIVER_FAULT_WRITE_LIMIT` among it: the package's own tests read it to
    // know which behaviour to expect; a wheel built for users has it false.
    m.add("_test_build", cfg!(feature = "test-build"))?;
    Ok(())
}
