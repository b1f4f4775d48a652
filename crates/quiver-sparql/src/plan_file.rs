//! User-supplied plans in the Wukong plan-file format.
//!
//! One step per line: the 1-based number of a triple pattern, then `<` (walk from object
//! to subject: IN), `>` (subject to object: OUT), `<<` (start from every subject of the
//! pattern's predicate) or `>>` (every object). `#` starts a comment line.

use quiver_store::Direction;

use crate::bgp::{node_var, Bgp, Node};
use crate::error::QueryError;
use crate::step::{Step, StepKind};
use crate::table::VarId;

/// Parses a plan file's text into steps (patterns numbered from 0).
pub fn parse_plan(text: &str) -> Result<Vec<Step>, QueryError> {
    let mut steps = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let error =
            |message: &str| QueryError::Plan(format!("line {}: {message}: '{line}'", number + 1));
        let mut parts = line.split_whitespace();
        let pattern: usize = parts
            .next()
            .and_then(|n| n.parse().ok())
            .filter(|&n| n >= 1)
            .ok_or_else(|| error("expected a pattern number from 1"))?;
        let kind = match parts.next() {
            Some("<") => StepKind::Walk(Direction::In),
            Some(">") => StepKind::Walk(Direction::Out),
            Some("<<") => StepKind::Index(Direction::In),
            Some(">>") => StepKind::Index(Direction::Out),
            _ => return Err(error("expected <, >, << or >> after the pattern number")),
        };
        if parts.next().is_some() {
            return Err(error("unexpected text after the direction"));
        }
        steps.push(Step::new(pattern - 1, kind, f64::NAN));
    }
    if steps.is_empty() {
        return Err(QueryError::Plan("the plan has no steps".into()));
    }
    Ok(steps)
}

/// Checks that `steps` can run on `bgp`: every pattern is walked at least once, and each
/// walk starts from a constant or an already bound variable.
pub fn validate_plan(steps: &[Step], bgp: &Bgp, seeded: &[VarId]) -> Result<(), QueryError> {
    let mut bound: Vec<VarId> = seeded.to_vec();
    let mut walked = vec![false; bgp.patterns.len()];
    for (i, step) in steps.iter().enumerate() {
        let pattern = bgp.patterns.get(step.pattern).ok_or_else(|| {
            QueryError::Plan(format!(
                "step {}: pattern {} does not exist (the query has {})",
                i + 1,
                step.pattern + 1,
                bgp.patterns.len()
            ))
        })?;
        let is_bound = |node: Node, bound: &[VarId]| match node {
            Node::Var(v) => bound.contains(&v),
            _ => true,
        };
        match step.kind {
            StepKind::Walk(direction) => {
                let source = match direction {
                    Direction::Out => pattern.subject,
                    Direction::In => pattern.object,
                };
                if !is_bound(source, &bound) {
                    return Err(QueryError::Plan(format!(
                        "step {}: walks from an unbound variable of pattern {} ({})",
                        i + 1,
                        step.pattern + 1,
                        pattern.text
                    )));
                }
                walked[step.pattern] = true;
                bound.extend(pattern.vars());
            }
            StepKind::Index(direction) => {
                if !matches!(pattern.predicate, crate::bgp::Pred::Const(_)) {
                    return Err(QueryError::Plan(format!(
                        "step {}: a predicate index needs a constant predicate",
                        i + 1
                    )));
                }
                let target = match direction {
                    Direction::In => pattern.subject,
                    Direction::Out => pattern.object,
                };
                bound.extend(node_var(target));
            }
            StepKind::Scan => {
                walked[step.pattern] = true;
                bound.extend(pattern.vars());
            }
        }
    }
    if let Some(missing) = walked.iter().position(|w| !w) {
        return Err(QueryError::Plan(format!(
            "pattern {} ({}) is never walked",
            missing + 1,
            bgp.patterns[missing].text
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_wukong_plans() {
        let steps = parse_plan("# q3\n1 <<\n2 >\n\n3 <\n1 >>\n").unwrap();
        let kinds: Vec<_> = steps.iter().map(|s| (s.pattern, s.kind)).collect();
        assert_eq!(
            kinds,
            [
                (0, StepKind::Index(Direction::In)),
                (1, StepKind::Walk(Direction::Out)),
                (2, StepKind::Walk(Direction::In)),
                (0, StepKind::Index(Direction::Out)),
            ]
        );
        assert!(parse_plan("0 <").is_err());
        assert!(parse_plan("1 ^").is_err());
        assert!(parse_plan("# nothing").is_err());
    }
}
