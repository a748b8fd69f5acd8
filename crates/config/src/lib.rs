//! Configuration of squiggle: the settings model, the built-in language servers, layered
//! loading (defaults, user file, project file, opencode.json), and finding roots and commands.

#![deny(clippy::print_stdout)]

pub mod availability;
pub mod builtin;
pub mod error;
pub mod install;
pub mod load;
pub mod locate;
pub mod model;
pub mod probe;
pub mod regular_file;
pub mod root;
pub mod scan;
pub mod select;
pub mod settings;
pub mod typescript;

mod layer;
mod opencode;
mod toml_layer;

pub use availability::Availability;
pub use builtin::builtin_servers;
pub use error::ConfigError;
pub use locate::{locate_command, locate_command_in};
pub use model::{Config, ServerSpec, Stages};
pub use regular_file::{read_regular_file, ReadError};
pub use root::{
    find_project_file, find_root, find_workspace_root, user_config_path, user_config_path_from,
};
pub use scan::{files_under, sample_files};
pub use select::Standby;
pub use settings::settings_section;
