//! `squiggle install`: installs pinned versions of built-in servers from npm and PyPI into the
//! per-user data folder, only when asked; squiggle then finds them there.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context};
use squiggle_config::availability::{each_server_once, Availability};
use squiggle_config::install::{self, Plan};

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
    /// Install a named server even when its command is found already.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    workspace: WorkspaceArgs,
}

/// Runs `squiggle install`.
pub fn run(args: InstallArgs) -> anyhow::Result<u8> {
    let data = install::data_dir().context(
        "no data folder: set SQUIGGLE_DATA_DIR, XDG_DATA_HOME or HOME (LOCALAPPDATA on Windows) to say where servers go",
    )?;
    let (root, config) = args.workspace.load()?;
    // Refused before anything else: an unknown id, or one squiggle cannot install.
    install::plan(&args.servers)?;
    let mut ids = Vec::new();
    for id in &args.servers {
        match config.servers.get(id).map(|spec| Availability::of(spec, &root)) {
            Some(Availability::Runs(path)) if !args.force => eprintln!(
                "squiggle: {id} is installed ({}); not installed again (--force installs it anyway)",
                path.display()
            ),
            _ => ids.push(id.clone()),
        }
    }
    if args.all_for_workspace {
        // Each server found and probed once, however many files need it.
        let runs = each_server_once(&root, |spec, root| Availability::of(spec, root).runs());
        let missing = crate::servers::workspace_needs(&config, &root, &runs, &runs);
        // What squiggle cannot install is named with its own command, as `status` names it;
        // a server that serves the same files in its place is installed instead, if it can be.
        let stand_ins = missing.stand_ins(&config, &runs);
        for (id, hint) in missing.manual() {
            eprintln!("squiggle: {id} is missing too; squiggle cannot install it: {hint}");
            if let Some((_, stand_in)) = stand_ins.iter().find(|(missing, _)| *missing == id) {
                eprintln!("squiggle: installing {stand_in}, which serves those files in its place");
            }
        }
        let mut installable = missing.installable();
        installable.extend(stand_ins.into_iter().map(|(_, stand_in)| stand_in));
        if installable.is_empty() && ids.is_empty() {
            eprintln!("squiggle: every installable server this workspace uses is installed");
            return Ok(0);
        }
        ids.extend(installable);
    }
    if ids.is_empty() {
        return Ok(0);
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
