//! The value types every door of squiggle shares.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How serious a diagnostic is, most serious first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something that must be fixed.
    Error,
    /// Something that is likely wrong.
    Warning,
    /// Information.
    Info,
    /// A hint, such as an unused variable fading.
    Hint,
}

impl Severity {
    /// All severities, most serious first.
    pub const ALL: [Severity; 4] = [
        Severity::Error,
        Severity::Warning,
        Severity::Info,
        Severity::Hint,
    ];

    /// The lowercase name used in configuration and JSON (`error`, `warning`, `info`, `hint`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Hint => "hint",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a severity name that is not one of `error`, `warning`, `info`, `hint`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown severity `{0}` (expected error, warning, info or hint)")]
pub struct UnknownSeverity(pub String);

impl FromStr for Severity {
    type Err = UnknownSeverity;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "error" | "errors" => Ok(Severity::Error),
            "warning" | "warnings" | "warn" => Ok(Severity::Warning),
            "info" | "information" => Ok(Severity::Info),
            "hint" | "hints" => Ok(Severity::Hint),
            _ => Err(UnknownSeverity(s.to_string())),
        }
    }
}

/// One diagnostic, with 1-based positions counted in characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Diagnostic {
    /// The file, relative to the workspace root, with `/` separators.
    pub file: String,
    /// 1-based start line.
    pub line: u32,
    /// 1-based start column, in characters (Unicode scalar values).
    pub column: u32,
    /// 1-based end line.
    pub end_line: u32,
    /// 1-based end column, in characters, exclusive.
    pub end_column: u32,
    /// How serious it is.
    pub severity: Severity,
    /// The message, as the server wrote it (renderers escape it as their format needs).
    pub message: String,
    /// The diagnostic code (`E0308`, `reportAttributeAccessIssue`, `F821`), if any.
    pub code: Option<String>,
    /// The tool that produced it (`Pyright`, `Ruff`, `rustc`), if any.
    pub source: Option<String>,
    /// The codes and sources of other servers' diagnostics for the same problem, collapsed into this one by [`crate::merge::merge`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Origin>,
}

/// Who reported a diagnostic: its code and source.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Origin {
    /// The diagnostic code, if any.
    pub code: Option<String>,
    /// The tool that produced it, if any.
    pub source: Option<String>,
}

impl Diagnostic {
    /// Its own code and source, then those of the diagnostics collapsed into it.
    pub fn origins(&self) -> impl Iterator<Item = (Option<&str>, Option<&str>)> {
        std::iter::once((self.code.as_deref(), self.source.as_deref())).chain(
            self.also
                .iter()
                .map(|origin| (origin.code.as_deref(), origin.source.as_deref())),
        )
    }

    /// Its codes, its own first, each once.
    pub fn codes(&self) -> Vec<&str> {
        distinct(self.origins().filter_map(|(code, _)| code))
    }

    /// Its sources, its own first, each once.
    pub fn sources(&self) -> Vec<&str> {
        distinct(self.origins().filter_map(|(_, source)| source))
    }
}

/// The items in their order, each once.
fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

/// Test diagnostics, built in one place for every test module of the crate.
#[cfg(test)]
impl Diagnostic {
    /// A diagnostic one character wide at `line:column`, in no file, with no code or source.
    pub(crate) fn at(line: u32, column: u32, severity: Severity, message: &str) -> Self {
        Diagnostic {
            file: String::new(),
            line,
            column,
            end_line: line,
            end_column: column + 1,
            severity,
            message: message.to_string(),
            code: None,
            source: None,
            also: Vec::new(),
        }
    }

    /// The same, in `file`.
    pub(crate) fn in_file(self, file: &str) -> Self {
        Diagnostic {
            file: file.to_string(),
            ..self
        }
    }

    /// The same, with `code`.
    pub(crate) fn with_code(self, code: Option<&str>) -> Self {
        Diagnostic {
            code: code.map(str::to_string),
            ..self
        }
    }

    /// The same, from `source`.
    pub(crate) fn with_source(self, source: &str) -> Self {
        Diagnostic {
            source: Some(source.to_string()),
            ..self
        }
    }

    /// The same, with another server's `code` and `source` for it.
    pub(crate) fn also(mut self, code: Option<&str>, source: Option<&str>) -> Self {
        self.also.push(Origin {
            code: code.map(str::to_string),
            source: source.map(str::to_string),
        });
        self
    }
}

/// The lifecycle state of one language server for one root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerState {
    /// Not started yet: installed, and starts on the first file that needs it.
    Idle,
    /// The process is starting or initializing.
    Starting,
    /// Initialized and serving requests.
    Active,
    /// Crashed, timed out or failed; restarted after a cooldown, unless it crash-loops.
    Broken,
    /// Turned off by configuration.
    Disabled,
    /// Its command is not installed, or is found but does not run.
    Unavailable,
}

impl ServerState {
    /// The lowercase name used in JSON and text output.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerState::Idle => "idle",
            ServerState::Starting => "starting",
            ServerState::Active => "active",
            ServerState::Broken => "broken",
            ServerState::Disabled => "disabled",
            ServerState::Unavailable => "unavailable",
        }
    }
}

impl fmt::Display for ServerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What squiggle knows about one language server for one root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerStatus {
    /// The server id from the configuration (`pyright`, `ruff`, `rust-analyzer`).
    pub id: String,
    /// The project root the server serves, relative to the workspace root (`.` for the root itself).
    pub root: String,
    /// The language id it serves (`python`, `typescript`).
    pub language: String,
    /// Its lifecycle state.
    pub state: ServerState,
    /// Why it is broken, disabled or unavailable (with an install hint), if it is.
    pub reason: Option<String>,
    /// The process id of the running server, if it runs.
    pub pid: Option<u32>,
    /// How it did this session (BR-67): absent before it was asked anything or broke.
    #[serde(default, skip_serializing_if = "ServerMetrics::is_empty")]
    pub metrics: ServerMetrics,
}

/// How a server did this session, for one root (BR-67).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerMetrics {
    /// How many times its process broke (crashed, hung, timed out on initialize).
    pub crashes: u32,
    /// How many checks asked it for diagnostics.
    pub checks: u64,
    /// Of those, how many got no final answer by their deadline.
    pub timed_out: u64,
    /// `timed_out` in percent of `checks`, rounded.
    pub timeout_percent: u32,
    /// The median time of its answers to the recent checks, in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_median_ms: Option<u64>,
    /// The 90th percentile of the same, in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_p90_ms: Option<u64>,
}

impl ServerMetrics {
    /// Nothing happened yet.
    pub fn is_empty(&self) -> bool {
        self.crashes == 0 && self.checks == 0
    }

    /// One server's metrics over its roots: the counts summed, the answer times of the root
    /// that answered the most checks.
    pub fn together<'a>(roots: impl IntoIterator<Item = &'a ServerMetrics>) -> ServerMetrics {
        let mut all = ServerMetrics::default();
        let mut busiest: Option<&ServerMetrics> = None;
        for root in roots {
            all.crashes += root.crashes;
            all.checks += root.checks;
            all.timed_out += root.timed_out;
            if busiest.is_none_or(|busiest| root.checks > busiest.checks) {
                busiest = Some(root);
            }
        }
        all.timeout_percent = percent(all.timed_out, all.checks);
        all.answer_median_ms = busiest.and_then(|root| root.answer_median_ms);
        all.answer_p90_ms = busiest.and_then(|root| root.answer_p90_ms);
        all
    }
}

/// `part` in percent of `whole`, rounded (0 of nothing).
pub fn percent(part: u64, whole: u64) -> u32 {
    match whole {
        0 => 0,
        _ => u32::try_from((part * 100 + whole / 2) / whole).unwrap_or(100),
    }
}
