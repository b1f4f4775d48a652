//! Input files: formats detected from extensions, directories expanded, gzip recognised.

use std::path::{Path, PathBuf};

use oxrdfio::RdfFormat;

use crate::LoadError;

/// The RDF syntaxes the loader reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    NTriples,
    NQuads,
    Turtle,
    TriG,
    RdfXml,
    /// JSON-LD 1.1 (`oxjsonld`: a document's own contexts; a remote `@context` is an error,
    /// as nothing is fetched).
    JsonLd,
}

impl Format {
    /// Parses a `--format` value (`nt`, `nq`, `ttl`, `trig`, `rdfxml`, or a media type).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "nt" | "ntriples" | "n-triples" | "application/n-triples" => Format::NTriples,
            "nq" | "nquads" | "n-quads" | "application/n-quads" => Format::NQuads,
            "ttl" | "turtle" | "text/turtle" => Format::Turtle,
            "trig" | "application/trig" => Format::TriG,
            "rdf" | "rdfxml" | "rdf/xml" | "xml" | "owl" | "application/rdf+xml" => Format::RdfXml,
            "jsonld" | "json-ld" | "application/ld+json" => Format::JsonLd,
            _ => return None,
        })
    }

    /// The format of a file name's extension (after removing `.gz`).
    pub fn from_extension(extension: &str) -> Option<Self> {
        match extension.to_ascii_lowercase().as_str() {
            "nt" => Some(Format::NTriples),
            "nq" => Some(Format::NQuads),
            "ttl" => Some(Format::Turtle),
            "trig" => Some(Format::TriG),
            "rdf" | "owl" | "xml" => Some(Format::RdfXml),
            "jsonld" => Some(Format::JsonLd),
            _ => None,
        }
    }

    /// The `oxrdfio` format that parses it.
    /// Whether the syntax writes triple terms with `<<`, whose nesting
    /// `quiver_model::nesting` bounds before the parser reads the text.
    pub fn nests_triple_terms(self) -> bool {
        matches!(
            self,
            Format::NTriples | Format::NQuads | Format::Turtle | Format::TriG
        )
    }

    pub fn rdf_format(self) -> RdfFormat {
        match self {
            Format::NTriples => RdfFormat::NTriples,
            Format::NQuads => RdfFormat::NQuads,
            Format::Turtle => RdfFormat::Turtle,
            Format::TriG => RdfFormat::TriG,
            Format::RdfXml => RdfFormat::RdfXml,
            Format::JsonLd => RdfFormat::JsonLd {
                profile: oxrdfio::JsonLdProfileSet::empty(),
            },
        }
    }

    /// Line-based formats can be cut at newlines and parsed in parallel chunks.
    pub fn is_line_based(self) -> bool {
        matches!(self, Format::NTriples | Format::NQuads)
    }
}

/// One file to load.
#[derive(Debug, Clone)]
pub struct Source {
    pub path: PathBuf,
    pub format: Format,
    pub gzip: bool,
    /// Size on disk (compressed size for gzip), for progress.
    pub bytes: u64,
    /// Only the lines that start in this byte range (`quiver-cluster`'s shares of one large
    /// file): the first line starting at or after `start`, up to the end of the line in
    /// which `end - 1` lies.
    pub range: Option<(u64, u64)>,
}

impl Source {
    /// Whether the source can be cut into byte ranges parsed apart: an uncompressed
    /// line-based file.
    pub fn splittable(&self) -> bool {
        self.format.is_line_based() && !self.gzip
    }

    /// The source cut into byte ranges of about `piece` bytes, each of whole lines (see
    /// [`Source::range`]); the source itself when it is not splittable or not larger.
    pub fn pieces(&self, piece: u64) -> Vec<Source> {
        let piece = piece.max(1);
        if !self.splittable() || self.range.is_some() || self.bytes <= piece {
            return vec![self.clone()];
        }
        let count = self.bytes.div_ceil(piece);
        (0..count)
            .map(|i| Source {
                range: Some((self.bytes * i / count, self.bytes * (i + 1) / count)),
                ..self.clone()
            })
            .collect()
    }
}

/// Resolves the user's paths into sources: directories are expanded (sorted, not
/// recursively into hidden entries), formats come from `format` or each file's extension.
pub fn collect_sources(
    paths: &[PathBuf],
    format: Option<Format>,
) -> Result<Vec<Source>, LoadError> {
    let mut sources = Vec::new();
    for path in paths {
        let metadata = std::fs::metadata(path).map_err(|e| LoadError::io(path, e))?;
        if metadata.is_dir() {
            let mut entries = std::fs::read_dir(path)
                .map_err(|e| LoadError::io(path, e))?
                .map(|entry| entry.map(|e| e.path()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| LoadError::io(path, e))?;
            entries.sort();
            let before = sources.len();
            for entry in entries {
                let hidden = entry
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'));
                if entry.is_file() && !hidden && (format.is_some() || detect(&entry).is_some()) {
                    sources.push(source(&entry, format)?);
                }
            }
            if sources.len() == before {
                return Err(LoadError::Input {
                    path: path.clone(),
                    message:
                        "directory holds no RDF file (.nt .nq .ttl .trig .rdf, optionally .gz)"
                            .into(),
                });
            }
        } else {
            sources.push(source(path, format)?);
        }
    }
    if sources.is_empty() {
        return Err(LoadError::NoInput);
    }
    Ok(sources)
}

fn detect(path: &Path) -> Option<(Format, bool)> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    let (name, gzip) = match name.strip_suffix(".gz") {
        Some(stripped) => (stripped.to_owned(), true),
        None => (name, false),
    };
    let extension = Path::new(&name).extension()?.to_string_lossy().into_owned();
    Some((Format::from_extension(&extension)?, gzip))
}

fn source(path: &Path, format: Option<Format>) -> Result<Source, LoadError> {
    let metadata = std::fs::metadata(path).map_err(|e| LoadError::io(path, e))?;
    let gzip = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    let format = match (format, detect(path)) {
        (Some(format), _) => format,
        (None, Some((format, _))) => format,
        (None, None) => {
            return Err(LoadError::Input {
                path: path.to_owned(),
                message: "unsupported file extension (use .nt .nq .ttl .trig .rdf, optionally .gz, or --format)"
                    .into(),
            })
        }
    };
    if metadata.len() == 0 {
        return Err(LoadError::Input {
            path: path.to_owned(),
            message: "empty file".into(),
        });
    }
    Ok(Source {
        path: path.to_owned(),
        format,
        gzip,
        bytes: metadata.len(),
        range: None,
    })
}
