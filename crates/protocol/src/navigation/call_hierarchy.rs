//! Call hierarchy results: who calls a function (incoming) or what it calls (outgoing), each
//! caller or callee with its call sites, nested up to a few levels, and their compact text.

use serde::{Deserialize, Serialize};

use super::render::{plural, push_location_line};
use super::types::Location;

/// Which way a call hierarchy goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// The callers of the symbol.
    Incoming,
    /// The functions the symbol calls.
    Outgoing,
}

impl std::str::FromStr for Direction {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "incoming" => Ok(Direction::Incoming),
            "outgoing" => Ok(Direction::Outgoing),
            other => Err(format!(
                "`direction` must be \"incoming\" or \"outgoing\", not {other:?}"
            )),
        }
    }
}

/// The deepest a call hierarchy is followed.
pub const MAX_DEPTH: u32 = 3;

/// One caller (incoming) or callee (outgoing), with where the calls are and, one level deeper,
/// its own callers or callees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    /// The caller's or callee's name.
    pub name: String,
    /// Its kind ("function", "method", ...).
    pub kind: String,
    /// The server's detail (often the container or signature), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Its file, relative to the workspace root.
    pub file: String,
    /// 1-based line of its name.
    pub line: u32,
    /// 1-based column of its name, in characters.
    pub column: u32,
    /// The call sites, each with its line of source: in the caller's file for incoming calls,
    /// in the asked-about symbol's file for outgoing ones.
    pub sites: Vec<Location>,
    /// The next level (callers of this caller, callees of this callee), when asked deeper.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub calls: Vec<Call>,
}

/// How many calls (at every level) and call sites a tree holds.
pub fn count_calls(calls: &[Call]) -> (usize, usize) {
    calls.iter().fold((0, 0), |(callers, sites), call| {
        let (deeper, deeper_sites) = count_calls(&call.calls);
        (
            callers + 1 + deeper,
            sites + call.sites.len() + deeper_sites,
        )
    })
}

/// The calls sorted by file and line, each one's sites sorted and without repeats, at every level.
pub fn sort_calls(calls: &mut [Call]) {
    calls.sort_by(|a, b| {
        (&a.file, a.line, a.column, &a.name).cmp(&(&b.file, b.line, b.column, &b.name))
    });
    for call in calls.iter_mut() {
        call.sites
            .sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
        call.sites
            .dedup_by(|a, b| a.file == b.file && a.line == b.line && a.column == b.column);
        sort_calls(&mut call.calls);
    }
}

/// Caps for rendering a call tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallCaps {
    /// At most this many callers/callees in all (every level).
    pub max_calls: usize,
    /// At most this many call sites listed under one caller/callee.
    pub max_sites: usize,
}

/// A call tree as text: a first line `<title>: N callers, M call sites` (or `callees`; `none`
/// when empty), then per call `kind name  file:line` with its sites indented below as
/// `  file:line:col  source` (the file left out when it is the call's own), two more spaces
/// per level; at most `max_calls` calls, then `... and N more callers`; sites over
/// `max_sites` end with `... and N more call sites`.
pub fn render_calls(title: &str, direction: Direction, calls: &[Call], caps: CallCaps) -> String {
    let noun = match direction {
        Direction::Incoming => "caller",
        Direction::Outgoing => "callee",
    };
    let (total, sites) = count_calls(calls);
    if total == 0 {
        return format!("{title}: none\n");
    }
    let mut out = format!(
        "{title}: {}, {}\n",
        plural(total, noun),
        plural(sites, "call site")
    );
    let mut shown = 0;
    write_calls(&mut out, calls, 0, caps, &mut shown);
    if total > shown {
        out.push_str(&format!("{}\n", more(total - shown, noun)));
    }
    out
}

/// `... and 1 more caller`, `... and 3 more callers`.
fn more(n: usize, noun: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("... and {n} more {noun}{s}")
}

/// Appends the lines of `calls` at `depth`, stopping once `shown` reaches the cap.
fn write_calls(out: &mut String, calls: &[Call], depth: usize, caps: CallCaps, shown: &mut usize) {
    let indent = "  ".repeat(depth * 2);
    for call in calls {
        if *shown >= caps.max_calls {
            return;
        }
        *shown += 1;
        out.push_str(&format!(
            "{indent}{} {}  {}:{}\n",
            call.kind, call.name, call.file, call.line
        ));
        for site in call.sites.iter().take(caps.max_sites) {
            let place = if site.file == call.file {
                format!("{}:{}", site.line, site.column)
            } else {
                format!("{}:{}:{}", site.file, site.line, site.column)
            };
            push_location_line(out, &format!("{indent}  "), &place, &site.text);
        }
        if call.sites.len() > caps.max_sites {
            let left = more(call.sites.len() - caps.max_sites, "call site");
            out.push_str(&format!("{indent}  {left}\n"));
        }
        write_calls(out, &call.calls, depth + 1, caps, shown);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::navigation::types::tests::location;

    fn call(name: &str, file: &str, line: u32, sites: Vec<Location>, calls: Vec<Call>) -> Call {
        Call {
            name: name.to_string(),
            kind: "function".to_string(),
            detail: None,
            file: file.to_string(),
            line,
            column: 5,
            sites,
            calls,
        }
    }

    const CAPS: CallCaps = CallCaps {
        max_calls: 10,
        max_sites: 2,
    };

    #[test]
    fn callers_are_listed_with_their_call_sites_and_the_next_level_indented() {
        let tree = vec![call(
            "main",
            "app.py",
            6,
            vec![location("app.py", 7, 13, "small = make_circle(1.0)")],
            vec![call(
                "run",
                "cli.py",
                2,
                vec![location("cli.py", 3, 5, "main()")],
                vec![],
            )],
        )];
        assert_eq!(
            render_calls(
                "incoming calls to make_circle (shapes.py:17:5)",
                Direction::Incoming,
                &tree,
                CAPS
            ),
            "incoming calls to make_circle (shapes.py:17:5): 2 callers, 2 call sites\n\
             function main  app.py:6\n  7:13  small = make_circle(1.0)\n\
             \x20   function run  cli.py:2\n      3:5  main()\n"
        );
    }

    #[test]
    fn outgoing_sites_in_another_file_name_it_and_caps_say_what_was_left_out() {
        let sites = vec![
            location("app.py", 7, 13, "a()"),
            location("app.py", 8, 13, "a()"),
            location("app.py", 9, 13, "a()"),
        ];
        let tree = vec![
            call("a", "lib.py", 1, sites, vec![]),
            call("b", "lib.py", 4, vec![], vec![]),
        ];
        let caps = CallCaps {
            max_calls: 1,
            max_sites: 2,
        };
        assert_eq!(
            render_calls("outgoing calls from main", Direction::Outgoing, &tree, caps),
            "outgoing calls from main: 2 callees, 3 call sites\n\
             function a  lib.py:1\n  app.py:7:13  a()\n  app.py:8:13  a()\n  ... and 1 more call site\n\
             ... and 1 more callee\n"
        );
    }

    #[test]
    fn no_calls_is_said() {
        assert_eq!(
            render_calls("incoming calls to x", Direction::Incoming, &[], CAPS),
            "incoming calls to x: none\n"
        );
    }

    #[test]
    fn a_direction_is_parsed_from_its_name_or_refused() {
        assert_eq!("incoming".parse(), Ok(Direction::Incoming));
        assert_eq!("outgoing".parse(), Ok(Direction::Outgoing));
        assert!("up"
            .parse::<Direction>()
            .unwrap_err()
            .contains("\"incoming\" or \"outgoing\""));
    }

    #[test]
    fn sorting_orders_calls_and_drops_repeated_sites() {
        let mut tree = vec![
            call("b", "z.py", 1, vec![], vec![]),
            call(
                "a",
                "a.py",
                9,
                vec![
                    location("a.py", 3, 1, "x"),
                    location("a.py", 2, 1, "y"),
                    location("a.py", 3, 1, "x"),
                ],
                vec![],
            ),
        ];
        sort_calls(&mut tree);
        assert_eq!(tree[0].name, "a");
        assert_eq!(
            tree[0].sites.iter().map(|s| s.line).collect::<Vec<_>>(),
            vec![2, 3]
        );
        assert_eq!(count_calls(&tree), (2, 2));
    }
}
