//! Short names for a store's IRIs, for `quiver info` and the query page: `rdf:` and the
//! namespaces most common among the store's predicates and classes, each under its usual
//! prefix when it has one (`rdfs:`, `owl:`, `foaf:`…) or one made from its last path segment
//! (`univ-bench:`). The chosen prefixes are printed as a `PREFIX` legend, so every short
//! name expands back.

use std::collections::HashMap;

/// Namespaces given a prefix by [`Prefixes::choose`], besides `rdf:`, at most.
pub const MAX_PREFIXES: usize = 3;

const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";

const WELL_KNOWN: &[(&str, &str)] = &[
    ("rdf", RDF),
    ("rdfs", "http://www.w3.org/2000/01/rdf-schema#"),
    ("owl", "http://www.w3.org/2002/07/owl#"),
    ("xsd", "http://www.w3.org/2001/XMLSchema#"),
    ("foaf", "http://xmlns.com/foaf/0.1/"),
    ("dc", "http://purl.org/dc/elements/1.1/"),
    ("dcterms", "http://purl.org/dc/terms/"),
    ("skos", "http://www.w3.org/2004/02/skos/core#"),
    ("schema", "http://schema.org/"),
    ("schema", "https://schema.org/"),
];

/// The chosen prefixes: (name, namespace).
#[derive(Debug, Default)]
pub struct Prefixes {
    list: Vec<(String, String)>,
}

impl Prefixes {
    /// Chooses prefixes for `iris` (bare IRIs, each counted once per occurrence): `rdf:`
    /// when one of them is in its namespace, then up to [`MAX_PREFIXES`] namespaces that
    /// hold two or more of them, the most common first.
    pub fn choose<'a>(iris: impl IntoIterator<Item = &'a str>) -> Self {
        Self::choose_at_most(iris, MAX_PREFIXES)
    }

    /// [`Prefixes::choose`] with up to `most` namespaces besides `rdf:`.
    pub fn choose_at_most<'a>(iris: impl IntoIterator<Item = &'a str>, most: usize) -> Self {
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for iri in iris {
            if let Some((namespace, _)) = split(iri) {
                *counts.entry(namespace).or_default() += 1;
            }
        }
        let mut prefixes = Prefixes::default();
        if counts.remove(RDF).is_some() {
            prefixes.list.push(("rdf".to_owned(), RDF.to_owned()));
        }
        let mut common: Vec<(&str, usize)> = counts.into_iter().filter(|&(_, n)| n >= 2).collect();
        common.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        for (namespace, _) in common.into_iter().take(most) {
            let name = prefixes.name_for(namespace);
            prefixes.list.push((name, namespace.to_owned()));
        }
        prefixes
    }

    /// A prefix name for `namespace` that no chosen prefix has yet.
    fn name_for(&self, namespace: &str) -> String {
        let taken = |name: &str| self.list.iter().any(|(n, _)| n == name);
        let known = WELL_KNOWN
            .iter()
            .find(|(_, ns)| *ns == namespace)
            .map(|(name, _)| name.to_string());
        let derived = derived_name(namespace);
        for name in known.into_iter().chain(derived) {
            if !taken(&name) {
                return name;
            }
        }
        (1..)
            .map(|i| format!("ns{i}"))
            .find(|name| !taken(name))
            .expect("an unused name")
    }

    /// `iri` as `prefix:local` when a chosen namespace holds it and the rest is a simple
    /// local name, else `<iri>`.
    pub fn abbreviate(&self, iri: &str) -> String {
        if let Some((namespace, local)) = split(iri) {
            if let Some((name, _)) = self.list.iter().find(|(_, ns)| ns == namespace) {
                return format!("{name}:{local}");
            }
        }
        format!("<{iri}>")
    }

    /// Adds the well-known prefixes (`rdfs:`, `owl:`, `xsd:`…) whose name and namespace are
    /// both still free.
    pub fn with_well_known(mut self) -> Self {
        for (name, namespace) in WELL_KNOWN {
            let free = !self.list.iter().any(|(n, ns)| n == name || ns == namespace);
            if free {
                self.list.push((name.to_string(), namespace.to_string()));
            }
        }
        self
    }

    /// The chosen prefixes: (name, namespace), in the order chosen.
    pub fn list(&self) -> &[(String, String)] {
        &self.list
    }

    /// One `PREFIX name: <namespace>` line per chosen prefix.
    pub fn legend(&self) -> Vec<String> {
        self.list
            .iter()
            .map(|(name, namespace)| format!("PREFIX {name}: <{namespace}>"))
            .collect()
    }
}

/// An IRI cut after its last `#` or `/`, when what follows is a simple local name: ASCII
/// letters, digits, `_` and `-`, starting with a letter, digit or `_`.
fn split(iri: &str) -> Option<(&str, &str)> {
    let cut = iri.rfind(['#', '/'])? + 1;
    let (namespace, local) = iri.split_at(cut);
    let simple = local
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && local
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    simple.then_some((namespace, local))
}

/// A prefix name from the namespace's last path segment without its file extension
/// (`…/onto/univ-bench.owl#` gives `univ-bench`), when that starts with a letter.
fn derived_name(namespace: &str) -> Option<String> {
    let path = namespace.trim_end_matches(['#', '/']);
    let segment = path.rsplit('/').next()?;
    let stem = segment.split('.').next()?;
    let name: String = stem
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .take(16)
        .collect::<String>()
        .to_ascii_lowercase();
    let name = name.trim_end_matches('-').to_owned();
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        .then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_namespaces_get_prefixes() {
        let ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
        let iris = [
            format!("{RDF}type"),
            format!("{ub}name"),
            format!("{ub}advisor"),
            format!("{ub}Student"),
            "http://xmlns.com/foaf/0.1/name".to_owned(),
            "http://xmlns.com/foaf/0.1/knows".to_owned(),
            "http://once.example/only".to_owned(),
        ];
        let prefixes = Prefixes::choose(iris.iter().map(String::as_str));
        assert_eq!(
            prefixes.legend(),
            [
                format!("PREFIX rdf: <{RDF}>"),
                format!("PREFIX univ-bench: <{ub}>"),
                "PREFIX foaf: <http://xmlns.com/foaf/0.1/>".to_owned(),
            ]
        );
        assert_eq!(prefixes.abbreviate(&iris[0]), "rdf:type");
        assert_eq!(prefixes.abbreviate(&iris[1]), "univ-bench:name");
        assert_eq!(prefixes.abbreviate(&iris[4]), "foaf:name");
        assert_eq!(
            prefixes.abbreviate("http://once.example/only"),
            "<http://once.example/only>"
        );
        // A local part that is not a simple name stays whole.
        assert_eq!(
            prefixes.abbreviate(&format!("{ub}a.b")),
            format!("<{ub}a.b>")
        );
    }

    #[test]
    fn names_never_clash() {
        let iris = [
            "http://a.example/x/onto#p",
            "http://a.example/x/onto#q",
            "http://b.example/y/onto#p",
            "http://b.example/y/onto#q",
            "http://c.example/9/#p",
            "http://c.example/9/#q",
        ];
        let prefixes = Prefixes::choose(iris);
        let legend = prefixes.legend();
        assert_eq!(legend.len(), 3, "{legend:?}");
        let mut names: Vec<&str> = legend
            .iter()
            .map(|l| l.split_whitespace().nth(1).unwrap())
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 3, "{legend:?}");
    }
}
