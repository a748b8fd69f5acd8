//! The why of each failed test, gathered from `cargo test`'s output as it streams by, to say
//! again at the end: libtest prints a failure's message above its backtrace, in the middle of
//! a long run's output, where a reader of only its tail (a CI summary) never sees it.

/// How many lines of one failure's output are said again, at most.
const MAX_LINES: usize = 30;

/// The failures read so far, each its test's name and the first lines of its output, up to
/// the backtrace.
#[derive(Debug, Default)]
pub struct Failures {
    done: Vec<(String, Vec<String>)>,
    /// The failure being read, while its lines still count.
    reading: Option<(String, Vec<String>)>,
}

impl Failures {
    /// Reads one line of `cargo test`'s standard output.
    pub fn read(&mut self, line: &str) {
        if let Some(name) = line
            .strip_prefix("---- ")
            .and_then(|rest| rest.strip_suffix(" stdout ----"))
        {
            self.end();
            self.reading = Some((name.to_string(), Vec::new()));
            return;
        }
        let ends = line == "failures:"
            || line.starts_with("stack backtrace:")
            || line.starts_with("note: run with `RUST_BACKTRACE=1`");
        if ends {
            self.end();
            return;
        }
        if let Some((_, lines)) = &mut self.reading {
            match lines.len() < MAX_LINES {
                true => lines.push(line.to_string()),
                false => self.end(),
            }
        }
    }

    /// Ends the failure being read.
    fn end(&mut self) {
        if let Some(failure) = self.reading.take() {
            self.done.push(failure);
        }
    }

    /// The failures read, to print after the run: a heading per test, then its lines.
    pub fn summary(mut self) -> String {
        self.end();
        let mut out = String::new();
        for (name, lines) in &self.done {
            out.push_str(&format!("xtask: {name} failed:\n"));
            for line in lines.iter().filter(|line| !line.trim().is_empty()) {
                out.push_str(&format!("    {line}\n"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary_of(output: &[&str]) -> String {
        let mut failures = Failures::default();
        for line in output {
            failures.read(line);
        }
        failures.summary()
    }

    #[test]
    fn each_failure_is_said_with_its_message_and_without_its_backtrace() {
        let output = [
            "test a::one ... ok",
            "test a::two ... FAILED",
            "",
            "failures:",
            "",
            "---- a::two stdout ----",
            "",
            "thread 'a::two' panicked at tests/a.rs:3:5:",
            "left: 1",
            "stack backtrace:",
            "   0: std::panicking::begin_panic",
            "---- a::three stdout ----",
            "thread 'a::three' panicked at tests/a.rs:9:5:",
            "no report",
            "",
            "failures:",
            "    a::two",
            "test result: FAILED. 1 passed; 2 failed",
        ];
        assert_eq!(
            summary_of(&output),
            "xtask: a::two failed:\n    thread 'a::two' panicked at tests/a.rs:3:5:\n    left: 1\n\
             xtask: a::three failed:\n    thread 'a::three' panicked at tests/a.rs:9:5:\n    no report\n"
        );
    }

    #[test]
    fn a_passing_run_says_nothing_and_a_long_failure_is_cut() {
        assert_eq!(summary_of(&["test a ... ok", "test result: ok."]), "");
        let long: Vec<String> = (0..100).map(|n| format!("line {n}")).collect();
        let mut output = vec!["---- long stdout ----"];
        output.extend(long.iter().map(String::as_str));
        let summary = summary_of(&output);
        assert_eq!(summary.lines().count(), 1 + MAX_LINES, "{summary}");
        assert!(summary.ends_with(&format!("    line {}\n", MAX_LINES - 1)));
    }
}
