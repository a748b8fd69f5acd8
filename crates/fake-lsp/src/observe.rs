//! Test observability: the `FAKE_LSP_LOG` event log and `FAKE_LSP_PID_DIR` pid files.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use anyhow::Context as _;
use serde_json::Value;

/// Appends one JSON line per message to the file named by `FAKE_LSP_LOG`, if set.
#[derive(Debug)]
pub struct EventLog {
    file: Option<Mutex<File>>,
}

impl EventLog {
    /// Opens the log named by `FAKE_LSP_LOG` in append mode (disabled if unset).
    pub fn from_env() -> anyhow::Result<EventLog> {
        let Some(path) = std::env::var_os("FAKE_LSP_LOG") else {
            return Ok(EventLog { file: None });
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening FAKE_LSP_LOG {}", PathBuf::from(&path).display()))?;
        Ok(EventLog {
            file: Some(Mutex::new(file)),
        })
    }

    /// Records `message` with `"dir": dir` (its `jsonrpc` field dropped).
    pub fn record(&self, dir: &str, message: &Value) {
        let Some(file) = &self.file else { return };
        let mut event = serde_json::Map::new();
        event.insert("dir".into(), dir.into());
        if let Value::Object(fields) = message {
            for (key, value) in fields {
                if key != "jsonrpc" {
                    event.insert(key.clone(), value.clone());
                }
            }
        } else {
            event.insert("raw".into(), message.clone());
        }
        let Ok(mut line) = serde_json::to_vec(&Value::Object(event)) else {
            return;
        };
        line.push(b'\n');
        let mut file = file.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(e) = file.write_all(&line).and_then(|()| file.flush()) {
            eprintln!("fake-server: writing FAKE_LSP_LOG: {e}");
        }
    }
}

/// How many fake servers were started with this `FAKE_LSP_PID_DIR` (their `.pid` files; 0
/// when the variable is not set).
pub fn starts() -> usize {
    let Some(dir) = std::env::var_os("FAKE_LSP_PID_DIR") else {
        return 0;
    };
    let pid_files = std::fs::read_dir(dir).into_iter().flatten().flatten();
    pid_files
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "pid"))
        .count()
}

/// Writes `<FAKE_LSP_PID_DIR>/<pid>.<suffix>` containing `pid`, if the variable is set.
pub fn write_pid_file(pid: u32, suffix: &str) -> anyhow::Result<()> {
    let Some(dir) = std::env::var_os("FAKE_LSP_PID_DIR") else {
        return Ok(());
    };
    let path = PathBuf::from(dir).join(format!("{pid}.{suffix}"));
    std::fs::write(&path, pid.to_string()).with_context(|| format!("writing {}", path.display()))
}
