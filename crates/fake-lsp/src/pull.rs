//! Pull diagnostics: result ids, the scripted first cancellation and the delayed refresh.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::wire::Output;

/// What was last answered for one URI.
#[derive(Debug)]
struct Sent {
    result_id: String,
    text: String,
    items: Vec<Value>,
}

/// Answers `textDocument/diagnostic` requests as scripted.
#[derive(Debug)]
pub struct Pull {
    cancel_first: bool,
    refresh_after: Option<Duration>,
    requests: u64,
    successes: u64,
    next_result: u64,
    last: HashMap<String, Sent>,
    refreshed: Arc<AtomicBool>,
}

impl Pull {
    /// A fresh state: `cancel_first` fails request 1; `refresh_after` follows the first success.
    pub fn new(cancel_first: bool, refresh_after: Option<Duration>) -> Pull {
        Pull {
            cancel_first,
            refresh_after,
            requests: 0,
            successes: 0,
            next_result: 1,
            last: HashMap::new(),
            refreshed: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The report for `uri` (or the JSON-RPC error to send instead).
    ///
    /// `unchanged` only when `previous` is the last id sent for `uri` and both the text
    /// and the computed items are as they were then.
    pub fn answer(
        &mut self,
        uri: &str,
        text: String,
        mut items: Vec<Value>,
        previous: Option<&str>,
    ) -> Result<Value, Value> {
        self.requests += 1;
        if self.cancel_first && self.requests == 1 {
            return Err(json!({
                "code": -32802,
                "message": "server cancelled",
                "data": {"retriggerRequest": true},
            }));
        }
        self.successes += 1;
        if self.refreshed.load(Ordering::SeqCst) {
            items.push(refresh_diagnostic());
        }
        if let Some(sent) = self.last.get(uri) {
            if previous == Some(sent.result_id.as_str()) && sent.text == text && sent.items == items
            {
                return Ok(json!({"kind": "unchanged", "resultId": sent.result_id}));
            }
        }
        let result_id = format!("r{}", self.next_result);
        self.next_result += 1;
        let report = json!({"kind": "full", "resultId": result_id, "items": items});
        let sent = Sent {
            result_id,
            text,
            items,
        };
        self.last.insert(uri.to_owned(), sent);
        Ok(report)
    }

    /// Call after writing an answer: starts the scripted refresh after the first success.
    pub fn answered(&mut self, output: &Arc<Output>) {
        let Some(delay) = self.refresh_after.filter(|_| self.successes == 1) else {
            return;
        };
        self.refresh_after = None;
        let refreshed = Arc::clone(&self.refreshed);
        let output = Arc::clone(output);
        let spawned = std::thread::Builder::new()
            .name("fake-refresh".into())
            .spawn(move || {
                std::thread::sleep(delay);
                refreshed.store(true, Ordering::SeqCst);
                let request = json!({
                    "jsonrpc": "2.0",
                    "id": "fake-refresh-1",
                    "method": "workspace/diagnostic/refresh",
                });
                if let Err(e) = output.send(&request) {
                    eprintln!("fake-server: sending refresh: {e:#}");
                }
            });
        if let Err(e) = spawned {
            eprintln!("fake-server: starting refresh thread: {e}");
        }
    }
}

/// The extra Error every pull result carries once the refresh has fired.
fn refresh_diagnostic() -> Value {
    json!({
        "range": {
            "start": {"line": 1, "character": 0},
            "end": {"line": 1, "character": 1},
        },
        "severity": 1,
        "code": "R1",
        "source": "fake",
        "message": "found REFRESH",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_ids_and_unchanged() {
        let mut pull = Pull::new(false, None);
        let first = pull.answer("u", "a".into(), Vec::new(), None);
        assert_eq!(
            first,
            Ok(json!({"kind": "full", "resultId": "r1", "items": []}))
        );
        let same = pull.answer("u", "a".into(), Vec::new(), Some("r1"));
        assert_eq!(same, Ok(json!({"kind": "unchanged", "resultId": "r1"})));
        let stale = pull.answer("u", "a".into(), Vec::new(), Some("r0"));
        assert_eq!(stale.map(|r| r["resultId"].clone()), Ok(json!("r2")));
        let edited = pull.answer("u", "b".into(), Vec::new(), Some("r2"));
        assert_eq!(edited.map(|r| r["kind"].clone()), Ok(json!("full")));
        let other = pull.answer("v", "b".into(), Vec::new(), Some("r3"));
        assert_eq!(other.map(|r| r["resultId"].clone()), Ok(json!("r4")));
    }

    #[test]
    fn cancels_only_the_first() {
        let mut pull = Pull::new(true, None);
        let err = pull.answer("u", String::new(), Vec::new(), None);
        assert_eq!(err.err().map(|e| e["code"].clone()), Some(json!(-32802)));
        assert!(pull.answer("u", String::new(), Vec::new(), None).is_ok());
    }

    #[test]
    fn refresh_adds_a_diagnostic_and_changes_the_result() {
        let mut pull = Pull::new(false, None);
        assert!(pull.answer("u", "a".into(), Vec::new(), None).is_ok());
        pull.refreshed.store(true, Ordering::SeqCst);
        let after = pull.answer("u", "a".into(), Vec::new(), Some("r1"));
        let after = after.unwrap_or_default();
        assert_eq!(after["kind"], "full");
        assert_eq!(after["items"][0]["code"], "R1");
        assert_eq!(after["items"][0]["message"], "found REFRESH");
    }
}
