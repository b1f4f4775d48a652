//! Aligned text tables for people: query results on a terminal (`quiver query`, the
//! console's `sparql -v`) and the statistics of `quiver info`.
//!
//! Columns are as wide as their widest cell (counted in characters), separated by two
//! spaces, the header underlined with dashes; numbers align right. A long result is not
//! held whole: the widths come from the first [`WIDTH_ROWS`] rows, and later rows are
//! written as they come (a wider cell there pushes its line's later columns right).

use std::io::{self, Write};

use quiver_sparql::{QueryResults, Solutions};

/// Rows read to choose the columns' widths before the first line is written.
pub const WIDTH_ROWS: usize = 1000;

/// How a column's cells are placed in its width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table being written: its header and alignments, the rows held until the widths are
/// known, then the widths.
pub struct TableWriter<W: Write> {
    out: W,
    header: Vec<String>,
    align: Vec<Align>,
    pending: Vec<Vec<String>>,
    widths: Option<Vec<usize>>,
}

impl<W: Write> TableWriter<W> {
    /// A table of `header.len()` columns, all aligned left.
    pub fn new(out: W, header: Vec<String>) -> Self {
        let align = vec![Align::Left; header.len()];
        Self {
            out,
            header,
            align,
            pending: Vec::new(),
            widths: None,
        }
    }

    /// Sets how each column aligns.
    pub fn with_align(mut self, align: Vec<Align>) -> Self {
        self.align = align;
        self
    }

    /// Adds a row (missing cells are empty).
    pub fn row(&mut self, cells: Vec<String>) -> io::Result<()> {
        match &self.widths {
            Some(widths) => write_line(&mut self.out, &cells, widths, &self.align),
            None => {
                self.pending.push(cells);
                if self.pending.len() >= WIDTH_ROWS {
                    self.flush_pending()?;
                }
                Ok(())
            }
        }
    }

    /// Writes whatever is held and returns the sink.
    pub fn finish(mut self) -> io::Result<W> {
        if self.widths.is_none() {
            self.flush_pending()?;
        }
        Ok(self.out)
    }

    fn flush_pending(&mut self) -> io::Result<()> {
        let mut widths: Vec<usize> = self.header.iter().map(|h| width(h)).collect();
        for row in &self.pending {
            for (c, cell) in row.iter().enumerate().take(widths.len()) {
                widths[c] = widths[c].max(width(cell));
            }
        }
        write_line(&mut self.out, &self.header, &widths, &self.align)?;
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        write_line(&mut self.out, &rule, &widths, &self.align)?;
        for row in std::mem::take(&mut self.pending) {
            write_line(&mut self.out, &row, &widths, &self.align)?;
        }
        self.widths = Some(widths);
        Ok(())
    }
}

/// A cell's width: its characters.
fn width(text: &str) -> usize {
    text.chars().count()
}

fn write_line(
    out: &mut impl Write,
    cells: &[String],
    widths: &[usize],
    align: &[Align],
) -> io::Result<()> {
    let mut line = String::new();
    for (c, &w) in widths.iter().enumerate() {
        let cell = cells.get(c).map_or("", String::as_str);
        let pad = w.saturating_sub(width(cell));
        if c > 0 {
            line.push_str("  ");
        }
        if align.get(c) == Some(&Align::Right) {
            line.extend(std::iter::repeat_n(' ', pad));
            line.push_str(cell);
        } else {
            line.push_str(cell);
            line.extend(std::iter::repeat_n(' ', pad));
        }
    }
    writeln!(out, "{}", line.trim_end())
}

/// Writes up to `limit` rows of `solutions` as a table of terms in N-Triples syntax (empty
/// cells for unbound values), headed by the variables.
pub fn write_solutions<W: Write>(solutions: &Solutions<'_>, limit: usize, out: W) -> io::Result<W> {
    let header = solutions.variables.iter().map(|v| v.to_string()).collect();
    let mut table = TableWriter::new(out, header);
    let mut failure = None;
    solutions.for_each_row_in(0..limit.min(solutions.len()), |row| {
        if failure.is_none() {
            let cells = row
                .iter()
                .map(|term| term.map(|t| t.to_string()).unwrap_or_default())
                .collect();
            failure = table.row(cells).err();
        }
    });
    if let Some(error) = failure {
        return Err(error);
    }
    table.finish()
}

/// Writes a query's answer for a person: solutions as a table followed by their count, a
/// boolean as `true` or `false`, a graph as N-Triples lines.
pub fn write_results<W: Write>(results: &QueryResults<'_>, mut out: W) -> io::Result<W> {
    match results {
        QueryResults::Boolean(value) => writeln!(out, "{value}")?,
        QueryResults::Solutions(solutions) => {
            out = write_solutions(solutions, usize::MAX, out)?;
            let rows = solutions.len();
            writeln!(out, "{rows} row{}", if rows == 1 { "" } else { "s" })?;
        }
        QueryResults::Graph(triples) => {
            for triple in triples {
                writeln!(out, "{triple} .")?;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(header: &[&str], rows: &[&[&str]], align: Vec<Align>) -> String {
        let mut table =
            TableWriter::new(Vec::new(), header.iter().map(|h| h.to_string()).collect())
                .with_align(align);
        for row in rows {
            table
                .row(row.iter().map(|c| c.to_string()).collect())
                .unwrap();
        }
        String::from_utf8(table.finish().unwrap()).unwrap()
    }

    #[test]
    fn columns_line_up_whatever_the_widths() {
        let text = render(
            &["name", "n"],
            &[&["a", "1"], &["ééé long", "12345"], &["", "7"]],
            vec![Align::Left, Align::Right],
        );
        assert_eq!(
            text,
            "name          n\n\
             --------  -----\n\
             a             1\n\
             ééé long  12345\n\
             \x20             7\n"
        );
    }

    #[test]
    fn rows_after_the_first_thousand_keep_the_widths() {
        let rows: Vec<Vec<String>> = (0..WIDTH_ROWS + 5)
            .map(|i| {
                let first = if i < WIDTH_ROWS { "wide cell" } else { "n" };
                vec![first.to_owned(), "x".to_owned()]
            })
            .collect();
        let mut table = TableWriter::new(Vec::new(), vec!["a".into(), "b".into()]);
        for row in &rows {
            table.row(row.clone()).unwrap();
        }
        let text = String::from_utf8(table.finish().unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), rows.len() + 2);
        let column = lines[0].find('b').unwrap();
        assert!(
            lines[2..].iter().all(|l| l.find('x') == Some(column)),
            "{text}"
        );
    }
}
