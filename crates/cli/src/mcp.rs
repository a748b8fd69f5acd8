//! `squiggle mcp`: an MCP server on stdio with navigation and diagnostics tools, sharing one
//! runtime and one set of language servers.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use squiggle_actors::Squiggle;

use crate::tools::Toolbox;
use crate::workspace::WorkspaceArgs;

/// Arguments of `squiggle mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
}

/// Runs the MCP server until the client disconnects; no language server starts before a tool
/// needs one, so the handshake never waits for them.
pub async fn run(args: McpArgs) -> anyhow::Result<u8> {
    let (root, config) = args.workspace.load()?;
    let squiggle = Squiggle::start(&root, config).await?;
    squiggle.search_after_answers();
    squiggle.set_restart_hint("call `lsp_diagnostics` with `restart: true` to restart it");
    serve_on(crate::mcp_stdio::stdio(), Toolbox::new(squiggle.clone())).await?;
    squiggle.shutdown().await;
    Ok(0)
}

/// Serves MCP with `tools` over `transport` until the client disconnects: `squiggle mcp` on
/// stdio, and `squiggle serve` on the descriptors 3 and 4 a host passed it, beside its
/// JSON-RPC and with the same language servers (BR-23, BR-46).
pub async fn serve_on<R, W>(
    transport: crate::mcp_stdio::Stdio<R, W>,
    tools: Toolbox,
) -> anyhow::Result<()>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let running = McpServer { tools }.serve(transport).await?;
    let _ = running.waiting().await;
    Ok(())
}

/// The MCP face of the toolbox.
#[derive(Debug, Clone)]
struct McpServer {
    tools: Toolbox,
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("squiggle", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Code navigation and diagnostics from real language servers. Positions are 1-based; \
                 address a symbol by its name (`symbol`) when unsure of the exact column.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = self
            .tools
            .tools()
            .map(|tool| {
                let schema = match (tool.schema)() {
                    Value::Object(map) => map,
                    _ => JsonObject::new(),
                };
                Tool::new(tool.name, tool.description, Arc::new(schema))
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        let result = match self.tools.call(&request.name, &args).await {
            Ok(output) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(output.text)]);
                result.structured_content = Some(output.structured);
                result
            }
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error.to_string())]),
        };
        Ok(result.into())
    }
}
