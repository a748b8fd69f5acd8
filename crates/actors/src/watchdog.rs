//! A guard process that cleans up after squiggle if squiggle is killed outright (SIGKILL), when
//! no code of squiggle's runs: it holds the list of the servers' process groups and kills them
//! all when its connection to squiggle closes.
//!
//! The parent-death signal already kills each server; the watchdog also catches what the
//! servers started (grandchildren), which that signal does not reach. It is forked twice (so
//! that init reaps it), closes every inherited descriptor but its end of the socket, ignores
//! terminal signals, and touches no allocator after the fork.
//!
//! Windows needs no such process: each server's Job Object is killed by the kernel when
//! squiggle's handle to it closes, which happens however squiggle ends (see
//! `server::process`). There, `Watchdog` has no value, so every `Option<Arc<Watchdog>>` is
//! `None`.

#[cfg(unix)]
mod unix;

#[cfg(unix)]
pub use unix::Watchdog;

/// No watchdog on Windows: the Job Objects are their own.
#[cfg(windows)]
#[derive(Debug)]
pub enum Watchdog {}
