//! The resolved configuration: global settings and the language servers.
//!
//! Each key is declared once, in one of the two `keyed!` lists below: its doc, its type, its
//! default and, where opencode.json names it in camelCase, its serde alias. That entry makes
//! the field, its default, the patch field both readers (TOML, opencode.json) fill, and its
//! application; nothing else names the key.

use squiggle_protocol::Severity;
use std::collections::BTreeMap;

keyed! {
    /// The resolved configuration of squiggle.
    pub struct Config, patched by Patch {
        /// Whether squiggle does anything at all (toml key `lsp`).
        #[serde(rename = "lsp")]
        pub enabled: bool = true,
        /// How long to wait for diagnostics after a change, in milliseconds.
        #[serde(alias = "diagnosticTimeout")]
        pub diagnostic_timeout_ms: u64 = 3000,
        /// How long to wait for diagnostics the first time a server sees a file, in milliseconds.
        #[serde(alias = "firstTouchTimeout")]
        pub first_touch_timeout_ms: u64 = 10_000,
        /// After a write, how long to wait for other files' diagnostics to settle, in milliseconds.
        pub other_files_wait_ms: u64 = 500,
        /// How long a broken server stays broken before a restart (automatic or explicit), in
        /// milliseconds.
        pub restart_cooldown_ms: u64 = 30_000,
        /// How long a server may take to answer `initialize`, in milliseconds.
        pub initialize_timeout_ms: u64 = 10_000,
        /// How long diagnostics must stay unchanged before they count as final, in milliseconds.
        pub settle_ms: u64 = 150,
        /// The severities reported; others are dropped.
        #[serde(alias = "includeSeverities", deserialize_with = "crate::patch::severities")]
        pub include_severities: Vec<Severity> = vec![Severity::Error],
        /// The most diagnostics reported for one file.
        #[serde(alias = "maxDiagnosticsPerFile")]
        pub max_diagnostics_per_file: usize = 20,
        /// The most other files whose diagnostics are reported after an edit.
        #[serde(alias = "maxProjectDiagnosticsFiles")]
        pub max_other_files: usize = 5,
        /// The most lines of diagnostics reported in total.
        pub max_total_lines: usize = 50,
        /// Whether navigation tools (definition, references, hover) are offered.
        #[serde(alias = "navigationTools")]
        pub navigation_tools: bool = true,
        /// Files larger than this many bytes are not sent to servers.
        pub max_file_bytes: u64 = 2 * 1024 * 1024,
        /// The most documents one server keeps open; the least recently used are closed first.
        #[serde(alias = "maxOpenDocuments")]
        pub max_open_documents: usize = 200,
        /// Whether `squiggle check` goes through a per-workspace background daemon.
        pub daemon: bool = true,
        /// How many seconds a daemon waits without a request before it exits (15 minutes; 0
        /// counts as 1, so a new daemon outlives the connect of the client that started it, and
        /// more than a year counts as a year).
        pub daemon_idle_seconds: u64 = 900,
    }
    fixed {
        /// The language servers, built-ins merged with overrides and additions, keyed by id.
        pub servers: BTreeMap<String, ServerSpec> = crate::builtin::builtin_servers(),
    }
    patch only {
        /// The `[servers.<id>]` tables of a TOML file, each with its place (opencode.json's
        /// servers are read one by one, in `opencode`).
        pub servers: Option<BTreeMap<String, toml::Spanned<ServerPatch>>>,
    }
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

keyed! {
    /// One language server: how to run it and which files it serves.
    pub struct ServerSpec, patched by ServerPatch {
        /// Whether it may be started.
        pub enabled: bool = true,
        /// The program to run.
        pub command: String = String::new(),
        /// The program's arguments.
        pub args: Vec<String> = Vec::new(),
        /// File extensions it serves, lowercase, without the dot (`py`, `pyi`).
        #[serde(deserialize_with = "crate::patch::extensions")]
        pub extensions: Vec<String> = Vec::new(),
        /// The LSP languageId for didOpen; see [`ServerSpec::language_id_for`].
        #[serde(alias = "languageId")]
        pub language_id: String = String::new(),
        /// File names marking a project root for this server.
        #[serde(alias = "rootMarkers")]
        pub root_markers: Vec<String> = Vec::new(),
        /// Extra environment variables for the process.
        pub env: BTreeMap<String, String> = BTreeMap::new(),
        /// The `initializationOptions` sent in `initialize`.
        #[serde(alias = "initializationOptions")]
        pub initialization_options: Option<serde_json::Value> = None,
        /// The settings answering `workspace/configuration`.
        pub settings: Option<serde_json::Value> = None,
        /// A command and its arguments run beside the server (an empty list: none).
        #[serde(deserialize_with = "crate::patch::argv")]
        pub sidecar: Option<Vec<String>> = None,
        /// The quiet time for this server's diagnostics, in place of the global `settle_ms`
        /// (for servers that publish in stages with nothing to say they are not done).
        pub settle_ms: Option<u64> = None,
        /// How to install the server's command.
        #[serde(alias = "installHint")]
        pub install_hint: String = String::new(),
        /// The id of the server this one replaces when that one is unavailable (empty: none).
        #[serde(alias = "fallbackFor", deserialize_with = "crate::patch::optional_text")]
        pub fallback_for: Option<String> = None,
        /// Whether it is ready only once it registers a capability after `initialized` (it loads
        /// its configuration then, and what it publishes before is an empty placeholder: Biome);
        /// no document is sent before, and none at all if it does not register within
        /// `initialize_timeout_ms`.
        #[serde(alias = "readyOnRegistration")]
        pub ready_on_registration: bool = false,
        /// Whether its pull answers count only when asked after it said it is ready, through
        /// rust-analyzer's `experimental/serverStatus` (`quiescent: true`): while it loads a
        /// project it answers pulls at once, with nothing.
        #[serde(alias = "readyOnQuiescent")]
        pub ready_on_quiescent: bool = false,
        /// Whether its warnings are the build's errors: TypeScript 7's `tsc --lsp` sends as
        /// warnings the compiler errors an editor shows dimmed (unused declarations under
        /// `noUnusedLocals`/`noUnusedParameters`, TS6133...), and TypeScript has no warnings of its
        /// own (its compiler's categories are error, suggestion and message).
        #[serde(alias = "warningsAreErrors")]
        pub warnings_are_errors: bool = false,
        /// Whether a file it serves counts as checked only with its answer (a type checker):
        /// when it runs and gives no final answer, the file is "not type-checked", whatever
        /// the other servers (linters) said.
        pub required: bool = false,
        /// The `$/progress` token prefix of the build check the server runs when a file is
        /// saved (rust-analyzer: `rust-analyzer/flycheck/`, its `cargo check`): for a saved
        /// file, the answer is final only once a check begun after the save has ended and what
        /// it published is in. Empty: none.
        #[serde(alias = "checkProgress", deserialize_with = "crate::patch::optional_text")]
        pub check_progress: Option<String> = None,
        /// The time a check waits for this server's answer when it is already running, when
        /// longer than the global `diagnostic_timeout_ms` (a server whose answer waits for a
        /// build).
        #[serde(alias = "timeoutMs")]
        pub timeout_ms: Option<u64> = None,
        /// The time a check waits when it starts this server, when longer than the global
        /// `first_touch_timeout_ms`.
        #[serde(alias = "firstTouchTimeoutMs")]
        pub first_touch_timeout_ms: Option<u64> = None,
    }
    fixed {
        /// The id it is configured under (`pyright`).
        pub id: String = String::new(),
        /// How its publishes for one document version come, which decides when they are final.
        pub stages: Stages = Stages::default(),
        /// Whether its diagnostics are pulled through tsserver (`typescript.tsserverRequest`), in
        /// place of its unversioned, staged publishes (typescript-language-server).
        pub tsserver_pull: bool = false,
    }
    patch only {}
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
    /// Gives its diagnostics the build's severity (see `warnings_are_errors`).
    pub fn to_build_severity(&self, diagnostics: &mut [squiggle_protocol::Diagnostic]) {
        if self.warnings_are_errors {
            for diagnostic in diagnostics {
                if diagnostic.severity == squiggle_protocol::Severity::Warning {
                    diagnostic.severity = squiggle_protocol::Severity::Error;
                }
            }
        }
    }

    /// Why the server cannot run when its command is not found, with the command to install it.
    pub fn not_installed(&self) -> String {
        format!(
            "`{}` is not installed (install: {})",
            self.command, self.install_hint
        )
    }

    /// The LSP languageId for a file with this extension: the well-known one for the
    /// extension when `language_id` is well-known (clangd: `c` for `.c`, `cpp` for `.cpp`),
    /// else `language_id`; see [`crate::builtin::language_id_for_extension`].
    pub fn language_id_for(&self, extension: &str) -> String {
        crate::builtin::language_id_for_extension(&self.language_id, extension)
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
        assert!(config.servers.len() >= 25);
        assert!(config.servers.contains_key("pyright") && config.servers.contains_key("taplo"));
    }

    #[test]
    fn a_server_whose_warnings_are_the_builds_errors_reports_them_as_errors() {
        let diagnostic = |severity| squiggle_protocol::Diagnostic {
            file: "a.ts".to_string(),
            line: 1,
            column: 1,
            end_line: 1,
            end_column: 2,
            severity,
            message: "'x' is declared but its value is never read.".to_string(),
            code: Some("6133".to_string()),
            source: Some("ts".to_string()),
            also: Vec::new(),
        };
        let severities = |spec: &ServerSpec| {
            let mut list = [Severity::Warning, Severity::Hint, Severity::Error].map(diagnostic);
            spec.to_build_severity(&mut list);
            list.map(|d| d.severity)
        };
        let native = server("typescript-native");
        assert!(native.warnings_are_errors);
        assert_eq!(
            severities(&native),
            [Severity::Error, Severity::Hint, Severity::Error]
        );
        assert_eq!(
            severities(&server("pyright")),
            [Severity::Warning, Severity::Hint, Severity::Error]
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
