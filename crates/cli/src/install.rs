//! `squiggle install`: installs pinned versions of built-in servers from npm and PyPI into the
//! per-user data folder, only when asked; squiggle then finds them there.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context};
use squiggle_config::install::{self, Plan};
use squiggle_config::{Availability, Config};

use crate::workspace::WorkspaceArgs;

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
    // Each server is found (and probed) once, however many files need it.
    let known = std::cell::RefCell::new(std::collections::HashMap::new());
    let runs = |spec: &squiggle_config::ServerSpec| {
        *known
            .borrow_mut()
            .entry(spec.id.clone())
            .or_insert_with(|| Availability::of(spec, root).runs())
    };
    crate::servers::workspace_needs(config, root, &runs, &runs).installable()
}
