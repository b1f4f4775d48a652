//! What a run shows: a table per test group, the totals line, failure details, and the
//! ratchet: a list of tests known to fail, which a run must match exactly (a listed test
//! that passes must leave the list; a failing test not on it is a regression).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::manifest::TestKind;
use crate::runner::{Status, TestResult};

/// The results of a run, in suite order.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub results: Vec<TestResult>,
    /// Included manifests that are missing (their tests did not run).
    pub missing_manifests: Vec<String>,
}

/// Passed, failed and skipped counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Totals {
    fn add(&mut self, status: &Status) {
        match status {
            Status::Passed => self.passed += 1,
            Status::Failed(_) => self.failed += 1,
            Status::Skipped(_) => self.skipped += 1,
        }
    }
}

/// The parts of the suites, counted apart: syntax tests measure mostly the parsers,
/// evaluation tests the engine, RDF tests the loader and the store's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// Positive and negative syntax tests, of queries and of updates.
    Syntax,
    /// Query evaluation, result formats, and the kinds always skipped (protocol, ...).
    Evaluation,
    /// Update evaluation: a request run on a dataset, the dataset after it compared.
    Update,
    /// RDF document syntax tests (N-Triples, N-Quads, Turtle, TriG, RDF/XML), positive and
    /// negative.
    RdfSyntax,
    /// RDF document evaluation and C14N tests: the loaded dataset compared (and the RDF
    /// Semantics entailment tests, which are skipped).
    RdfEvaluation,
}

impl Category {
    /// Every category, in the order the summary lists them.
    pub const ALL: [Category; 5] = [
        Category::Syntax,
        Category::Evaluation,
        Category::Update,
        Category::RdfSyntax,
        Category::RdfEvaluation,
    ];
}

impl Category {
    pub fn of(kind: &TestKind) -> Self {
        match kind {
            TestKind::PositiveSyntax
            | TestKind::NegativeSyntax
            | TestKind::PositiveUpdateSyntax
            | TestKind::NegativeUpdateSyntax => Category::Syntax,
            // The RDF Semantics tests (`mf:PositiveEntailmentTest` …), always skipped.
            TestKind::Other(name) if name.ends_with("EntailmentTest") => Category::RdfEvaluation,
            TestKind::QueryEvaluation | TestKind::CsvResultFormat | TestKind::Other(_) => {
                Category::Evaluation
            }
            TestKind::UpdateEvaluation => Category::Update,
            TestKind::RdfSyntax { .. } => Category::RdfSyntax,
            TestKind::RdfEvaluation(_) => Category::RdfEvaluation,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Category::Syntax => "W3C SPARQL syntax",
            Category::Evaluation => "W3C SPARQL evaluation",
            Category::Update => "W3C SPARQL update evaluation",
            Category::RdfSyntax => "W3C RDF syntax",
            Category::RdfEvaluation => "W3C RDF evaluation",
        }
    }

    fn is_rdf(self) -> bool {
        matches!(self, Category::RdfSyntax | Category::RdfEvaluation)
    }
}

fn totals_line(label: &str, t: Totals) -> String {
    format!(
        "{label}: {} passed, {} failed, {} skipped",
        t.passed, t.failed, t.skipped
    )
}

impl Report {
    pub fn totals(&self) -> Totals {
        let mut totals = Totals::default();
        for result in &self.results {
            totals.add(&result.status);
        }
        totals
    }

    /// The totals of the tests of one category.
    pub fn category_totals(&self, category: Category) -> Totals {
        let mut totals = Totals::default();
        for result in &self.results {
            if Category::of(&result.test.kind) == category {
                totals.add(&result.status);
            }
        }
        totals
    }

    /// Whether the run holds RDF syntax tests (the RDF 1.2 suite).
    fn has_rdf(&self) -> bool {
        self.results
            .iter()
            .any(|r| Category::of(&r.test.kind).is_rdf())
    }

    /// `W3C SPARQL: 580 passed, 13 failed, 40 skipped` (`W3C RDF and SPARQL: …` when the run
    /// holds RDF tests).
    pub fn summary_line(&self) -> String {
        let label = if self.has_rdf() {
            "W3C RDF and SPARQL"
        } else {
            "W3C SPARQL"
        };
        totals_line(label, self.totals())
    }

    /// The syntax line, the evaluation line, the update evaluation line, the RDF syntax and
    /// RDF evaluation lines when the run holds RDF tests, then [`Report::summary_line`]:
    /// `W3C SPARQL syntax: …`, `W3C SPARQL evaluation: …`, `W3C SPARQL update evaluation:
    /// …`, (`W3C RDF syntax: …`, `W3C RDF evaluation: …`,) `W3C SPARQL: …`.
    pub fn summary(&self) -> String {
        let mut text = String::new();
        let has_rdf = self.has_rdf();
        for category in Category::ALL {
            if category.is_rdf() && !has_rdf {
                continue;
            }
            text.push_str(&totals_line(
                category.label(),
                self.category_totals(category),
            ));
            text.push('\n');
        }
        text.push_str(&self.summary_line());
        text
    }

    /// One line per group with its counts.
    pub fn table(&self) -> String {
        let mut groups: BTreeMap<&str, Totals> = BTreeMap::new();
        for result in &self.results {
            groups
                .entry(result.test.group.as_str())
                .or_default()
                .add(&result.status);
        }
        let width = groups.keys().map(|g| g.len()).max().unwrap_or(5).max(5);
        let mut text = format!("{:width$}  passed  failed  skipped\n", "group");
        for (group, t) in groups {
            let _ = writeln!(
                text,
                "{group:width$}  {:>6}  {:>6}  {:>7}",
                t.passed, t.failed, t.skipped
            );
        }
        text
    }

    /// The failing tests with their reasons.
    pub fn failures(&self) -> impl Iterator<Item = (&TestResult, &str)> {
        self.results.iter().filter_map(|r| match &r.status {
            Status::Failed(reason) => Some((r, reason.as_str())),
            _ => None,
        })
    }

    /// The known-failures file of this run: `<test id> # reason` per failing test, sorted.
    pub fn known_failures_text(&self) -> String {
        let mut lines: Vec<String> = self
            .failures()
            .map(|(r, reason)| format!("{} # {}", r.test.id, one_line(reason, 160)))
            .collect();
        lines.sort();
        let mut text =
            String::from("# W3C tests known to fail (regenerate with --write-known-failures).\n");
        for line in lines {
            text.push_str(&line);
            text.push('\n');
        }
        text
    }

    /// Where this run breaks the ratchet. `complete` says the whole suite ran (no filter),
    /// so that listed tests which no longer exist are reported too.
    pub fn ratchet_violations(&self, known: &KnownFailures, complete: bool) -> Vec<String> {
        let mut violations = Vec::new();
        let mut seen = BTreeSet::new();
        for result in &self.results {
            let id = result.test.id.as_str();
            seen.insert(id);
            let listed = known.contains(id);
            match &result.status {
                Status::Passed if listed => violations.push(format!(
                    "{id} now passes: remove it from the known failures"
                )),
                Status::Failed(reason) if !listed => violations.push(format!(
                    "{id} fails but is not a known failure: {}",
                    one_line(reason, 200)
                )),
                _ => {}
            }
        }
        if complete {
            for id in known.ids.iter().filter(|id| !seen.contains(id.as_str())) {
                violations.push(format!(
                    "{id} is listed as a known failure but is not in the suite"
                ));
            }
        }
        violations
    }
}

/// A known-failures list: one test id per line, `#` starting a comment.
#[derive(Debug, Clone, Default)]
pub struct KnownFailures {
    ids: BTreeSet<String>,
}

impl KnownFailures {
    pub fn parse(text: &str) -> Self {
        let ids = text
            .lines()
            .map(|line| line.split(" #").next().unwrap_or("").trim())
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(str::to_owned)
            .collect();
        Self { ids }
    }

    pub fn contains(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// `text` on one line, cut to `limit` characters.
fn one_line(text: &str, limit: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.char_indices().nth(limit) {
        Some((cut, _)) => format!("{}…", &joined[..cut]),
        None => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::TestCase;

    fn result(kind: TestKind, status: Status) -> TestResult {
        TestResult {
            test: TestCase {
                id: format!("{kind:?}"),
                iri: String::new(),
                name: String::new(),
                group: "g".into(),
                kind,
                query: None,
                data: Vec::new(),
                graph_data: Vec::new(),
                result: None,
                skip: None,
                update: None,
                service_data: Vec::new(),
                profile: None,
                base: None,
            },
            status,
        }
    }

    #[test]
    fn the_summary_counts_syntax_and_evaluation_apart_and_together() {
        let failed = || Status::Failed("why".into());
        let report = Report {
            missing_manifests: Vec::new(),
            results: vec![
                result(TestKind::PositiveSyntax, Status::Passed),
                result(TestKind::NegativeSyntax, failed()),
                result(TestKind::NegativeUpdateSyntax, Status::Passed),
                result(TestKind::QueryEvaluation, Status::Passed),
                result(TestKind::CsvResultFormat, failed()),
                result(TestKind::QueryEvaluation, failed()),
                result(
                    TestKind::Other("ProtocolTest".into()),
                    Status::Skipped("x".into()),
                ),
                result(TestKind::UpdateEvaluation, Status::Passed),
                result(TestKind::UpdateEvaluation, Status::Passed),
                result(TestKind::UpdateEvaluation, failed()),
            ],
        };
        assert_eq!(
            report.summary(),
            "W3C SPARQL syntax: 2 passed, 1 failed, 0 skipped\n\
             W3C SPARQL evaluation: 1 passed, 2 failed, 1 skipped\n\
             W3C SPARQL update evaluation: 2 passed, 1 failed, 0 skipped\n\
             W3C SPARQL: 5 passed, 4 failed, 1 skipped"
        );
    }

    #[test]
    fn rdf_tests_get_lines_of_their_own() {
        use crate::manifest::RdfSyntax;
        let report = Report {
            missing_manifests: Vec::new(),
            results: vec![
                result(TestKind::PositiveSyntax, Status::Passed),
                result(
                    TestKind::RdfSyntax {
                        syntax: RdfSyntax::Turtle,
                        positive: false,
                    },
                    Status::Passed,
                ),
                result(
                    TestKind::RdfEvaluation(RdfSyntax::NQuads),
                    Status::Failed("why".into()),
                ),
            ],
        };
        assert_eq!(
            report.summary(),
            "W3C SPARQL syntax: 1 passed, 0 failed, 0 skipped\n\
             W3C SPARQL evaluation: 0 passed, 0 failed, 0 skipped\n\
             W3C SPARQL update evaluation: 0 passed, 0 failed, 0 skipped\n\
             W3C RDF syntax: 1 passed, 0 failed, 0 skipped\n\
             W3C RDF evaluation: 0 passed, 1 failed, 0 skipped\n\
             W3C RDF and SPARQL: 2 passed, 1 failed, 0 skipped"
        );
    }
}
