//! Emits `publishDiagnostics` (plus scripted noise) and other messages in order, now or later.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::wire::Output;

/// Junk written before every publish, as scripted.
#[derive(Debug, Clone, Copy, Default)]
pub struct Noise {
    /// A raw non-frame line.
    pub garbage: bool,
    /// A non-JSON frame and an empty frame.
    pub malformed: bool,
    /// Two notifications the client does not know.
    pub unknown_notifications: bool,
}

/// A queued message: when it is due, whether noise precedes it, and the message.
type Item = (Instant, bool, Value);

/// State shared with the publisher thread.
#[derive(Debug)]
struct Shared {
    queue: Mutex<VecDeque<Item>>,
    wake: Condvar,
    output: Arc<Output>,
    noise: Noise,
}

/// A FIFO of publishes: each goes out at its due time, never before an earlier one.
#[derive(Debug)]
pub struct Publisher {
    shared: Arc<Shared>,
}

impl Publisher {
    /// Starts the publisher thread.
    pub fn start(output: Arc<Output>, noise: Noise) -> anyhow::Result<Publisher> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            wake: Condvar::new(),
            output,
            noise,
        });
        let worker = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("fake-publisher".into())
            .spawn(move || worker.run())?;
        Ok(Publisher { shared })
    }

    /// Publishes `message` (after the scripted noise) after `delay`.
    pub fn publish(&self, message: Value, delay: Duration) {
        self.enqueue(message, delay, true);
    }

    /// Sends `message` without noise after `delay`, in order with the publishes.
    pub fn send(&self, message: Value, delay: Duration) {
        self.enqueue(message, delay, false);
    }

    /// Queues `message` (written inline when nothing is pending and `delay` is zero).
    fn enqueue(&self, message: Value, delay: Duration, noisy: bool) {
        let mut queue = self.shared.lock();
        if queue.is_empty() && delay.is_zero() {
            // Written under the queue lock so the thread cannot overtake it.
            self.shared.emit(&message, noisy);
            return;
        }
        queue.push_back((Instant::now() + delay, noisy, message));
        self.shared.wake.notify_one();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, VecDeque<Item>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn run(&self) {
        let mut queue = self.lock();
        loop {
            let now = Instant::now();
            match queue.front() {
                None => {
                    queue = self
                        .wake
                        .wait(queue)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                Some((due, _, _)) if *due > now => {
                    let wait = *due - now;
                    queue = self
                        .wake
                        .wait_timeout(queue, wait)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
                Some(_) => {
                    // Emitted while still holding the lock: inline publishes wait for it.
                    if let Some((_, noisy, message)) = queue.pop_front() {
                        self.emit(&message, noisy);
                    }
                }
            }
        }
    }

    /// Writes the scripted noise (if `noisy`) and then `message`; errors go to stderr.
    fn emit(&self, message: &Value, noisy: bool) {
        if let Err(e) = self.try_emit(message, noisy) {
            eprintln!("fake-server: publishing: {e:#}");
        }
    }

    fn try_emit(&self, message: &Value, noisy: bool) -> anyhow::Result<()> {
        let out = &self.output;
        if !noisy {
            return out.send(message);
        }
        if self.noise.garbage {
            out.raw(b"this is not a frame\n")?;
        }
        if self.noise.malformed {
            out.raw(&super::wire::frame(b"{not json"))?;
            out.raw(&super::wire::frame(b""))?;
        }
        if self.noise.unknown_notifications {
            out.send(&json!({"jsonrpc": "2.0", "method": "$/fake/unknownThing", "params": {}}))?;
            out.send(
                &json!({"jsonrpc": "2.0", "method": "fake/customNotification", "params": {"x": 1}}),
            )?;
        }
        out.send(message)
    }
}
