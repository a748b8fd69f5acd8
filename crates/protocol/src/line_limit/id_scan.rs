//! Finds the top-level `id` of a JSON object as its bytes stream by, without keeping them.

/// The longest id kept; a longer one counts as not found.
const MAX_ID: usize = 256;

/// What comes next in the top-level object.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Nothing read yet: the object's `{`.
    #[default]
    Start,
    /// A member's key (or the object's end).
    Key,
    /// The colon after a key.
    Colon,
    /// A member's value.
    Value,
    /// Not an object, or the id was found: nothing more to learn.
    Done,
}

/// A streaming finder of a message's top-level `id`.
#[derive(Debug, Default)]
pub(super) struct IdScan {
    expect: Expect,
    /// Nesting depth: 1 inside the top-level object.
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The key being read at depth 1 (only enough of it to tell `id`), and whether it is open.
    key: Vec<u8>,
    reading_key: bool,
    /// Whether the last key read was `id`.
    key_is_id: bool,
    /// The value of `id` while it is read.
    value: Option<Vec<u8>>,
    /// The id's JSON text, once read.
    found: Option<String>,
}

impl IdScan {
    /// Reads more bytes of the message.
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.expect == Expect::Done {
                return;
            }
            self.step(b);
        }
    }

    /// The id's JSON text, if the whole of it was read.
    pub(super) fn found(&self) -> Option<String> {
        self.found.clone()
    }

    fn step(&mut self, b: u8) {
        if self.in_string {
            self.keep(b);
            if self.reading_key && self.key.len() < 3 {
                self.key.push(b);
            }
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.reading_key {
                    self.reading_key = false;
                    self.key_is_id = self.key == b"id\"";
                    self.expect = Expect::Colon;
                }
            }
            return;
        }
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'{' if self.expect == Expect::Start => {
                self.depth = 1;
                self.expect = Expect::Key;
            }
            _ if self.expect == Expect::Start => self.expect = Expect::Done,
            b'"' => {
                self.keep(b);
                self.in_string = true;
                if self.depth == 1 && self.expect == Expect::Key {
                    self.reading_key = true;
                    self.key.clear();
                }
            }
            b'{' | b'[' => {
                self.keep(b);
                self.depth += 1;
            }
            b'}' | b']' if self.depth == 1 => {
                self.end_value();
                self.expect = Expect::Done;
            }
            b'}' | b']' => {
                self.keep(b);
                self.depth -= 1;
            }
            b':' if self.depth == 1 && self.expect == Expect::Colon => {
                self.expect = Expect::Value;
                if self.key_is_id {
                    self.value = Some(Vec::new());
                }
            }
            b',' if self.depth == 1 => {
                self.end_value();
                if self.expect != Expect::Done {
                    self.expect = Expect::Key;
                }
            }
            _ => self.keep(b),
        }
    }

    /// Keeps a byte of the id's value, if one is being read (dropping an over-long one).
    fn keep(&mut self, b: u8) {
        if let Some(value) = &mut self.value {
            if value.len() < MAX_ID {
                value.push(b);
            } else {
                self.value = None;
                self.key_is_id = false;
            }
        }
    }

    /// Ends a top-level member's value: an id read whole is found, and the search is over.
    fn end_value(&mut self) {
        if let Some(value) = self.value.take() {
            self.found = String::from_utf8(value).ok().filter(|v| !v.is_empty());
            self.expect = Expect::Done;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_of(message: &str) -> Option<String> {
        let mut scan = IdScan::default();
        scan.feed(message.as_bytes());
        scan.found()
    }

    fn id_of_bytewise(message: &str) -> Option<String> {
        let mut scan = IdScan::default();
        for byte in message.as_bytes() {
            scan.feed(std::slice::from_ref(byte));
        }
        scan.found()
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_stands() {
        for (message, id) in [
            (r#"{"jsonrpc":"2.0","id":7,"method":"m"}"#, Some("7")),
            (
                r#"{"method":"m","params":{"id":1,"x":[{"id":2}]},"id":"a\"b"}"#,
                Some(r#""a\"b""#),
            ),
            (r#" { "id" : -12 } "#, Some("-12")),
            (
                r#"{"params":{"s":"\"id\":5,"},"id":1180591620717411303424}"#,
                Some("1180591620717411303424"),
            ),
            (r#"{"ids":1,"xid":2,"i":3}"#, None),
            (r#"{"method":"notifications/x"}"#, None),
            (r#"[{"id":1}]"#, None),
            (r#"{"id":"#, None),
            (r#"{"id":{"nested":1}}"#, Some(r#"{"nested":1}"#)),
        ] {
            assert_eq!(id_of(message).as_deref(), id, "{message}");
            assert_eq!(
                id_of_bytewise(message).as_deref(),
                id,
                "{message} byte by byte"
            );
        }
    }

    #[test]
    fn an_over_long_id_is_not_found() {
        let message = format!(r#"{{"id":"{}"}}"#, "x".repeat(MAX_ID));
        assert_eq!(id_of(&message), None);
    }
}
