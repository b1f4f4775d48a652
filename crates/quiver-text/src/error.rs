//! Errors of the text index.

/// What went wrong building, opening or searching a text index.
#[derive(Debug, thiserror::Error)]
pub enum TextError {
    /// The query text does not parse or asks for what the index cannot do.
    #[error("text query: {0}")]
    Query(String),
    /// tantivy failed (reading or writing the index files).
    #[error("text index {place}: {source}")]
    Index {
        place: String,
        #[source]
        source: tantivy::TantivyError,
    },
    /// An earlier catch-up or fold failed: the index lacks literals of its store.
    #[error(
        "the text index fell behind the store ({0}); build it again with `quiver text-index build`"
    )]
    Behind(String),
    #[error("text index {place}: {source}")]
    Io {
        place: String,
        #[source]
        source: std::io::Error,
    },
}

impl TextError {
    pub(crate) fn index(
        place: impl std::fmt::Display,
    ) -> impl FnOnce(tantivy::TantivyError) -> Self {
        let place = place.to_string();
        move |source| TextError::Index { place, source }
    }

    pub(crate) fn io(place: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> Self {
        let place = place.to_string();
        move |source| TextError::Io { place, source }
    }
}
