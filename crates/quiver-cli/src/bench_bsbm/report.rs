//! The figures of `bench bsbm`: QMpH and per-template statistics as text, CSV and JSON,
//! and the check of every query's rows against another run's JSON (`--expect`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use quiver_bsbm::mix::{Form, UseCase};
use serde_json::{json, Value};

use super::BsbmBenchArgs;

/// One query run: where it stands in which mix, its time and its rows (or status and
/// message).
pub(super) struct Sample {
    pub mix: u64,
    pub position: u32,
    pub template: u8,
    /// CRC-32 of the query text: two runs compare rows only of the same queries.
    pub text_crc: u32,
    pub micros: f64,
    pub outcome: std::result::Result<usize, (String, String)>,
}

/// The measured phase of one use case.
pub(super) struct Report {
    use_case: UseCase,
    label: String,
    clients: u32,
    runs: u32,
    seconds: f64,
    samples: Vec<Sample>,
}

/// The statistics of one template over the measured mixes.
struct TemplateStats {
    name: String,
    count: usize,
    errors: usize,
    /// Milliseconds of the answered runs: mean, min, p50, p90, p99, max.
    mean: f64,
    min: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
    /// Answered runs per second of their own time.
    qps: f64,
    rows: f64,
}

pub(super) const CSV_HEADER: &str =
    "engine,use_case,clients,qmph,template,count,errors,mean_ms,min_ms,p50_ms,p90_ms,p99_ms,max_ms,qps,rows_per_query\n";

impl Report {
    pub(super) fn new(
        use_case: UseCase,
        args: &BsbmBenchArgs,
        samples: Vec<Sample>,
        seconds: f64,
    ) -> Self {
        Self {
            use_case,
            label: args.label.clone(),
            clients: args.clients,
            runs: args.runs,
            seconds,
            samples,
        }
    }

    /// Query mixes per hour.
    fn qmph(&self) -> f64 {
        f64::from(self.runs) * 3600.0 / self.seconds
    }

    fn errors(&self) -> impl Iterator<Item = &Sample> {
        self.samples.iter().filter(|s| s.outcome.is_err())
    }

    fn templates(&self) -> Vec<TemplateStats> {
        let mut numbers: Vec<u8> = self.use_case.mix().to_vec();
        numbers.sort_unstable();
        numbers.dedup();
        numbers
            .into_iter()
            .map(|number| {
                let of: Vec<&Sample> = self
                    .samples
                    .iter()
                    .filter(|s| s.template == number)
                    .collect();
                let mut ms: Vec<f64> = of
                    .iter()
                    .filter(|s| s.outcome.is_ok())
                    .map(|s| s.micros / 1e3)
                    .collect();
                ms.sort_by(f64::total_cmp);
                let at = |q: f64| {
                    ms.get(((ms.len().max(1) - 1) as f64 * q).round() as usize)
                        .copied()
                        .unwrap_or(f64::NAN)
                };
                let total: f64 = ms.iter().sum();
                let rows: usize = of.iter().filter_map(|s| s.outcome.as_ref().ok()).sum();
                TemplateStats {
                    name: format!("{}-q{number}", self.use_case.short_name()),
                    count: of.len(),
                    errors: of.len() - ms.len(),
                    mean: total / ms.len() as f64,
                    min: at(0.0),
                    p50: at(0.5),
                    p90: at(0.9),
                    p99: at(0.99),
                    max: at(1.0),
                    qps: ms.len() as f64 / (total / 1e3),
                    rows: rows as f64 / ms.len() as f64,
                }
            })
            .collect()
    }

    pub(super) fn text(&self) -> String {
        let mut out = format!(
            "\nBSBM {} ({}): {} clients, {} mixes in {:.2} s: {:.0} QMpH\n",
            self.use_case.short_name(),
            self.label,
            self.clients,
            self.runs,
            self.seconds,
            self.qmph()
        );
        let mut table = crate::table::TableWriter::new(
            Vec::new(),
            [
                "query", "count", "mean ms", "p50", "p90", "p99", "max", "qps", "rows", "errors",
            ]
            .map(str::to_owned)
            .to_vec(),
        )
        .with_align(
            std::iter::once(crate::table::Align::Left)
                .chain(std::iter::repeat_n(crate::table::Align::Right, 9))
                .collect(),
        );
        for t in self.templates() {
            table
                .row(vec![
                    t.name,
                    t.count.to_string(),
                    format!("{:.3}", t.mean),
                    format!("{:.3}", t.p50),
                    format!("{:.3}", t.p90),
                    format!("{:.3}", t.p99),
                    format!("{:.3}", t.max),
                    format!("{:.1}", t.qps),
                    format!("{:.1}", t.rows),
                    t.errors.to_string(),
                ])
                .expect("writing to memory");
        }
        out += &String::from_utf8(table.finish().expect("writing to memory")).expect("UTF-8 cells");
        let mut by_message: BTreeMap<String, usize> = BTreeMap::new();
        for sample in self.errors() {
            let (status, message) = sample.outcome.as_ref().unwrap_err();
            *by_message
                .entry(format!("q{}: {status}: {message}", sample.template))
                .or_default() += 1;
        }
        for (message, count) in by_message.iter().take(10) {
            out += &format!("  {count} × {message}\n");
        }
        out
    }

    pub(super) fn csv(&self) -> String {
        self.templates()
            .into_iter()
            .map(|t| {
                format!(
                    "{},{},{},{:.1},{},{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.2},{:.2}\n",
                    self.label,
                    self.use_case.short_name(),
                    self.clients,
                    self.qmph(),
                    t.name,
                    t.count,
                    t.errors,
                    t.mean,
                    t.min,
                    t.p50,
                    t.p90,
                    t.p99,
                    t.max,
                    t.qps,
                    t.rows
                )
            })
            .collect()
    }

    fn json(&self) -> Value {
        let number = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
        json!({
            "use_case": self.use_case.short_name(),
            "qmph": number(self.qmph()),
            "seconds": self.seconds,
            "templates": self.templates().into_iter().map(|t| json!({
                "name": t.name, "count": t.count, "errors": t.errors,
                "mean_ms": number(t.mean), "min_ms": number(t.min), "p50_ms": number(t.p50),
                "p90_ms": number(t.p90), "p99_ms": number(t.p99), "max_ms": number(t.max),
                "qps": number(t.qps), "rows_per_query": number(t.rows),
            })).collect::<Vec<_>>(),
            "errors": self.errors().map(|s| {
                let (status, message) = s.outcome.as_ref().unwrap_err();
                json!({"mix": s.mix, "position": s.position, "template": s.template,
                       "status": status, "message": message})
            }).collect::<Vec<_>>(),
            // [mix, position, template, CRC-32 of the text, rows or null]
            "queries": self.samples.iter().map(|s| json!([
                s.mix, s.position, s.template, s.text_crc, s.outcome.as_ref().ok()
            ])).collect::<Vec<_>>(),
        })
    }
}

/// The whole run as JSON.
pub(super) fn json(reports: &[Report], args: &BsbmBenchArgs, target: String) -> Value {
    json!({
        "engine": args.label,
        "target": target,
        "products": args.products,
        "seed": args.seed,
        "driver_seed": args.driver_seed,
        "clients": args.clients,
        "runs": args.runs,
        "warmup": args.warmup,
        "peak_rss_bytes": crate::memory::peak_rss(),
        "use_cases": reports.iter().map(Report::json).collect::<Vec<_>>(),
    })
}

/// A query's identity and rows in a report's JSON: ((mix, position), (template, crc, rows)).
type Entry = ((u64, u64), (u64, u64, Option<u64>));

fn entries(use_case: &Value) -> Vec<Entry> {
    use_case["queries"]
        .as_array()
        .map(|queries| {
            queries
                .iter()
                .filter_map(|q| {
                    let q = q.as_array()?;
                    Some((
                        (q.first()?.as_u64()?, q.get(1)?.as_u64()?),
                        (q.get(2)?.as_u64()?, q.get(3)?.as_u64()?, q.get(4)?.as_u64()),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Fails unless every query both runs answered has the same rows in both.
pub(super) fn check_expected(path: &Path, reports: &[Report]) -> Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let expected: Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a `bench bsbm --json` report", path.display()))?;
    let engine = expected["engine"].as_str().unwrap_or("the expected run");
    let mut differences = Vec::new();
    let (mut compared, mut describes) = (0, 0);
    for report in reports {
        let name = report.use_case.short_name();
        let Some(theirs) = expected["use_cases"]
            .as_array()
            .and_then(|all| all.iter().find(|u| u["use_case"] == name))
        else {
            bail!("{}: no {name} mix to compare with", path.display());
        };
        let theirs: BTreeMap<_, _> = entries(theirs).into_iter().collect();
        for sample in &report.samples {
            let at = (sample.mix, u64::from(sample.position));
            let template = u64::from(sample.template);
            let rows = sample.outcome.as_ref().ok().map(|&r| r as u64);
            let Some(&(their_template, their_crc, their_rows)) = theirs.get(&at) else {
                continue;
            };
            if (template, u64::from(sample.text_crc)) != (their_template, their_crc) {
                bail!(
                    "{}: mix {} query {} is another query there: run both with the same \
                     --products, --seed and --driver-seed",
                    path.display(),
                    at.0,
                    at.1
                );
            }
            // SPARQL leaves what DESCRIBE answers to each engine (§16.4): Virtuoso adds the
            // triples that point to the resource, Quiver and Oxigraph do not.
            let form = report.use_case.template(sample.template).map(|t| t.form);
            if form == Some(Form::Describe) {
                describes += 1;
                continue;
            }
            compared += 1;
            if rows != their_rows {
                let show =
                    |rows: Option<u64>| rows.map_or("an error".to_owned(), |r| format!("{r} rows"));
                differences.push(format!(
                    "{name} mix {} query {} ({name}-q{template}): {} here, {} in {engine}{}",
                    at.0,
                    at.1,
                    show(rows),
                    show(their_rows),
                    match &sample.outcome {
                        Err((status, message)) => format!(" ({status}: {message})"),
                        Ok(_) => String::new(),
                    }
                ));
            }
        }
    }
    if compared == 0 {
        bail!("{}: no query in common to compare", path.display());
    }
    if !differences.is_empty() {
        bail!(
            "{} of {compared} queries differ in rows from {engine} ({}):\n  {}",
            differences.len(),
            path.display(),
            differences
                .iter()
                .take(20)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n  ")
        );
    }
    eprintln!(
        "rows of all {compared} queries equal {engine}'s ({describes} DESCRIBE queries not \
         compared: SPARQL leaves their answer to each engine)"
    );
    Ok(())
}
