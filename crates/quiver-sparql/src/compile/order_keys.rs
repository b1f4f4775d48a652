//! ORDER BY keys that repeat an expression the rows already hold.
//!
//! `SELECT (?a / ?b AS ?r) … ORDER BY DESC(?a / ?b)` is common (BSBM BI Q3 is written so):
//! the algebra puts the SELECT expressions' Extend under the OrderBy, so each row computes
//! the expression once for `?r` and once more for the key, and the key, not a variable,
//! takes the slow path of ORDER BY and top-k (terms built and compared row by row instead
//! of the sort keys of ids, `exec/sort_key.rs`). A key equal to the expression of an
//! Extend in the chain just under the OrderBy sorts by that Extend's variable instead: the
//! same term in every row, computed once.
//!
//! Only expressions that give the same term each time they are evaluated on a row qualify:
//! none with `RAND()`, `BNODE()`, `UUID()`, `STRUUID()` or EXISTS (`operands::per_id`).

use spargebra::algebra::{Expression, GraphPattern, OrderExpression};

/// `key`, with its expression replaced by the variable of an equal Extend of `inner`'s
/// chain when there is one.
pub(super) fn by_bound_expression(key: &OrderExpression, inner: &GraphPattern) -> OrderExpression {
    let (expression, rebuild): (&Expression, fn(Expression) -> OrderExpression) = match key {
        OrderExpression::Asc(e) => (e, OrderExpression::Asc),
        OrderExpression::Desc(e) => (e, OrderExpression::Desc),
    };
    if matches!(expression, Expression::Variable(_)) || !repeatable(expression) {
        return key.clone();
    }
    let mut pattern = inner;
    while let GraphPattern::Extend {
        inner,
        variable,
        expression: bound,
    } = pattern
    {
        if bound == expression {
            return rebuild(Expression::Variable(variable.clone()));
        }
        pattern = inner;
    }
    key.clone()
}

/// Whether evaluating `expression` twice on one row gives the same term: it is a
/// function of the ids of the variables it reads (`operands::per_id`).
fn repeatable(expression: &Expression) -> bool {
    crate::operands::per_id(expression, &mut Vec::new())
}

#[cfg(test)]
mod tests {
    use spargebra::algebra::{GraphPattern, OrderExpression};
    use spargebra::{Query, SparqlParser};

    use super::by_bound_expression;

    /// The OrderBy of a SELECT query's algebra: its inner pattern and keys.
    fn order_by(query: &str) -> (GraphPattern, Vec<OrderExpression>) {
        let Query::Select { mut pattern, .. } = SparqlParser::new().parse_query(query).unwrap()
        else {
            panic!("not a SELECT");
        };
        loop {
            pattern = match pattern {
                GraphPattern::OrderBy { inner, expression } => return (*inner, expression),
                GraphPattern::Project { inner, .. }
                | GraphPattern::Slice { inner, .. }
                | GraphPattern::Distinct { inner } => *inner,
                other => panic!("no ORDER BY in {other}"),
            };
        }
    }

    fn keys(query: &str) -> Vec<String> {
        let (inner, keys) = order_by(query);
        keys.iter()
            .map(|key| by_bound_expression(key, &inner).to_string())
            .collect()
    }

    #[test]
    fn keys_repeating_a_select_expression_sort_by_its_variable() {
        assert_eq!(
            keys(
                "SELECT ?s (?a / ?b AS ?r) (STR(?s) AS ?t) { ?s <http://e/p> ?a ; <http://e/q> ?b } \
                 ORDER BY DESC(?a / ?b) STR(?s) ?s (?a + ?b)"
            ),
            ["DESC(?r)", "ASC(?t)", "ASC(?s)", "ASC(?a + ?b)"]
        );
    }

    #[test]
    fn keys_that_are_not_repeatable_stay_expressions() {
        assert_eq!(
            keys(
                "SELECT (RAND() AS ?r) (CONCAT(STR(?s), STRUUID()) AS ?u) { ?s <http://e/p> ?a } \
                 ORDER BY RAND() CONCAT(STR(?s), STRUUID())"
            ),
            ["ASC(RAND())", "ASC(CONCAT(STR(?s), STRUUID()))"]
        );
    }
}
