//! The `initialize` request squiggle sends: the client capabilities it declares (each one
//! backed by real behaviour) and the root it serves.

use async_lsp::lsp_types::{CallHierarchyClientCapabilities, GotoCapability};
use async_lsp::lsp_types::{
    ClientCapabilities, ClientInfo, DiagnosticClientCapabilities,
    DiagnosticWorkspaceClientCapabilities, DidChangeWatchedFilesClientCapabilities,
    DocumentSymbolClientCapabilities, GeneralClientCapabilities, HoverClientCapabilities,
    InitializeParams, MarkupKind, PositionEncodingKind, PublishDiagnosticsClientCapabilities,
    TextDocumentClientCapabilities, TextDocumentSyncClientCapabilities, Url,
    WindowClientCapabilities, WorkspaceClientCapabilities, WorkspaceFolder,
};
use squiggle_config::ServerSpec;
use squiggle_protocol::paths;

use crate::key::ServerKey;

/// The initialize request squiggle sends: what it can do, and the root it serves.
#[allow(deprecated)] // root_uri: older servers still need it.
pub fn initialize_params(key: &ServerKey, spec: &ServerSpec) -> InitializeParams {
    let root_uri = Url::parse(&paths::path_to_uri(&key.root.to_string_lossy())).ok();
    let mut params = InitializeParams {
        process_id: Some(std::process::id()),
        root_uri: root_uri.clone(),
        initialization_options: spec.initialization_options.clone(),
        capabilities: ClientCapabilities {
            workspace: Some(WorkspaceClientCapabilities {
                configuration: Some(true),
                workspace_folders: Some(true),
                did_change_watched_files: Some(DidChangeWatchedFilesClientCapabilities {
                    dynamic_registration: Some(true),
                    relative_pattern_support: Some(true),
                }),
                diagnostic: Some(DiagnosticWorkspaceClientCapabilities {
                    refresh_support: Some(true),
                }),
                ..WorkspaceClientCapabilities::default()
            }),
            text_document: Some(TextDocumentClientCapabilities {
                synchronization: Some(TextDocumentSyncClientCapabilities {
                    did_save: Some(true),
                    ..TextDocumentSyncClientCapabilities::default()
                }),
                publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
                    version_support: Some(true),
                    ..PublishDiagnosticsClientCapabilities::default()
                }),
                diagnostic: Some(DiagnosticClientCapabilities {
                    dynamic_registration: Some(true),
                    related_document_support: Some(false),
                }),
                document_symbol: Some(DocumentSymbolClientCapabilities {
                    hierarchical_document_symbol_support: Some(true),
                    ..DocumentSymbolClientCapabilities::default()
                }),
                hover: Some(HoverClientCapabilities {
                    content_format: Some(vec![MarkupKind::Markdown, MarkupKind::PlainText]),
                    ..HoverClientCapabilities::default()
                }),
                // typescript-language-server offers call hierarchy only to a client that says
                // it uses it.
                call_hierarchy: Some(CallHierarchyClientCapabilities {
                    dynamic_registration: Some(false),
                }),
                implementation: Some(goto_capability()),
                type_definition: Some(goto_capability()),
                ..TextDocumentClientCapabilities::default()
            }),
            window: Some(WindowClientCapabilities {
                work_done_progress: Some(true),
                ..WindowClientCapabilities::default()
            }),
            // rust-analyzer's quiescence signal, to know when it has finished.
            experimental: Some(serde_json::json!({"serverStatusNotification": true})),
            general: Some(GeneralClientCapabilities {
                position_encodings: Some(vec![
                    PositionEncodingKind::UTF8,
                    PositionEncodingKind::UTF16,
                ]),
                ..GeneralClientCapabilities::default()
            }),
        },
        workspace_folders: root_uri.map(|uri| {
            vec![WorkspaceFolder {
                uri,
                name: key.root_name(),
            }]
        }),
        client_info: Some(ClientInfo {
            name: "squiggle".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
        ..InitializeParams::default()
    };
    super::refactor::declare(&mut params.capabilities);
    params
}

/// The client capability of a goto request (implementation, type definition): static, with
/// LocationLinks understood.
fn goto_capability() -> GotoCapability {
    GotoCapability {
        dynamic_registration: Some(false),
        link_support: Some(true),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn initialize_names_no_absent_field() {
        let key = ServerKey {
            id: "fake".to_string(),
            root: std::path::PathBuf::from("/w"),
        };
        let spec = squiggle_config::builtin_servers()["pyright"].clone();
        let params = serde_json::to_value(initialize_params(&key, &spec)).unwrap();
        assert_eq!(
            squiggle_protocol::strict::first_null(&params, "params"),
            None,
            "{params:#}"
        );
    }
}
