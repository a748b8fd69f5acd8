//! The "Layout" list at the top of each crate's root file (`lib.rs`, or a binary's `main.rs`)
//! names every module the crate declares there, so that a reader finds each module from one
//! place. A test holds each crate to it: a module added without a line in its crate's Layout
//! fails it. (Modules inside modules are named in their parent's docs.)

use std::path::Path;

/// The crates' root files, from the repository root.
const ROOTS: &[&str] = &[
    "crates/protocol/src/lib.rs",
    "crates/config/src/lib.rs",
    "crates/actors/src/lib.rs",
    "crates/cli/src/lib.rs",
    "crates/fake-lsp/src/lib.rs",
    "tests/tests/it/main.rs",
    "xtask/src/main.rs",
];

/// The modules a crate root declares (`mod name;`, public or not; not `mod tests`).
fn declared(source: &str) -> Vec<String> {
    source
        .lines()
        .map(str::trim)
        .filter_map(|line| {
            let line = line.strip_prefix("pub ").unwrap_or(line);
            let line = line.strip_prefix("pub(crate) ").unwrap_or(line);
            line.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(str::to_string)
        })
        .filter(|name| name != "tests")
        .collect()
}

/// The text of the crate docs' `# Layout` section: its `//!` lines up to the next heading.
fn layout(source: &str) -> String {
    let docs = source.lines().map_while(|line| line.strip_prefix("//!"));
    let mut section = String::new();
    let mut inside = false;
    for line in docs {
        let line = line.trim();
        if line.starts_with('#') {
            inside = line == "# Layout";
            continue;
        }
        if inside {
            section.push_str(line);
            section.push('\n');
        }
    }
    section
}

/// The modules `root`'s Layout does not name (as `` `name` `` or `` `name/...` ``).
fn missing(root: &Path) -> anyhow::Result<Vec<String>> {
    let source = std::fs::read_to_string(root)?;
    let section = layout(&source);
    Ok(declared(&source)
        .into_iter()
        .filter(|name| {
            !section.contains(&format!("`{name}`")) && !section.contains(&format!("`{name}/"))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_declared_modules_and_the_layout_section() {
        let source = "//! A crate.\n//!\n//! # Layout\n//!\n//! - `a`: one.\n//! - `b/c`: two.\n//!\n//! # Other\n//! - `d`: not in it.\n\nmod a;\npub mod b;\npub(crate) mod d;\n#[cfg(test)]\nmod tests;\n";
        assert_eq!(declared(source), vec!["a", "b", "d"]);
        let section = layout(source);
        assert!(section.contains("`a`") && section.contains("`b/c`") && !section.contains("`d`"));
    }

    #[test]
    fn every_crates_layout_names_every_module_it_declares() {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("xtask is in the repository");
        for root in ROOTS {
            let missing = missing(&workspace.join(root)).expect("a crate root");
            assert_eq!(
                missing,
                Vec::<String>::new(),
                "{root}: add these modules to its `# Layout` docs"
            );
        }
    }
}
