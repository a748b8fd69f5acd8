//! Why a tool gave no answer: a question to fix (an argument of the wrong type, missing, or
//! not enough to say what is meant) or a question that could not be answered.

use squiggle_actors::{EditFailure, NavError};

/// Why a tool call failed; its text is what the model reads.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// No tool of that name is offered.
    #[error("no tool `{0}`")]
    UnknownTool(String),
    /// An argument has the wrong type or value.
    #[error("`{key}` must be {expected}, not {got}")]
    BadArgument {
        /// The argument.
        key: &'static str,
        /// What it must be (`a string`).
        expected: String,
        /// What it was (`a number`, or the value given).
        got: String,
    },
    /// A required argument is absent (or null).
    #[error("`{0}` is required")]
    Missing(&'static str),
    /// The arguments do not say what to ask about.
    #[error("{0}")]
    Unclear(Unclear),
    /// The question names a path that cannot be used, and why.
    #[error("{0}")]
    Path(String),
    /// The question could not be asked or answered.
    #[error(transparent)]
    Nav(#[from] NavError),
    /// The rename or code action could not be previewed or applied.
    #[error(transparent)]
    Edit(#[from] EditFailure),
}

/// What is missing from a question's arguments for it to name something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unclear {
    /// Neither a position nor a symbol.
    #[error("give `line` and `character` (1-based), or `symbol`")]
    NoTarget,
    /// Neither a line nor a symbol (code actions).
    #[error("give `line` (1-based) or `symbol`")]
    NoLine,
    /// `apply` without the action to apply.
    #[error("`apply` needs `action`: the number of the action to apply")]
    ApplyWithoutAction,
}

impl From<Unclear> for ToolError {
    fn from(unclear: Unclear) -> Self {
        ToolError::Unclear(unclear)
    }
}
