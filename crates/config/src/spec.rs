//! One language server's configuration (`[servers.<id>]`): how to run it, which files it
//! serves and how it says that it is done. Below the built-in table, which is made of these,
//! and the resolved configuration, which holds them.

use std::collections::BTreeMap;

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
        /// Whether it is optional: a linter of configuration files (JSON, YAML, TOML, Dockerfiles)
        /// that many machines lack. When it is not installed, a file that only it would check
        /// is said once to the person (`squiggle status`, a line of `squiggle check FOLDER`),
        /// not to a model after every edit: the hooks say nothing of it, and a folder's check
        /// leaves it out with one summary line.
        pub optional: bool = false,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
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

    /// The command run beside the server: `sidecar` when configured; else, for luau-lsp whose
    /// initialization options ask for an autogenerated sourcemap of a Rojo project
    /// (`luau-lsp.sourcemap.autogenerate` with `rojoProjectFile`), `rojo sourcemap <project>
    /// --watch -o <sourcemapFile>` (default `sourcemap.json`), as the dispatch design has it: the
    /// sourcemap stays fresh, and the watcher tells the server when it changes.
    pub fn sidecar_command(&self) -> Option<Vec<String>> {
        if let Some(sidecar) = &self.sidecar {
            return Some(sidecar.clone());
        }
        let program = std::path::Path::new(&self.command).file_stem()?;
        if program != "luau-lsp" {
            return None;
        }
        let sourcemap = self
            .initialization_options
            .as_ref()?
            .get("luau-lsp")?
            .get("sourcemap")?;
        if sourcemap.get("autogenerate")?.as_bool() != Some(true) {
            return None;
        }
        let project = sourcemap.get("rojoProjectFile")?.as_str()?;
        let output = (sourcemap
            .get("sourcemapFile")
            .and_then(|file| file.as_str()))
        .unwrap_or("sourcemap.json");
        let argv = ["rojo", "sourcemap", project, "--watch", "-o", output];
        Some(argv.map(String::from).to_vec())
    }

    /// Its command and arguments as a POSIX shell reads them, each word quoted where the shell
    /// would split or expand it, its environment in front (`FOO=1 ruff server`).
    pub fn command_line(&self) -> String {
        let env = (self.env.iter()).map(|(name, value)| format!("{name}={value}"));
        let argv = std::iter::once(&self.command).chain(&self.args).cloned();
        let words: Vec<String> = env.chain(argv).collect();
        (words.iter())
            .map(|word| shlex::try_quote(word).unwrap_or(word.into()))
            .collect::<Vec<_>>()
            .join(" ")
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
    /// else `language_id`; see [`crate::language_id::language_id_for_extension`].
    pub fn language_id_for(&self, extension: &str) -> String {
        crate::language_id::language_id_for_extension(&self.language_id, extension)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luau_lsp_asking_for_an_autogenerated_sourcemap_gets_rojo_beside_it() {
        let luau = |options: serde_json::Value| ServerSpec {
            command: "/opt/bin/luau-lsp".to_string(),
            initialization_options: Some(options),
            ..ServerSpec::default()
        };
        let rojo = |project: &str, output: &str| {
            Some(
                ["rojo", "sourcemap", project, "--watch", "-o", output]
                    .map(String::from)
                    .to_vec(),
            )
        };
        // (initialization options, the sidecar)
        let table = [
            (
                serde_json::json!({"luau-lsp": {"sourcemap": {"autogenerate": true, "rojoProjectFile": "default.project.json"}}}),
                rojo("default.project.json", "sourcemap.json"),
            ),
            (
                serde_json::json!({"luau-lsp": {"sourcemap": {"autogenerate": true, "rojoProjectFile": "dev.project.json", "sourcemapFile": "map.json"}}}),
                rojo("dev.project.json", "map.json"),
            ),
            (
                serde_json::json!({"luau-lsp": {"sourcemap": {"autogenerate": false, "rojoProjectFile": "default.project.json"}}}),
                None,
            ),
            (
                serde_json::json!({"luau-lsp": {"sourcemap": {"autogenerate": true}}}),
                None,
            ),
            (serde_json::json!({}), None),
        ];
        for (options, sidecar) in table {
            assert_eq!(
                luau(options.clone()).sidecar_command(),
                sidecar,
                "{options}"
            );
        }
        let other = ServerSpec {
            command: "lua-language-server".to_string(),
            ..luau(
                serde_json::json!({"luau-lsp": {"sourcemap": {"autogenerate": true, "rojoProjectFile": "p.json"}}}),
            )
        };
        assert_eq!(other.sidecar_command(), None, "only luau-lsp");
        let configured = ServerSpec {
            sidecar: Some(vec!["gen".to_string()]),
            ..luau(serde_json::json!({}))
        };
        assert_eq!(configured.sidecar_command(), Some(vec!["gen".to_string()]));
    }
}
