//! The resolved configuration: global settings and the language servers.
//!
//! Each key is declared once, in the `keyed!` list below (a server's keys are in [`crate::spec`]): its doc, its type, its
//! default and, where opencode.json names it in camelCase, its serde alias. That entry makes
//! the field, its default, the patch field both readers (TOML, opencode.json) fill, and its
//! application; nothing else names the key.

use std::collections::BTreeMap;
use std::path::Path;

use squiggle_protocol::Severity;

use crate::spec::{ServerPatch, ServerSpec};

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
        /// How many times a broken server is restarted automatically in a session, at most (0:
        /// a broken server stays broken until it is restarted explicitly, as BR-20 has it).
        pub max_automatic_restarts: u32 = 3,
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
        /// The most files that import an edited file (TypeScript, JavaScript, Python) looked at
        /// after an edit's own answer, for the errors it caused there (0: none).
        pub max_dependent_files: usize = 16,
        /// How long each look at those files (after the edit; before it, for those with errors)
        /// may take, in milliseconds; the files that did not answer by then are left out of that
        /// edit's feedback.
        pub dependent_files_wait_ms: u64 = 750,
        /// The most lines of diagnostics reported in total.
        pub max_total_lines: usize = 50,
        /// How the text an edit's feedback appends writes each file's diagnostics: `compact`
        /// (the path, then `line:col message (code)` lines, new errors first and marked),
        /// `tagged` (the reference's `<diagnostics file="...">` block of `SEVERITY [line:col]
        /// message (code)` lines, escaped), or `auto`: tagged in `serve`, whose hosts are built on
        /// that contract, compact in every other door.
        #[serde(alias = "feedbackFormat")]
        pub feedback_format: FeedbackFormat = FeedbackFormat::Auto,
        /// Whether navigation tools (definition, references, hover) are offered.
        #[serde(alias = "navigationTools")]
        pub navigation_tools: bool = true,
        /// Files larger than this many bytes are not sent to servers.
        pub max_file_bytes: u64 = 2 * 1024 * 1024,
        /// Folders, by name at any depth below the workspace root, whose files are not
        /// analysed: a check of one or a question about one is refused and starts no server
        /// (the project's dependencies; `[]` analyses them too).
        #[serde(alias = "excludedFolders")]
        pub excluded_folders: Vec<String> = vec!["node_modules".to_string()],
        /// The most documents one server keeps open; the least recently used are closed first.
        #[serde(alias = "maxOpenDocuments")]
        pub max_open_documents: usize = 200,
        /// Whether `squiggle check` goes through a per-workspace background daemon.
        pub daemon: bool = true,
        /// How many seconds a daemon waits without a request before it exits (15 minutes; 0
        /// counts as 1, so a new daemon outlives the connect of the client that started it, and
        /// more than a year counts as a year).
        pub daemon_idle_seconds: u64 = 900,
        /// The most workspaces kept warm at once by this user's daemons; beyond it the least
        /// recently used idle one is stopped (0 counts as 1).
        pub daemon_max_workspaces: usize = 8,
        /// The resident memory, in MiB, that this user's daemons and their servers may hold
        /// together; beyond it the least recently used idle workspaces are stopped (0: a
        /// quarter of the machine's physical memory).
        pub daemon_max_memory_mb: u64 = 0,
        /// A daemon stops a server no check asked for within this many seconds (10 minutes;
        /// 0: never), before the warm budget has to stop whole daemons.
        pub daemon_server_idle_seconds: u64 = 600,
    }
    fixed {
        /// The language servers, built-ins merged with overrides and additions, keyed by id.
        pub servers: BTreeMap<String, ServerSpec> = crate::builtin::builtin_servers(),
        /// The project configuration files whose `[servers]` tables were not applied: the user
        /// has not trusted them with their content (see [`crate::trust`]).
        pub untrusted: Vec<std::path::PathBuf> = Vec::new(),
    }
    patch only {
        /// The `[servers.<id>]` tables of a TOML file, each with its place (opencode.json's
        /// servers are read one by one, in `opencode`).
        pub servers: Option<BTreeMap<String, toml::Spanned<ServerPatch>>>,
    }
}

/// The `feedback_format` key: how a feedback's blocks are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeedbackFormat {
    /// The door's own: tagged in `serve`, compact elsewhere.
    #[default]
    Auto,
    /// The compact block.
    Compact,
    /// The reference's tagged block.
    Tagged,
}

impl Config {
    /// The folder of [`Config::excluded_folders`] that `relative` (a path relative to the
    /// workspace root) lies in, if any.
    pub fn excluded_folder(&self, relative: &std::path::Path) -> Option<&str> {
        let folders = relative.parent()?.components();
        let names: Vec<&std::ffi::OsStr> = folders.map(|part| part.as_os_str()).collect();
        (self.excluded_folders.iter())
            .find(|excluded| names.iter().any(|name| *name == excluded.as_str()))
            .map(String::as_str)
    }

    /// What to tell once of the project files not used (see [`Config::untrusted`]): which,
    /// and the command a person runs in the workspace `root` to allow them; None when every
    /// file was used.
    pub fn untrusted_notice(&self, root: &Path) -> Option<String> {
        let files: Vec<String> = (self.untrusted.iter())
            .map(|file| {
                file.strip_prefix(root)
                    .unwrap_or(file)
                    .display()
                    .to_string()
            })
            .collect();
        (!files.is_empty()).then(|| format!(
            "{} configures language servers but is not trusted, so only the built-in servers run, as built in; to use it, a person who trusts the commands it runs runs `squiggle trust --root {}` (a change to the file needs it again)",
            files.join(" and "),
            root.display()
        ))
    }

    /// The caps feedback for agents applies.
    pub fn caps(&self) -> squiggle_protocol::Caps {
        squiggle_protocol::Caps {
            include_severities: self.include_severities.clone(),
            max_diagnostics_per_file: self.max_diagnostics_per_file,
            max_other_files: self.max_other_files,
            max_total_lines: self.max_total_lines,
            format: match self.feedback_format {
                FeedbackFormat::Tagged => squiggle_protocol::BlockFormat::Tagged,
                FeedbackFormat::Auto | FeedbackFormat::Compact => {
                    squiggle_protocol::BlockFormat::Compact
                }
            },
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
    fn files_below_an_excluded_folder_at_any_depth_are_excluded() {
        let config = Config::default();
        // (path relative to the root, the folder it is excluded by)
        let table = [
            ("node_modules/pkg/x.ts", Some("node_modules")),
            (
                "packages/web/node_modules/pkg/index.d.ts",
                Some("node_modules"),
            ),
            ("src/node_modules.ts", None),
            ("node_modules", None),
            ("src/a.ts", None),
            ("my_node_modules/a.ts", None),
        ];
        for (path, excluded) in table {
            let found = config.excluded_folder(std::path::Path::new(path));
            assert_eq!(found, excluded, "{path}");
        }
        let none = Config {
            excluded_folders: Vec::new(),
            ..Config::default()
        };
        assert_eq!(none.excluded_folder("node_modules/x.ts".as_ref()), None);
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
