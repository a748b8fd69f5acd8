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
    /// A whole number out of an argument's range (`line: 0`).
    #[error("`{key}` must be {expected}, got {got}")]
    OutOfRange {
        /// The argument.
        key: &'static str,
        /// What it must be (`a whole number from 1`).
        expected: &'static str,
        /// The number given.
        got: String,
    },
    /// A required argument is absent (or null).
    #[error("`{0}` is required")]
    Missing(&'static str),
    /// The arguments do not say what to ask about.
    #[error("{0}")]
    Unclear(Unclear),
    /// The folder or glob of `lsp_workspace_diagnostics` cannot be used.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The question could not be asked or answered (with what to do next, where a tool helps).
    #[error("{}", with_next_step(.0))]
    Nav(#[from] NavError),
    /// The rename or code action could not be previewed or applied.
    #[error(transparent)]
    Edit(#[from] EditFailure),
}

/// A navigation error's text, with the tool that helps where one does (the runtime does not
/// know the tools that call it).
fn with_next_step(error: &NavError) -> String {
    match error {
        NavError::SymbolNotFound { .. } => {
            format!("{error}; list the file's symbols with lsp_document_symbols")
        }
        _ => error.to_string(),
    }
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

/// Why a folder or glob names no files to check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path cannot be resolved (it does not exist, or cannot be read).
    #[error("{path}: {reason}")]
    Unresolved {
        /// The path as given.
        path: String,
        /// Why, from the system.
        reason: String,
    },
    /// The path lies outside the workspace root.
    #[error("{path} is outside the workspace root {root}")]
    Outside {
        /// The path as given.
        path: String,
        /// The workspace root.
        root: String,
    },
    /// The path is a file, not a folder.
    #[error("{0} is not a folder; give a folder or a glob (use lsp_diagnostics for one file)")]
    NotAFolder(String),
    /// The glob is not one.
    #[error("{0}")]
    BadGlob(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tool_that_helps_is_named_here_not_by_the_runtime() {
        let missing = NavError::SymbolNotFound {
            name: "parse".to_string(),
            file: "a.py".to_string(),
        };
        assert_eq!(missing.to_string(), "no symbol `parse` in a.py");
        assert_eq!(
            ToolError::Nav(missing).to_string(),
            "no symbol `parse` in a.py; list the file's symbols with lsp_document_symbols"
        );
        let other = NavError::Disabled;
        assert_eq!(ToolError::Nav(other.clone()).to_string(), other.to_string());
    }
}
