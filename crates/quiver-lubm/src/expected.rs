//! The reference row counts of the LUBM queries (`lubm/expected-counts.tsv` beside the
//! reference data): one line per dataset, `dataset  triples  q1 … q12`, tab-separated,
//! `#` lines being comments. Tests check the engine's answers against them.

/// The row counts of q1, q2, … for `dataset` in the text of an expected-counts file;
/// `None` when the file has no line for it or a count is not a number.
pub fn query_counts(text: &str, dataset: &str) -> Option<Vec<u64>> {
    let line = text
        .lines()
        .find(|line| line.split('\t').next() == Some(dataset))?;
    line.split('\t').skip(2).map(|c| c.parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_read_by_dataset_past_comments_and_the_triple_count() {
        let text = "# dataset\ttriples\tq1\tq2\nlubm1\t100\t0\t828\nlubm10\t200\t4\t5\n";
        assert_eq!(query_counts(text, "lubm10"), Some(vec![4, 5]));
        assert_eq!(query_counts(text, "lubm1"), Some(vec![0, 828]));
        assert_eq!(query_counts(text, "lubm2"), None);
        assert_eq!(query_counts("lubm1\t1\tx\n", "lubm1"), None);
    }
}
