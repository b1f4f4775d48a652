//! Reports: the workload × engine table (Mops/s with gain columns, laid out like Wiscer's
//! `parse_results.py` grid) and per-batch throughput as CSV.

use std::io::{self, Write};

use crate::runner::RunStats;

/// The runs of one workload.
#[derive(Debug, Clone)]
pub struct WorkloadResult {
    pub workload: String,
    pub runs: Vec<RunStats>,
}

/// Gain columns: (title, better candidate, baseline), shown when both columns exist.
fn gains(labels: &[String]) -> Vec<(String, String, String)> {
    let mut pairs = vec![
        (
            "VIP vs chained".to_owned(),
            "chained-vip".to_owned(),
            "chained".to_owned(),
        ),
        (
            "hot table vs quiver".into(),
            "quiver-vip".into(),
            "quiver".into(),
        ),
        (
            "quiver vs hashbrown".into(),
            "quiver".into(),
            "hashbrown".into(),
        ),
        (
            "quiver-vip vs hashbrown".into(),
            "quiver-vip".into(),
            "hashbrown".into(),
        ),
    ];
    for label in labels {
        if let Some((engine, _)) = label.split_once(" x") {
            pairs.push((
                format!("batched vs single ({engine})"),
                label.clone(),
                engine.to_owned(),
            ));
        }
    }
    // The graph index's batched calls against the hash table's one-at-a-time ones: the
    // hash table's interface has no batch.
    for label in labels {
        if label.starts_with("quiver") && label.contains(" x") {
            pairs.push((
                format!("{label} vs hashbrown"),
                label.clone(),
                "hashbrown".into(),
            ));
        }
    }
    pairs
        .into_iter()
        .filter(|(_, a, b)| labels.contains(a) && labels.contains(b))
        .collect()
}

/// The table: one row per workload, Mops/s per engine, then the gains.
pub fn table(results: &[WorkloadResult]) -> String {
    let mut labels: Vec<String> = Vec::new();
    for result in results {
        for run in &result.runs {
            if !labels.contains(&run.label()) {
                labels.push(run.label());
            }
        }
    }
    let gains = gains(&labels);
    let mut head = vec!["Workload".to_owned()];
    head.extend(labels.iter().map(|l| format!("{l} (Mops/s)")));
    head.extend(gains.iter().map(|(title, _, _)| title.clone()));
    let mut rows = Vec::new();
    for result in results {
        let mops = |label: &str| {
            result
                .runs
                .iter()
                .find(|r| r.label() == label)
                .map(RunStats::mops)
        };
        let mut row = vec![result.workload.clone()];
        row.extend(
            labels
                .iter()
                .map(|l| mops(l).map_or_else(|| "-".to_owned(), |m| format!("{m:.1}"))),
        );
        row.extend(gains.iter().map(|(_, a, b)| match (mops(a), mops(b)) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:+.1}%", (a - b) * 100.0 / b),
            _ => "-".to_owned(),
        }));
        rows.push(row);
    }
    grid(&head, &rows)
}

/// A text grid (as `tabulate`'s "grid" format).
fn grid(head: &[String], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..head.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([head[c].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let rule = |fill: char| {
        let mut line = String::from("+");
        for w in &widths {
            line.extend(std::iter::repeat_n(fill, w + 2));
            line.push('+');
        }
        line.push('\n');
        line
    };
    let line = |cells: &[String]| {
        let mut line = String::from("|");
        for (cell, w) in cells.iter().zip(&widths) {
            let pad = w - cell.chars().count();
            line.push(' ');
            line.push_str(cell);
            line.extend(std::iter::repeat_n(' ', pad + 1));
            line.push('|');
        }
        line.push('\n');
        line
    };
    let mut out = rule('-');
    out.push_str(&line(head));
    out.push_str(&rule('='));
    for row in rows {
        out.push_str(&line(row));
        out.push_str(&rule('-'));
    }
    out
}

/// Per-batch throughput as CSV: `workload,engine,batch,ops,seconds,mops`.
pub fn write_csv(out: &mut dyn Write, results: &[WorkloadResult]) -> io::Result<()> {
    writeln!(out, "workload,engine,batch,ops_done,ops,seconds,mops")?;
    for result in results {
        for run in &result.runs {
            let mut done = 0;
            for (i, point) in run.points.iter().enumerate() {
                done += point.ops;
                writeln!(
                    out,
                    "{},{},{i},{done},{},{:.6},{:.3}",
                    result.workload,
                    run.label(),
                    point.ops,
                    point.seconds,
                    point.mops()
                )?;
            }
        }
    }
    Ok(())
}
