//! `OPTIONAL { R } FILTER(!BOUND(?v))` read as `FILTER NOT EXISTS { R }`.
//!
//! The idiom asks for the rows of the left side that `R` does not extend. As written it
//! is a left join that extends every row it can and then throws all of those rows away;
//! as a NOT EXISTS it is one semi-join seeded with the left side's rows (see
//! `exec/filter.rs`), which only asks whether each row has a match. The two agree when:
//! - the OPTIONAL has no filter of its own;
//! - `R` is a basic graph pattern that mentions `?v`, so every match binds it;
//! - the left side cannot bind `?v`.
//!
//! Then a left row with a match yields only rows where `?v` is bound (all filtered out),
//! and a left row without one yields itself, once, with `R`'s variables unbound; which is
//! what NOT EXISTS keeps (it substitutes the row's bindings into `R`, and a variable the
//! row leaves unbound stays free, as the left join's compatibility test leaves it).

use spargebra::algebra::{Expression, GraphPattern};
use spargebra::term::{NamedNodePattern, TermPattern};

/// The NOT EXISTS filter and the left side to run it over, when `FILTER(expr)` over
/// `inner` is the idiom above.
pub(super) fn as_not_exists<'p>(
    expr: &Expression,
    inner: &'p GraphPattern,
) -> Option<(Expression, &'p GraphPattern)> {
    let Expression::Not(negated) = expr else {
        return None;
    };
    let Expression::Bound(variable) = &**negated else {
        return None;
    };
    let GraphPattern::LeftJoin {
        left,
        right,
        expression: None,
    } = inner
    else {
        return None;
    };
    let GraphPattern::Bgp { patterns } = &**right else {
        return None;
    };
    let mentions = |term: &TermPattern| matches!(term, TermPattern::Variable(v) if v == variable);
    let bound_by_right = patterns.iter().any(|pattern| {
        mentions(&pattern.subject)
            || mentions(&pattern.object)
            || matches!(&pattern.predicate, NamedNodePattern::Variable(v) if v == variable)
    });
    let mut bound_by_left = false;
    left.on_in_scope_variable(|v| bound_by_left |= v == variable);
    if !bound_by_right || bound_by_left {
        return None;
    }
    let not_exists = Expression::Not(Box::new(Expression::Exists(right.clone())));
    Some((not_exists, left))
}

#[cfg(test)]
mod tests {
    use super::*;
    use spargebra::{Query, SparqlParser};

    /// Whether the first FILTER of `where_clause` is read as NOT EXISTS.
    fn rewritten(where_clause: &str) -> bool {
        let query = format!("PREFIX : <http://ex/> SELECT * WHERE {{ {where_clause} }}");
        let Ok(Query::Select { pattern, .. }) = SparqlParser::new().parse_query(&query) else {
            panic!("{query}");
        };
        let mut node = &pattern;
        loop {
            match node {
                GraphPattern::Filter { expr, inner } => {
                    return as_not_exists(expr, inner).is_some();
                }
                GraphPattern::Project { inner, .. } => node = inner,
                other => panic!("no FILTER: {other:?}"),
            }
        }
    }

    #[test]
    fn only_the_idiom_is_rewritten() {
        assert!(rewritten(
            "?s :p ?o OPTIONAL { ?s :q ?a } FILTER(!BOUND(?a))"
        ));
        assert!(rewritten(
            "?s :p ?o OPTIONAL { ?s ?a ?o } FILTER(!BOUND(?a))"
        ));
        assert!(rewritten(
            "?s :p ?o OPTIONAL { ?o :q ?x . ?x :r ?a } FILTER(!BOUND(?a))"
        ));
        // The left side binds ?a.
        assert!(!rewritten(
            "?s :p ?a OPTIONAL { ?s :q ?a } FILTER(!BOUND(?a))"
        ));
        // The OPTIONAL filters its matches.
        assert!(!rewritten(
            "?s :p ?o OPTIONAL { ?s :q ?a FILTER(?a != ?o) } FILTER(!BOUND(?a))"
        ));
        // The right side is not a basic graph pattern, or does not bind ?a.
        assert!(!rewritten(
            "?s :p ?o OPTIONAL { { ?s :q ?a } UNION { ?s :r ?a } } FILTER(!BOUND(?a))"
        ));
        assert!(!rewritten(
            "?s :p ?o OPTIONAL { ?s :q ?b } FILTER(!BOUND(?a))"
        ));
        // Other filters.
        assert!(!rewritten(
            "?s :p ?o OPTIONAL { ?s :q ?a } FILTER(BOUND(?a))"
        ));
        assert!(!rewritten(
            "?s :p ?o OPTIONAL { ?s :q ?a } FILTER(!BOUND(?a) || ?o = 1)"
        ));
    }
}
