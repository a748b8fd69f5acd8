//! Watches a stream of newline-delimited JSON-RPC messages (MCP's stdio transport) for lines
//! that will not be read, over a size limit or nested deeper than a JSON parser goes, and finds
//! the id each such line carries as it streams by, so that its sender can be answered although
//! the line itself is never kept.

mod id_scan;

use id_scan::IdScan;

/// Arrays and objects nested deeper than this are not parsed (serde_json's recursion limit:
/// its 128th level fails).
pub const MAX_DEPTH: usize = 127;

/// A line that will not be read, which has ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LongLine {
    /// Its length, newline included.
    pub bytes: usize,
    /// The JSON text of its message's top-level `id`, when one was found.
    pub id: Option<String>,
    /// Why: over the size limit, else nested deeper than [`MAX_DEPTH`].
    pub too_deep: bool,
}

/// Counts the bytes of each line of a stream and tells which lines went over a limit.
#[derive(Debug)]
pub struct LineLimit {
    /// The most bytes a line may have, newline included.
    limit: usize,
    /// Bytes of the current line so far.
    len: usize,
    /// The current line's id, as it streams by.
    id: IdScan,
    /// The current line's nesting, as it streams by.
    depth: DepthScan,
}

/// The deepest nesting of arrays and objects in a JSON text, as its bytes stream by.
#[derive(Debug, Default)]
struct DepthScan {
    depth: usize,
    deepest: usize,
    in_string: bool,
    escaped: bool,
}

impl DepthScan {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.in_string {
                match b {
                    _ if self.escaped => self.escaped = false,
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'[' | b'{' => {
                    self.depth += 1;
                    self.deepest = self.deepest.max(self.depth);
                }
                b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
    }
}

impl LineLimit {
    /// A watcher for lines of at most `limit` bytes, newline included.
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            len: 0,
            id: IdScan::default(),
            depth: DepthScan::default(),
        }
    }

    /// Watches bytes as they are read; returns the lines that will not be read (over the limit,
    /// or nested too deep) that ended in them.
    pub fn watch(&mut self, bytes: &[u8]) -> Vec<LongLine> {
        let mut long = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let (line, ended) = match rest.iter().position(|&b| b == b'\n') {
                Some(newline) => (&rest[..=newline], true),
                None => (rest, false),
            };
            rest = &rest[line.len()..];
            self.len += line.len();
            self.id.feed(line);
            self.depth.feed(line);
            if ended {
                let too_deep = self.depth.deepest > MAX_DEPTH;
                if self.len > self.limit || too_deep {
                    long.push(LongLine {
                        bytes: self.len,
                        id: self.id.found(),
                        too_deep: self.len <= self.limit,
                    });
                }
                self.len = 0;
                self.id = IdScan::default();
                self.depth = DepthScan::default();
            }
        }
        long
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_within_the_limit_pass_unnoticed() {
        let mut limit = LineLimit::new(10);
        assert_eq!(limit.watch(b"{\"id\":1}\n123456789\n"), vec![]);
    }

    #[test]
    fn a_line_over_the_limit_is_told_when_it_ends_with_its_id() {
        let mut limit = LineLimit::new(10);
        assert_eq!(limit.watch(b"{\"id\":7,\"params\":\"xx"), vec![]);
        assert_eq!(limit.watch(b"xxxxxxxxxxxxxxxxx"), vec![]);
        assert_eq!(
            limit.watch(b"\"}\n{\"id\":8}\n"),
            vec![LongLine {
                bytes: 40,
                id: Some("7".to_string()),
                too_deep: false,
            }]
        );
    }

    #[test]
    fn the_limit_counts_the_newline_like_rmcp() {
        let mut limit = LineLimit::new(10);
        assert_eq!(limit.watch(b"123456789\n"), vec![]);
        assert_eq!(
            limit.watch(b"1234567890\n"),
            vec![LongLine {
                bytes: 11,
                id: None,
                too_deep: false,
            }]
        );
    }

    #[test]
    fn a_line_nested_deeper_than_a_parser_goes_is_told_with_its_id() {
        let mut limit = LineLimit::new(1 << 20);
        let nested = |levels: usize| {
            let deep = format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
            format!("{{\"params\":{deep},\"s\":\"[[[\\\"\",\"id\":3}}\n")
        };
        // The top-level object is one level: 126 more is the deepest a parser takes.
        assert_eq!(limit.watch(nested(MAX_DEPTH - 1).as_bytes()), vec![]);
        let long = limit.watch(nested(MAX_DEPTH).as_bytes());
        assert_eq!(long.len(), 1);
        assert_eq!(long[0].id.as_deref(), Some("3"));
        assert!(long[0].too_deep);
        let parsed = |levels| serde_json::from_str::<serde_json::Value>(&nested(levels)).is_ok();
        assert!(
            parsed(MAX_DEPTH - 1) && !parsed(MAX_DEPTH),
            "the same limit as serde_json"
        );
    }

    #[test]
    fn several_long_lines_in_one_read_are_each_told() {
        let mut limit = LineLimit::new(4);
        let long = limit.watch(b"{\"id\":\"a\"}\nok\n{\"x\":[1,2],\"id\":2}\n");
        let ids: Vec<_> = long.into_iter().map(|line| line.id).collect();
        assert_eq!(ids, vec![Some("\"a\"".to_string()), Some("2".to_string())]);
    }
}
