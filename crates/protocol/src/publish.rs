//! Lean readers of the diagnostics servers send, straight from a frame's bytes: pushed
//! (`textDocument/publishDiagnostics`) and pulled (the answer to `textDocument/diagnostic`).
//! Only the fields squiggle uses, and no untagged enums (serde buffers those), since these are
//! the bulk of what servers send.

use std::borrow::Cow;

use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Range};
use serde::de::{self, Deserializer, Error as _, IgnoredAny, Visitor};
use serde::Deserialize;

/// The method of a publish.
pub const METHOD: &str = "textDocument/publishDiagnostics";

/// How far into a body [`looks_like_publish`] looks: servers write the method before the
/// params, right after `"jsonrpc"`.
const METHOD_WITHIN: usize = 128;

/// What a publish says: the document, the version it is for, and its diagnostics.
#[derive(Debug, Clone, PartialEq)]
pub struct Publish {
    /// The document's URI, as the server wrote it.
    pub uri: String,
    /// The document version the diagnostics are for, if the server says.
    pub version: Option<i32>,
    /// The diagnostics (fields squiggle does not use are left out).
    pub diagnostics: Vec<Diagnostic>,
}

/// Whether a body names the publish method near its start: worth reading with
/// [`parse_publish`] straight away, in one pass, without first reading what it is.
pub fn looks_like_publish(body: &[u8]) -> bool {
    near_start(body, b"\"textDocument/publishDiagnostics\"")
}

/// Whether `needle` occurs in the first [`METHOD_WITHIN`] bytes of `body`.
fn near_start(body: &[u8], needle: &[u8]) -> bool {
    body[..body.len().min(METHOD_WITHIN)]
        .windows(needle.len())
        .any(|window| window == needle)
}

/// Reads a publishDiagnostics notification from its whole JSON body; anything else (another
/// method, a request) is an error.
pub fn parse_publish(body: &[u8]) -> Result<Publish, serde_json::Error> {
    let note: Note = match serde_json::from_slice(body) {
        Ok(note) => note,
        // One odd diagnostic (an object for a code, a fractional line, a lone surrogate) does
        // not cost the rest of the publish: read again, each diagnostic on its own.
        Err(strict) => return parse_publish_leniently(body).ok_or(strict),
    };
    if note.method != METHOD || note.id.is_some() {
        return Err(serde_json::Error::custom(
            "not a publishDiagnostics notification",
        ));
    }
    let diagnostics = note
        .params
        .diagnostics
        .into_iter()
        .map(WireDiagnostic::into_lsp)
        .collect();
    Ok(Publish {
        uri: note.params.uri,
        version: note.params.version,
        diagnostics,
    })
}

/// [`parse_publish`] for a body the lean reader refused: as JSON values, lone surrogates made
/// U+FFFD, each diagnostic read on its own (see [`lenient_diagnostic`]); None when it is no
/// publish notification at all.
fn parse_publish_leniently(body: &[u8]) -> Option<Publish> {
    let lossy = String::from_utf8_lossy(body);
    let text = without_lone_surrogates(&lossy);
    let note: serde_json::Value = serde_json::from_str(&text).ok()?;
    if note.get("method")?.as_str()? != METHOD || note.get("id").is_some() {
        return None;
    }
    let params = note.get("params")?;
    let listed = params.get("diagnostics")?.as_array()?;
    let diagnostics: Vec<Diagnostic> = listed.iter().filter_map(lenient_diagnostic).collect();
    if diagnostics.len() < listed.len() {
        tracing::warn!(
            dropped = listed.len() - diagnostics.len(),
            "publishDiagnostics: diagnostics without a place were left out"
        );
    }
    Some(Publish {
        uri: params.get("uri")?.as_str()?.to_string(),
        version: (params.get("version").and_then(serde_json::Value::as_i64))
            .and_then(|version| i32::try_from(version).ok()),
        diagnostics,
    })
}

/// One diagnostic from a JSON value, whatever its odd fields: a position's fractional number
/// is rounded down, a code that is neither a number nor a string is its JSON text, a message
/// that is not a string too; None only without a range to place it.
fn lenient_diagnostic(value: &serde_json::Value) -> Option<Diagnostic> {
    let number = |value: &serde_json::Value| {
        (value.as_u64()).or_else(|| value.as_f64().filter(|n| *n >= 0.0).map(|n| n as u64))
    };
    let position = |value: &serde_json::Value| {
        let part = |name: &str| number(value.get(name)?).map(|n| n.min(u64::from(u32::MAX)) as u32);
        Some(lsp_types::Position::new(part("line")?, part("character")?))
    };
    let range = value.get("range")?;
    let range = Range::new(position(range.get("start")?)?, position(range.get("end")?)?);
    let severity = (value.get("severity").and_then(number)).and_then(|n| match n {
        1 => Some(DiagnosticSeverity::ERROR),
        2 => Some(DiagnosticSeverity::WARNING),
        3 => Some(DiagnosticSeverity::INFORMATION),
        4 => Some(DiagnosticSeverity::HINT),
        _ => None,
    });
    let code = value.get("code").and_then(|code| match code {
        serde_json::Value::Null => None,
        serde_json::Value::String(text) => Some(NumberOrString::String(text.clone())),
        serde_json::Value::Number(n) => {
            Some(match n.as_i64().and_then(|n| i32::try_from(n).ok()) {
                Some(n) => NumberOrString::Number(n),
                None => NumberOrString::String(n.to_string()),
            })
        }
        other => Some(NumberOrString::String(other.to_string())),
    });
    let message = match value.get("message") {
        Some(serde_json::Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    Some(Diagnostic {
        range,
        severity,
        code,
        source: value
            .get("source")
            .and_then(|s| s.as_str())
            .map(str::to_string),
        message,
        ..Diagnostic::default()
    })
}

/// JSON text with each `\uXXXX` escape of a lone surrogate (one not in a high-low pair) made
/// `\ufffd`, which JSON readers refuse in a string otherwise.
fn without_lone_surrogates(text: &str) -> Cow<'_, str> {
    if !text.contains("\\u") {
        return Cow::Borrowed(text);
    }
    let surrogate = |escape: &str| {
        (escape.len() == 6 && escape.starts_with("\\u"))
            .then(|| u16::from_str_radix(&escape[2..], 16).ok())
            .flatten()
            .filter(|unit| (0xD800..=0xDFFF).contains(unit))
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\\u") {
        // A backslash escaped itself: `\\u` is no escape.
        let backslashes = rest[..at].chars().rev().take_while(|c| *c == '\\').count();
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let escape = rest.get(..6).unwrap_or(rest);
        match (backslashes % 2, surrogate(escape)) {
            (0, Some(high @ 0xD800..=0xDBFF)) => {
                let next = rest.get(6..12).and_then(surrogate);
                match next {
                    Some(0xDC00..=0xDFFF) => {
                        out.push_str(&rest[..12]);
                        rest = &rest[12..];
                    }
                    _ => {
                        let _ = high;
                        out.push_str("\\ufffd");
                        rest = &rest[6..];
                    }
                }
            }
            (0, Some(_)) => {
                out.push_str("\\ufffd");
                rest = &rest[6..];
            }
            _ => {
                out.push_str(&rest[..2]);
                rest = &rest[2..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// A document's pulled diagnostics, as a server answered `textDocument/diagnostic`.
#[derive(Debug, Clone, PartialEq)]
pub enum PullReport {
    /// The document's diagnostics now, with the id to send next time.
    Full {
        /// The id to send with the next pull.
        result_id: Option<String>,
        /// The diagnostics.
        items: Vec<Diagnostic>,
    },
    /// Nothing changed since the result with this id.
    Unchanged {
        /// The id of the answer that still holds.
        result_id: String,
    },
}

/// Whether a body may be the answer to a pull: a response with a result (both named near its
/// start, where every server writes them), not a request. Worth trying [`parse_pull_answer`]
/// on: most responses servers send are answers to pulls.
pub fn looks_like_pull_answer(body: &[u8]) -> bool {
    near_start(body, b"\"result\"") && !near_start(body, b"\"method\"")
}

/// Reads the answer to a pull from a response's whole JSON body: its id (as JSON text) and its
/// report. Anything else (a request, an error, another result) is an error.
pub fn parse_pull_answer(body: &[u8]) -> Result<(String, PullReport), serde_json::Error> {
    let answer: Answer = serde_json::from_slice(body)?;
    if answer.method.is_some() {
        return Err(serde_json::Error::custom("not a response"));
    }
    let id = match answer.id {
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::String(s) => serde_json::Value::String(s).to_string(),
        _ => return Err(serde_json::Error::custom("not a request id")),
    };
    let report = match (answer.result.kind.as_ref(), answer.result.result_id) {
        ("full", result_id) => PullReport::Full {
            result_id,
            items: answer
                .result
                .items
                .into_iter()
                .map(WireDiagnostic::into_lsp)
                .collect(),
        },
        ("unchanged", Some(result_id)) => PullReport::Unchanged { result_id },
        _ => {
            return Err(serde_json::Error::custom(
                "not a document diagnostic report",
            ))
        }
    };
    Ok((id, report))
}

#[derive(Deserialize)]
struct Answer<'a> {
    #[serde(default)]
    method: Option<IgnoredAny>,
    id: serde_json::Value,
    #[serde(borrow)]
    result: Report<'a>,
}

#[derive(Deserialize)]
struct Report<'a> {
    #[serde(borrow)]
    kind: Cow<'a, str>,
    #[serde(rename = "resultId", default)]
    result_id: Option<String>,
    #[serde(default)]
    items: Vec<WireDiagnostic>,
}

#[derive(Deserialize)]
struct Note<'a> {
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(default)]
    id: Option<IgnoredAny>,
    params: Params,
}

#[derive(Deserialize)]
struct Params {
    uri: String,
    #[serde(default)]
    version: Option<i32>,
    diagnostics: Vec<WireDiagnostic>,
}

#[derive(Deserialize)]
struct WireDiagnostic {
    range: Range,
    #[serde(default)]
    severity: Option<DiagnosticSeverity>,
    #[serde(default)]
    code: Option<Code>,
    #[serde(default)]
    source: Option<String>,
    message: String,
}

impl WireDiagnostic {
    fn into_lsp(self) -> Diagnostic {
        Diagnostic {
            range: self.range,
            severity: self.severity,
            code: self.code.map(|Code(code)| code),
            source: self.source,
            message: self.message,
            ..Diagnostic::default()
        }
    }
}

/// A diagnostic code, a number or a string, read without buffering.
struct Code(NumberOrString);

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CodeVisitor;
        impl Visitor<'_> for CodeVisitor {
            type Value = Code;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Code, E> {
                i32::try_from(n)
                    .map(|n| Code(NumberOrString::Number(n)))
                    .map_err(|_| E::custom("code out of range"))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Code, E> {
                i32::try_from(n)
                    .map(|n| Code(NumberOrString::Number(n)))
                    .map_err(|_| E::custom("code out of range"))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Code, E> {
                Ok(Code(NumberOrString::String(s.to_string())))
            }
        }
        deserializer.deserialize_any(CodeVisitor)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_publish_reads_like_the_full_lsp_types() {
        let body = br#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{
            "uri":"file:///w/a.py","version":3,"diagnostics":[
              {"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":5}},"severity":1,
               "code":"E1","source":"fake","message":"bad","tags":[1],"relatedInformation":[],"data":{"x":1}},
              {"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"code":2322,"message":"num"}]}}"#;
        let publish = parse_publish(body).unwrap();
        let full: lsp_types::PublishDiagnosticsParams = serde_json::from_value(
            serde_json::from_slice::<serde_json::Value>(body).unwrap()["params"].clone(),
        )
        .unwrap();
        assert_eq!(publish.uri, full.uri.as_str());
        assert_eq!(publish.version, Some(3));
        for (lean, full) in publish.diagnostics.iter().zip(&full.diagnostics) {
            assert_eq!(
                (
                    lean.range,
                    lean.severity,
                    &lean.code,
                    &lean.source,
                    &lean.message
                ),
                (
                    full.range,
                    full.severity,
                    &full.code,
                    &full.source,
                    &full.message
                )
            );
        }
        assert_eq!(publish.diagnostics.len(), 2);
    }

    #[test]
    fn one_odd_diagnostic_does_not_cost_the_rest_of_the_publish() {
        let body = br#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{
            "uri":"file:///w/a.py","version":3,"diagnostics":[
              {"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":5}},"severity":1,"code":{"value":"E9","target":"x"},"message":"object code"},
              {"range":{"start":{"line":2.0,"character":0.5},"end":{"line":2,"character":3}},"severity":1,"message":"float line"},
              {"range":{"start":{"line":3,"character":0},"end":{"line":3,"character":1}},"severity":1,"message":"lone \ud800 surrogate, pair \ud83d\ude00, escaped \\ud800"},
              {"severity":1,"message":"no range"},
              {"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"code":7,"message":"fine"}]}}"#;
        let publish = parse_publish(body).unwrap();
        assert_eq!(publish.uri, "file:///w/a.py");
        assert_eq!(publish.version, Some(3));
        let messages: Vec<&str> = publish
            .diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(
            messages,
            [
                "object code",
                "float line",
                "lone \u{fffd} surrogate, pair 😀, escaped \\ud800",
                "fine"
            ]
        );
        assert_eq!(
            publish.diagnostics[0].code,
            Some(NumberOrString::String(
                r#"{"target":"x","value":"E9"}"#.to_string()
            ))
        );
        assert_eq!(
            publish.diagnostics[1].range.start,
            lsp_types::Position::new(2, 0)
        );
        assert_eq!(publish.diagnostics[3].code, Some(NumberOrString::Number(7)));
        // Not a publish at all: still an error.
        assert!(parse_publish(br#"{"jsonrpc":"2.0","method":"x","params":{}}"#).is_err());
    }

    #[test]
    fn only_a_publish_notification_is_read_and_the_quick_look_finds_its_method() {
        let params = r#""params":{"uri":"file:///w/a.py","diagnostics":[]}"#;
        let publish = format!(r#"{{"jsonrpc":"2.0","method":"{METHOD}",{params}}}"#);
        assert!(looks_like_publish(publish.as_bytes()));
        assert!(parse_publish(publish.as_bytes()).is_ok());
        let spaced = format!(r#"{{ "jsonrpc": "2.0", "method": "{METHOD}", {params}}}"#);
        assert!(looks_like_publish(spaced.as_bytes()));
        let request = format!(r#"{{"jsonrpc":"2.0","id":4,"method":"{METHOD}",{params}}}"#);
        assert!(parse_publish(request.as_bytes()).is_err());
        let other = format!(r#"{{"jsonrpc":"2.0","method":"$/progress",{params}}}"#);
        assert!(!looks_like_publish(other.as_bytes()));
        assert!(parse_publish(other.as_bytes()).is_err());
        let late = format!(
            r#"{{"jsonrpc":"2.0",{params},"padding":"{}","method":"{METHOD}"}}"#,
            "x".repeat(200)
        );
        assert!(!looks_like_publish(late.as_bytes()));
        assert!(parse_publish(late.as_bytes()).is_ok());
    }

    #[test]
    fn pull_answers_are_read_and_other_responses_are_not() {
        let item = r#"{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":5}},"severity":1,"code":"F821","message":"undefined"}"#;
        let full = format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{{"kind":"full","resultId":"r1","items":[{item}]}}}}"#
        );
        assert!(looks_like_pull_answer(full.as_bytes()));
        let sorted = format!(
            r#"{{"id":7,"jsonrpc":"2.0","result":{{"items":[{item}],"kind":"full","resultId":"r1"}}}}"#
        );
        assert!(looks_like_pull_answer(sorted.as_bytes()));
        assert_eq!(
            parse_pull_answer(sorted.as_bytes()).unwrap(),
            parse_pull_answer(full.as_bytes()).unwrap()
        );
        let (id, report) = parse_pull_answer(full.as_bytes()).unwrap();
        assert_eq!(id, "7");
        let PullReport::Full { result_id, items } = report else {
            panic!("{report:?}")
        };
        assert_eq!(result_id.as_deref(), Some("r1"));
        assert_eq!(items[0].message, "undefined");
        assert_eq!(items[0].range.start.character, 2);

        let unchanged =
            br#"{"jsonrpc":"2.0","id":"s-1","result":{"kind":"unchanged","resultId":"r1"}}"#;
        assert_eq!(
            parse_pull_answer(unchanged).unwrap(),
            (
                "\"s-1\"".to_string(),
                PullReport::Unchanged {
                    result_id: "r1".to_string()
                }
            )
        );
        let hover =
            br#"{"jsonrpc":"2.0","id":3,"result":{"contents":{"kind":"markdown","value":"x"}}}"#;
        assert!(parse_pull_answer(hover).is_err());
        let action = br#"{"jsonrpc":"2.0","id":3,"result":{"title":"Fix","kind":"quickfix"}}"#;
        assert!(parse_pull_answer(action).is_err());
        let error = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32802,"message":"cancelled"}}"#;
        assert!(!looks_like_pull_answer(error));
        assert!(parse_pull_answer(error).is_err());
        let locations = br#"{"jsonrpc":"2.0","id":4,"result":[{"uri":"file:///a","range":{}}]}"#;
        assert!(parse_pull_answer(locations).is_err());
        let request =
            br#"{"jsonrpc":"2.0","id":5,"method":"x","result":{"kind":"full","items":[]}}"#;
        assert!(!looks_like_pull_answer(request));
        assert!(parse_pull_answer(request).is_err());
    }

    #[test]
    fn a_bad_code_or_a_missing_message_is_read_as_well_as_it_can_be() {
        let bad_code = parse_publish(br#"{"method":"textDocument/publishDiagnostics","params":{"uri":"u","diagnostics":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"code":true,"message":"m"}]}}"#).unwrap();
        assert_eq!(
            bad_code.diagnostics[0].code,
            Some(NumberOrString::String("true".to_string()))
        );
        let no_message = parse_publish(br#"{"method":"textDocument/publishDiagnostics","params":{"uri":"u","diagnostics":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}}}]}}"#).unwrap();
        assert_eq!(no_message.diagnostics[0].message, "");
    }
}
