//! A liveness probe: a request every live server answers at once. LSP requires a request whose
//! method starts with `$/` and that the server does not know to be answered with
//! MethodNotFound, so any answer, error or not, shows that the server reads and writes.

use async_lsp::lsp_types::request::Request;
use async_lsp::ServerSocket;
use futures::future::BoxFuture;

/// The probe request: no params, any answer.
enum Ping {}

impl Request for Ping {
    type Params = ();
    type Result = serde_json::Value;
    const METHOD: &'static str = "$/squiggle/ping";
}

/// Queues the probe now and returns the future of the server's answer (any answer counts).
pub fn send(socket: &ServerSocket) -> BoxFuture<'static, ()> {
    let socket = socket.clone();
    let answer = async move {
        let _ = socket.request::<Ping>(()).await;
    };
    super::queued::queue_now(answer)
}
