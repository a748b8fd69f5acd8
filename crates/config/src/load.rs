//! Loading configuration in layers: defaults, user file, project file, opencode.json.

use crate::error::ConfigError;
use crate::model::Config;
use crate::opencode::parse_opencode;
use crate::regular_file::read_regular_file;
use crate::root::{find_project_file, may_configure};
use crate::toml_layer::parse_toml;
use std::path::Path;

/// The opencode configuration file read from the workspace root.
const OPENCODE_FILE: &str = "opencode.json";

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

impl Config {
    /// Loads defaults, then the user file, then the nearest project file upward from `workspace_root`, then the `lsp` key of `opencode.json` in the workspace root.
    ///
    /// Files that do not exist are skipped.
    pub fn load(workspace_root: &Path, user_file: Option<&Path>) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        if let Some(user_file) = user_file {
            if let Some(text) = read_if_exists(user_file)? {
                config.apply_toml(&text, user_file)?;
            }
        }
        if let Some(project_file) = find_project_file(workspace_root) {
            if let Some(text) = read_if_exists(&project_file)? {
                config.apply_toml(&text, &project_file)?;
            }
        }
        let opencode = workspace_root.join(OPENCODE_FILE);
        let opencode_ok = !opencode.is_file() || may_configure(&opencode);
        if !opencode_ok {
            tracing::warn!(file = %opencode.display(), "not read: a configuration file must be owned by you (or root) and writable by no one else, as its server commands run as you (if it is yours: chmod go-w on it)");
        }
        if let Some(text) = read_if_exists(&opencode)?.filter(|_| opencode_ok) {
            config.apply_opencode_json(&text, &opencode)?;
        }
        Ok(config)
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
        let config = Config::load(&ws, Some(&user)).expect("loads");
        assert_eq!(config.settle_ms, 1);
        assert_eq!(config.max_other_files, 2);
        assert_eq!(config.diagnostic_timeout_ms, 3);
        assert!(!config.servers["ruff"].enabled);
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
