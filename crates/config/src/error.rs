//! The error type for loading configuration.

use std::path::PathBuf;

/// Errors loading configuration; Display always names the file, and for invalid content the line, column and key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists (or was named explicitly) but could not be read.
    #[error("{file}: cannot read: {cause}")]
    Read {
        /// The file that could not be read.
        file: PathBuf,
        /// Why: the I/O error, a file that is not regular, or one too large (in the message, not
        /// a `source`, so that a chain of causes does not say it twice).
        cause: std::io::Error,
    },
    /// The file was read but its content is not a valid configuration.
    #[error("{file}:{line}:{column}: {message}")]
    Invalid {
        /// The file holding the bad content.
        file: PathBuf,
        /// 1-based line of the bad content.
        line: usize,
        /// 1-based column (in characters) of the bad content.
        column: usize,
        /// The dotted key at fault (`servers.mylang.command`), when known.
        key: Option<String>,
        /// What is wrong and what was expected; names the key when known.
        message: String,
    },
}

/// A problem found while applying one layer, before the file name is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LayerError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The dotted key at fault, when known.
    pub key: Option<String>,
    /// The full message, naming the key when known.
    pub message: String,
}

impl LayerError {
    /// Attaches the file the layer came from.
    pub(crate) fn in_file(self, file: &std::path::Path) -> ConfigError {
        ConfigError::Invalid {
            file: file.to_path_buf(),
            line: self.line,
            column: self.column,
            key: self.key,
            message: self.message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_display_names_file_line_column_and_message() {
        let err = LayerError {
            line: 3,
            column: 7,
            key: Some("settle_ms".to_string()),
            message: "bad `settle_ms`".to_string(),
        }
        .in_file(std::path::Path::new("/p/squiggle.toml"));
        assert_eq!(err.to_string(), "/p/squiggle.toml:3:7: bad `settle_ms`");
    }

    #[test]
    fn read_display_names_file() {
        let err = ConfigError::Read {
            file: PathBuf::from("/p/x.toml"),
            cause: std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied"),
        };
        assert_eq!(err.to_string(), "/p/x.toml: cannot read: denied");
        assert!(std::error::Error::source(&err).is_none(), "said once");
    }
}
