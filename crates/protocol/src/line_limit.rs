//! Watches a stream of newline-delimited JSON-RPC messages (MCP's stdio transport) for lines
//! over a size limit, and finds the id each such line carries as it streams by, so that its
//! sender can be answered although the line itself is never kept.

mod id_scan;

use id_scan::IdScan;

/// A line over the limit that has ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LongLine {
    /// Its length, newline included.
    pub bytes: usize,
    /// The JSON text of its message's top-level `id`, when one was found.
    pub id: Option<String>,
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
}

impl LineLimit {
    /// A watcher for lines of at most `limit` bytes, newline included.
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            len: 0,
            id: IdScan::default(),
        }
    }

    /// Watches bytes as they are read; returns the lines over the limit that ended in them.
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
            if ended {
                if self.len > self.limit {
                    long.push(LongLine {
                        bytes: self.len,
                        id: self.id.found(),
                    });
                }
                self.len = 0;
                self.id = IdScan::default();
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
                id: Some("7".to_string())
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
                id: None
            }]
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
