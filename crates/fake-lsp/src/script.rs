//! The fake server's behaviour model (`Script`) and the named presets.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context as _};
use serde::Deserialize;
use serde_json::json;

use super::diagnose::Encoding;

/// A document event that can trigger a publish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Trigger {
    /// `textDocument/didOpen`.
    Open,
    /// `textDocument/didChange`.
    Change,
    /// `textDocument/didSave`.
    Save,
}

/// A request the server sends to the client right after `initialized`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum ServerRequest {
    /// `workspace/configuration` for sections `fake` and `fake.nested`.
    #[serde(rename = "workspace/configuration")]
    Configuration,
    /// `client/registerCapability` for `workspace/didChangeWatchedFiles`.
    #[serde(rename = "client/registerCapability")]
    RegisterCapability,
    /// `window/workDoneProgress/create` with token `fake-progress-1`.
    #[serde(rename = "window/workDoneProgress/create")]
    WorkDoneProgressCreate,
    /// `workspace/workspaceFolders`.
    #[serde(rename = "workspace/workspaceFolders")]
    WorkspaceFolders,
}

/// Everything the fake server can be told to do; every field is optional.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Script {
    /// Document events after which diagnostics are published.
    pub diagnose_on: Vec<Trigger>,
    /// Encoding to negotiate if the client offers it (else UTF-16).
    pub position_encoding: Option<Encoding>,
    /// Delay before each publish, in milliseconds.
    pub publish_delay_ms: u64,
    /// Publish an empty list immediately before the (delayed) real one.
    pub publish_empty_first: bool,
    /// Extra files (path relative to the root → text) published on every touch.
    pub also_publish: BTreeMap<String, String>,
    /// Delay before answering `initialize`, in milliseconds.
    pub initialize_delay_ms: u64,
    /// Never answer `initialize`.
    pub hang_on_initialize: bool,
    /// Exit with status 3 once the Nth incoming message (1-based) is read.
    pub crash_on_message: Option<u64>,
    /// Exit with status 3 when a message with this method arrives.
    pub crash_on_method: Option<String>,
    /// Exit with status 3 when a document is opened or changed to a text holding this.
    pub crash_on_text: Option<String>,
    /// Send this edit as `workspace/applyEdit` (unasked) on every `textDocument/didOpen`
    /// (`$ROOT` is replaced by the root URI), without waiting for the answer.
    pub apply_edit_on_open: Option<serde_json::Value>,
    /// Write a raw non-frame line before every publish.
    pub garbage_before_publish: bool,
    /// Write a non-JSON frame and an empty frame before every publish.
    pub malformed_body: bool,
    /// Send two unknown notifications before every publish.
    pub unknown_notification: bool,
    /// Requests sent to the client after `initialized`.
    pub server_requests: Vec<ServerRequest>,
    /// Never answer `shutdown`.
    pub shutdown_hangs: bool,
    /// Spawn a grandchild at start that sleeps 1000 s (`fake-lsp --sleep 1000`).
    pub spawn_grandchild: bool,
    /// Support pull diagnostics (`textDocument/diagnostic`), with result ids `r<n>`.
    pub pull: bool,
    /// Index on each diagnosing touch: progress `fake-work-<n>` begins, an empty list is
    /// published, and after this many ms (plus `publish_delay_ms`) the real one, then progress ends.
    pub progress_ms: Option<u64>,
    /// Send `experimental/serverStatus` (quiescent false, then true) around each diagnosing
    /// touch, if the client declared `experimental.serverStatusNotification`.
    pub server_status: bool,
    /// Watchers registered (id `fake-watch-1`) after `initialized`; `$ROOT` → the root URI.
    pub watch: Vec<serde_json::Value>,
    /// Unregister `fake-watch-1` after this many `workspace/didChangeWatchedFiles`.
    pub unregister_after_events: Option<u32>,
    /// With `pull`: register `textDocument/diagnostic` (id `fake-pull-1`) after `initialized`
    /// instead of advertising `diagnosticProvider`.
    pub pull_register: bool,
    /// With `pull`: fail the first `textDocument/diagnostic` with -32802, retriggerRequest true.
    pub pull_cancel_first: bool,
    /// With `pull`: report work-done progress around each answer to a pull (begin, the
    /// answer, end), as pyright does.
    pub pull_progress: bool,
    /// With `pull`: work this many ms on each pull in turn before answering it (the first entry
    /// for the first pull; later pulls answer at once), after the begin of its progress with
    /// `pull_progress`, reading nothing meanwhile, as a single-threaded server busy checking a
    /// big project does (pyright): a ping waits its turn.
    pub pull_busy_ms: Vec<u64>,
    /// With `pull`: this many ms after the first successful pull, add `found REFRESH` (R1) to
    /// every pull result and send `workspace/diagnostic/refresh`.
    pub refresh_after_ms: Option<u64>,
    /// Declare `documentSymbolProvider` and answer `textDocument/documentSymbol` with the
    /// document's declarations (lines `<kind> <name>`, nested by indentation; see `symbols.rs`).
    pub symbols: bool,
    /// Declare `workspaceSymbolProvider` and answer `workspace/symbol` with the declarations in
    /// the `.fake` files under the root, but only once a document was opened (as pyright and
    /// tsserver load the project on the first open file); before that, with none.
    pub workspace_symbols: bool,
    /// Declare `definitionProvider` and answer `textDocument/definition` with the declarations
    /// in the document named like the word at the position.
    pub definition: bool,
    /// Declare `hoverProvider` and answer `textDocument/hover` with `the word WORD` for the
    /// word at the position (null off a word).
    pub hover: bool,
    /// Refuse `null` anywhere in a message's params, as strict servers do (TypeScript 7's
    /// `tsc --lsp`): a request gets -32602 naming the field, a notification is ignored.
    pub strict: bool,
    /// Publish without a document version, like servers that say nothing of versions.
    pub unversioned: bool,
    /// With `pull`: answer every pull with this error message (code -32603).
    pub pull_error: Option<String>,
    /// Declare implementation, type definition and call hierarchy providers and answer each
    /// of those requests with this error message (code -32603).
    pub breadth_error: Option<String>,
    /// With `pull` (not `pull_register`): declare `workspaceDiagnostics` and answer
    /// `workspace/diagnostic` with a full report for every `.fake` file under the root.
    pub workspace_diagnostics: bool,
    /// Rename and code actions (see `refactor.rs`).
    pub refactor: super::refactor::Refactor,
    /// Like Biome: load the configuration for this many ms after `initialized`, then register
    /// a capability and publish what is open again; a document opened or changed before that
    /// gets an empty placeholder publish (with its version) at once.
    pub configure_ms: Option<u64>,
    /// Like rust-analyzer loading a project: with `server_status` declared, say quiescent
    /// false at `initialized` and true this many ms later; until then, answer every pull at
    /// once with an empty list.
    pub loading_ms: Option<u64>,
    /// Like rust-analyzer's check on save (`cargo check`): on didSave, progress
    /// `fake/flycheck/0` ("fake check") begins and ends this many ms later; 30 ms after the
    /// end (as from a worker thread), the file's `CHECK` lines are published as errors (code
    /// C1) with the document's version. Pull answers never hold them.
    pub check_on_save_ms: Option<u64>,
    /// Publish this many ms later (on top of `publish_delay_ms`) for a document whose path
    /// ends with the key: one file a server takes seconds over. The publishes go out in order,
    /// so those queued after it wait too, as with a server that checks one file at a time.
    pub slow_files: BTreeMap<String, u64>,
    /// Like pyright: publish an empty list for a document when it is closed (clearing what
    /// was shown for it), whatever else the script says of publishing.
    pub clear_on_close: bool,
    /// Exit with status 0 at once, answering nothing, on this many first starts (counted by
    /// the `.pid` files in `FAKE_LSP_PID_DIR`): biome's `lsp-proxy` does when the daemon it
    /// connects to goes away under it.
    pub exit_clean_first_starts: u32,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            diagnose_on: vec![Trigger::Open, Trigger::Change],
            position_encoding: None,
            publish_delay_ms: 0,
            publish_empty_first: false,
            also_publish: BTreeMap::new(),
            initialize_delay_ms: 0,
            hang_on_initialize: false,
            crash_on_message: None,
            crash_on_method: None,
            crash_on_text: None,
            apply_edit_on_open: None,
            garbage_before_publish: false,
            malformed_body: false,
            unknown_notification: false,
            server_requests: Vec::new(),
            shutdown_hangs: false,
            spawn_grandchild: false,
            pull: false,
            progress_ms: None,
            server_status: false,
            watch: Vec::new(),
            unregister_after_events: None,
            pull_register: false,
            pull_cancel_first: false,
            pull_progress: false,
            pull_busy_ms: Vec::new(),
            refresh_after_ms: None,
            symbols: false,
            workspace_symbols: false,
            definition: false,
            hover: false,
            strict: false,
            unversioned: false,
            pull_error: None,
            breadth_error: None,
            workspace_diagnostics: false,
            refactor: Default::default(),
            configure_ms: None,
            loading_ms: None,
            check_on_save_ms: None,
            slow_files: BTreeMap::new(),
            clear_on_close: false,
            exit_clean_first_starts: 0,
        }
    }
}

/// Names accepted by `--scenario`.
pub const PRESETS: &[&str] = &[
    "default",
    "slow-publish",
    "crash-on-init",
    "crash-on-open",
    "hang-on-init",
    "garbage",
    "unknown-notification",
    "server-requests",
    "shutdown-hangs",
    "grandchild",
    "empty-first",
    "pull",
    "progress",
    "watch",
    "pull-only",
    "pull-refresh",
];

impl Script {
    /// Parses a script from JSON text.
    pub fn parse(json: &str) -> anyhow::Result<Script> {
        Ok(serde_json::from_str(json)?)
    }

    /// Reads and parses a script file.
    pub fn load(path: &Path) -> anyhow::Result<Script> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading script {}", path.display()))?;
        Script::parse(&text).with_context(|| format!("parsing script {}", path.display()))
    }

    /// The named preset behaviour.
    pub fn preset(name: &str) -> anyhow::Result<Script> {
        let base = Script::default();
        Ok(match name {
            "default" => base,
            "slow-publish" => Script {
                publish_delay_ms: 500,
                ..base
            },
            "crash-on-init" => Script {
                crash_on_method: Some("initialize".into()),
                ..base
            },
            "crash-on-open" => Script {
                crash_on_method: Some("textDocument/didOpen".into()),
                ..base
            },
            "hang-on-init" => Script {
                hang_on_initialize: true,
                ..base
            },
            "garbage" => Script {
                garbage_before_publish: true,
                malformed_body: true,
                ..base
            },
            "unknown-notification" => Script {
                unknown_notification: true,
                ..base
            },
            "server-requests" => Script {
                server_requests: vec![
                    ServerRequest::Configuration,
                    ServerRequest::RegisterCapability,
                    ServerRequest::WorkDoneProgressCreate,
                    ServerRequest::WorkspaceFolders,
                ],
                ..base
            },
            "shutdown-hangs" => Script {
                shutdown_hangs: true,
                ..base
            },
            "grandchild" => Script {
                spawn_grandchild: true,
                ..base
            },
            "empty-first" => Script {
                publish_empty_first: true,
                publish_delay_ms: 300,
                ..base
            },
            "pull" => Script {
                pull: true,
                diagnose_on: Vec::new(),
                ..base
            },
            "progress" => Script {
                progress_ms: Some(400),
                ..base
            },
            "watch" => Script {
                watch: vec![
                    json!({"globPattern": "**/*.fake"}),
                    json!({"globPattern": {"baseUri": "$ROOT", "pattern": "gen/*.txt"}, "kind": 3}),
                ],
                ..base
            },
            "pull-only" => Script {
                pull: true,
                diagnose_on: Vec::new(),
                pull_register: true,
                ..base
            },
            "pull-refresh" => Script {
                pull: true,
                diagnose_on: Vec::new(),
                refresh_after_ms: Some(300),
                ..base
            },
            other => bail!(
                "unknown scenario {other:?}; known scenarios: {}",
                PRESETS.join(", ")
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_object_gives_defaults() -> anyhow::Result<()> {
        let s = Script::parse("{}")?;
        assert_eq!(s.diagnose_on, vec![Trigger::Open, Trigger::Change]);
        assert_eq!(s.publish_delay_ms, 0);
        assert!(s.position_encoding.is_none());
        assert!(s.server_requests.is_empty());
        assert!(!s.pull && !s.shutdown_hangs && !s.hang_on_initialize);
        assert!(s.progress_ms.is_none() && s.refresh_after_ms.is_none());
        assert!(s.watch.is_empty() && s.unregister_after_events.is_none());
        assert!(!s.server_status && !s.pull_register && !s.pull_cancel_first);
        Ok(())
    }

    #[test]
    fn fields_parse() -> anyhow::Result<()> {
        let s = Script::parse(
            r#"{"diagnose_on": ["save"], "position_encoding": "utf-8",
                "also_publish": {"src/b.rs": "ERROR b"}, "crash_on_message": 4,
                "server_requests": ["workspace/configuration", "workspace/workspaceFolders"]}"#,
        )?;
        assert_eq!(s.diagnose_on, vec![Trigger::Save]);
        assert_eq!(s.position_encoding, Some(Encoding::Utf8));
        assert_eq!(
            s.also_publish.get("src/b.rs").map(String::as_str),
            Some("ERROR b")
        );
        assert_eq!(s.crash_on_message, Some(4));
        assert_eq!(
            s.server_requests,
            vec![
                ServerRequest::Configuration,
                ServerRequest::WorkspaceFolders
            ]
        );
        Ok(())
    }

    #[test]
    fn new_fields_parse() -> anyhow::Result<()> {
        let s = Script::parse(
            r#"{"progress_ms": 250, "server_status": true, "unregister_after_events": 2,
                "watch": [{"globPattern": {"baseUri": "$ROOT", "pattern": "*.x"}}],
                "pull": true, "pull_register": true, "pull_cancel_first": true,
                "refresh_after_ms": 40}"#,
        )?;
        assert_eq!(s.progress_ms, Some(250));
        assert!(s.server_status && s.pull_register && s.pull_cancel_first);
        assert_eq!(s.unregister_after_events, Some(2));
        assert_eq!(s.watch[0]["globPattern"]["baseUri"], "$ROOT");
        assert_eq!(s.refresh_after_ms, Some(40));
        assert!(Script::parse(r#"{"progress_ms": -1}"#).is_err());
        assert!(Script::parse(r#"{"unregister_after_events": "2"}"#).is_err());
        assert!(Script::parse(r#"{"watch": {"globPattern": "*"}}"#).is_err());
        Ok(())
    }

    #[test]
    fn unknown_field_is_an_error() {
        let err = Script::parse(r#"{"publish_delay": 5}"#)
            .err()
            .map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("unknown field")));
    }

    #[test]
    fn bad_values_are_errors() {
        assert!(Script::parse(r#"{"diagnose_on": ["close"]}"#).is_err());
        assert!(Script::parse(r#"{"position_encoding": "utf-7"}"#).is_err());
        assert!(Script::parse(r#"{"server_requests": ["window/showMessage"]}"#).is_err());
    }

    #[test]
    fn presets() -> anyhow::Result<()> {
        for name in PRESETS {
            Script::preset(name)?;
        }
        assert_eq!(Script::preset("slow-publish")?.publish_delay_ms, 500);
        assert!(Script::preset("pull")?.diagnose_on.is_empty());
        assert_eq!(Script::preset("progress")?.progress_ms, Some(400));
        let watch = Script::preset("watch")?.watch;
        assert_eq!(watch.len(), 2);
        assert_eq!(watch[1]["kind"], 3);
        let only = Script::preset("pull-only")?;
        assert!(only.pull && only.pull_register && only.diagnose_on.is_empty());
        let refresh = Script::preset("pull-refresh")?;
        assert!(refresh.pull && !refresh.pull_register && refresh.diagnose_on.is_empty());
        assert_eq!(refresh.refresh_after_ms, Some(300));
        let err = Script::preset("nope").err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("crash-on-open")));
        Ok(())
    }
}
