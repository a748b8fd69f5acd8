//! `squiggle install`: a real install of one small server (ty, one wheel from PyPI) into a
//! temporary data folder, which `squiggle status` then finds. Skipped, saying so, when PyPI
//! cannot be reached.

#![allow(clippy::unwrap_used)]

use crate::support::squiggle_bin;

/// Runs squiggle in `cwd` with the data folder `data` and no user configuration.
fn run(cwd: &std::path::Path, data: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(squiggle_bin())
        .args(args)
        .current_dir(cwd)
        .env("SQUIGGLE_DATA_DIR", data)
        .env("XDG_CONFIG_HOME", cwd.join(".no-user-config"))
        .output()
        .unwrap()
}

#[test]
fn install_puts_a_server_in_the_data_folder_where_status_finds_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let data = root.join("data");
    let project = root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("main.py"), "print(1)\n").unwrap();
    // Only ty for Python, so that what status says depends on the install alone.
    std::fs::write(
        project.join("squiggle.toml"),
        "[servers.pyright]\nenabled = false\n[servers.basedpyright]\nenabled = false\n\
         [servers.ruff]\nenabled = false\n[servers.pylsp]\nenabled = false\n",
    )
    .unwrap();

    let before = run(
        &project,
        &data,
        &["status", "--root", ".", "--format", "json"],
    );
    let before: serde_json::Value = serde_json::from_slice(&before.stdout).unwrap();
    let ty = |status: &serde_json::Value| {
        let servers = status["servers"].as_array().unwrap();
        servers.iter().find(|s| s["id"] == "ty").unwrap().clone()
    };
    if ty(&before)["state"] == "installed" {
        eprintln!("SKIPPED: ty is already on PATH here, so the install cannot be told apart");
        return;
    }
    assert_eq!(ty(&before)["state"], "unavailable", "{before}");
    assert!(
        ty(&before)["detail"]
            .as_str()
            .unwrap()
            .contains("install: squiggle install ty"),
        "{before}"
    );

    let installed = run(&project, &data, &["install", "ty"]);
    let stderr = String::from_utf8_lossy(&installed.stderr);
    if !installed.status.success() {
        let offline = [
            "Could not find a version",
            "NewConnectionError",
            "Network is unreachable",
            "Temporary failure in name resolution",
            "No matching distribution",
        ];
        if offline.iter().any(|sign| stderr.contains(sign)) {
            eprintln!("SKIPPED: PyPI cannot be reached from here: {stderr}");
            return;
        }
        panic!("squiggle install ty failed: {stderr}");
    }
    assert!(stderr.contains("installed ty into"), "{stderr}");
    assert!(data.join("venv/bin/ty").is_file(), "{stderr}");

    let after = run(
        &project,
        &data,
        &["status", "--root", ".", "--format", "json"],
    );
    let after: serde_json::Value = serde_json::from_slice(&after.stdout).unwrap();
    assert_eq!(ty(&after)["state"], "installed", "{after}");
    assert_eq!(
        ty(&after)["detail"].as_str().unwrap(),
        data.join("venv/bin/ty").display().to_string()
    );
    assert_eq!(
        after["file_types"]["py"]["servers"],
        serde_json::json!(["ty"]),
        "{after}"
    );
}

#[test]
fn install_refuses_unknown_and_hand_installed_servers() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = run(dir.path(), &data, &["install", "gopls"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`gopls` is not on npm or PyPI; install it yourself: go install"),
        "{stderr}"
    );
    let out = run(dir.path(), &data, &["install", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!data.exists(), "nothing was installed");
}

/// Runs squiggle in `cwd` with the data folder `data`, no user configuration and `path` alone
/// as PATH.
fn run_with_path(
    cwd: &std::path::Path,
    data: &std::path::Path,
    path: &std::path::Path,
    args: &[&str],
) -> (String, String) {
    let out = std::process::Command::new(squiggle_bin())
        .args(args)
        .current_dir(cwd)
        .env("SQUIGGLE_DATA_DIR", data)
        .env("XDG_CONFIG_HOME", cwd.join(".no-user-config"))
        .env("PATH", path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (text(&out.stdout), text(&out.stderr))
}

#[test]
fn a_dry_run_says_an_installed_server_is_installed_and_names_what_it_cannot_install() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (data, bin, project) = (root.join("data"), root.join("bin"), root.join("project"));
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    // pyright is on PATH; nothing else is.
    let pyright = bin.join("pyright-langserver");
    std::fs::write(&pyright, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(
        &pyright,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(project.join("main.py"), "print(1)\n").unwrap();
    std::fs::write(project.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();

    let (stdout, stderr) =
        run_with_path(&project, &data, &bin, &["install", "--dry-run", "pyright"]);
    assert_eq!(stdout, "", "no npm command for an installed pyright");
    assert_eq!(
        stderr,
        format!(
            "squiggle: pyright is installed ({}); not installed again (--force installs it anyway)\n",
            pyright.display()
        )
    );
    let (forced, _) = run_with_path(
        &project,
        &data,
        &bin,
        &["install", "--dry-run", "--force", "pyright"],
    );
    assert!(forced.starts_with("npm install --prefix "), "{forced}");

    // What status says is missing, install installs or names: taplo (not on npm or PyPI) too.
    let (status, _) = run_with_path(&project, &data, &bin, &["status", "--format", "json"]);
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    let missing: Vec<&str> = (status["workspace"]["missing"].as_array().unwrap().iter())
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(missing, ["ruff", "taplo"], "{status}");
    let (commands, notes) = run_with_path(
        &project,
        &data,
        &bin,
        &["install", "--all-for-workspace", "--dry-run"],
    );
    assert!(commands.contains("ruff=="), "{commands}");
    assert!(!commands.contains("taplo"), "{commands}");
    assert_eq!(
        notes,
        "squiggle: taplo is missing too; squiggle cannot install it: cargo install taplo-cli --locked --features lsp (or brew install taplo)\n"
    );
}

/// Issue 42, item 1: in a TypeScript project without TypeScript, `install
/// --all-for-workspace` installs typescript-language-server (the stand-in squiggle can install)
/// rather than give up on typescript-native, which needs the project's own TypeScript 7.
#[test]
fn installing_for_a_typescript_project_without_typescript_installs_the_stand_in() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (data, bin, project) = (root.join("data"), root.join("bin"), root.join("project"));
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("app.ts"), "export const x: number = 1;\n").unwrap();
    std::fs::write(project.join("package.json"), "{\"name\": \"x\"}\n").unwrap();

    let (commands, notes) = run_with_path(
        &project,
        &data,
        &bin,
        &["install", "--all-for-workspace", "--dry-run"],
    );
    assert!(
        commands.contains("typescript-language-server@"),
        "{commands}\n{notes}"
    );
    assert!(
        notes.contains("squiggle: typescript-native is missing too; squiggle cannot install it")
            && notes
                .contains("squiggle: installing typescript, which serves those files in its place"),
        "{notes}"
    );
}
