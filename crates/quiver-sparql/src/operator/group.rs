//! The aggregates of GROUP BY as compiled: a function, its argument and DISTINCT.

use spargebra::algebra::{AggregateExpression, AggregateFunction, Expression};

use crate::error::QueryError;

/// One aggregate of a group.
#[derive(Debug, Clone)]
pub struct Aggregate {
    pub function: Function,
    /// The expression aggregated; `None` for `COUNT(*)`.
    pub argument: Option<Expression>,
    pub distinct: bool,
}

/// The aggregate functions of SPARQL 1.1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Function {
    Count,
    Sum,
    Avg,
    Min,
    Max,
    /// With its separator.
    GroupConcat(String),
    Sample,
}

impl Aggregate {
    pub fn new(expression: &AggregateExpression) -> Result<Self, QueryError> {
        Ok(match expression {
            AggregateExpression::CountSolutions { distinct } => Aggregate {
                function: Function::Count,
                argument: None,
                distinct: *distinct,
            },
            AggregateExpression::FunctionCall {
                name,
                expr,
                distinct,
            } => Aggregate {
                function: match name {
                    AggregateFunction::Count => Function::Count,
                    AggregateFunction::Sum => Function::Sum,
                    AggregateFunction::Avg => Function::Avg,
                    AggregateFunction::Min => Function::Min,
                    AggregateFunction::Max => Function::Max,
                    AggregateFunction::GroupConcat { separator } => {
                        Function::GroupConcat(separator.clone().unwrap_or_else(|| " ".into()))
                    }
                    AggregateFunction::Sample => Function::Sample,
                    AggregateFunction::Custom(name) => {
                        return Err(QueryError::Unsupported(format!(
                            "custom aggregate function {name}"
                        )))
                    }
                },
                argument: Some(expr.clone()),
                distinct: *distinct,
            },
        })
    }
}
