//! The variables an operation's templates read, each given its column of the `WHERE`
//! clause's projected solutions the first time a template names it.

use oxrdf::Variable;

/// The variables the templates read, in order: the `WHERE` evaluation projects them.
#[derive(Debug, Default)]
pub(crate) struct Columns {
    pub(crate) variables: Vec<Variable>,
}

impl Columns {
    pub(crate) fn column(&mut self, variable: &Variable) -> usize {
        match self.variables.iter().position(|v| v == variable) {
            Some(column) => column,
            None => {
                self.variables.push(variable.clone());
                self.variables.len() - 1
            }
        }
    }
}
