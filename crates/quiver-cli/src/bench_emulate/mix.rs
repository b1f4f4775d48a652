//! The query mix of the emulator: templates with `%prefix:Class` placeholders, their
//! weights, and the random choices (which template, which instance) made per request.
//!
//! A placeholder stands for "a uniformly chosen instance of this class", so every request
//! asks about a different constant (as Wukong's emulator does) and caches cannot answer
//! for the engine. Instances come from the store's type index
//! (`Store::class_of_term` + `Store::instances`), so only IRIs typed with the class in the
//! data are ever substituted.

use std::path::Path;

use anyhow::{bail, Context, Result};
use quiver_model::{DecodedTerm, Id};
use quiver_store::Store;

/// The LUBM benchmark's namespace, the default for the `ub:` prefix.
pub const UB: &str = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";

/// The standard mix: the LUBM emulator templates with Wukong's weights.
const DEFAULT_MIX: [(&str, &str, f64); 6] = [
    (
        "t1",
        include_str!("../../../../queries/lubm-emulator/t1.rq"),
        25.0,
    ),
    (
        "t2",
        include_str!("../../../../queries/lubm-emulator/t2.rq"),
        25.0,
    ),
    (
        "t3",
        include_str!("../../../../queries/lubm-emulator/t3.rq"),
        3.0,
    ),
    (
        "t4",
        include_str!("../../../../queries/lubm-emulator/t4.rq"),
        6.0,
    ),
    (
        "t5",
        include_str!("../../../../queries/lubm-emulator/t5.rq"),
        25.0,
    ),
    (
        "t6",
        include_str!("../../../../queries/lubm-emulator/t6.rq"),
        2.0,
    ),
];

/// A query template: its text and where its placeholders are.
#[derive(Debug, Clone)]
pub struct Template {
    pub name: String,
    pub weight: f64,
    pub text: String,
    slots: Vec<Slot>,
}

/// One placeholder: a byte range of the text and the class IRI it names.
#[derive(Debug, Clone)]
struct Slot {
    start: usize,
    end: usize,
    class: String,
}

/// A template bound to a store: the instances each placeholder draws from.
pub struct Bound<'s> {
    pub template: Template,
    pools: Vec<&'s [Id]>,
}

/// The standard mix, built into the binary.
pub fn default_mix() -> Vec<Template> {
    DEFAULT_MIX
        .iter()
        .map(|(name, text, weight)| parse_template(name, text, *weight))
        .collect::<Result<_>>()
        .expect("the built-in templates are valid")
}

/// Reads a mix file: lines `TEMPLATE_FILE WEIGHT` (paths relative to the mix file), `#`
/// comments and blank lines ignored.
pub fn read_mix(path: &Path) -> Result<Vec<Template>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut templates = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), number + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split_whitespace();
        let (Some(file), Some(weight), None) = (fields.next(), fields.next(), fields.next()) else {
            bail!("{}: expected `TEMPLATE_FILE WEIGHT`, found `{line}`", at());
        };
        let weight: f64 = match weight.parse() {
            Ok(w) if f64::is_finite(w) && w >= 0.0 => w,
            _ => bail!("{}: the weight `{weight}` is not a number ≥ 0", at()),
        };
        let file = dir.join(file);
        let query = std::fs::read_to_string(&file)
            .with_context(|| format!("{}: cannot read {}", at(), file.display()))?;
        let name = file.file_stem().map_or_else(
            || file.display().to_string(),
            |s| s.to_string_lossy().into(),
        );
        templates.push(parse_template(&name, &query, weight).with_context(at)?);
    }
    if !templates.iter().any(|t| t.weight > 0.0) {
        bail!("{}: no template with a weight above 0", path.display());
    }
    Ok(templates)
}

/// Finds the placeholders of `text`: `%prefix:Local` (the prefix declared by a PREFIX of
/// the query; `ub:` defaults to the LUBM namespace) or `%<IRI>`.
pub fn parse_template(name: &str, text: &str, weight: f64) -> Result<Template> {
    let prefixes = prefixes(text);
    let mut slots = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(offset) = text[i..].find('%') {
        let start = i + offset;
        let rest = &text[start + 1..];
        if let Some(iri) = rest.strip_prefix('<') {
            let Some(close) = iri.find('>') else {
                bail!("template {name}: unclosed `%<` at byte {start}");
            };
            let end = start + 2 + close + 1;
            slots.push(Slot {
                start,
                end,
                class: iri[..close].to_owned(),
            });
            i = end;
            continue;
        }
        let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
        let mut j = start + 1;
        while j < bytes.len() && is_name(bytes[j]) {
            j += 1;
        }
        let prefix = &text[start + 1..j];
        if j >= bytes.len() || bytes[j] != b':' {
            bail!(
                "template {name}: `%` at byte {start} is not followed by `prefix:Class` or `<IRI>`"
            );
        }
        let mut k = j + 1;
        while k < bytes.len() && is_name(bytes[k]) {
            k += 1;
        }
        let local = &text[j + 1..k];
        if local.is_empty() {
            bail!("template {name}: `%{prefix}:` names no class");
        }
        let namespace = match prefixes.iter().rev().find(|(p, _)| p == prefix) {
            Some((_, namespace)) => namespace.as_str(),
            None if prefix == "ub" => UB,
            None => bail!("template {name}: undeclared prefix `{prefix}:` in `%{prefix}:{local}`"),
        };
        slots.push(Slot {
            start,
            end: k,
            class: format!("{namespace}{local}"),
        });
        i = k;
    }
    Ok(Template {
        name: name.to_owned(),
        weight,
        text: text.to_owned(),
        slots,
    })
}

/// The `PREFIX p: <iri>` declarations of a query, in order.
fn prefixes(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(offset) = lower[from..].find("prefix") {
        let at = from + offset;
        from = at + 6;
        let boundary = at == 0 || !lower.as_bytes()[at - 1].is_ascii_alphanumeric();
        let rest = &text[from..];
        if !boundary || !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let rest = rest.trim_start();
        let Some(colon) = rest.find(':') else {
            continue;
        };
        let name = rest[..colon].trim();
        let after = rest[colon + 1..].trim_start();
        if let (Some(iri), true) = (after.strip_prefix('<'), !name.contains(char::is_whitespace)) {
            if let Some(close) = iri.find('>') {
                found.push((name.to_owned(), iri[..close].to_owned()));
            }
        }
    }
    found
}

impl Template {
    /// The class IRIs of the placeholders, in order.
    pub fn classes(&self) -> impl Iterator<Item = &str> {
        self.slots.iter().map(|s| s.class.as_str())
    }

    /// Binds the placeholders to the instances of their classes in `store`.
    pub fn bind<'s>(&self, store: &'s Store) -> Result<Bound<'s>> {
        let pools = self
            .slots
            .iter()
            .map(|slot| {
                let instances = store
                    .iri_id(&slot.class)
                    .and_then(|id| store.class_of_term(id))
                    .map(|class| store.instances(class))
                    .unwrap_or(&[]);
                if instances.is_empty() {
                    bail!(
                        "template {}: the store has no instance of <{}>",
                        self.name,
                        slot.class
                    );
                }
                Ok(instances)
            })
            .collect::<Result<_>>()?;
        Ok(Bound {
            template: self.clone(),
            pools,
        })
    }
}

impl Bound<'_> {
    /// Writes a query into `out`: the template with each placeholder replaced by a
    /// uniformly chosen instance of its class, as `<IRI>`.
    pub fn instantiate(&self, store: &Store, rng: &mut Rng, out: &mut String) -> Result<()> {
        out.clear();
        let text = &self.template.text;
        let mut copied = 0;
        for (slot, pool) in self.template.slots.iter().zip(&self.pools) {
            out.push_str(&text[copied..slot.start]);
            // Instances are normally IRIs; a blank node cannot be named in a query, so
            // draw again (a class whose instances are all blank fails after a few draws).
            let mut written = false;
            for _ in 0..64 {
                let id = pool[rng.below(pool.len() as u64) as usize];
                written = store.with_term(id, |term| match term {
                    Some(DecodedTerm::Iri(iri)) => {
                        out.push('<');
                        out.push_str(iri);
                        out.push('>');
                        true
                    }
                    _ => false,
                });
                if written {
                    break;
                }
            }
            if !written {
                bail!(
                    "template {}: no IRI among the instances of <{}>",
                    self.template.name,
                    slot.class
                );
            }
            copied = slot.end;
        }
        out.push_str(&text[copied..]);
        Ok(())
    }
}

/// SplitMix64: small, fast, deterministic per seed; one per client.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (multiply-shift; `n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Picks an index with probability proportional to its weight.
#[derive(Debug, Clone)]
pub struct WeightedChooser {
    cumulative: Vec<f64>,
    /// The last index with a weight above 0 (for a draw that rounds up to the total).
    last: usize,
}

impl WeightedChooser {
    pub fn new(weights: &[f64]) -> Result<Self> {
        if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
            bail!("weights must be finite numbers ≥ 0");
        }
        let cumulative: Vec<f64> = weights
            .iter()
            .scan(0.0, |sum, w| {
                *sum += w;
                Some(*sum)
            })
            .collect();
        if cumulative.last().is_none_or(|&total| total <= 0.0) {
            bail!("no weight above 0");
        }
        let last = weights.iter().rposition(|&w| w > 0.0).unwrap_or(0);
        Ok(Self { cumulative, last })
    }

    pub fn choose(&self, rng: &mut Rng) -> usize {
        let total = self.cumulative[self.cumulative.len() - 1];
        let x = rng.unit() * total;
        // The first index whose cumulative weight exceeds x (never a zero-weight entry).
        let i = self.cumulative.partition_point(|&c| c <= x);
        if i < self.cumulative.len() {
            i
        } else {
            self.last
        }
    }
}
