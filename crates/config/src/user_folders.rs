//! The environment that says where a user's folders are: the XDG variables everywhere they
//! are set, Windows' own (`%APPDATA%`, `%LOCALAPPDATA%`) there, and the home folder last.

use std::ffi::OsString;

/// The folders' variables, read once; tests build it by hand to try any platform's values.
#[derive(Debug, Clone, Default)]
pub struct UserFolders {
    /// `XDG_CONFIG_HOME`.
    pub xdg_config: Option<OsString>,
    /// `XDG_DATA_HOME`.
    pub xdg_data: Option<OsString>,
    /// `%APPDATA%` (roaming: configuration), on Windows only.
    pub app_data: Option<OsString>,
    /// `%LOCALAPPDATA%` (this machine's: installed servers), on Windows only.
    pub local_app_data: Option<OsString>,
    /// `HOME`, else on Windows `%USERPROFILE%`.
    pub home: Option<OsString>,
}

impl UserFolders {
    /// The values of this process's environment (empty ones count as unset).
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
        let windows = |name: &str| if cfg!(windows) { var(name) } else { None };
        Self {
            xdg_config: var("XDG_CONFIG_HOME"),
            xdg_data: var("XDG_DATA_HOME"),
            app_data: windows("APPDATA"),
            local_app_data: windows("LOCALAPPDATA"),
            home: var("HOME").or_else(|| windows("USERPROFILE")),
        }
    }
}
