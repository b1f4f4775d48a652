//! SPARQL 1.1 CSV solutions written a row of terms at a time: RFC 4180 quoting of every
//! field, IRIs included (which `sparesults` writes bare, so an IRI holding a comma would
//! split its field).

use std::io::Write;

use oxrdf::{Term, TermRef, Variable};

/// Writes solutions as SPARQL 1.1 CSV: a header of variable names, then one line per
/// solution (CRLF line ends); IRIs bare, literals by their lexical form, blank nodes as
/// `_:label`, unbound as an empty field. A field holding `,`, `"`, CR or LF is quoted, its
/// quotes doubled (RFC 4180).
pub struct CsvSolutionsWriter<W: Write> {
    writer: W,
    line: String,
}

impl<W: Write> CsvSolutionsWriter<W> {
    /// Writes the header.
    pub fn start(mut writer: W, variables: &[Variable]) -> std::io::Result<Self> {
        let mut line = String::new();
        for (i, variable) in variables.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            push_field(&mut line, variable.as_str());
        }
        line.push_str("\r\n");
        writer.write_all(line.as_bytes())?;
        Ok(Self { writer, line })
    }

    /// Writes one solution: a value (or `None` for unbound) per variable, in order.
    pub fn write_row<'t>(
        &mut self,
        values: impl IntoIterator<Item = Option<TermRef<'t>>>,
    ) -> std::io::Result<()> {
        self.line.clear();
        for (i, value) in values.into_iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            match value {
                None => {}
                Some(TermRef::NamedNode(iri)) => push_field(&mut self.line, iri.as_str()),
                Some(TermRef::Literal(literal)) => push_field(&mut self.line, literal.value()),
                Some(TermRef::BlankNode(node)) => {
                    push_field(&mut self.line, &format!("_:{}", node.as_str()))
                }
                Some(TermRef::Triple(triple)) => {
                    push_triple(&mut self.line, triple);
                }
            }
        }
        self.line.push_str("\r\n");
        self.writer.write_all(self.line.as_bytes())
    }

    pub fn finish(self) -> W {
        self.writer
    }
}

/// Appends `text` as one CSV field, quoted when it holds a separator, a quote or a line end.
pub(crate) fn push_field(line: &mut String, text: &str) {
    if text.contains([',', '"', '\r', '\n']) {
        line.push('"');
        line.push_str(&text.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(text);
    }
}

/// A triple term as `sparesults` writes it: its three terms' fields, space separated.
fn push_triple(line: &mut String, triple: &oxrdf::Triple) {
    match &triple.subject {
        oxrdf::NamedOrBlankNode::NamedNode(iri) => push_field(line, iri.as_str()),
        oxrdf::NamedOrBlankNode::BlankNode(node) => {
            push_field(line, &format!("_:{}", node.as_str()))
        }
    }
    line.push(' ');
    push_field(line, triple.predicate.as_str());
    line.push(' ');
    match &triple.object {
        Term::NamedNode(iri) => push_field(line, iri.as_str()),
        Term::Literal(literal) => push_field(line, literal.value()),
        Term::BlankNode(node) => push_field(line, &format!("_:{}", node.as_str())),
        Term::Triple(inner) => push_triple(line, inner),
    }
}
