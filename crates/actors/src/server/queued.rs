//! Requests queued on a connection at once. async-lsp's typed methods queue a request when
//! called, but its generic `ServerSocket::request` (the only way to send a request type of
//! squiggle's own) is an `async fn` that queues nothing until first polled. Polling it once
//! here, before anything else is sent, keeps requests in order with the notifications around
//! them.

use std::future::Future;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::FutureExt;

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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

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
