//! Which partition of which layout a store is, as its load information records it: what
//! a partition's store carries of its cluster (`partition.rs` cuts and lays out the
//! partitions).

use quiver_model::Id;
use serde::{Deserialize, Serialize};

/// Which partition of which layout a store is (recorded in its load information).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionInfo {
    pub index: u32,
    pub count: u32,
    pub hash: String,
    /// Set when the partition holds only its share of the dictionary (a cluster loaded by
    /// its processes): the bound of the cluster's ids, which the share's own terms do not
    /// tell (see `quiver_model::dictionary`'s `share`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_bound: Option<u64>,
    /// With a share of the dictionary: the IRI of each predicate id, which every partition
    /// must know (`rdf:type` among them) though another owns their terms.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub predicates: Vec<String>,
    /// The load that wrote the partition (a cluster loaded by its processes): the same in
    /// every partition and in the layout, so that partitions of two loads are not mixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<String>,
}

impl PartitionInfo {
    /// `dictionary` made this partition's share of its cluster's, when it holds one
    /// (`id_bound` set), knowing the terms of `predicates` (the predicate ids' term ids).
    pub fn share_dictionary(
        &self,
        dictionary: quiver_model::Dictionary,
        predicates: &[Id],
    ) -> Result<quiver_model::Dictionary, String> {
        let Some(bound) = self.id_bound else {
            return Ok(dictionary);
        };
        if self.predicates.len() != predicates.len() {
            return Err(format!(
                "{} predicate IRIs for {} predicates",
                self.predicates.len(),
                predicates.len()
            ));
        }
        let dictionary = dictionary.into_share(self.index, self.count, bound);
        dictionary.pin_foreign(predicates.iter().zip(&self.predicates).map(|(&id, iri)| {
            let mut bytes = Vec::with_capacity(iri.len() + 1);
            quiver_model::term::encode_iri(iri, &mut bytes);
            (id, bytes)
        }));
        Ok(dictionary)
    }
}
