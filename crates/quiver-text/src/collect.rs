//! A collector of every hit with its term id and score.
//!
//! tantivy's `TopDocs` keeps the best `k`; a SPARQL pattern needs every match, and its id
//! (the literal's term id, a fast field) rather than tantivy's document address.

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

/// Every matching literal's id below `terms`, with its score (when `scored`).
pub struct AllHits {
    pub terms: u64,
    pub scored: bool,
}

pub struct SegmentHits {
    ids: Column<u64>,
    terms: u64,
    hits: Vec<(u64, f32)>,
}

impl Collector for AllHits {
    type Fruit = Vec<(u64, f32)>;
    type Child = SegmentHits;

    fn for_segment(
        &self,
        _segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<SegmentHits> {
        Ok(SegmentHits {
            ids: reader.fast_fields().u64("id")?,
            terms: self.terms,
            hits: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        self.scored
    }

    fn merge_fruits(&self, fruits: Vec<Vec<(u64, f32)>>) -> tantivy::Result<Vec<(u64, f32)>> {
        Ok(fruits.concat())
    }
}

impl SegmentCollector for SegmentHits {
    type Fruit = Vec<(u64, f32)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        if let Some(id) = self.ids.first(doc) {
            if id < self.terms {
                self.hits.push((id, score));
            }
        }
    }

    fn harvest(self) -> Vec<(u64, f32)> {
        self.hits
    }
}
