//! Telling a command that is found but cannot run (rustup's proxy without the component, a
//! broken shim) from one that runs: its version flag, run briefly.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a probe may take; a command still running then is given the benefit of the doubt.
pub const PROBE_LIMIT: Duration = Duration::from_secs(3);

/// How much of a probe's output is kept for the reason.
const OUTPUT_LIMIT: u64 = 16 * 1024;

/// How often a program that is busy (being written) is tried again.
const BUSY_RETRIES: usize = 20;

/// The longest reason taken from a probe's output, in characters.
const REASON_CHARS: usize = 200;

/// The arguments that make a known server command print its version and exit, by the command's
/// file name; None for commands that have no such flag (pyright-langserver, for one, only
/// complains that no connection was given), which are not probed.
pub fn version_args(command: &str) -> Option<&'static [&'static str]> {
    let name = Path::new(command).file_name()?.to_str()?;
    Some(match name {
        "rust-analyzer"
        | "typescript-language-server"
        | "ruff"
        | "clangd"
        | "bash-language-server" => &["--version"],
        "gopls" => &["version"],
        _ => return None,
    })
}

/// Runs `program args` with stdin closed, `env` added and `cwd` as its folder, for at most
/// `limit`. Err says why when it cannot be started or exits unsuccessfully; a command still
/// running at the limit is killed and counts as runnable.
pub fn probe(
    program: &Path,
    args: &[&str],
    env: &BTreeMap<String, String>,
    cwd: &Path,
    limit: Duration,
) -> Result<(), String> {
    let shown = shown_command(program, args);
    let spawn = || {
        Command::new(program)
            .args(args)
            .envs(env)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
    };
    // A program just written (an install in progress, a shim) can be busy for a moment while
    // another thread's fork still holds it open for writing: try again briefly.
    let mut spawned = spawn();
    for _ in 0..BUSY_RETRIES {
        match &spawned {
            Err(err) if err.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(Duration::from_millis(10));
                spawned = spawn();
            }
            _ => break,
        }
    }
    let mut child = spawned.map_err(|err| format!("`{shown}` cannot be started: {err}"))?;
    let outputs = [
        child.stdout.take().map(collect),
        child.stderr.take().map(collect),
    ];
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                tracing::debug!(command = %shown, "probe still running at its limit; taken as runnable");
                return Ok(());
            }
            Err(err) => return Err(format!("`{shown}` cannot be waited for: {err}")),
        }
    };
    if status.success() {
        return Ok(());
    }
    // Output is usually complete at exit; a grandchild holding the pipes open does not delay us.
    let wait = deadline
        .saturating_duration_since(Instant::now())
        .min(Duration::from_millis(200));
    let [stdout, stderr] = outputs.map(|output| {
        output
            .and_then(|received| received.recv_timeout(wait).ok())
            .unwrap_or_default()
    });
    let ended = match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "was killed by a signal".to_string(),
    };
    Err(match first_line(&stderr, &stdout) {
        Some(line) => format!("`{shown}` {ended}: {line}"),
        None => format!("`{shown}` {ended}"),
    })
}

/// Reads a pipe to its end (bounded) on its own thread; the bytes arrive on the receiver.
fn collect(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = (&mut pipe).take(OUTPUT_LIMIT).read_to_end(&mut bytes);
        let _ = sender.send(bytes);
        // Drain the rest so that the program never blocks writing.
        let _ = std::io::copy(&mut pipe, &mut std::io::sink());
    });
    receiver
}

/// The command as a person would type it: the program's file name and the arguments.
fn shown_command(program: &Path, args: &[&str]) -> String {
    let name = program.file_name().map_or_else(
        || program.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    std::iter::once(name.as_str())
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The first non-blank line of a failed command's error output (else its standard output),
/// trimmed and shortened.
pub fn first_line(stderr: &[u8], stdout: &[u8]) -> Option<String> {
    [stderr, stdout].into_iter().find_map(|output| {
        let text = String::from_utf8_lossy(output);
        let line = text.lines().map(str::trim).find(|line| !line.is_empty())?;
        let mut short: String = line.chars().take(REASON_CHARS).collect();
        if short.len() < line.len() {
            short.push('…');
        }
        Some(short)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_commands_have_their_version_flag() {
        assert_eq!(version_args("rust-analyzer"), Some(&["--version"][..]));
        assert_eq!(
            version_args("/home/me/.cargo/bin/rust-analyzer"),
            Some(&["--version"][..])
        );
        assert_eq!(version_args("gopls"), Some(&["version"][..]));
        assert_eq!(version_args("ruff"), Some(&["--version"][..]));
    }

    #[test]
    fn commands_without_a_version_flag_are_not_probed() {
        assert_eq!(version_args("pyright-langserver"), None);
        assert_eq!(version_args("vscode-eslint-language-server"), None);
        assert_eq!(version_args("my-lsp"), None);
        assert_eq!(version_args(""), None);
    }

    #[test]
    fn the_reason_is_the_first_line_of_stderr_else_stdout() {
        let rustup = b"error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.\n\nStack backtrace:\n   0: anyhow\n";
        assert_eq!(
            first_line(rustup, b"").as_deref(),
            Some("error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.")
        );
        assert_eq!(
            first_line(b"\n  \n", b"  usage: x\n").as_deref(),
            Some("usage: x")
        );
        assert_eq!(first_line(b"", b"\n"), None);
    }

    #[test]
    fn a_long_reason_is_shortened() {
        let long = "x".repeat(500);
        let line = first_line(long.as_bytes(), b"").unwrap_or_default();
        assert_eq!(line.chars().count(), REASON_CHARS + 1);
        assert!(line.ends_with('…'));
    }

    #[cfg(unix)]
    mod run {
        use super::super::*;
        use std::os::unix::fs::PermissionsExt;

        fn script(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
            let path = dir.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            path
        }

        fn run(program: &Path) -> Result<(), String> {
            let cwd = program.parent().expect("folder");
            probe(program, &["--version"], &BTreeMap::new(), cwd, PROBE_LIMIT)
        }

        #[test]
        fn a_command_that_prints_its_version_runs() {
            let dir = tempfile::tempdir().expect("tempdir");
            let ok = script(dir.path(), "good-lsp", "echo good-lsp 1.0");
            assert_eq!(run(&ok), Ok(()));
        }

        #[test]
        fn a_broken_shim_does_not_run_and_says_why() {
            let dir = tempfile::tempdir().expect("tempdir");
            let shim = script(
                dir.path(),
                "rust-analyzer",
                "echo \"error: Unknown binary 'rust-analyzer'\" >&2; exit 1",
            );
            assert_eq!(
                run(&shim),
                Err("`rust-analyzer --version` exited with status 1: error: Unknown binary 'rust-analyzer'".to_string())
            );
        }

        #[test]
        fn a_script_whose_interpreter_is_missing_cannot_be_started() {
            let dir = tempfile::tempdir().expect("tempdir");
            let path = dir.path().join("node-lsp");
            std::fs::write(&path, "#!/no/such/node\n").expect("write");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            let why = run(&path).expect_err("cannot start");
            assert!(
                why.starts_with("`node-lsp --version` cannot be started: "),
                "{why}"
            );
        }

        #[test]
        fn a_command_that_hangs_is_given_the_benefit_of_the_doubt_at_the_limit() {
            let dir = tempfile::tempdir().expect("tempdir");
            let slow = script(dir.path(), "slow-lsp", "exec sleep 30");
            let started = Instant::now();
            let probed = probe(
                &slow,
                &[],
                &BTreeMap::new(),
                dir.path(),
                Duration::from_millis(200),
            );
            assert_eq!(probed, Ok(()));
            assert!(started.elapsed() < Duration::from_secs(5), "bounded");
        }

        #[test]
        fn the_server_environment_is_applied() {
            let dir = tempfile::tempdir().expect("tempdir");
            let picky = script(
                dir.path(),
                "picky-lsp",
                "[ \"$TOOLCHAIN\" = ok ] || { echo no toolchain >&2; exit 3; }",
            );
            let env = BTreeMap::from([("TOOLCHAIN".to_string(), "ok".to_string())]);
            assert_eq!(probe(&picky, &[], &env, dir.path(), PROBE_LIMIT), Ok(()));
            assert_eq!(
                run(&picky),
                Err("`picky-lsp --version` exited with status 3: no toolchain".to_string())
            );
        }
    }
}
