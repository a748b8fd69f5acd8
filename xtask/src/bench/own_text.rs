//! Texts whose diagnostics are known in advance, for the load and soak runs: text `n` has
//! `1 + n % 5` error lines, each naming `n` and its own line, so that an answer can be judged
//! against its own text (a final answer with another text's diagnostics is a wrong answer).

use std::collections::BTreeMap;

use serde_json::Value;

/// How many error lines text `n` has.
fn errors(n: usize) -> usize {
    1 + n % 5
}

/// The token line `line` (0-based) of text `n` carries, as it appears in the server's message.
fn token(ext: &str, n: usize, line: usize) -> String {
    match ext {
        "py" => format!("`undefined_r{n}_e{line}`"),
        _ => format!("[r{n}.e{line}]"),
    }
}

/// Text `n` for a file with extension `ext` (`fake`: `ERROR` lines; `py`: undefined names).
pub fn text(ext: &str, n: usize) -> String {
    (0..errors(n))
        .map(|line| match ext {
            "py" => format!("print(undefined_r{n}_e{line})\n"),
            _ => format!("ERROR {}\n", token(ext, n, line)),
        })
        .collect()
}

/// Text `n` followed by about `pad` bytes of lines no server reports anything on (comment
/// lines, 64 bytes each), so that the same judgement holds for a large text.
pub fn padded(ext: &str, n: usize, pad: usize) -> String {
    let mut out = text(ext, n);
    let line = format!("# {}\n", "p".repeat(61));
    out.push_str(&line.repeat(pad / line.len()));
    out
}

/// What one `squiggle/checkFile` answer was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A final answer (`diagnostics` or `clean`) with exactly its own text's diagnostics;
    /// `partial` when some of the file's servers gave no final answer (named in the reason).
    Right { partial: bool },
    /// A final answer whose diagnostics are not those of its own text.
    Wrong(String),
    /// Not checked, and said so: the reason, with server ids and numbers taken out.
    NotChecked(String),
    /// A JSON-RPC error, or an answer of another shape.
    Error(String),
}

/// Judges the answer to `squiggle/checkFile` for text `n`.
pub fn judge(ext: &str, n: usize, answer: &Value) -> Verdict {
    if let Some(error) = answer.get("error").filter(|e| !e.is_null()) {
        return Verdict::Error(error.to_string());
    }
    let result = &answer["result"];
    match result["outcome"].as_str() {
        Some("diagnostics") | Some("clean") => {}
        Some("not_checked") => {
            return Verdict::NotChecked(general(result["reason"].as_str().unwrap_or("")))
        }
        _ => return Verdict::Error(format!("unexpected answer: {answer}")),
    }
    let got: Vec<(u64, &str)> = result["diagnostics"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|d| {
                    (
                        d["line"].as_u64().unwrap_or(0),
                        d["message"].as_str().unwrap_or(""),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let expected = errors(n);
    let right = got.len() == expected
        && (0..expected).all(|line| {
            let token = token(ext, n, line);
            got.iter()
                .any(|(at, message)| *at == line as u64 + 1 && message.contains(&token))
        });
    if right {
        let partial = !result["reason"].is_null()
            || result["servers"]
                .as_array()
                .is_some_and(|s| s.iter().any(|s| !s["reason"].is_null()));
        Verdict::Right { partial }
    } else {
        Verdict::Wrong(format!(
            "text {n}: expected {expected} diagnostics naming r{n}, got {got:?}"
        ))
    }
}

/// A reason with the server ids (`fake0 is active: ...`, `ruff2 timed out: ...`) and numbers
/// taken out, so that the same cause on different servers and sizes counts once.
fn general(reason: &str) -> String {
    let mut causes: Vec<String> = reason
        .split("; ")
        .map(|part| {
            let cause = part.split_once(": ").map_or(part, |(_, why)| why);
            cause
                .split(|c: char| c.is_ascii_digit())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("N")
        })
        .collect();
    causes.sort();
    causes.dedup();
    causes.join("; ")
}

/// Counts of verdicts, with the not-checked ones by reason.
#[derive(Debug, Default)]
pub struct Tally {
    pub right: usize,
    pub partial: usize,
    pub wrong: Vec<String>,
    pub not_checked: BTreeMap<String, usize>,
    pub errors: Vec<String>,
    /// Requests that got no answer at all within the limit.
    pub unanswered: usize,
}

impl Tally {
    pub fn add(&mut self, verdict: Verdict) {
        match verdict {
            Verdict::Right { partial } => {
                self.right += 1;
                self.partial += usize::from(partial);
            }
            Verdict::Wrong(why) => self.wrong.push(why),
            Verdict::NotChecked(reason) => *self.not_checked.entry(reason).or_default() += 1,
            Verdict::Error(why) => self.errors.push(why),
        }
    }

    pub fn not_checked_total(&self) -> usize {
        self.not_checked.values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(diagnostics: Value, outcome: &str, reason: Value) -> Value {
        json!({"id": 1, "result": {"diagnostics": diagnostics, "outcome": outcome, "reason": reason, "servers": []}})
    }

    #[test]
    fn an_answer_with_its_own_texts_diagnostics_is_right() {
        assert_eq!(text("fake", 6), "ERROR [r6.e0]\nERROR [r6.e1]\n");
        let own = json!([
            {"line": 1, "message": "found ERROR: [r6.e0]"},
            {"line": 2, "message": "found ERROR: [r6.e1]"},
        ]);
        let verdict = judge("fake", 6, &answer(own, "diagnostics", Value::Null));
        assert_eq!(verdict, Verdict::Right { partial: false });
    }

    #[test]
    fn another_texts_diagnostics_are_wrong() {
        let other = json!([
            {"line": 1, "message": "found ERROR: [r1.e0]"},
            {"line": 2, "message": "found ERROR: [r1.e1]"},
        ]);
        let verdict = judge("fake", 6, &answer(other, "diagnostics", Value::Null));
        assert!(matches!(verdict, Verdict::Wrong(_)));
        let verdict = judge("fake", 6, &answer(json!([]), "clean", Value::Null));
        assert!(matches!(verdict, Verdict::Wrong(_)));
    }

    #[test]
    fn not_checked_is_counted_by_reason_without_server_ids() {
        let reason = json!("fake0 is active: a later change reached it; fake1 timed out: still working after 30000 ms");
        let verdict = judge("fake", 0, &answer(json!([]), "not_checked", reason));
        assert_eq!(
            verdict,
            Verdict::NotChecked("a later change reached it; still working after N ms".to_string())
        );
    }
}
