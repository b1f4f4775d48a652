//! The RDF syntax tests' kinds (types of the `rdft:` vocabulary): the syntax of a test's
//! document and whether it must load, fail, or load into the expected dataset. Run by
//! `rdf_syntax.rs`.

use quiver_loader::Format;

use super::TestKind;

/// The syntax of an RDF test's document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RdfSyntax {
    NTriples,
    NQuads,
    Turtle,
    TriG,
    RdfXml,
}

impl RdfSyntax {
    /// The loader's format of this syntax.
    pub fn format(self) -> Format {
        match self {
            RdfSyntax::NTriples => Format::NTriples,
            RdfSyntax::NQuads => Format::NQuads,
            RdfSyntax::Turtle => Format::Turtle,
            RdfSyntax::TriG => Format::TriG,
            RdfSyntax::RdfXml => Format::RdfXml,
        }
    }

    /// Whether a document of this syntax can declare its base IRI (`BASE <…>`).
    pub(crate) fn has_base_directive(self) -> bool {
        matches!(self, RdfSyntax::Turtle | RdfSyntax::TriG)
    }
}

/// The kind of an RDF test from the local name of its `rdft:` type
/// (`TestTurtlePositiveSyntax`), if it is one this runner runs. Negative evaluation tests
/// (a document that parses but holds an invalid term) must be rejected like negative
/// syntax tests.
pub fn kind_of_rdft(name: &str) -> Option<TestKind> {
    const SYNTAXES: [(&str, RdfSyntax); 5] = [
        ("NTriples", RdfSyntax::NTriples),
        ("NQuads", RdfSyntax::NQuads),
        ("Turtle", RdfSyntax::Turtle),
        ("Trig", RdfSyntax::TriG),
        ("XML", RdfSyntax::RdfXml),
    ];
    let name = name.strip_prefix("Test")?;
    let (syntax, rest) = SYNTAXES
        .iter()
        .find_map(|(prefix, syntax)| Some((*syntax, name.strip_prefix(prefix)?)))?;
    match rest {
        "PositiveSyntax" => Some(TestKind::RdfSyntax {
            syntax,
            positive: true,
        }),
        "NegativeSyntax" | "NegativeEval" => Some(TestKind::RdfSyntax {
            syntax,
            positive: false,
        }),
        "Eval" | "PositiveC14N" => Some(TestKind::RdfEvaluation(syntax)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rdft_types_map_onto_kinds() {
        let syntax = |syntax, positive| Some(TestKind::RdfSyntax { syntax, positive });
        assert_eq!(
            kind_of_rdft("TestTurtlePositiveSyntax"),
            syntax(RdfSyntax::Turtle, true)
        );
        assert_eq!(
            kind_of_rdft("TestTrigNegativeSyntax"),
            syntax(RdfSyntax::TriG, false)
        );
        assert_eq!(
            kind_of_rdft("TestXMLNegativeSyntax"),
            syntax(RdfSyntax::RdfXml, false)
        );
        assert_eq!(
            kind_of_rdft("TestNQuadsPositiveC14N"),
            Some(TestKind::RdfEvaluation(RdfSyntax::NQuads))
        );
        assert_eq!(
            kind_of_rdft("TestNTriplesPositiveSyntax"),
            syntax(RdfSyntax::NTriples, true)
        );
        assert_eq!(
            kind_of_rdft("TestXMLEval"),
            Some(TestKind::RdfEvaluation(RdfSyntax::RdfXml))
        );
        assert_eq!(kind_of_rdft("TestTurtleSomethingElse"), None);
        assert_eq!(kind_of_rdft("PositiveEntailmentTest"), None);
    }
}
