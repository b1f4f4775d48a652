//! A one-line summary of an operator tree, for logs (the server's slow-query log): the
//! operators' names nested as they run, each basic graph pattern with its number of
//! triple patterns. EXPLAIN ([`crate::explain`]) is the full account; this line is short
//! enough to sit in a log record, and holds no constant of the query (no data).

use super::Operator;

/// Longest summary, in bytes; a longer one ends with `…`.
pub const MAX_SUMMARY_BYTES: usize = 240;

/// `operator` as `Project(Join(BGP/3, Filter(Path)))`, at most [`MAX_SUMMARY_BYTES`].
pub fn summary(operator: &Operator) -> String {
    let mut out = String::new();
    write(operator, &mut out);
    if out.len() > MAX_SUMMARY_BYTES {
        let mut end = MAX_SUMMARY_BYTES;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        out.push('…');
    }
    out
}

fn write(operator: &Operator, out: &mut String) {
    // Past the cap nothing more is shown: stop walking a huge tree early.
    if out.len() > MAX_SUMMARY_BYTES {
        return;
    }
    let unary = |name: &str, inner: &Operator, out: &mut String| {
        out.push_str(name);
        out.push('(');
        write(inner, out);
        out.push(')');
    };
    let binary = |name: &str, a: &Operator, b: &Operator, out: &mut String| {
        out.push_str(name);
        out.push('(');
        write(a, out);
        out.push_str(", ");
        write(b, out);
        out.push(')');
    };
    match operator {
        Operator::Bgp(planned) => out.push_str(&format!("BGP/{}", planned.bgp.patterns.len())),
        Operator::Path(_) => out.push_str("Path"),
        Operator::Join(a, b) => binary("Join", a, b, out),
        Operator::LeftJoin { left, right, .. } => binary("Optional", left, right, out),
        Operator::Minus(a, b) => binary("Minus", a, b, out),
        Operator::Union(a, b) => binary("Union", a, b, out),
        Operator::Filter(_, inner) => unary("Filter", inner, out),
        Operator::Extend { inner, .. } => unary("Bind", inner, out),
        Operator::Project(inner, _) => unary("Project", inner, out),
        Operator::Distinct(inner) => unary("Distinct", inner, out),
        Operator::OrderBy(inner, _) => unary("OrderBy", inner, out),
        Operator::TopK { inner, k, .. } => unary(&format!("TopK/{k}"), inner, out),
        Operator::Slice { inner, .. } => unary("Slice", inner, out),
        Operator::Group { inner, .. } => unary("Group", inner, out),
        Operator::GraphVar { branches, .. } => {
            out.push_str(&format!("Graph/{}", branches.len()));
            if let Some((_, first)) = branches.first() {
                out.push('(');
                write(first, out);
                out.push(')');
            }
        }
        Operator::Values { rows, .. } => out.push_str(&format!("Values/{}", rows.len())),
        Operator::IndexAggregate(_) => out.push_str("IndexAggregate"),
        // The endpoint is a constant of the query: only the operator's name.
        Operator::Service(_) => out.push_str("Service"),
        Operator::Text(_) => out.push_str("Text"),
    }
}
