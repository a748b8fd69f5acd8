//! Configuration of squiggle: the settings model, the built-in language servers, layered
//! loading (defaults, user file, project file, opencode.json), and finding roots and commands.
//!
//! # Layout
//!
//! - `model`: the resolved configuration and its keys, each declared once (see `keys`).
//! - `spec`: one language server's configuration (`[servers.<id>]`), below the built-in table.
//! - `language_id`: the languageId sent for a file's extension.
//! - `package`: a built-in server's pinned package from a registry.
//! - `keys`: the `keyed!` macro: a struct, its defaults and its patch from one list of keys.
//! - `patch`: what one source gives and the one place it is applied; value checks; messages.
//! - `toml_layer`: a squiggle TOML file read into a patch, errors placed by toml's spans.
//! - `opencode`: the `lsp` key of opencode.json read into a patch, placed by serde_json.
//! - `load`: the layers in order: defaults, user file, project file, opencode.json.
//! - `error`: `ConfigError`, naming the file, line, column and key.
//! - `builtin`: the built-in table of language servers.
//! - `select`: choosing the servers for a file.
//! - `root`: finding configuration files, the workspace root and servers' project roots.
//! - `locate`: finding a server's command on disk.
//! - `availability`: whether a server's command can run here.
//! - `probe`: a found command run briefly, to tell one that runs from one that cannot.
//! - `typescript`: which TypeScript a `tsc` command belongs to.
//! - `settings`: answers to `workspace/configuration` from a server's `settings`.
//! - `trust`: the record of the project configurations this user trusts to run commands.
//! - `scan`: walks over a workspace's own files.
//! - `regular_file`: reading a named file: regular only, within a size limit.
//! - `atomic_write`: writing a named file: a temporary file made exclusively, renamed over it.
//! - `install`: the built-in servers' pinned packages, and the data folder they go into.
//! - `user_folders`: the user's configuration, data and home folders on each platform.

#![warn(missing_docs)]
#![deny(clippy::print_stdout)]

#[macro_use]
mod keys;

pub mod atomic_write;
pub mod availability;
pub mod builtin;
pub mod error;
pub mod install;
pub mod language_id;
pub mod load;
pub mod locate;
pub mod model;
pub mod package;
pub mod probe;
pub mod regular_file;
pub mod root;
pub mod scan;
pub mod select;
pub mod settings;
pub mod spec;
pub mod trust;
pub mod typescript;
pub mod user_folders;

mod opencode;
mod patch;
mod toml_layer;

pub use atomic_write::write_atomically;
pub use availability::Availability;
pub use builtin::builtin_servers;
pub use error::ConfigError;
pub use load::{project_files, ProjectFile};
pub use locate::{locate_command, locate_command_in};
pub use model::Config;
pub use regular_file::{read_regular_file, ReadError};
pub use root::{
    find_project_file, find_root, find_workspace_root, user_config_path, user_config_path_from,
};
pub use scan::{files_under, sample_files};
pub use select::Standby;
pub use settings::settings_section;
pub use spec::{ServerSpec, Stages};
pub use trust::TrustRecord;
pub use user_folders::UserFolders;
