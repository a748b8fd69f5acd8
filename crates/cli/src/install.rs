//! `squiggle install`: installs pinned versions of built-in servers from npm and PyPI into the
//! per-user data folder, only when asked; squiggle then finds them there.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context};
use squiggle_config::install::{self, Plan};
use squiggle_config::{Availability, Config};

use crate::workspace::WorkspaceArgs;

/// The most files `--all-for-workspace` looks at to learn the workspace's file types.
const SAMPLE_FILES: usize = 5000;

/// Arguments of `squiggle install`.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Built-in servers to install, by id (`squiggle servers` lists them).
    #[arg(value_name = "SERVER", required_unless_present = "all_for_workspace")]
    servers: Vec<String>,
    /// Install every server the workspace's files would use that is missing and installable.
    #[arg(long)]
    all_for_workspace: bool,
    /// Print the commands instead of running them.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    workspace: WorkspaceArgs,
}

/// Runs `squiggle install`.
pub fn run(args: InstallArgs) -> anyhow::Result<u8> {
    let data = install::data_dir().context(
        "no data folder: set SQUIGGLE_DATA_DIR, XDG_DATA_HOME or HOME to say where servers go",
    )?;
    let mut ids = args.servers.clone();
    if args.all_for_workspace {
        let (root, config) = args.workspace.load()?;
        let missing = missing_for_workspace(&config, &root);
        if missing.is_empty() && ids.is_empty() {
            eprintln!("squiggle: every installable server this workspace uses is installed");
            return Ok(0);
        }
        ids.extend(missing);
    }
    let plan = install::plan(&ids)?;
    run_plan(&plan, &data, args.dry_run)?;
    if !args.dry_run {
        eprintln!(
            "squiggle: installed {} into {}",
            plan.servers.join(", "),
            data.display()
        );
    }
    Ok(0)
}

/// Carries out a plan (or prints it), one command after another, stopping at the first failure.
fn run_plan(plan: &Plan, data: &Path, dry_run: bool) -> anyhow::Result<()> {
    for step in plan.steps(data) {
        if dry_run {
            println!("{step}");
            continue;
        }
        eprintln!("squiggle: {step}");
        let status = Command::new(&step.program)
            .args(&step.args)
            .stdin(std::process::Stdio::null())
            .status()
            .with_context(|| format!("cannot run `{}`", step.program.display()))?;
        if !status.success() {
            bail!("`{step}` failed ({status})");
        }
    }
    Ok(())
}

/// The installable servers the workspace's files go to whose commands do not run here.
fn missing_for_workspace(config: &Config, root: &Path) -> Vec<String> {
    let files = squiggle_config::sample_files(root, SAMPLE_FILES);
    let runs = |spec: &squiggle_config::ServerSpec| Availability::of(spec, root).runs();
    let installable = install::installable();
    let mut missing = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for file in files {
        let kind = file
            .extension()
            .or_else(|| file.file_name())
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        if !seen.insert(kind) {
            continue;
        }
        for spec in config.servers_for(&file, &runs) {
            if installable.contains(&spec.id.as_str()) && !runs(spec) {
                missing.insert(spec.id.clone());
            }
        }
    }
    missing.into_iter().collect()
}
