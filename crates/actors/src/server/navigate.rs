//! Navigation requests to a server (definition, references, hover, symbols), each sent at once
//! so that it follows every change already queued on the connection.

use async_lsp::lsp_types::{
    CallHierarchyIncomingCall, CallHierarchyItem, CallHierarchyOutgoingCall,
    WorkspaceDiagnosticReportResult,
};
use async_lsp::lsp_types::{
    DocumentSymbolParams, DocumentSymbolResponse, GotoDefinitionParams, GotoDefinitionResponse,
    Hover, HoverParams, Location, OneOf, PartialResultParams, ReferenceContext, ReferenceParams,
    ServerCapabilities, TextDocumentIdentifier, TextDocumentPositionParams, WorkDoneProgressParams,
    WorkspaceSymbolParams, WorkspaceSymbolResponse,
};
use async_lsp::{LanguageServer, ServerSocket};

use super::refactor::{self, EditAnswer, EditProvides, EditRequest};
use super::request_error::RequestError;
use futures::future::BoxFuture;
use futures::FutureExt;

/// A navigation question.
#[derive(Debug, Clone)]
pub enum NavRequest {
    /// A refactoring request (rename, code actions).
    Edit(Box<EditRequest>),
    /// Where the symbol at a position is defined.
    Definition(TextDocumentPositionParams),
    /// Where the symbol at a position is used.
    References {
        position: TextDocumentPositionParams,
        include_declaration: bool,
    },
    /// The type and documentation of the symbol at a position.
    Hover(TextDocumentPositionParams),
    /// The outline of a document.
    DocumentSymbols(TextDocumentIdentifier),
    /// Symbols matching a query across the workspace.
    WorkspaceSymbols(String),
    /// Where the symbol at a position is implemented (classes of an interface, overrides).
    Implementation(TextDocumentPositionParams),
    /// Where the type of the symbol at a position is defined.
    TypeDefinition(TextDocumentPositionParams),
    /// The call-hierarchy items at a position.
    PrepareCallHierarchy(TextDocumentPositionParams),
    /// Who calls a call-hierarchy item.
    IncomingCalls(CallHierarchyItem),
    /// What a call-hierarchy item calls.
    OutgoingCalls(CallHierarchyItem),
    /// Every file's diagnostics the server knows (`workspace/diagnostic`).
    WorkspaceDiagnostics,
}

impl NavRequest {
    /// The document the question is about, if it is about one.
    pub fn document(&self) -> Option<&async_lsp::lsp_types::Url> {
        match self {
            NavRequest::Edit(request) => request.document(),
            NavRequest::Definition(position)
            | NavRequest::Hover(position)
            | NavRequest::References { position, .. } => Some(&position.text_document.uri),
            NavRequest::DocumentSymbols(document) => Some(&document.uri),
            NavRequest::WorkspaceSymbols(_) => None,
            NavRequest::Implementation(position)
            | NavRequest::TypeDefinition(position)
            | NavRequest::PrepareCallHierarchy(position) => Some(&position.text_document.uri),
            NavRequest::IncomingCalls(item) | NavRequest::OutgoingCalls(item) => Some(&item.uri),
            NavRequest::WorkspaceDiagnostics => None,
        }
    }
}

/// A server's answer to a [`NavRequest`].
#[derive(Debug, Clone)]
pub enum NavAnswer {
    /// The answer to a refactoring request.
    Edit(Box<EditAnswer>),
    /// Definition targets.
    Definition(Option<GotoDefinitionResponse>),
    /// Reference locations.
    References(Option<Vec<Location>>),
    /// Hover contents.
    Hover(Option<Hover>),
    /// The outline.
    DocumentSymbols(Option<DocumentSymbolResponse>),
    /// Workspace symbols.
    WorkspaceSymbols(Option<WorkspaceSymbolResponse>),
    /// Implementation targets.
    Implementation(Option<GotoDefinitionResponse>),
    /// Type definition targets.
    TypeDefinition(Option<GotoDefinitionResponse>),
    /// Call-hierarchy items.
    CallHierarchy(Option<Vec<CallHierarchyItem>>),
    /// Callers, each with its call sites.
    IncomingCalls(Option<Vec<CallHierarchyIncomingCall>>),
    /// Callees, each with its call sites.
    OutgoingCalls(Option<Vec<CallHierarchyOutgoingCall>>),
    /// The workspace diagnostic report.
    WorkspaceDiagnostics(WorkspaceDiagnosticReportResult),
}

/// Which navigation requests a server answers, from its capabilities.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Provides {
    /// The refactoring requests.
    pub edits: EditProvides,
    /// textDocument/definition.
    pub definition: bool,
    /// textDocument/references.
    pub references: bool,
    /// textDocument/hover.
    pub hover: bool,
    /// textDocument/documentSymbol.
    pub document_symbols: bool,
    /// workspace/symbol.
    pub workspace_symbols: bool,
    /// textDocument/implementation.
    pub implementation: bool,
    /// textDocument/typeDefinition.
    pub type_definition: bool,
    /// textDocument/prepareCallHierarchy and callHierarchy/incomingCalls, outgoingCalls.
    pub call_hierarchy: bool,
    /// workspace/diagnostic.
    pub workspace_diagnostics: bool,
}

impl Provides {
    /// Reads the providers out of a server's capabilities.
    pub fn of(capabilities: &ServerCapabilities) -> Self {
        fn on<T>(provider: &Option<OneOf<bool, T>>) -> bool {
            matches!(provider, Some(OneOf::Left(true) | OneOf::Right(_)))
        }
        Self {
            edits: EditProvides::of(capabilities),
            definition: on(&capabilities.definition_provider),
            references: on(&capabilities.references_provider),
            hover: !matches!(
                capabilities.hover_provider,
                None | Some(async_lsp::lsp_types::HoverProviderCapability::Simple(false))
            ),
            document_symbols: on(&capabilities.document_symbol_provider),
            workspace_symbols: on(&capabilities.workspace_symbol_provider),
            ..Self::breadth(capabilities)
        }
    }

    /// The implementation, type definition, call hierarchy and workspace diagnostic providers.
    fn breadth(capabilities: &ServerCapabilities) -> Self {
        use async_lsp::lsp_types::{
            CallHierarchyServerCapability, DiagnosticServerCapabilities,
            ImplementationProviderCapability, TypeDefinitionProviderCapability,
        };
        Self {
            implementation: !matches!(
                capabilities.implementation_provider,
                None | Some(ImplementationProviderCapability::Simple(false))
            ),
            type_definition: !matches!(
                capabilities.type_definition_provider,
                None | Some(TypeDefinitionProviderCapability::Simple(false))
            ),
            call_hierarchy: !matches!(
                capabilities.call_hierarchy_provider,
                None | Some(CallHierarchyServerCapability::Simple(false))
            ),
            workspace_diagnostics: match &capabilities.diagnostic_provider {
                Some(DiagnosticServerCapabilities::Options(options)) => {
                    options.workspace_diagnostics
                }
                Some(DiagnosticServerCapabilities::RegistrationOptions(options)) => {
                    options.diagnostic_options.workspace_diagnostics
                }
                None => false,
            },
            ..Self::default()
        }
    }
}

/// Queues the request on the connection now and returns the future of its answer.
pub fn send(
    socket: &ServerSocket,
    request: NavRequest,
) -> BoxFuture<'static, Result<NavAnswer, RequestError>> {
    let mut socket = socket.clone();
    let work = WorkDoneProgressParams::default();
    let partial = PartialResultParams::default();
    let answer = match request {
        NavRequest::Edit(request) => {
            return refactor::send(&socket, *request)
                .map(|r| r.map(|answer| NavAnswer::Edit(Box::new(answer))))
                .boxed()
        }
        NavRequest::Definition(position) => socket
            .definition(GotoDefinitionParams {
                text_document_position_params: position,
                work_done_progress_params: work,
                partial_result_params: partial,
            })
            .map(|r| r.map(NavAnswer::Definition))
            .boxed(),
        NavRequest::References {
            position,
            include_declaration,
        } => socket
            .references(ReferenceParams {
                text_document_position: position,
                work_done_progress_params: work,
                partial_result_params: partial,
                context: ReferenceContext {
                    include_declaration,
                },
            })
            .map(|r| r.map(NavAnswer::References))
            .boxed(),
        NavRequest::Hover(position) => socket
            .hover(HoverParams {
                text_document_position_params: position,
                work_done_progress_params: work,
            })
            .map(|r| r.map(NavAnswer::Hover))
            .boxed(),
        NavRequest::DocumentSymbols(text_document) => socket
            .document_symbol(DocumentSymbolParams {
                text_document,
                work_done_progress_params: work,
                partial_result_params: partial,
            })
            .map(|r| r.map(NavAnswer::DocumentSymbols))
            .boxed(),
        NavRequest::WorkspaceSymbols(query) => socket
            .symbol(WorkspaceSymbolParams {
                query,
                work_done_progress_params: work,
                partial_result_params: partial,
            })
            .map(|r| r.map(NavAnswer::WorkspaceSymbols))
            .boxed(),
        other => send_breadth(socket, other),
    };
    answer.map(|r| r.map_err(RequestError::from)).boxed()
}

/// Queues one of the implementation, type definition, call hierarchy and workspace diagnostic
/// requests (the others are sent by [`send`]).
fn send_breadth(
    mut socket: ServerSocket,
    request: NavRequest,
) -> BoxFuture<'static, Result<NavAnswer, async_lsp::Error>> {
    use async_lsp::lsp_types::{
        CallHierarchyIncomingCallsParams, CallHierarchyOutgoingCallsParams,
        CallHierarchyPrepareParams, WorkspaceDiagnosticParams,
    };
    let work = WorkDoneProgressParams::default;
    let partial = PartialResultParams::default;
    let position_params = |position| GotoDefinitionParams {
        text_document_position_params: position,
        work_done_progress_params: work(),
        partial_result_params: partial(),
    };
    match request {
        NavRequest::Implementation(position) => socket
            .implementation(position_params(position))
            .map(|r| r.map(NavAnswer::Implementation))
            .boxed(),
        NavRequest::TypeDefinition(position) => socket
            .type_definition(position_params(position))
            .map(|r| r.map(NavAnswer::TypeDefinition))
            .boxed(),
        NavRequest::PrepareCallHierarchy(position) => socket
            .prepare_call_hierarchy(CallHierarchyPrepareParams {
                text_document_position_params: position,
                work_done_progress_params: work(),
            })
            .map(|r| r.map(NavAnswer::CallHierarchy))
            .boxed(),
        NavRequest::IncomingCalls(item) => socket
            .incoming_calls(CallHierarchyIncomingCallsParams {
                item,
                work_done_progress_params: work(),
                partial_result_params: partial(),
            })
            .map(|r| r.map(NavAnswer::IncomingCalls))
            .boxed(),
        NavRequest::OutgoingCalls(item) => socket
            .outgoing_calls(CallHierarchyOutgoingCallsParams {
                item,
                work_done_progress_params: work(),
                partial_result_params: partial(),
            })
            .map(|r| r.map(NavAnswer::OutgoingCalls))
            .boxed(),
        NavRequest::WorkspaceDiagnostics => socket
            .workspace_diagnostic(WorkspaceDiagnosticParams {
                identifier: None,
                previous_result_ids: Vec::new(),
                work_done_progress_params: work(),
                partial_result_params: partial(),
            })
            .map(|r| r.map(NavAnswer::WorkspaceDiagnostics))
            .boxed(),
        _ => futures::future::ready(Err(async_lsp::Error::Protocol(
            "not a breadth request".to_string(),
        )))
        .boxed(),
    }
}
