//! Stdin and stdout, each on a thread of its own, for `squiggle serve`. Tokio's stdin and
//! stdout hand every read and write to its blocking pool; under a burst of requests that is a
//! thread wake-up per frame. Here one thread reads what arrives, and one writes the frames
//! queued so far, in batches, before it flushes once.

use std::io::{Read, Write};
use std::sync::mpsc;

use tokio::sync::{mpsc as async_mpsc, oneshot};

/// How much one read of stdin may take.
const READ_CHUNK: usize = 1 << 16;

/// Reads stdin on its own thread; the receiver yields chunks as they arrive and ends at end of
/// input or on a read error.
pub fn read_stdin() -> async_mpsc::Receiver<Vec<u8>> {
    let (chunks, received) = async_mpsc::channel(16);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            let n = match stdin.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => n,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            if chunks.blocking_send(buf[..n].to_vec()).is_err() {
                return;
            }
        }
    });
    received
}

/// Writes queued byte strings to stdout on its own thread, in order. A task on the runtime
/// gathers what was queued in the same turn into one batch (up to 64 KiB), so a burst of
/// answers wakes the thread once, not once per answer; the thread flushes whenever it runs
/// out of batches. The receiver resolves once every sender is gone and all was written (or
/// stdout closed).
pub fn write_stdout() -> (async_mpsc::UnboundedSender<Vec<u8>>, oneshot::Receiver<()>) {
    let (frames, mut queued) = async_mpsc::unbounded_channel::<Vec<u8>>();
    let (batches, ready) = mpsc::channel::<Vec<u8>>();
    let (done, finished) = oneshot::channel();
    tokio::spawn(async move {
        while let Some(mut batch) = queued.recv().await {
            // At most a chunk's worth: the first answer does not wait on an endless run.
            while batch.len() < READ_CHUNK {
                let Ok(frame) = queued.try_recv() else { break };
                batch.extend_from_slice(&frame);
            }
            if batches.send(batch).is_err() {
                return;
            }
        }
    });
    std::thread::spawn(move || {
        let mut stdout = std::io::BufWriter::with_capacity(READ_CHUNK, std::io::stdout().lock());
        'batches: while let Ok(batch) = ready.recv() {
            if stdout.write_all(&batch).is_err() {
                break;
            }
            while let Ok(batch) = ready.try_recv() {
                if stdout.write_all(&batch).is_err() {
                    break 'batches;
                }
            }
            if stdout.flush().is_err() {
                break;
            }
        }
        let _ = done.send(());
    });
    (frames, finished)
}
