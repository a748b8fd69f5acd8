//! Every tool, written once: its name, what it does, the `serve` method that answers it, whether
//! it is a navigation tool (offered only with `navigation_tools`), and its arguments, from
//! which both their reading and their schema come. `tools/list` gives them in this order.

use serde_json::{Map, Value};
use squiggle_actors::{Direction, Target};
use squiggle_protocol::navigation::MAX_DEPTH;

use super::args::{tool_args, Hashes, ToolArgs};
use super::error::{ToolError, Unclear};

/// One tool.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// Its name (`lsp_hover`).
    pub name: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// The `squiggle serve` method that answers it, if any (`lsp/hover`).
    pub method: Option<&'static str>,
    /// Whether it is offered only when `navigation_tools` is on.
    pub navigation: bool,
    /// The JSON schema of its arguments.
    pub schema: fn() -> Value,
}

/// Declares the tools: the table [`TOOLS`] and [`ToolCall`], a call with its arguments read.
macro_rules! tools {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident($args:ty) {
            name: $name:literal,
            method: $method:expr,
            navigation: $navigation:literal,
            description: $description:literal $(,)?
        }
    )*) => {
        /// Every tool, in the order they are listed.
        pub const TOOLS: &[Tool] = &[$(
            Tool {
                name: $name,
                description: $description,
                method: $method,
                navigation: $navigation,
                schema: <$args as ToolArgs>::schema,
            },
        )*];

        /// A call of a tool, with its arguments read.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ToolCall {
            $( $(#[doc = $doc])* $variant($args), )*
        }

        impl ToolCall {
            /// Reads the arguments of the tool `name`.
            pub fn read(name: &str, args: &Map<String, Value>) -> Result<Self, ToolError> {
                Ok(match name {
                    $( $name => ToolCall::$variant(<$args as ToolArgs>::read(args)?), )*
                    _ => return Err(ToolError::UnknownTool(name.to_string())),
                })
            }
        }
    };
}

tools! {
    /// `lsp_goto_definition`.
    Definition(DefinitionArgs) {
        name: "lsp_goto_definition",
        method: Some("lsp/definition"),
        navigation: true,
        description: "Where a symbol is defined. Give `file` and `line` + `character`, or `symbol` (its name in that file, or `Class.method`, `module.function`; `line` picks among several of that name). The answer names the position it asked about and, for an ambiguous name, the candidates. Returns each location with its line of source.",
    }
    /// `lsp_find_references`.
    References(ReferencesArgs) {
        name: "lsp_find_references",
        method: Some("lsp/references"),
        navigation: true,
        description: "Every place a symbol is used, grouped by file. Address it like lsp_goto_definition.",
    }
    /// `lsp_hover`.
    Hover(PositionArgs) {
        name: "lsp_hover",
        method: Some("lsp/hover"),
        navigation: true,
        description: "The type and documentation of a symbol, as plain text. Address it like lsp_goto_definition.",
    }
    /// `lsp_document_symbols`.
    DocumentSymbols(DocumentSymbolsArgs) {
        name: "lsp_document_symbols",
        method: Some("lsp/documentSymbols"),
        navigation: true,
        description: "The outline of a file: its classes, functions, methods and so on, nested, with line ranges; what is declared inside functions and methods only with `include_locals`.",
    }
    /// `lsp_workspace_symbols`.
    WorkspaceSymbols(WorkspaceSymbolsArgs) {
        name: "lsp_workspace_symbols",
        method: Some("lsp/workspaceSymbols"),
        navigation: true,
        description: "Symbols across the workspace whose names match a query, with kind, file and line.",
    }
    /// `lsp_call_hierarchy`.
    CallHierarchy(CallHierarchyArgs) {
        name: "lsp_call_hierarchy",
        method: Some("squiggle/callHierarchy"),
        navigation: true,
        description: "Who calls a function (incoming) or what it calls (outgoing), `depth` levels deep, each call site with its line. Address it like lsp_goto_definition.",
    }
    /// `lsp_implementation`.
    Implementation(PositionArgs) {
        name: "lsp_implementation",
        method: Some("squiggle/implementation"),
        navigation: true,
        description: "Where an interface or abstract method is implemented. Address it like lsp_goto_definition.",
    }
    /// `lsp_type_definition`.
    TypeDefinition(PositionArgs) {
        name: "lsp_type_definition",
        method: Some("squiggle/typeDefinition"),
        navigation: true,
        description: "Where the type of a symbol is defined. Address it like lsp_goto_definition.",
    }
    /// `lsp_diagnostics`.
    Diagnostics(DiagnosticsArgs) {
        name: "lsp_diagnostics",
        method: None,
        navigation: false,
        description: "Current diagnostics (errors by default) of every file the language servers know about, or of one file (which is checked first; if no server could check it, the answer says so and why).",
    }
    /// `lsp_workspace_diagnostics`.
    WorkspaceDiagnostics(WorkspaceDiagnosticsArgs) {
        name: "lsp_workspace_diagnostics",
        method: Some("squiggle/workspaceDiagnostics"),
        navigation: false,
        description: "Diagnostics of the files under a folder or matching a glob (as git lists them), grouped by file; files no server checked are named.",
    }
    /// `lsp_rename`.
    Rename(RenameArgs) {
        name: "lsp_rename",
        method: Some("lsp/rename"),
        navigation: true,
        description: "Rename a symbol everywhere (address it like lsp_goto_definition). Shows the diff; `apply: true` writes it unless a file changed since, then gives the changed files' diagnostics.",
    }
    /// `lsp_code_actions`.
    CodeActions(CodeActionsArgs) {
        name: "lsp_code_actions",
        method: Some("lsp/codeActions"),
        navigation: true,
        description: "Numbered quick fixes and refactorings for `line` (to `end_line`) and its diagnostics. `action: N` previews one; `apply: true` applies it as lsp_rename does.",
    }
}

/// The tool a `serve` method calls.
pub fn by_method(method: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|tool| tool.method == Some(method))
}

tool_args! {
    /// A position question: a file and either line + character or a symbol.
    pub struct PositionArgs {
        /// The file asked about.
        file: String, {"description": "Relative to the workspace root."};
        /// The 1-based line.
        line: Option<u32>, {"description": "1-based line (with `character`)."};
        /// The 1-based column.
        character: Option<u32>, {"description": "1-based column; moved onto the nearest word."};
        /// The symbol's name, instead of a position.
        symbol: Option<String>, {"description": "The symbol's name, instead of line + character; `line` then picks among several."};
    }
}

impl PositionArgs {
    /// What is asked about.
    pub fn target(&self) -> Result<Target, ToolError> {
        target(self.symbol.as_deref(), self.line, self.character)
    }
}

/// The target of a position question: a symbol (with a line to pick among several), or a line
/// and column.
fn target(
    symbol: Option<&str>,
    line: Option<u32>,
    character: Option<u32>,
) -> Result<Target, ToolError> {
    match (symbol, line, character) {
        (Some(name), line, _) => Ok(Target::Symbol {
            name: name.to_string(),
            line,
        }),
        (None, Some(line), Some(column)) => Ok(Target::At { line, column }),
        _ => Err(Unclear::NoTarget.into()),
    }
}

tool_args! {
    /// The arguments of `lsp_goto_definition`.
    pub struct DefinitionArgs, at: PositionArgs {
        /// Whether to add the definitions' bodies.
        include_body: Option<bool>, {"description": "Also return the definition's whole source (capped)."};
    }
}

tool_args! {
    /// The arguments of `lsp_find_references`.
    pub struct ReferencesArgs, at: PositionArgs {
        /// Whether the declaration counts as a reference.
        include_declaration: bool = true, {"description": "Include the declaration itself."};
    }
}

tool_args! {
    /// The arguments of `lsp_document_symbols`.
    pub struct DocumentSymbolsArgs {
        /// The file outlined.
        file: String, {"description": "The file, relative to the workspace root."};
        /// Whether symbols inside functions are listed too.
        include_locals: bool = false, {"description": "Also list the symbols declared inside functions and methods (local variables and the like)."};
        /// How many symbols of the outline to skip, to page through a long one.
        offset: u32 = 0, {"description": "Skip this many symbols (a cut outline names the offset that goes on)."};
    }
}

tool_args! {
    /// The arguments of `lsp_workspace_symbols`.
    pub struct WorkspaceSymbolsArgs {
        /// The name, or part of it.
        query: String, {"description": "A name or part of one."};
    }
}

tool_args! {
    /// The arguments of `lsp_call_hierarchy`.
    pub struct CallHierarchyArgs, at: PositionArgs {
        /// Callers or callees.
        direction: Direction = Direction::Incoming, {};
        /// How many levels.
        depth: u32 = 1, {"maximum": MAX_DEPTH};
    }
}

tool_args! {
    /// The arguments of `lsp_diagnostics`.
    pub struct DiagnosticsArgs {
        /// Only this file, checked now.
        file: Option<String>, {"description": "Only this file (checked now)."};
        /// Whether to restart crashed servers first.
        restart: bool = false, {"description": "First restart the language servers that crashed (each only after its restart cooldown)."};
    }
}

tool_args! {
    /// The arguments of `lsp_workspace_diagnostics`.
    pub struct WorkspaceDiagnosticsArgs {
        /// A folder or a glob.
        path: Option<String>, {"description": "A folder or a glob like `src/**/*.py`, relative to the workspace root; default: all."};
    }
}

// The refactoring tools are terse: the position arguments are described once, on
// lsp_goto_definition.

tool_args! {
    /// What the refactoring tools share: where, whether to apply, and against what.
    pub struct EditArgs {
        /// The file.
        file: String, {};
        /// The 1-based line.
        line: Option<u32>, {};
        /// The symbol's name.
        symbol: Option<String>, {};
        /// Whether to write the change.
        apply: Option<bool>, {};
        /// The hashes a preview gave, to apply against.
        expect: Option<Hashes>, hidden;
    }
}

tool_args! {
    /// The arguments of `lsp_rename`.
    pub struct RenameArgs, at: EditArgs {
        /// The 1-based column.
        character: Option<u32>, {};
        /// The new name.
        new_name: String, {};
    }
}

impl RenameArgs {
    /// What is renamed.
    pub fn target(&self) -> Result<Target, ToolError> {
        target(self.at.symbol.as_deref(), self.at.line, self.character)
    }
}

tool_args! {
    /// The arguments of `lsp_code_actions`.
    pub struct CodeActionsArgs, at: EditArgs {
        /// The 1-based last line.
        end_line: Option<u32>, {};
        /// The number of the action to preview or apply.
        action: Option<u32>, {};
    }
}

impl CodeActionsArgs {
    /// The line (or symbol) whose actions are asked for.
    pub fn target(&self) -> Result<Target, ToolError> {
        match (&self.at.symbol, self.at.line) {
            (Some(name), line) => Ok(Target::Symbol {
                name: name.clone(),
                line,
            }),
            (None, Some(line)) => Ok(Target::At { line, column: 1 }),
            (None, None) => Err(Unclear::NoLine.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn call(name: &str, args: Value) -> Result<ToolCall, String> {
        ToolCall::read(name, args.as_object().unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn every_tool_has_its_own_name_and_method() {
        for (i, tool) in TOOLS.iter().enumerate() {
            assert!(
                TOOLS[i + 1..].iter().all(|t| t.name != tool.name
                    && (t.method.is_none() || t.method != tool.method)),
                "{}",
                tool.name
            );
            if let Some(method) = tool.method {
                assert_eq!(by_method(method).unwrap().name, tool.name);
            }
        }
        assert!(by_method("lsp/diagnostics").is_none());
        assert_eq!(
            call("lsp_nothing", json!({})).unwrap_err(),
            "no tool `lsp_nothing`"
        );
    }

    #[test]
    fn a_target_is_a_symbol_or_a_line_and_column() {
        let target =
            |args: Value| PositionArgs::read(args.as_object().unwrap()).and_then(|a| a.target());
        assert!(matches!(
            target(json!({"file": "a", "symbol": "x", "line": 2})),
            Ok(Target::Symbol { line: Some(2), .. })
        ));
        assert!(matches!(
            target(json!({"file": "a", "line": 2, "character": 3})),
            Ok(Target::At { line: 2, column: 3 })
        ));
        assert_eq!(
            target(json!({"file": "a", "line": 2}))
                .unwrap_err()
                .to_string(),
            "give `line` and `character` (1-based), or `symbol`"
        );
        assert_eq!(
            target(json!({"file": "a", "symbol": 7}))
                .unwrap_err()
                .to_string(),
            "`symbol` must be a string, not a number"
        );
    }

    #[test]
    fn defaults_fill_absent_arguments() {
        let Ok(ToolCall::CallHierarchy(args)) = call("lsp_call_hierarchy", json!({"file": "a"}))
        else {
            panic!("not read")
        };
        assert_eq!((args.direction, args.depth), (Direction::Incoming, 1));
        assert_eq!(
            call(
                "lsp_find_references",
                json!({"file": "a", "include_declaration": "no"})
            )
            .unwrap_err(),
            "`include_declaration` must be true or false, not a string"
        );
        assert_eq!(
            call("lsp_code_actions", json!({"file": "a", "expect": []})).unwrap_err(),
            "`expect` must be an object of file -> hash, not an array"
        );
    }

    #[test]
    fn the_schemas_say_what_is_required_and_the_defaults() {
        let schema = |name: &str| (TOOLS.iter().find(|t| t.name == name).unwrap().schema)();
        assert_eq!(
            schema("lsp_find_references")["properties"]["include_declaration"],
            json!({"type": "boolean", "default": true, "description": "Include the declaration itself."})
        );
        assert_eq!(
            schema("lsp_call_hierarchy")["properties"]["direction"],
            json!({"enum": ["incoming", "outgoing"], "default": "incoming"})
        );
        assert_eq!(
            schema("lsp_rename")["required"],
            json!(["file", "new_name"])
        );
        assert!(schema("lsp_rename")["properties"].get("expect").is_none());
        assert!(schema("lsp_diagnostics").get("required").is_none());
    }

    #[test]
    fn the_refactoring_tools_stay_short() {
        let terse = ["lsp_rename", "lsp_code_actions"];
        let size: usize = (TOOLS.iter().filter(|t| terse.contains(&t.name)))
            .map(|t| t.description.len() + (t.schema)().to_string().len())
            .sum();
        assert!(size < 900, "{size}");
    }
}
