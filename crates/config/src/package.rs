//! A built-in server's pinned package from a registry: what `squiggle install` installs.

/// One pinned package from a registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Package {
    /// An npm package, `name@version`.
    Npm(&'static str),
    /// A PyPI package, `name==version` (extras allowed: `name[extra]==version`).
    Pip(&'static str),
}
