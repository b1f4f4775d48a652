//! `LOAD <iri>`: reading local files and directories for SPARQL Update.
//!
//! The source is a `file:` IRI (`file:///data/x.ttl`, `file://localhost/…`, percent-encoding
//! decoded) or a plain path; a directory loads every RDF file in it. Formats are detected
//! the way `quiver load` detects them (`quiver_loader::collect_sources`: extension, `.gz`),
//! and parsed with Oxigraph's parsers. Blank node labels are renamed to fresh ones for each
//! document, so a loaded `_:b` never merges with a node already in the store. Remote IRIs
//! are refused: Quiver makes no network requests on behalf of an update.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::PathBuf;

use flate2::read::MultiGzDecoder;
use oxrdfio::RdfParser;
use quiver_loader::Source;
use quiver_sparql::update::LoadHandler;

/// The [`LoadHandler`] of the database: local files and directories only.
#[derive(Debug, Clone, Copy, Default)]
pub struct FileLoader;

impl LoadHandler for FileLoader {
    fn load(&self, source_iri: &str) -> Result<Vec<oxrdf::Quad>, String> {
        let path = local_path(source_iri)?;
        let sources = quiver_loader::collect_sources(&[path], None).map_err(|e| e.to_string())?;
        let mut quads = Vec::new();
        for source in &sources {
            parse(source, &mut quads)?;
        }
        Ok(quads)
    }
}

/// The local path a `LOAD` source names.
pub fn local_path(source: &str) -> Result<PathBuf, String> {
    let lower = source.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Err(format!(
            "LOAD of remote IRIs is not supported ({source}); download the file and LOAD file:///…"
        ));
    }
    if let Some(rest) = lower.strip_prefix("file://").map(|_| &source[7..]) {
        let (host, path) = match rest.find('/') {
            Some(slash) => (&rest[..slash], &rest[slash..]),
            None => (rest, ""),
        };
        if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
            return Err(format!(
                "LOAD of {source}: files on other hosts are not supported"
            ));
        }
        if path.is_empty() {
            return Err(format!("LOAD of {source}: the IRI names no file"));
        }
        return percent_decode(path).map(PathBuf::from);
    }
    if lower.starts_with("file:") {
        return percent_decode(&source[5..]).map(PathBuf::from);
    }
    let scheme = source.split_once(':').map(|(s, _)| s);
    if let Some(scheme) = scheme {
        if scheme.len() > 1
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return Err(format!(
                "LOAD of {source}: the {scheme}: scheme is not supported (use a file: IRI or a path)"
            ));
        }
    }
    Ok(PathBuf::from(source))
}

fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad percent-encoding in {text}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{text}: the decoded path is not UTF-8"))
}

fn parse(source: &Source, quads: &mut Vec<oxrdf::Quad>) -> Result<(), String> {
    let path = &source.path;
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let reader: Box<dyn Read> = if source.gzip {
        Box::new(MultiGzDecoder::new(BufReader::new(file)))
    } else {
        Box::new(BufReader::new(file))
    };
    // Triple terms nested too deeply are refused as they are read, before the parser.
    let reader: Box<dyn Read> = if source.format.is_line_based() {
        Box::new(quiver_model::nesting::GuardedReader::for_lines(reader))
    } else if source.format.nests_triple_terms() {
        Box::new(quiver_model::nesting::GuardedReader::new(reader))
    } else {
        reader
    };
    let mut parser = RdfParser::from_format(source.format.rdf_format()).rename_blank_nodes();
    if let Some(base) = std::path::absolute(path)
        .ok()
        .and_then(|p| p.to_str().map(file_iri))
    {
        parser = parser
            .with_base_iri(base)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    for quad in parser.for_reader(reader) {
        quads.push(quad.map_err(|e| format!("{}: {e}", path.display()))?);
    }
    Ok(())
}

/// The `file:` IRI of an absolute path.
fn file_iri(path: &str) -> String {
    let mut iri = String::from("file://");
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            iri.push(byte as char);
        } else {
            iri.push_str(&format!("%{byte:02X}"));
        }
    }
    iri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_to_paths() {
        assert_eq!(
            local_path("file:///a/b%20c.ttl").unwrap(),
            PathBuf::from("/a/b c.ttl")
        );
        assert_eq!(
            local_path("file://localhost/x.nt").unwrap(),
            PathBuf::from("/x.nt")
        );
        assert_eq!(local_path("data/x.nt").unwrap(), PathBuf::from("data/x.nt"));
        assert!(local_path("http://example.org/x.ttl")
            .unwrap_err()
            .contains("remote IRIs is not supported"));
        assert!(local_path("file://elsewhere/x.nt").is_err());
        assert!(local_path("ftp://h/x").unwrap_err().contains("ftp:"));
        assert!(local_path("file:///bad%zz").is_err());
    }

    #[test]
    fn file_iris_escape() {
        assert_eq!(file_iri("/a b/c#d"), "file:///a%20b/c%23d");
    }
}
