//! The resolved configuration: global settings and the language servers.

use squiggle_protocol::Severity;
use std::collections::BTreeMap;

/// The resolved configuration of squiggle.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Whether squiggle does anything at all (toml key `lsp`).
    pub enabled: bool,
    /// How long to wait for diagnostics after a change, in milliseconds.
    pub diagnostic_timeout_ms: u64,
    /// How long to wait for diagnostics the first time a server sees a file, in milliseconds.
    pub first_touch_timeout_ms: u64,
    /// After a write, how long to wait for other files' diagnostics to settle, in milliseconds.
    pub other_files_wait_ms: u64,
    /// How long a broken server stays broken before a restart (automatic or explicit), in
    /// milliseconds.
    pub restart_cooldown_ms: u64,
    /// How long a server may take to answer `initialize`, in milliseconds.
    pub initialize_timeout_ms: u64,
    /// How long diagnostics must stay unchanged before they count as final, in milliseconds.
    pub settle_ms: u64,
    /// The severities reported; others are dropped.
    pub include_severities: Vec<Severity>,
    /// The most diagnostics reported for one file.
    pub max_diagnostics_per_file: usize,
    /// The most other files whose diagnostics are reported after an edit.
    pub max_other_files: usize,
    /// The most lines of diagnostics reported in total.
    pub max_total_lines: usize,
    /// Whether navigation tools (definition, references, hover) are offered.
    pub navigation_tools: bool,
    /// Files larger than this many bytes are not sent to servers.
    pub max_file_bytes: u64,
    /// The most documents one server keeps open; the least recently used are closed first.
    pub max_open_documents: usize,
    /// Whether `squiggle check` goes through a per-workspace background daemon (toml key
    /// `daemon`).
    pub daemon: bool,
    /// How many seconds a daemon waits without a request before it exits (15 minutes).
    pub daemon_idle_seconds: u64,
    /// The language servers, built-ins merged with overrides and additions, keyed by id.
    pub servers: BTreeMap<String, ServerSpec>,
}

impl Config {
    /// The caps feedback for agents applies.
    pub fn caps(&self) -> squiggle_protocol::Caps {
        squiggle_protocol::Caps {
            include_severities: self.include_severities.clone(),
            max_diagnostics_per_file: self.max_diagnostics_per_file,
            max_other_files: self.max_other_files,
            max_total_lines: self.max_total_lines,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            enabled: true,
            diagnostic_timeout_ms: 3000,
            first_touch_timeout_ms: 10_000,
            other_files_wait_ms: 500,
            restart_cooldown_ms: 30_000,
            initialize_timeout_ms: 10_000,
            settle_ms: 150,
            include_severities: vec![Severity::Error],
            max_diagnostics_per_file: 20,
            max_other_files: 5,
            max_total_lines: 50,
            navigation_tools: true,
            max_file_bytes: 2 * 1024 * 1024,
            max_open_documents: 200,
            daemon: true,
            daemon_idle_seconds: 900,
            servers: crate::builtin::builtin_servers(),
        }
    }
}

/// One language server: how to run it and which files it serves.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// The id it is configured under (`pyright`).
    pub id: String,
    /// Whether it may be started.
    pub enabled: bool,
    /// The program to run.
    pub command: String,
    /// The program's arguments.
    pub args: Vec<String>,
    /// File extensions it serves, lowercase, without the dot (`py`, `pyi`).
    pub extensions: Vec<String>,
    /// The LSP languageId for didOpen; see [`ServerSpec::language_id_for`].
    pub language_id: String,
    /// File names marking a project root for this server.
    pub root_markers: Vec<String>,
    /// Extra environment variables for the process.
    pub env: BTreeMap<String, String>,
    /// The `initializationOptions` sent in `initialize`.
    pub initialization_options: Option<serde_json::Value>,
    /// The settings answering `workspace/configuration`.
    pub settings: Option<serde_json::Value>,
    /// A command and its arguments run beside the server.
    pub sidecar: Option<Vec<String>>,
    /// The quiet time for this server's diagnostics, in place of the global `settle_ms`
    /// (for servers that publish in stages with nothing to say they are not done).
    pub settle_ms: Option<u64>,
    /// How its publishes for one document version come, which decides when they are final.
    pub stages: Stages,
    /// Whether its diagnostics are pulled through tsserver (`typescript.tsserverRequest`), in
    /// place of its unversioned, staged publishes (typescript-language-server).
    pub tsserver_pull: bool,
    /// How to install the server's command.
    pub install_hint: String,
    /// The id of the server this one replaces when that one is unavailable.
    pub fallback_for: Option<String>,
}

/// How a server's publishes for one document version come (built-in knowledge of each
/// server; a server that publishes without versions is always settled by a quiet time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stages {
    /// Once per version: a versioned publish while the server is idle is final.
    #[default]
    Once,
    /// In stages with nothing to say they are done: a quiet time after the last one decides.
    Unsignalled,
}

impl ServerSpec {
    /// Why the server cannot run when its command is not found, with the command to install it.
    pub fn not_installed(&self) -> String {
        format!(
            "`{}` is not installed (install: {})",
            self.command, self.install_hint
        )
    }

    /// The LSP languageId for a file with this extension (e.g. typescript server: ts->typescript, tsx->typescriptreact, js->javascript, jsx->javascriptreact; others: language_id).
    pub fn language_id_for(&self, extension: &str) -> String {
        let extension = extension.trim_start_matches('.').to_ascii_lowercase();
        match self.language_id.as_str() {
            "typescript" | "typescriptreact" | "javascript" | "javascriptreact" => {
                match extension.as_str() {
                    "ts" | "mts" | "cts" => "typescript",
                    "tsx" => "typescriptreact",
                    "js" | "mjs" | "cjs" => "javascript",
                    "jsx" => "javascriptreact",
                    _ => self.language_id.as_str(),
                }
                .to_string()
            }
            "c" | "cpp" => match extension.as_str() {
                "c" | "h" => "c",
                "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" => "cpp",
                _ => self.language_id.as_str(),
            }
            .to_string(),
            _ => self.language_id.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(id: &str) -> ServerSpec {
        Config::default()
            .servers
            .remove(id)
            .expect("built-in server")
    }

    #[test]
    fn defaults_match_documented_values() {
        let config = Config::default();
        assert!(config.enabled);
        assert_eq!(config.diagnostic_timeout_ms, 3000);
        assert_eq!(config.first_touch_timeout_ms, 10_000);
        assert_eq!(config.settle_ms, 150);
        assert_eq!(config.include_severities, vec![Severity::Error]);
        assert_eq!(config.max_diagnostics_per_file, 20);
        assert_eq!(config.max_other_files, 5);
        assert_eq!(config.max_total_lines, 50);
        assert!(config.navigation_tools);
        assert_eq!(config.max_file_bytes, 2_097_152);
        assert_eq!(config.max_open_documents, 200);
        let ids: Vec<&str> = config.servers.keys().map(String::as_str).collect();
        assert_eq!(
            ids,
            [
                "basedpyright",
                "bash",
                "clangd",
                "eslint",
                "gopls",
                "pyright",
                "ruff",
                "rust-analyzer",
                "typescript",
                "typescript-native",
                "yaml"
            ]
        );
    }

    #[test]
    fn typescript_language_ids_follow_extension() {
        let ts = server("typescript");
        assert_eq!(ts.language_id_for("ts"), "typescript");
        assert_eq!(ts.language_id_for("tsx"), "typescriptreact");
        assert_eq!(ts.language_id_for("js"), "javascript");
        assert_eq!(ts.language_id_for(".JSX"), "javascriptreact");
        assert_eq!(ts.language_id_for("mjs"), "javascript");
        assert_eq!(ts.language_id_for("cts"), "typescript");
    }

    #[test]
    fn eslint_language_ids_follow_extension() {
        let eslint = server("eslint");
        assert_eq!(eslint.language_id_for("tsx"), "typescriptreact");
        assert_eq!(eslint.language_id_for("js"), "javascript");
    }

    #[test]
    fn clangd_uses_c_for_c_and_h() {
        let clangd = server("clangd");
        assert_eq!(clangd.language_id_for("c"), "c");
        assert_eq!(clangd.language_id_for("h"), "c");
        assert_eq!(clangd.language_id_for("cpp"), "cpp");
        assert_eq!(clangd.language_id_for("hpp"), "cpp");
    }

    #[test]
    fn other_servers_use_their_language_id() {
        assert_eq!(server("pyright").language_id_for("pyi"), "python");
        assert_eq!(server("bash").language_id_for("sh"), "shellscript");
    }
}
