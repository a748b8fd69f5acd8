//! Refactoring requests to a server (prepareRename, rename, code actions and their resolve,
//! executeCommand), what a server offers of them, and the client capabilities squiggle
//! declares for them (it answers `workspace/applyEdit`, see `client`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_lsp::lsp_types::{
    ClientCapabilities, CodeAction, CodeActionCapabilityResolveSupport,
    CodeActionClientCapabilities, CodeActionKindLiteralSupport, CodeActionLiteralSupport,
    CodeActionParams, CodeActionProviderCapability, CodeActionResponse, Command,
    DynamicRegistrationClientCapabilities, ExecuteCommandParams, FailureHandlingKind, OneOf,
    PrepareRenameResponse, PrepareSupportDefaultBehavior, RenameClientCapabilities, RenameParams,
    ResourceOperationKind, ServerCapabilities, TextDocumentClientCapabilities,
    TextDocumentPositionParams, WorkDoneProgressParams, WorkspaceClientCapabilities, WorkspaceEdit,
    WorkspaceEditClientCapabilities,
};
use async_lsp::{LanguageServer, ServerSocket};
use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::Value;

use super::request_error::RequestError;

/// A refactoring request.
#[derive(Debug, Clone)]
pub enum EditRequest {
    /// Whether the symbol at a position can be renamed.
    PrepareRename(TextDocumentPositionParams),
    /// The edit that renames the symbol at a position.
    Rename {
        position: TextDocumentPositionParams,
        new_name: String,
    },
    /// The code actions for a range.
    CodeActions(Box<CodeActionParams>),
    /// A code action with its edit filled in.
    ResolveCodeAction(Box<CodeAction>),
    /// Run a command on the server (its edits come back as `workspace/applyEdit`).
    ExecuteCommand(Command),
}

impl EditRequest {
    /// The document the request is about, if it is about one.
    pub fn document(&self) -> Option<&async_lsp::lsp_types::Url> {
        match self {
            EditRequest::PrepareRename(position) | EditRequest::Rename { position, .. } => {
                Some(&position.text_document.uri)
            }
            EditRequest::CodeActions(params) => Some(&params.text_document.uri),
            EditRequest::ResolveCodeAction(_) | EditRequest::ExecuteCommand(_) => None,
        }
    }
}

/// A server's answer to an [`EditRequest`].
#[derive(Debug, Clone)]
pub enum EditAnswer {
    /// Whether (and what) can be renamed; None: nothing at that position.
    PrepareRename(Option<PrepareRenameResponse>),
    /// The rename's edit.
    Rename(Option<WorkspaceEdit>),
    /// The code actions.
    CodeActions(Option<CodeActionResponse>),
    /// The resolved code action.
    ResolvedCodeAction(Box<CodeAction>),
    /// The command ran.
    Executed,
}

/// Which refactoring requests a server answers, from its capabilities.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EditProvides {
    /// textDocument/rename.
    pub rename: bool,
    /// textDocument/prepareRename.
    pub prepare_rename: bool,
    /// textDocument/codeAction.
    pub code_actions: bool,
    /// codeAction/resolve.
    pub resolve_code_action: bool,
    /// workspace/executeCommand.
    pub execute_command: bool,
}

impl EditProvides {
    /// Reads the providers out of a server's capabilities.
    pub fn of(capabilities: &ServerCapabilities) -> Self {
        let (rename, prepare_rename) = match &capabilities.rename_provider {
            Some(OneOf::Left(on)) => (*on, false),
            Some(OneOf::Right(options)) => (true, options.prepare_provider == Some(true)),
            None => (false, false),
        };
        let (code_actions, resolve_code_action) = match &capabilities.code_action_provider {
            Some(CodeActionProviderCapability::Simple(on)) => (*on, false),
            Some(CodeActionProviderCapability::Options(options)) => {
                (true, options.resolve_provider == Some(true))
            }
            None => (false, false),
        };
        Self {
            rename,
            prepare_rename,
            code_actions,
            resolve_code_action,
            execute_command: capabilities.execute_command_provider.is_some(),
        }
    }
}

/// The server's `workspace/applyEdit` requests: written only while a rename or code action
/// the caller asked to apply is under way ([`Applied::asked`]); the files written and the edits
/// refused meanwhile are kept until squiggle takes them to sync the files with every server and
/// say what was refused. An edit the server sends on its own (on didOpen, during a check or a
/// hook) is answered `applied: false`: nothing of squiggle writes a file no one asked it to.
#[derive(Debug, Clone, Default)]
pub struct Applied(Arc<Mutex<AppliedState>>);

/// What [`Applied`] holds.
#[derive(Debug, Default)]
struct AppliedState {
    /// How many asked applies are under way.
    asked: usize,
    /// Files written since the last take.
    written: Vec<PathBuf>,
    /// Why edits were refused since the last take.
    refused: Vec<String>,
}

/// An apply the caller asked for, under way while this lives.
#[derive(Debug)]
pub struct Asked(Applied);

impl Drop for Asked {
    fn drop(&mut self) {
        let mut state = crate::lock::lock(&(self.0).0);
        state.asked = state.asked.saturating_sub(1);
    }
}

/// Why a server's edit that no one asked for is refused.
pub const NOT_ASKED: &str = "squiggle writes a server's edit only while a rename or code action \
     that its caller asked to apply runs; this edit was not asked for";

impl Applied {
    /// Lets the server's edits be applied while the returned guard lives.
    pub fn asked(&self) -> Asked {
        crate::lock::lock(&self.0).asked += 1;
        Asked(self.clone())
    }

    /// Whether an apply the caller asked for is under way.
    pub fn is_asked(&self) -> bool {
        crate::lock::lock(&self.0).asked > 0
    }

    /// Notes files an applied edit wrote.
    pub fn record(&self, paths: impl IntoIterator<Item = PathBuf>) {
        crate::lock::lock(&self.0).written.extend(paths);
    }

    /// Notes why an edit asked for during an apply was refused.
    pub fn refused(&self, reason: String) {
        crate::lock::lock(&self.0).refused.push(reason);
    }

    /// The files written since the last take.
    pub fn take(&self) -> Vec<PathBuf> {
        std::mem::take(&mut crate::lock::lock(&self.0).written)
    }

    /// Why edits were refused since the last take.
    pub fn take_refused(&self) -> Vec<String> {
        std::mem::take(&mut crate::lock::lock(&self.0).refused)
    }
}

/// The code action kinds squiggle lists.
const ACTION_KINDS: [&str; 9] = [
    "",
    "quickfix",
    "refactor",
    "refactor.extract",
    "refactor.inline",
    "refactor.rewrite",
    "source",
    "source.organizeImports",
    "source.fixAll",
];

/// Declares what squiggle does with edits: applyEdit, document changes with file operations,
/// rename with prepare, code action literals with resolve, executeCommand.
pub fn declare(capabilities: &mut ClientCapabilities) {
    let workspace = capabilities
        .workspace
        .get_or_insert_with(WorkspaceClientCapabilities::default);
    workspace.apply_edit = Some(true);
    workspace.workspace_edit = Some(WorkspaceEditClientCapabilities {
        document_changes: Some(true),
        resource_operations: Some(vec![
            ResourceOperationKind::Create,
            ResourceOperationKind::Rename,
            ResourceOperationKind::Delete,
        ]),
        failure_handling: Some(FailureHandlingKind::Abort),
        ..WorkspaceEditClientCapabilities::default()
    });
    workspace.execute_command = Some(DynamicRegistrationClientCapabilities {
        dynamic_registration: Some(false),
    });
    let text_document = capabilities
        .text_document
        .get_or_insert_with(TextDocumentClientCapabilities::default);
    text_document.rename = Some(RenameClientCapabilities {
        prepare_support: Some(true),
        prepare_support_default_behavior: Some(PrepareSupportDefaultBehavior::IDENTIFIER),
        ..RenameClientCapabilities::default()
    });
    text_document.code_action = Some(CodeActionClientCapabilities {
        code_action_literal_support: Some(CodeActionLiteralSupport {
            code_action_kind: CodeActionKindLiteralSupport {
                value_set: ACTION_KINDS.iter().map(|kind| kind.to_string()).collect(),
            },
        }),
        is_preferred_support: Some(true),
        disabled_support: Some(true),
        data_support: Some(true),
        resolve_support: Some(CodeActionCapabilityResolveSupport {
            properties: vec!["edit".to_string()],
        }),
        ..CodeActionClientCapabilities::default()
    });
}

/// Queues the request on the connection now and returns the future of its answer.
pub fn send(
    socket: &ServerSocket,
    request: EditRequest,
) -> BoxFuture<'static, Result<EditAnswer, RequestError>> {
    let mut socket = socket.clone();
    let work = WorkDoneProgressParams::default();
    let answer = match request {
        EditRequest::PrepareRename(position) => socket
            .prepare_rename(position)
            .map(|r| r.map(EditAnswer::PrepareRename))
            .boxed(),
        EditRequest::Rename { position, new_name } => socket
            .rename(RenameParams {
                text_document_position: position,
                new_name,
                work_done_progress_params: work,
            })
            .map(|r| r.map(EditAnswer::Rename))
            .boxed(),
        EditRequest::CodeActions(params) => socket
            .code_action(*params)
            .map(|r| r.map(EditAnswer::CodeActions))
            .boxed(),
        EditRequest::ResolveCodeAction(action) => socket
            .code_action_resolve(*action)
            .map(|r| r.map(|action| EditAnswer::ResolvedCodeAction(Box::new(action))))
            .boxed(),
        EditRequest::ExecuteCommand(command) => socket
            .execute_command(ExecuteCommandParams {
                command: command.command,
                arguments: command.arguments.unwrap_or_default(),
                work_done_progress_params: work,
            })
            .map(|r| r.map(|_: Option<Value>| EditAnswer::Executed))
            .boxed(),
    };
    answer.map(|r| r.map_err(RequestError::from)).boxed()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use async_lsp::lsp_types::{CodeActionOptions, RenameOptions, WorkDoneProgressOptions};

    #[test]
    fn providers_follow_the_capabilities() {
        let none = EditProvides::of(&ServerCapabilities::default());
        assert_eq!(none, EditProvides::default());
        let all = EditProvides::of(&ServerCapabilities {
            rename_provider: Some(OneOf::Right(RenameOptions {
                prepare_provider: Some(true),
                work_done_progress_options: WorkDoneProgressOptions::default(),
            })),
            code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                resolve_provider: Some(true),
                ..CodeActionOptions::default()
            })),
            execute_command_provider: Some(Default::default()),
            ..ServerCapabilities::default()
        });
        assert!(all.rename && all.prepare_rename && all.code_actions);
        assert!(all.resolve_code_action && all.execute_command);
        let simple = EditProvides::of(&ServerCapabilities {
            rename_provider: Some(OneOf::Left(true)),
            code_action_provider: Some(CodeActionProviderCapability::Simple(false)),
            ..ServerCapabilities::default()
        });
        assert!(simple.rename && !simple.prepare_rename && !simple.code_actions);
    }

    #[test]
    fn declared_capabilities_name_no_absent_field() {
        let mut capabilities = ClientCapabilities::default();
        declare(&mut capabilities);
        let value = serde_json::to_value(&capabilities).unwrap();
        assert_eq!(value["workspace"]["applyEdit"], true);
        assert_eq!(value["textDocument"]["rename"]["prepareSupport"], true);
        assert_eq!(
            squiggle_protocol::strict::first_null(&value, "capabilities"),
            None
        );
    }
}
