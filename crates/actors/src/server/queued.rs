//! Requests on a connection: queued at once, and given up on in time. Two async-lsp 0.2.4
//! behaviours, answered here:
//!
//! - Its typed methods queue a request when called, but its generic `ServerSocket::request`
//!   (the only way to send a request type of squiggle's own) is an `async fn` that queues
//!   nothing until first polled. [`queue_now`] polls it once, before anything else is sent,
//!   which keeps requests in order with the notifications around them.
//! - A request has no time limit: its future waits for as long as the connection lives.
//!   [`within`] gives up at a limit and says so ([`RequestError::timeout`]). (The loop keeps
//!   its entry for the request until the server answers; it sends no `$/cancelRequest`.)
//!
//! Why they stay: async-lsp 0.2.4 offers no hook for either. Its tower layers (timeouts,
//! concurrency) wrap the service that answers the server's requests, not the requests squiggle
//! sends, and the socket's request methods take no deadline.

use std::future::Future;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;

use super::request_error::RequestError;

/// Polls `request` once, so that it is queued now, and returns it to be awaited.
pub fn queue_now<T: Send + 'static>(
    request: impl Future<Output = T> + Send + 'static,
) -> BoxFuture<'static, T> {
    let mut request = request.boxed();
    let mut cx = Context::from_waker(futures::task::noop_waker_ref());
    match request.as_mut().poll(&mut cx) {
        // Answered at once (the connection is gone): keep the answer.
        Poll::Ready(answer) => futures::future::ready(answer).boxed(),
        // The waker that counts is the one given when it is awaited.
        Poll::Pending => request,
    }
}

/// The answer to a request, or a timeout error once `limit` has passed without one.
pub async fn within<T>(
    limit: Duration,
    answer: impl Future<Output = Result<T, RequestError>>,
) -> Result<T, RequestError> {
    match tokio::time::timeout(limit, answer).await {
        Ok(answer) => answer,
        Err(_) => Err(RequestError::timeout(limit)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[tokio::test]
    async fn a_request_without_an_answer_in_time_is_a_timeout() {
        let limit = Duration::from_millis(10);
        let unanswered = within(limit, std::future::pending::<Result<u8, RequestError>>());
        let error = unanswered.await.unwrap_err();
        assert_eq!(error.to_string(), RequestError::timeout(limit).to_string());
        assert_eq!(within(limit, async { Ok(7) }).await.unwrap(), 7);
    }

    #[tokio::test]
    async fn the_body_runs_up_to_its_first_wait_before_it_is_awaited() {
        let queued = Arc::new(AtomicBool::new(false));
        let flag = queued.clone();
        let (tx, rx) = tokio::sync::oneshot::channel::<u8>();
        let request = queue_now(async move {
            flag.store(true, Ordering::SeqCst);
            rx.await.unwrap_or(0)
        });
        assert!(queued.load(Ordering::SeqCst), "queued before being awaited");
        tx.send(7).unwrap();
        assert_eq!(request.await, 7);
    }
}
