//! Navigation requests to a server (definition, references, hover, symbols), each sent at once
//! so that it follows every change already queued on the connection.

use async_lsp::lsp_types::{
    DocumentSymbolParams, DocumentSymbolResponse, GotoDefinitionParams, GotoDefinitionResponse,
    Hover, HoverParams, Location, OneOf, PartialResultParams, ReferenceContext, ReferenceParams,
    ServerCapabilities, TextDocumentIdentifier, TextDocumentPositionParams, WorkDoneProgressParams,
    WorkspaceSymbolParams, WorkspaceSymbolResponse,
};
use async_lsp::{LanguageServer, ServerSocket};

use super::refactor::{self, EditAnswer, EditProvides, EditRequest};
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
        }
    }
}

/// Queues the request on the connection now and returns the future of its answer.
pub fn send(
    socket: &ServerSocket,
    request: NavRequest,
) -> BoxFuture<'static, Result<NavAnswer, String>> {
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
    };
    answer.map(|r| r.map_err(|err| err.to_string())).boxed()
}
