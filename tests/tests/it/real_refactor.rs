//! Rename and code actions against real servers (pyright, typescript-language-server): a
//! rename across three files previewed, applied and checked clean; a rename refused because a
//! file changed after its preview; a quick fix applied from a diagnostic.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use crate::support::real_server::{PYRIGHT, RUFF, TYPESCRIPT};
use crate::support::{assert_no_process_in, real_servers_turn_async};
use squiggle_actors::{ActionPick, EditFailure, EditMode, Severity, Squiggle, Target};

/// A project written into a fresh folder: (folder guard, resolved root).
fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap().join("project");
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    (dir, root)
}

/// The errors of a file, checked now, as `line:column message` (asked again while a cold
/// server on a busy machine does not answer in time, up to a deadline).
async fn errors(squiggle: &Squiggle, root: &Path, file: &str) -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut checked = squiggle.check_file(root.join(file), None).await;
    while !checked.outcome().is_checked() && std::time::Instant::now() < deadline {
        checked = squiggle.check_file(root.join(file), None).await;
    }
    assert!(checked.outcome().is_checked(), "{file}: {checked:?}");
    checked
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("{}:{} {}", d.line, d.column, d.message))
        .collect()
}

fn read(root: &Path, file: &str) -> String {
    std::fs::read_to_string(root.join(file)).unwrap()
}

/// Renames `old` (declared in `declared`) to `new` with a preview then an apply; asserts the
/// three files changed, nothing was written by the preview, and the re-check is clean.
async fn rename_across_three_files(
    squiggle: &Squiggle,
    root: &Path,
    declared: &str,
    old: &str,
    new: &str,
    files: [&str; 3],
) {
    for file in files {
        assert_eq!(errors(squiggle, root, file).await, Vec::<String>::new());
    }
    let target = || Target::Symbol {
        name: old.to_string(),
        line: None,
    };
    let preview = squiggle
        .rename(root.join(declared), target(), new, EditMode::Preview)
        .await
        .unwrap();
    let changed = preview.items.plan.changed_files();
    assert_eq!(changed, files, "{preview:?}");
    assert!(
        read(root, files[0]).contains(old),
        "the preview wrote nothing"
    );

    let expect = Some(preview.items.hashes.clone());
    let applied = squiggle
        .rename(
            root.join(declared),
            target(),
            new,
            EditMode::Apply { expect },
        )
        .await
        .unwrap();

    assert!(applied.items.applied);
    for file in files {
        let text = read(root, file);
        assert!(text.contains(new) && !text.contains(old), "{file}:\n{text}");
    }
    for check in &applied.items.checks {
        let errors: Vec<_> = check
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", check.file);
    }
    assert_eq!(applied.items.checks.len(), 3);
    for file in files {
        assert_eq!(
            errors(squiggle, root, file).await,
            Vec::<String>::new(),
            "clean re-check"
        );
    }
}

/// Previews a rename, changes `touched` on disk, and expects the apply to be refused.
async fn rename_refused_after_a_change(
    squiggle: &Squiggle,
    root: &Path,
    declared: &str,
    old: &str,
    touched: &str,
    comment: &str,
) {
    let target = || Target::Symbol {
        name: old.to_string(),
        line: None,
    };
    let preview = squiggle
        .rename(
            root.join(declared),
            target(),
            "renamedAgain",
            EditMode::Preview,
        )
        .await
        .unwrap();
    let before_declared = read(root, declared);
    let changed = format!("{}{comment}\n", read(root, touched));
    std::fs::write(root.join(touched), &changed).unwrap();

    let expect = Some(preview.items.hashes);
    let refused = squiggle
        .rename(
            root.join(declared),
            target(),
            "renamedAgain",
            EditMode::Apply { expect },
        )
        .await
        .unwrap_err();

    assert_eq!(refused, EditFailure::Stale(vec![touched.to_string()]));
    assert_eq!(read(root, declared), before_declared, "nothing was written");
    assert_eq!(read(root, touched), changed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_renames_across_files_refuses_a_stale_apply_and_adds_a_missing_import() {
    let _turn = real_servers_turn_async().await;
    let (_dir, root) = project(&[
        ("package.json", "{ \"name\": \"fixture\", \"private\": true }\n"),
        (
            "tsconfig.json",
            "{\n  \"compilerOptions\": { \"strict\": true, \"target\": \"es2020\", \"module\": \"commonjs\", \"noEmit\": true },\n  \"include\": [\"src\"]\n}\n",
        ),
        (
            "src/util.ts",
            "export function makeTotal(a: number): number {\n  return a + 1;\n}\n",
        ),
        (
            "src/a.ts",
            "import { makeTotal } from \"./util\";\n\nexport const x = makeTotal(1);\n",
        ),
        (
            "src/b.ts",
            "import { makeTotal } from \"./util\";\n\nexport const y = makeTotal(2) + makeTotal(3);\n",
        ),
    ]);
    let squiggle = TYPESCRIPT.start_patient(&root).await;

    let files = ["src/a.ts", "src/b.ts", "src/util.ts"];
    rename_across_three_files(
        &squiggle,
        &root,
        "src/util.ts",
        "makeTotal",
        "computeTotal",
        files,
    )
    .await;
    rename_refused_after_a_change(
        &squiggle,
        &root,
        "src/util.ts",
        "computeTotal",
        "src/b.ts",
        "// edited",
    )
    .await;

    // A quick fix from a diagnostic: the missing import.
    std::fs::write(root.join("src/c.ts"), "export const z = computeTotal(5);\n").unwrap();
    let missing = errors(&squiggle, &root, "src/c.ts").await;
    assert_eq!(missing, ["1:18 Cannot find name 'computeTotal'."]);
    let at = || Target::At {
        line: 1,
        column: 18,
    };
    let listed = squiggle
        .code_actions(root.join("src/c.ts"), at(), None, None)
        .await
        .unwrap();
    let fix = listed
        .items
        .actions
        .iter()
        .find(|a| a.title.starts_with("Add import from \"./util\""))
        .unwrap_or_else(|| panic!("{:?}", listed.items.actions));
    assert_eq!(fix.kind.as_deref(), Some("quickfix"));
    let pick = ActionPick {
        index: fix.index,
        title: Some(fix.title.clone()),
        mode: EditMode::Apply { expect: None },
    };
    let applied = squiggle
        .code_actions(root.join("src/c.ts"), at(), None, Some(pick))
        .await
        .unwrap();
    let (_, outcome) = applied.items.chosen.unwrap();
    assert!(outcome.applied);
    assert!(
        read(&root, "src/c.ts").contains("import { computeTotal } from \"./util\";"),
        "{}",
        read(&root, "src/c.ts")
    );
    assert_eq!(
        errors(&squiggle, &root, "src/c.ts").await,
        Vec::<String>::new()
    );
    squiggle.shutdown().await;
    assert_no_process_in(&root);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_renames_across_files_and_refuses_a_stale_apply() {
    let _turn = real_servers_turn_async().await;
    let (_dir, root) = project(&[
        (
            "pyproject.toml",
            "[project]\nname = \"fixture\"\nversion = \"0\"\n",
        ),
        (
            "util.py",
            "def make_total(a: int) -> int:\n    return a + 1\n",
        ),
        ("a.py", "from util import make_total\n\nx = make_total(1)\n"),
        (
            "b.py",
            "from util import make_total\n\ny = make_total(2) + make_total(3)\n",
        ),
    ]);
    let squiggle = PYRIGHT.start_patient(&root).await;

    let files = ["a.py", "b.py", "util.py"];
    rename_across_three_files(
        &squiggle,
        &root,
        "util.py",
        "make_total",
        "compute_total",
        files,
    )
    .await;
    rename_refused_after_a_change(
        &squiggle,
        &root,
        "util.py",
        "compute_total",
        "a.py",
        "# edited",
    )
    .await;
    squiggle.shutdown().await;
    assert_no_process_in(&root);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ruff_fixes_an_unused_import_from_its_diagnostic() {
    let _turn = real_servers_turn_async().await;
    let (_dir, root) = project(&[
        (
            "pyproject.toml",
            "[project]\nname = \"fixture\"\nversion = \"0\"\n",
        ),
        ("app.py", "import os\n\nx = 1\n"),
    ]);
    let squiggle = RUFF.start_patient(&root).await;
    let checked = squiggle.check_file(root.join("app.py"), None).await;
    let codes: Vec<_> = checked.diagnostics.iter().map(|d| d.code.clone()).collect();
    assert_eq!(codes, [Some("F401".to_string())], "{checked:?}");

    let at = || Target::At { line: 1, column: 8 };
    let listed = squiggle
        .code_actions(root.join("app.py"), at(), None, None)
        .await
        .unwrap();
    // Ruff's per-diagnostic quick fixes need the diagnostic's `data`, which squiggle does not
    // keep; its fix-all action fixes the same problem.
    let fix = listed
        .items
        .actions
        .iter()
        .find(|a| a.kind.as_deref() == Some("source.fixAll.ruff"))
        .unwrap_or_else(|| panic!("{:?}", listed.items.actions));
    let pick = |mode| ActionPick {
        index: fix.index,
        title: Some(fix.title.clone()),
        mode,
    };
    let preview = squiggle
        .code_actions(
            root.join("app.py"),
            at(),
            None,
            Some(pick(EditMode::Preview)),
        )
        .await
        .unwrap();
    let (_, outcome) = preview.items.chosen.unwrap();
    let diff = squiggle_protocol::navigation::render_diff(&outcome.plan, 20);
    assert!(diff.contains("-import os\n"), "{diff}");
    assert_eq!(read(&root, "app.py"), "import os\n\nx = 1\n");

    let expect = Some(outcome.hashes);
    let applied = squiggle
        .code_actions(
            root.join("app.py"),
            at(),
            None,
            Some(pick(EditMode::Apply { expect })),
        )
        .await
        .unwrap();
    let (_, outcome) = applied.items.chosen.unwrap();
    assert!(outcome.applied);
    assert!(!read(&root, "app.py").contains("import os"));
    assert_eq!(outcome.checks[0].diagnostics, vec![], "F401 is gone");
    squiggle.shutdown().await;
    assert_no_process_in(&root);
}
