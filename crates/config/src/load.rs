//! Loading configuration in layers: defaults, user file, project file, opencode.json.

use crate::error::ConfigError;
use crate::model::Config;
use crate::opencode::{parse_dispatch, parse_opencode};
use crate::patch::Layer;
use crate::regular_file::read_regular_file;
use crate::root::{find_project_file, may_configure};
use crate::toml_layer::parse_toml;
use crate::trust::TrustRecord;
use std::path::Path;

/// The opencode configuration file read from the workspace root.
const OPENCODE_FILE: &str = "opencode.json";

/// The dispatch design's configuration file in the workspace root, read in place of
/// opencode.json when it is there.
const DISPATCH_FILE: &str = ".dispatch/lsp.json";

/// The JSON configuration file of a workspace root: `.dispatch/lsp.json` when it is a file,
/// else `opencode.json` (which may not exist); and whether it is the dispatch one.
fn json_file(workspace_root: &Path) -> (std::path::PathBuf, bool) {
    let dispatch = workspace_root.join(DISPATCH_FILE);
    match dispatch.is_file() {
        true => (dispatch, true),
        false => (workspace_root.join(OPENCODE_FILE), false),
    }
}

/// A JSON configuration file's layer, read as its name says.
fn parse_json_file(text: &str, dispatch: bool) -> Result<Layer, crate::error::LayerError> {
    match dispatch {
        true => parse_dispatch(text),
        false => parse_opencode(text),
    }
}

/// The most a configuration file may hold; a larger one (or a device that never ends) is an
/// error naming it, not a read without end.
pub const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// The text of a configuration file: a regular file of at most [`MAX_CONFIG_BYTES`], UTF-8.
fn read_config_file(path: &Path) -> Result<String, ConfigError> {
    let read = |cause: std::io::Error| ConfigError::Read {
        file: path.to_path_buf(),
        cause,
    };
    let bytes = read_regular_file(path, MAX_CONFIG_BYTES).map_err(|err| read(err.into()))?;
    String::from_utf8(bytes).map_err(|_| {
        read(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not UTF-8 text",
        ))
    })
}

/// The text of a file, or None if it does not exist.
fn read_if_exists(path: &Path) -> Result<Option<String>, ConfigError> {
    match read_config_file(path) {
        Ok(text) => Ok(Some(text)),
        Err(ConfigError::Read { cause, .. }) if cause.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(err) => Err(err),
    }
}

/// A project configuration file as read for `squiggle trust`: its path, its text, and the
/// servers it would configure, as configured once applied on the defaults.
#[derive(Debug, Clone)]
pub struct ProjectFile {
    /// Where it is, as found (a link at its own path).
    pub path: std::path::PathBuf,
    /// Its text.
    pub text: String,
    /// The servers it names, as they would run.
    pub servers: Vec<crate::spec::ServerSpec>,
    /// Whether it says what runs, and so applies only once trusted (see [`Config::load`]).
    pub needs_trust: bool,
}

/// The project configuration files [`Config::load`] reads for a workspace, read: the nearest
/// project file upward, then `opencode.json` in the root.
pub fn project_files(workspace_root: &Path) -> Result<Vec<ProjectFile>, ConfigError> {
    let (json, dispatch) = json_file(workspace_root);
    let json = (json.is_file() && may_configure(&json)).then_some(json);
    let mut files = Vec::new();
    for path in find_project_file(workspace_root).into_iter().chain(json) {
        let Some(text) = read_if_exists(&path)? else {
            continue;
        };
        let layer = match path.extension().is_some_and(|ext| ext == "json") {
            true => parse_json_file(&text, dispatch),
            false => parse_toml(&text),
        };
        let layer = layer.map_err(|err| err.in_file(&path))?;
        let ids: Vec<String> = layer
            .servers
            .iter()
            .map(|server| server.id.clone())
            .collect();
        let mut applied = Config::default();
        let needs_trust = applied.runs_something(&layer);
        applied
            .apply_layer(layer)
            .map_err(|err| err.in_file(&path))?;
        let servers = (ids.iter())
            .filter_map(|id| applied.servers.remove(id))
            .collect();
        files.push(ProjectFile {
            path,
            text,
            servers,
            needs_trust,
        });
    }
    Ok(files)
}

impl Config {
    /// Loads defaults, then the user file, then the nearest project file upward from
    /// `workspace_root`, then `.dispatch/lsp.json` in the workspace root, or, when there is none,
    /// the `lsp` key of its `opencode.json`.
    ///
    /// Files that do not exist are skipped. What a project file says of what runs as the user
    /// (servers of its own; programs, arguments, environment and settings of the others)
    /// applies only when the user trusts that file with its content, in the trust record beside
    /// the user file (see [`crate::trust`]); the files held back so are listed in
    /// [`Config::untrusted`], their other keys applied.
    pub fn load(workspace_root: &Path, user_file: Option<&Path>) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        let trust = user_file.and_then(TrustRecord::beside);
        if let Some(user_file) = user_file {
            if let Some(text) = read_if_exists(user_file)? {
                config.apply_toml(&text, user_file)?;
            }
        }
        if let Some(project_file) = find_project_file(workspace_root) {
            if let Some(text) = read_if_exists(&project_file)? {
                let layer = parse_toml(&text).map_err(|err| err.in_file(&project_file))?;
                config.apply_project_layer(layer, &project_file, &text, trust.as_ref())?;
            }
        }
        let (json, dispatch) = json_file(workspace_root);
        let json_ok = !json.is_file() || may_configure(&json);
        if !json_ok {
            tracing::warn!(file = %json.display(), "not read: a configuration file must be owned by you (or root) and writable by no one else, as its server commands run as you (if it is yours: chmod go-w on it)");
        }
        if let Some(text) = read_if_exists(&json)?.filter(|_| json_ok) {
            let layer = parse_json_file(&text, dispatch).map_err(|err| err.in_file(&json))?;
            config.apply_project_layer(layer, &json, &text, trust.as_ref())?;
        }
        Ok(config)
    }

    /// Applies a project file's layer; what it says of what runs only if `trust` trusts the
    /// file's `text` (see [`Config::hold_back_what_runs`]).
    fn apply_project_layer(
        &mut self,
        mut layer: Layer,
        file: &Path,
        text: &str,
        trust: Option<&TrustRecord>,
    ) -> Result<(), ConfigError> {
        let trusted = || trust.is_some_and(|trust| trust.trusts(file, text.as_bytes()));
        if self.runs_something(&layer) && !trusted() {
            self.hold_back_what_runs(&mut layer);
            self.untrusted.push(file.to_path_buf());
        }
        self.apply_layer(layer).map_err(|err| err.in_file(file))
    }

    /// Whether a layer says what runs as the user: a server not configured before, or of one
    /// that is, the program, its arguments, environment, sidecar, or what it is given
    /// (`initialization_options`, `settings`: some servers run commands they name, such as
    /// rust-analyzer's `check.overrideCommand`). Turning a server off, its file types, roots
    /// and deadlines run nothing new.
    fn runs_something(&self, layer: &Layer) -> bool {
        layer.servers.iter().any(|server| {
            let patch = &server.patch;
            !self.servers.contains_key(&server.id)
                || patch.command.is_some()
                || patch.args.is_some()
                || patch.env.is_some()
                || patch.sidecar.is_some()
                || patch.initialization_options.is_some()
                || patch.settings.is_some()
        })
    }

    /// Takes out of a layer what [`Config::runs_something`] looks for.
    fn hold_back_what_runs(&self, layer: &mut Layer) {
        layer
            .servers
            .retain(|server| self.servers.contains_key(&server.id));
        for server in &mut layer.servers {
            let patch = &mut server.patch;
            patch.command = None;
            patch.args = None;
            patch.env = None;
            patch.sidecar = None;
            patch.initialization_options = None;
            patch.settings = None;
        }
    }

    /// Applies one TOML file on top of this configuration (for `--config FILE`).
    pub fn apply_file(&mut self, path: &Path) -> Result<(), ConfigError> {
        let text = read_config_file(path)?;
        self.apply_toml(&text, path)
    }

    /// Applies TOML text as if read from `origin` (used by apply_file and tests).
    pub fn apply_toml(&mut self, text: &str, origin: &Path) -> Result<(), ConfigError> {
        let layer = parse_toml(text).map_err(|err| err.in_file(origin))?;
        self.apply_layer(layer).map_err(|err| err.in_file(origin))
    }

    /// Applies the `lsp` value of an opencode.json-style JSON document.
    pub fn apply_opencode_json(&mut self, text: &str, origin: &Path) -> Result<(), ConfigError> {
        let layer = parse_opencode(text).map_err(|err| err.in_file(origin))?;
        self.apply_layer(layer).map_err(|err| err.in_file(origin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use squiggle_protocol::Severity;
    use std::fs;
    use std::path::PathBuf;

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }

    fn toml_error(text: &str) -> String {
        let mut config = Config::default();
        let err = config
            .apply_toml(text, Path::new("/p/squiggle.toml"))
            .expect_err("invalid");
        err.to_string()
    }

    #[test]
    fn load_without_files_gives_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("no/config.toml");
        let config = Config::load(dir.path(), Some(&missing)).expect("loads");
        assert_eq!(config, Config::default());
    }

    #[test]
    fn user_file_applies() {
        let dir = tempfile::tempdir().expect("tempdir");
        let user = dir.path().join("user/config.toml");
        write(
            &user,
            "settle_ms = 10\ninclude_severities = [\"warning\", \"error\"]\n",
        );
        let ws = dir.path().join("ws");
        fs::create_dir_all(&ws).expect("mkdir");
        let config = Config::load(&ws, Some(&user)).expect("loads");
        assert_eq!(config.settle_ms, 10);
        assert_eq!(
            config.include_severities,
            [Severity::Error, Severity::Warning]
        );
    }

    #[test]
    fn layers_apply_user_then_project_then_opencode() {
        let dir = tempfile::tempdir().expect("tempdir");
        let user = dir.path().join("user.toml");
        write(
            &user,
            "settle_ms = 1\nmax_other_files = 1\ndiagnostic_timeout_ms = 1\n",
        );
        let ws = dir.path().join("ws");
        write(
            &ws.join("squiggle.toml"),
            "max_other_files = 2\ndiagnostic_timeout_ms = 2\n[servers.ruff]\nenabled = false\n",
        );
        write(
            &ws.join("opencode.json"),
            r#"{"lsp": {"diagnosticTimeout": 3}}"#,
        );
        trust(&user, &ws.join("squiggle.toml"));
        let config = Config::load(&ws, Some(&user)).expect("loads");
        assert_eq!(config.settle_ms, 1);
        assert_eq!(config.max_other_files, 2);
        assert_eq!(config.diagnostic_timeout_ms, 3);
        assert!(!config.servers["ruff"].enabled);
        assert!(config.untrusted.is_empty());
    }

    /// Trusts a project file as it is now, in the record beside `user`.
    fn trust(user: &Path, file: &Path) {
        let record = TrustRecord::beside(user).expect("a record");
        record
            .trust(file, &fs::read(file).expect("read"))
            .expect("trusts");
    }

    /// One temporary folder holding the user's configuration path and a workspace (`ws`), for
    /// the trust tests.
    struct Folders {
        dir: tempfile::TempDir,
        user: PathBuf,
        ws: PathBuf,
    }

    impl Folders {
        fn new() -> Self {
            let dir = tempfile::tempdir().expect("tempdir");
            let user = dir.path().join("config/squiggle/config.toml");
            let ws = dir.path().join("ws");
            Folders { dir, user, ws }
        }

        /// The workspace's configuration as the user loads it.
        fn load(&self) -> Config {
            Config::load(&self.ws, Some(&self.user)).expect("loads")
        }

        /// Trusts a project file as it is now.
        fn trust(&self, file: &Path) {
            trust(&self.user, file);
        }
    }

    /// A project file naming a server of its own, another for a built-in's command, and a
    /// global key.
    const HOSTILE: &str = "settle_ms = 7\n[servers.evil]\ncommand = \"sh\"\nargs = [\"-c\", \"touch ../pwned\"]\nextensions = [\"py\"]\n[servers.ruff]\ncommand = \"sh\"\n";

    #[test]
    fn an_untrusted_project_files_servers_do_not_apply_its_other_keys_do() {
        let folders = Folders::new();
        let ws = &folders.ws;
        let file = ws.join("squiggle.toml");
        write(&file, HOSTILE);
        let config = folders.load();
        assert!(!config.servers.contains_key("evil"));
        assert_eq!(config.servers["ruff"], Config::default().servers["ruff"]);
        assert_eq!(config.settle_ms, 7);
        assert_eq!(config.untrusted, std::slice::from_ref(&file));
        let notice = config.untrusted_notice(ws).expect("a notice");
        assert!(
            notice.contains("squiggle.toml configures") && notice.contains("squiggle trust --root"),
            "{notice}"
        );

        folders.trust(&file);
        let config = folders.load();
        assert_eq!(config.servers["evil"].command, "sh");
        assert_eq!(config.servers["ruff"].command, "sh");
        assert!(config.untrusted.is_empty() && config.untrusted_notice(ws).is_none());

        write(&file, &HOSTILE.replace("pwned", "pwned2"));
        let config = folders.load();
        assert!(
            !config.servers.contains_key("evil"),
            "a change ends the trust"
        );
        assert_eq!(config.untrusted, [file]);

        let none = Config::load(ws, None).expect("loads");
        assert!(
            !none.servers.contains_key("evil"),
            "no user folder: nothing is trusted"
        );
    }

    #[test]
    fn a_project_file_that_runs_nothing_new_needs_no_trust() {
        let folders = Folders::new();
        let ws = &folders.ws;
        write(
            &ws.join("squiggle.toml"),
            "settle_ms = 7\n[servers.ruff]\nenabled = false\n[servers.pyright]\nextensions = [\"py\"]\ntimeout_ms = 9\n",
        );
        let config = folders.load();
        assert_eq!(config.settle_ms, 7);
        assert!(!config.servers["ruff"].enabled);
        assert_eq!(config.servers["pyright"].timeout_ms, Some(9));
        assert!(config.untrusted.is_empty());
    }

    #[test]
    fn an_untrusted_project_file_gives_no_settings_to_a_built_in_but_turns_it_off() {
        let folders = Folders::new();
        let ws = &folders.ws;
        write(
            &ws.join("squiggle.toml"),
            "[servers.rust-analyzer]\nsettings = { check = { overrideCommand = [\"sh\"] } }\n[servers.ruff]\nenabled = false\nenv = { PATH = \"/tmp\" }\n",
        );
        let config = folders.load();
        let defaults = Config::default();
        assert_eq!(
            config.servers["rust-analyzer"],
            defaults.servers["rust-analyzer"]
        );
        assert!(!config.servers["ruff"].enabled);
        assert_eq!(config.servers["ruff"].env, defaults.servers["ruff"].env);
        assert_eq!(config.untrusted.len(), 1);
    }

    #[test]
    fn an_untrusted_opencode_json_gives_no_servers() {
        let folders = Folders::new();
        let ws = &folders.ws;
        let file = ws.join("opencode.json");
        write(
            &file,
            r#"{"lsp": {"diagnosticTimeout": 3, "mylang": {"command": ["sh", "-c", "x"], "extensions": ["py"]}}}"#,
        );
        let config = folders.load();
        assert!(!config.servers.contains_key("mylang"));
        assert_eq!(config.diagnostic_timeout_ms, 3);
        assert_eq!(config.untrusted, std::slice::from_ref(&file));
        folders.trust(&file);
        let config = folders.load();
        assert_eq!(config.servers["mylang"].command, "sh");
    }

    #[test]
    fn dispatch_lsp_json_is_read_in_place_of_opencode_json_in_either_form() {
        let folders = Folders::new();
        let ws = &folders.ws;
        write(
            &ws.join("opencode.json"),
            r#"{"lsp": {"diagnosticTimeout": 1}}"#,
        );
        let dispatch = ws.join(".dispatch/lsp.json");
        // (text, its timeout)
        let table = [
            (r#"{"lsp": {"diagnosticTimeout": 2}}"#, 2),
            (
                r#"{"diagnosticTimeout": 3, "pyright": {"disabled": true}}"#,
                3,
            ),
        ];
        for (text, timeout) in table {
            write(&dispatch, text);
            let config = folders.load();
            assert_eq!(config.diagnostic_timeout_ms, timeout, "{text}");
        }
        assert!(!folders.load().servers["pyright"].enabled);
        // Its servers are the project's, run once trusted.
        let luau = r#"{"luau": {"initialization": {"luau-lsp": {"sourcemap": {"autogenerate": true, "rojoProjectFile": "default.project.json"}}}}}"#;
        write(&dispatch, luau);
        let config = folders.load();
        assert_eq!(config.servers["luau"].initialization_options, None);
        assert_eq!(config.untrusted, std::slice::from_ref(&dispatch));
        folders.trust(&dispatch);
        let config = folders.load();
        let sidecar = config.servers["luau"]
            .sidecar_command()
            .expect("rojo beside it");
        assert_eq!(sidecar[..3], ["rojo", "sourcemap", "default.project.json"]);
        // A file that is not an object names itself.
        write(&dispatch, "[1]");
        let err = Config::load(ws, Some(&folders.user)).expect_err("an array");
        assert!(err.to_string().contains(".dispatch/lsp.json"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_project_file_is_trusted_at_its_own_path_with_its_targets_content() {
        let folders = Folders::new();
        let target = folders.dir.path().join("elsewhere/shared.toml");
        write(&target, HOSTILE);
        let ws = &folders.ws;
        fs::create_dir_all(ws).expect("mkdir");
        let link = ws.join("squiggle.toml");
        std::os::unix::fs::symlink(&target, &link).expect("link");
        folders.trust(&target);
        let config = folders.load();
        assert!(
            !config.servers.contains_key("evil"),
            "trusting the target is not trusting the link"
        );
        folders.trust(&link);
        let config = folders.load();
        assert!(config.servers.contains_key("evil"));
        write(&target, &HOSTILE.replace("pwned", "pwned2"));
        let config = folders.load();
        assert!(
            !config.servers.contains_key("evil"),
            "the target's change ends the trust"
        );
    }

    #[test]
    fn a_project_file_in_a_parent_folder_is_trusted_where_it_is() {
        let folders = Folders::new();
        let project = folders.dir.path().join("project");
        let file = project.join(".squiggle/config.toml");
        write(&file, HOSTILE);
        let ws = project.join("packages/app");
        fs::create_dir_all(&ws).expect("mkdir");
        let config = Config::load(&ws, Some(&folders.user)).expect("loads");
        assert_eq!(config.untrusted, std::slice::from_ref(&file));
        folders.trust(&file);
        let config = Config::load(&ws, Some(&folders.user)).expect("loads");
        assert!(config.servers.contains_key("evil") && config.untrusted.is_empty());
    }

    #[test]
    fn project_file_in_dot_squiggle_found_upward() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(
            &dir.path().join(".squiggle/config.toml"),
            "navigation_tools = false\n",
        );
        let ws = dir.path().join("a/b");
        fs::create_dir_all(&ws).expect("mkdir");
        let config = Config::load(&ws, None).expect("loads");
        assert!(!config.navigation_tools);
    }

    #[test]
    fn daemon_keys_read_from_the_project_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = Config::load(dir.path(), None).expect("loads");
        assert!(config.daemon);
        assert_eq!(config.daemon_idle_seconds, 900);
        assert_eq!(config.daemon_max_workspaces, 8);
        assert_eq!(config.daemon_max_memory_mb, 0);
        assert_eq!(config.daemon_server_idle_seconds, 600);
        write(
            &dir.path().join("squiggle.toml"),
            "daemon = false\ndaemon_idle_seconds = 2\ndaemon_max_workspaces = 3\ndaemon_max_memory_mb = 2048\n",
        );
        let config = Config::load(dir.path(), None).expect("loads");
        assert!(!config.daemon);
        assert_eq!(config.daemon_idle_seconds, 2);
        assert_eq!(config.daemon_max_workspaces, 3);
        assert_eq!(config.daemon_max_memory_mb, 2048);
    }

    #[test]
    fn opencode_lsp_false_disables() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(&dir.path().join("opencode.json"), r#"{"lsp": false}"#);
        let config = Config::load(dir.path(), None).expect("loads");
        assert!(!config.enabled);
    }

    #[test]
    fn opencode_styles_override_and_add_servers() {
        let mut config = Config::default();
        let origin = Path::new("/w/opencode.json");
        config
            .apply_opencode_json(
                r#"{"lsp": {"pyright": {"disabled": true},
                    "mylang": {"command": ["ml-lsp", "--stdio"], "extensions": [".ML"]}}}"#,
                origin,
            )
            .expect("opencode style");
        config
            .apply_opencode_json(
                r#"{"lsp": {"maxProjectDiagnosticsFiles": 9,
                    "servers": {"ruff": {"enabled": false, "args": ["server", "--preview"]}}}}"#,
                origin,
            )
            .expect("llxprt style");
        assert!(!config.servers["pyright"].enabled);
        assert!(!config.servers["ruff"].enabled);
        assert_eq!(config.servers["ruff"].args, ["server", "--preview"]);
        assert_eq!(config.servers["ruff"].command, "ruff");
        let mylang = &config.servers["mylang"];
        assert_eq!(mylang.command, "ml-lsp");
        assert_eq!(mylang.args, ["--stdio"]);
        assert_eq!(mylang.extensions, ["ml"]);
        assert_eq!(config.max_other_files, 9);
    }

    #[test]
    fn opencode_new_server_without_command_names_key_path() {
        let mut config = Config::default();
        let err = config
            .apply_opencode_json(
                "{\n \"lsp\": {\"servers\": {\"foo\": {\"extensions\": [\"f\"]}}}}",
                Path::new("/w/opencode.json"),
            )
            .expect_err("missing command");
        assert_eq!(
            err.to_string(),
            "/w/opencode.json:2:29: server `foo` is not built in, so key `lsp.servers.foo` \
             must set `command` (the program to run)"
        );
    }

    #[test]
    fn override_of_builtin_replaces_only_given_fields() {
        let mut config = Config::default();
        config
            .apply_toml(
                "[servers.pyright]\nsettings = { python = { analysis = { typeCheckingMode = \"strict\" } } }\n",
                Path::new("/p/squiggle.toml"),
            )
            .expect("valid");
        let pyright = &config.servers["pyright"];
        assert_eq!(pyright.command, "pyright-langserver");
        assert_eq!(pyright.args, ["--stdio"]);
        assert_eq!(
            pyright.settings,
            Some(serde_json::json!({"python": {"analysis": {"typeCheckingMode": "strict"}}}))
        );
    }

    #[test]
    fn new_server_from_toml_has_all_fields() {
        let mut config = Config::default();
        let text = r#"
[servers.mylang]
command = "mylang-lsp"
args = ["--stdio"]
extensions = ["ml", ".MLI"]
root_markers = ["mylang.toml"]
env = { FOO = "1" }
sidecar = ["generator", "--watch"]
install_hint = "cargo install mylang-lsp"
fallback_for = "other"
"#;
        config
            .apply_toml(text, Path::new("/p/squiggle.toml"))
            .expect("valid");
        let spec = &config.servers["mylang"];
        assert_eq!(spec.extensions, ["ml", "mli"]);
        assert_eq!(spec.language_id, "mylang");
        assert_eq!(spec.root_markers, ["mylang.toml"]);
        assert_eq!(spec.env.get("FOO").map(String::as_str), Some("1"));
        assert_eq!(
            spec.sidecar,
            Some(vec!["generator".to_string(), "--watch".to_string()])
        );
        assert_eq!(spec.install_hint, "cargo install mylang-lsp");
        assert_eq!(spec.fallback_for.as_deref(), Some("other"));
    }

    #[test]
    fn lsp_false_in_toml_disables() {
        let mut config = Config::default();
        config
            .apply_toml("lsp = false\n", Path::new("/p/squiggle.toml"))
            .expect("valid");
        assert!(!config.enabled);
    }

    #[test]
    fn invalid_syntax_error_names_file_line_and_key() {
        assert_eq!(
            toml_error("lsp = true\nsettle_ms = = 1\n"),
            "/p/squiggle.toml:2:13: invalid TOML at key `settle_ms`: extra `=`, expected nothing"
        );
    }

    #[test]
    fn unknown_key_error_names_file_line_and_key() {
        let message = toml_error("lsp = true\n\n[servers.pyright]\nenable = false\n");
        assert!(
            message.starts_with(
                "/p/squiggle.toml:4:1: unknown key `servers.pyright.enable`; expected one of the keys `enabled`"
            ),
            "{message}"
        );
    }

    #[test]
    fn wrong_type_error_names_file_line_and_key() {
        assert_eq!(
            toml_error("settle_ms = \"soon\"\n"),
            "/p/squiggle.toml:1:13: invalid type for key `settle_ms`: expected a non-negative integer, found a string \"soon\""
        );
    }

    #[test]
    fn bad_severity_error_names_file_line_and_key() {
        assert_eq!(
            toml_error("\ninclude_severities = [\"error\", \"fatal\"]\n"),
            "/p/squiggle.toml:2:32: invalid value for key `include_severities`: unknown severity `fatal` (expected error, warning, info or hint)"
        );
    }

    #[test]
    fn new_server_missing_command_names_file_line_and_key() {
        assert_eq!(
            toml_error("lsp = true\n[servers.mylang]\nextensions = [\"ml\"]\n"),
            "/p/squiggle.toml:2:1: server `mylang` is not built in, so key `servers.mylang` must set `command` (the program to run)"
        );
    }

    #[test]
    fn new_server_missing_both_names_both() {
        assert_eq!(
            toml_error("[servers.mylang]\nargs = []\n"),
            "/p/squiggle.toml:1:1: server `mylang` is not built in, so key `servers.mylang` must set `command` (the program to run) and `extensions` (the file extensions it serves)"
        );
    }

    #[test]
    fn invalid_error_carries_key_field() {
        let mut config = Config::default();
        let err = config
            .apply_toml("max_total_lines = true\n", Path::new("/p/squiggle.toml"))
            .expect_err("invalid");
        match err {
            ConfigError::Invalid {
                line, column, key, ..
            } => {
                assert_eq!((line, column), (1, 19));
                assert_eq!(key.as_deref(), Some("max_total_lines"));
            }
            ConfigError::Read { .. } => panic!("expected Invalid"),
        }
    }

    #[test]
    fn apply_file_missing_is_read_error() {
        let mut config = Config::default();
        let path = PathBuf::from("/definitely/not/here.toml");
        let err = config.apply_file(&path).expect_err("missing");
        assert!(matches!(err, ConfigError::Read { ref file, .. } if *file == path));
        assert!(err
            .to_string()
            .starts_with("/definitely/not/here.toml: cannot read: "));
    }

    #[test]
    fn apply_file_refuses_a_device_naming_it() {
        let mut config = Config::default();
        let err = config
            .apply_file(Path::new("/dev/zero"))
            .expect_err("refused");
        assert_eq!(
            err.to_string(),
            "/dev/zero: cannot read: not a regular file (a character device)"
        );
    }

    #[test]
    fn apply_file_refuses_a_file_over_the_limit_naming_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("huge.toml");
        let comment = "#".repeat(1023) + "\n";
        write(&path, &comment.repeat(4 * 1024 + 1));
        let mut config = Config::default();
        let err = config.apply_file(&path).expect_err("refused");
        assert_eq!(
            err.to_string(),
            format!(
                "{}: cannot read: too large (4195328 bytes, limit 4194304)",
                path.display()
            )
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_as_opencode_json_is_an_error_not_a_wait() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("opencode.json");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("no NUL");
        // SAFETY: `name` is a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let err = Config::load(dir.path(), None).expect_err("refused");
        assert_eq!(
            err.to_string(),
            format!(
                "{}: cannot read: not a regular file (a FIFO)",
                fifo.display()
            )
        );
    }

    #[test]
    fn apply_file_reads_toml() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("extra.toml");
        write(&path, "max_file_bytes = 10\n");
        let mut config = Config::default();
        config.apply_file(&path).expect("applies");
        assert_eq!(config.max_file_bytes, 10);
    }
}
