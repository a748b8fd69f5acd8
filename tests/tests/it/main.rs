//! squiggle's integration tests: one test binary (it links the actors crate once), a module per
//! area. They drive the `squiggle` and fake-server binaries Cargo builds for this package
//! (`squiggle-under-test` and `fake-lsp-under-test`, see [`support`]), so plain `cargo test` runs
//! the current code; `cargo xtask test` also installs the real servers and agent hosts first.
//! Run one area with a filter, e.g. `cargo test -p squiggle-tests --test it -- daemon::`.
//!
//! # Layout
//!
//! - `support`: the shared helpers: the binaries, fake-server workspaces, running `squiggle`
//!   (`support/mcp_client`: the MCP test client; `support/real_server`: real-server fixtures;
//!   `support/report`: reading `--format json`).
//! - `cli`: the `squiggle` command line against the fake server.
//! - `contracts`: the reference documents' rules, one test each (`docs/contracts.md`).
//! - `daemon`: the `squiggle check` daemon (`daemon/reliability`, `daemon/budget`,
//!   `daemon/verdict`).
//! - `serve`: `squiggle serve`'s JSON-RPC contract.
//! - `mcp`: `squiggle mcp`.
//! - `hook`: `squiggle hook HOST` and `squiggle init HOST`.
//! - `init_files`: which files `squiggle init` reads and writes.
//! - `agent_plugins`: the Claude Code plugin and the Gemini CLI extension in the real hosts.
//! - `install`: `squiggle install` from PyPI.
//! - `lifecycle`: the runtime against the fake server.
//! - `completion`: when a server's answer for a version is final.
//! - `client_spec`: watched files, settling, and the rest of a spec-complete client.
//! - `feedback`: feedback for agents after an edit.
//! - `manager`: the tick-driven adapter.
//! - `probes`: how a check chooses among a role's servers.
//! - `refactor`: rename and code actions against the fake server.
//! - `real_refactor`: rename and code actions against real servers.
//! - `navigation_breadth`: call hierarchy, implementation, type definition and the rest.
//! - `real_servers`: `squiggle check` against real servers (`real_servers/python_package`,
//!   `real_servers/rust_crate`).
//! - `trust`: a project's configuration runs its servers only once trusted (`squiggle trust`).
//! - `matrix`: every built-in server that installs here, on a fixture with one known error.

#![allow(clippy::unwrap_used)]

mod support;

mod agent_plugins;
mod cli;
mod client_spec;
mod completion;
mod contracts;
mod daemon;
mod feedback;
mod hook;
mod init_files;
mod install;
mod lifecycle;
mod manager;
mod matrix;
mod mcp;
mod navigation_breadth;
mod probes;
mod real_refactor;
mod real_servers;
mod refactor;
mod serve;
mod trust;
