//! Issue 24, through the daemon's hook: an edit's new errors come first in its block, marked
//! `NEW `, within the per-file cap; and a file changed on disk right before a hook is synced
//! before that hook answers, with no pause in between.

use serde_json::{json, Value};

use super::Daemons;
use crate::support::Run;

/// What a Claude Code hook told the model: its block's `reason`, or its `additionalContext`
/// (errors in other files only); empty when it said nothing.
fn reason(run: &Run) -> String {
    assert_eq!(
        run.code, 0,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    if run.stdout.is_empty() {
        return String::new();
    }
    let answer: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|err| panic!("{err}: {}", run.stdout));
    let context = &answer["hookSpecificOutput"]["additionalContext"];
    (answer["reason"].as_str().or(context.as_str()))
        .unwrap_or_default()
        .to_string()
}

/// The block line of the fake server's error `found ERROR: <what>` at `line`.
fn error_line(line: usize, what: &str) -> String {
    format!("{line}:1 found ERROR: {what} (E1)\n")
}

#[test]
fn thirteen_new_errors_in_a_file_with_nine_come_first_marked_within_the_cap() {
    let d = Daemons::new("");
    let old: String = (1..=9).map(|i| format!("ERROR old{i}\n")).collect();
    let file = d.ws.write("a.fake", &old);
    let first = reason(&d.hook(&d.ws.root, &file, &[]));
    // No baseline yet: every error, in line order, none marked.
    assert!(!first.contains("NEW "), "{first}");
    assert!(first.contains(&error_line(1, "old1")), "{first}");

    // The edit adds 13 errors after the old ones: by line, the old ones would fill the cap.
    let new: String = (1..=13).map(|i| format!("ERROR new{i}\n")).collect();
    std::fs::write(&file, format!("{old}{new}")).unwrap();
    let second = reason(&d.hook(&d.ws.root, &file, &[]));
    let news: String = (1..=13)
        .map(|i| format!("NEW {}", error_line(9 + i, &format!("new{i}"))))
        .collect();
    // The old ones are one line, not a demand (issue 42: old errors blocked every edit).
    let expected = format!(
        "LSP errors detected in this file, please fix:\na.fake:\n{news}LSP also reports errors from before this edit, not caused by it: 9 in a.fake (`squiggle check a.fake` lists them)."
    );
    assert_eq!(second.trim(), expected, "logs:\n{}", d.logs());

    // Nothing new since: no block, one line for the errors that were there.
    let run = d.hook(&d.ws.root, &file, &[]);
    let answer: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(answer.get("decision").is_none(), "not a block: {answer}");
    let third = reason(&run);
    assert_eq!(
        third.trim(),
        "LSP also reports errors from before this edit, not caused by it: 22 in a.fake (`squiggle check a.fake` lists them).",
    );
}

#[test]
fn a_fix_written_to_another_file_right_before_a_hook_is_seen_by_that_hook() {
    let d = Daemons::new("");
    let a = d.ws.write("a.fake", "fine\n");
    let b = d.ws.write("b.fake", "ERROR in b\n");
    let write = json!({"file_path": a, "content": "fine\n"});
    // B is open in the daemon, and its error is shown among the other files.
    assert_eq!(d.run(&["check", "b.fake"]).code, 1);
    let before = reason(&d.hook_tool(&d.ws.root, "Write", write.clone(), &[]));
    assert!(before.contains("1 in b.fake"), "{before}");

    for round in 0..5 {
        // Fixed on disk (same size, so within its time tick only the content tells), and at
        // once a hook for A: no pause for the file watcher.
        std::fs::write(&b, "fixed in b\n").unwrap();
        let after = reason(&d.hook_tool(&d.ws.root, "Write", write.clone(), &[]));
        assert_eq!(
            after,
            "",
            "round {round}: B's stale error; logs:\n{}",
            d.logs()
        );
        // Broken again, at once: the hook shows it.
        std::fs::write(&b, "ERROR in b\n").unwrap();
        let broken = reason(&d.hook_tool(&d.ws.root, "Write", write.clone(), &[]));
        assert!(
            broken.contains("b.fake:"),
            "round {round}: B's new error is missing: {broken}"
        );
    }
}

#[test]
fn a_write_marks_the_new_errors_of_other_files_first() {
    let d = Daemons::new("");
    d.ws.write("a.fake", "fine\n");
    let b = d.ws.write("b.fake", "ok\nERROR old\n");
    // B's baseline: its one error, as this check shows it.
    assert_eq!(d.run(&["check", "b.fake"]).code, 1);

    std::fs::write(&b, "ERROR new\nok\nERROR old\n").unwrap();
    let run = d.run(&["check", "--scope", "write", "a.fake", "b.fake"]);
    assert_eq!(
        run.stdout,
        format!(
            "\nLSP errors detected in other files:\nb.fake:\nNEW {}LSP also reports errors from before this edit, not caused by it: 1 in b.fake (`squiggle check b.fake` lists them).",
            error_line(1, "new"),
        ),
        "stderr: {}",
        run.stderr
    );
}

#[test]
fn the_later_hook_wakes_the_model_with_the_importer_the_edit_hook_had_no_time_for() {
    // TypeScript files served by the fake server, pulled only. The edit hook, run as the
    // plugin runs it (`--with-later`), looks at importers for half the time the edited file's
    // answer took: no time for b.ts, whose pull takes 3 s anyway.
    let script = json!({"pull": true, "diagnose_on": [], "pull_busy_ms": [0, 3000]});
    let (d, a, before) = importers("", &script);
    let edit = "export const beta = 2;\n";
    std::fs::write(&a, edit).unwrap();
    let input =
        json!({"file_path": a, "old_string": before, "new_string": edit, "original": before});

    // Both at once, as Claude Code runs a tool's hooks.
    let (now, later) = std::thread::scope(|scope| {
        let later =
            scope.spawn(|| d.hook_with(&["--later"], &d.ws.root, "Edit", input.clone(), &[]));
        let now = d.hook_with(&["--with-later"], &d.ws.root, "Edit", input.clone(), &[]);
        (now, later.join().unwrap())
    });

    let told = reason(&now);
    assert!(
        told == "LSP goes on checking 1 other file that imports src/a.ts: squiggle will tell you if this edit broke them.",
        "the test's premise: the edit hook had no time for b.ts: {told}\nlogs:\n{}",
        d.logs()
    );
    assert_eq!(
        (later.code, later.stdout.as_str()),
        (2, ""),
        "stderr: {}\nlogs:\n{}",
        later.stderr,
        d.logs()
    );
    assert!(
        later.stderr.starts_with(
            "LSP errors your edit of src/a.ts caused in other files, found after its answer:\n"
        ),
        "{}",
        later.stderr
    );
    assert!(later.stderr.contains("src/b.ts"), "{}", later.stderr);
    assert!(later.stderr.contains("NEW "), "{}", later.stderr);
    assert!(
        later.stderr.contains("src/a.ts has no alpha"),
        "{}",
        later.stderr
    );
    assert!(
        !later.stderr.contains("ERROR from before"),
        "{}",
        later.stderr
    );

    // Undone: the later hook checks b.ts again and finds nothing the undoing caused there.
    std::fs::write(&a, before).unwrap();
    let undo = json!({"file_path": a, "old_string": edit, "new_string": before, "original": edit});
    let (now, later) = std::thread::scope(|scope| {
        let later =
            scope.spawn(|| d.hook_with(&["--later"], &d.ws.root, "Edit", undo.clone(), &[]));
        let now = d.hook_with(&["--with-later"], &d.ws.root, "Edit", undo.clone(), &[]);
        (now, later.join().unwrap())
    });
    let told = reason(&now);
    assert!(!told.contains("src/b.ts:"), "{told}");
    assert_eq!(
        (later.code, later.stdout.as_str(), later.stderr.as_str()),
        (0, "", ""),
        "logs:\n{}",
        d.logs()
    );
}

/// TypeScript files served by the fake server playing `script`: src/a.ts (its text returned)
/// and src/b.ts, which imports `alpha` from it and has an error of its own.
fn importers(extra: &str, script: &Value) -> (Daemons, std::path::PathBuf, &'static str) {
    let d = Daemons::scripted(extra, script);
    let config = std::fs::read_to_string(d.ws.root.join("squiggle.toml")).unwrap();
    d.ws.write(
        "squiggle.toml",
        &config.replace("extensions = [\"fake\"]", "extensions = [\"ts\"]"),
    );
    let before = "export const alpha = 1;\nexport const beta = 2;\n";
    let a = d.ws.write("src/a.ts", before);
    d.ws.write(
        "src/b.ts",
        "import { alpha } from './a';\n// NEEDS src/a.ts alpha\n// ERROR from before\n",
    );
    (d, a, before)
}

#[test]
fn without_a_daemon_the_edit_hook_with_later_looks_as_long_as_ever() {
    // Nothing goes on after an answer given in the hook's own process: it looks at the
    // importers for `dependent_files_wait_ms` (5 s here), not for half the edited file's
    // answer, and promises nothing. b.ts's pull takes 2 s.
    let script = json!({"pull": true, "diagnose_on": [], "pull_busy_ms": [0, 2000]});
    let (d, a, before) = importers("dependent_files_wait_ms = 5000", &script);
    let edit = "export const beta = 2;\n";
    std::fs::write(&a, edit).unwrap();
    let input =
        json!({"file_path": a, "old_string": before, "new_string": edit, "original": before});
    let off = [("SQUIGGLE_NO_DAEMON", std::ffi::OsStr::new("1"))];
    let told = reason(&d.hook_with(&["--with-later"], &d.ws.root, "Edit", input, &off));
    assert!(!told.contains("goes on checking"), "{told}");
    assert!(told.contains("src/b.ts:"), "{told}");
    assert!(told.contains("src/a.ts has no alpha"), "{told}");
}

#[test]
fn the_next_edit_hook_tells_what_the_daemon_found_after_an_earlier_edits_answer() {
    // The plain edit hook (as Gemini CLI runs it, with no background hook beside it): through
    // the daemon it looks at importers for a third of the edited file's answer time, no time
    // for b.ts (its pull, by the search after the answer, takes 1 s); the daemon goes on with
    // it, and the next edit's answer tells what the first broke there, once.
    let script = json!({"pull": true, "diagnose_on": [], "pull_busy_ms": [0, 1000]});
    let (d, a, before) = importers("", &script);
    let c = d.ws.write("src/c.ts", "export const gamma = 3;\n");
    let edit = "export const beta = 2;\n";
    std::fs::write(&a, edit).unwrap();
    let input =
        json!({"file_path": a, "old_string": before, "new_string": edit, "original": before});
    let told = reason(&d.hook_with(&[], &d.ws.root, "Edit", input, &[]));
    assert_eq!(
        told,
        "LSP goes on checking 1 other file that imports src/a.ts: squiggle will tell you if this edit broke them.",
        "logs:\n{}",
        d.logs()
    );
    let found = crate::support::wait_until(std::time::Duration::from_secs(30), || {
        d.logs()
            .contains("found errors the edit caused in other files")
    });
    assert!(
        found,
        "the daemon's search found nothing; logs:\n{}",
        d.logs()
    );

    // The agent's next edit, of another file.
    let gamma = "export const gamma = 4;\n";
    std::fs::write(&c, gamma).unwrap();
    let next = json!({"file_path": c, "old_string": "3", "new_string": "4"});
    let told = reason(&d.hook_with(&[], &d.ws.root, "Edit", next.clone(), &[]));
    assert!(
        told.contains("LSP errors your earlier edit of src/a.ts caused in other files:\nsrc/b.ts:"),
        "{told}\nlogs:\n{}",
        d.logs()
    );
    assert!(told.contains("src/a.ts has no alpha"), "{told}");
    assert!(!told.contains("ERROR from before"), "{told}");
    // Once.
    let again = reason(&d.hook_with(&[], &d.ws.root, "Edit", next, &[]));
    assert!(!again.contains("earlier edit"), "{again}");
}

/// Issue 42: a revert that restores the original text is not blocked for the error the file
/// always had; the block is for what an edit introduced, and what was there before is one line.
#[test]
fn a_revert_is_not_blocked_for_the_error_the_file_always_had() {
    let d = Daemons::new("");
    let file = d.ws.write("a.fake", "ERROR always\n");
    let is_block = |run: &Run| {
        let answer: Value = serde_json::from_str(&run.stdout).unwrap();
        answer["decision"] == "block"
    };
    // No baseline yet: whether the edit made it is unknown, so it is shown to be fixed.
    let first = d.hook(&d.ws.root, &file, &[]);
    assert!(is_block(&first), "{first:?}");

    std::fs::write(&file, "ERROR always\nERROR new\n").unwrap();
    let edit = d.hook(&d.ws.root, &file, &[]);
    assert!(is_block(&edit), "{edit:?}");
    let text = reason(&edit);
    assert!(
        text.contains(&format!("NEW {}", error_line(2, "new"))),
        "{text}"
    );
    assert!(
        !text.contains("found ERROR: always"),
        "the old error is not listed: {text}"
    );
    assert!(text.ends_with("errors from before this edit, not caused by it: 1 in a.fake (`squiggle check a.fake` lists them)."), "{text}");

    std::fs::write(&file, "ERROR always\n").unwrap();
    let revert = d.hook(&d.ws.root, &file, &[]);
    assert!(!is_block(&revert), "a revert is not blocked: {revert:?}");
    assert_eq!(
        reason(&revert).trim(),
        "LSP also reports errors from before this edit, not caused by it: 1 in a.fake (`squiggle check a.fake` lists them)."
    );
}
