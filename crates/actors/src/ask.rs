//! Asking an actor a question with a time limit, as every handle does.

use std::time::Duration;

use ractor::rpc::CallResult;
use ractor::{ActorRef, RpcReplyPort};

/// Asks an actor a question and waits at most `limit` for the answer.
pub async fn ask<M, T>(
    actor: &ActorRef<M>,
    message: impl FnOnce(RpcReplyPort<T>) -> M,
    limit: Duration,
) -> Option<T>
where
    M: ractor::Message,
    T: Send + 'static,
{
    match actor.call(message, Some(limit)).await {
        Ok(CallResult::Success(answer)) => Some(answer),
        _ => None,
    }
}
