//! A server's sidecar: a helper command (for example a generator in watch mode) that runs beside
//! the server, in its root and its process group, so that it dies with it. Its failure is
//! logged and reported, never fatal.

use std::collections::BTreeMap;
use std::path::Path;

use squiggle_config::locate_command;

use crate::server::process::ProcessGroup;
use crate::server::stderr::StderrTail;
use crate::server::ServerHandle;

/// Starts the sidecar `command` (program and arguments); what goes wrong is sent to `server`
/// through [`ServerHandle::sidecar_failed`].
pub fn start(
    command: &[String],
    group: &ProcessGroup,
    root: &Path,
    workspace_root: &Path,
    env: &BTreeMap<String, String>,
    server: ServerHandle,
) {
    let Some((name, args)) = command.split_first() else {
        return;
    };
    let Some(program) = locate_command(name, workspace_root, &[]) else {
        server.sidecar_failed(format!("sidecar `{name}` is not installed"));
        return;
    };
    let mut child = match group.spawn_member(&program, args, root, env) {
        Ok(child) => child,
        Err(err) => {
            server.sidecar_failed(format!("sidecar `{name}` did not start: {err}"));
            return;
        }
    };
    let stderr = child
        .stderr
        .take()
        .map(|stderr| StderrTail::capture(stderr, format!("{name} (sidecar)")));
    let name = name.clone();
    tokio::spawn(async move {
        let status = child.wait().await;
        let mut reason = match status {
            Ok(status) => format!("sidecar `{name}` exited ({status})"),
            Err(err) => format!("sidecar `{name}` could not be waited for: {err}"),
        };
        if let Some((tail, done)) = stderr {
            let _ = tokio::time::timeout(std::time::Duration::from_millis(200), done).await;
            if let Some(line) = tail.reason_line() {
                reason.push_str(": ");
                reason.push_str(&line);
            }
        }
        tracing::warn!(%reason, "sidecar stopped");
        server.sidecar_failed(reason);
    });
}
