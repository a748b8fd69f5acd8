//! Where an edit reached beyond its file: the errors it caused in other files.
//!
//! Two sources, for two kinds of server:
//! - **The files that import the edited one**, directly or through others (`importers`:
//!   TypeScript, JavaScript, Python), the nearest first.
//!   Their servers report on open files only, so these are checked twice: before the edit
//!   reaches the servers (the servers still hold the file's text from before it: the text
//!   synced last, or the host's copy of the original, synced first) and after. An error there
//!   after that was not there before is one the edit caused.
//! - **Files a server reports on by itself** (rust-analyzer's `cargo check` covers the crate):
//!   the store's lists before the edited file's check and after it.
//!
//! An error that was there before the edit is not the edit's. Where the text from before the
//! edit is unknown (a file never synced, with no original from the host), the importers are
//! not searched: their errors before the edit cannot be known.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use squiggle_protocol::{Baseline, Basis, Diagnostic};

use super::{disk_stamps, lock, Saved, Squiggle};
use crate::check::CheckResult;
use crate::squiggle::turns::Ticket;

/// What was found of the other files before the edit reached the servers.
#[derive(Debug, Default)]
pub(crate) struct Before {
    /// The importers with a final answer for the text from before the edit (the others cannot
    /// be compared); empty when not searched.
    pub importers: Vec<(PathBuf, CheckResult)>,
    /// The edited file's check with the text from before the edit, when it had to be synced.
    pub edited: Option<CheckResult>,
    /// Every file's diagnostics in the store, after the importers' check.
    pub store: BTreeMap<String, Vec<Diagnostic>>,
    /// Whether the runtime had a final answer to a check before this edit's: if not, the
    /// store's lists are no baseline (they may be a server's first report on the project).
    pub warm: bool,
}

impl Squiggle {
    /// The importers of `path` this runtime can check (a server handles their type), at most
    /// `max_dependent_files`.
    pub(crate) async fn importers_of(&self, path: &Path) -> Vec<PathBuf> {
        let limit = self.inner.config.max_dependent_files;
        if limit == 0 {
            return Vec::new();
        }
        let root = self.inner.workspace_root.clone();
        let target = path.to_path_buf();
        let importers = self.inner.importers.clone();
        let found = tokio::task::spawn_blocking(move || lock(&importers).of(&root, &target, limit))
            .await
            .unwrap_or_default();
        let config = &self.inner.config;
        found
            .into_iter()
            .filter(|file| {
                config
                    .servers_matching(file)
                    .iter()
                    .any(|spec| spec.enabled)
            })
            .collect()
    }

    /// The other files as they were before the edit of `path`: the importers (checked while
    /// the servers hold `prior`, or the text they last synced, as the edited file) and the
    /// store. `ticket` is the edited file's turn for `prior`, taken before the edit's own.
    pub(crate) async fn before_edit(
        &self,
        ticket: Ticket,
        path: &Path,
        prior: Option<String>,
        importers: &[PathBuf],
    ) -> Before {
        let mut before = Before {
            warm: self.inner.warm.load(std::sync::atomic::Ordering::Relaxed),
            ..Before::default()
        };
        if !importers.is_empty() {
            let held = lock(&self.inner.held).get(path).copied();
            let prior_known = match &prior {
                Some(prior) if held == Some(disk_stamps::hash_of(prior)) => {
                    drop(ticket);
                    true
                }
                Some(prior) => {
                    let check = self
                        .check_in_turn(
                            ticket,
                            path,
                            Some(prior.clone()),
                            Saved::IfOnDisk,
                            std::time::Duration::ZERO,
                        )
                        .await;
                    let synced = check.skipped.is_none();
                    before.edited = Some(check);
                    synced
                }
                None => {
                    drop(ticket);
                    held.is_some()
                }
            };
            if prior_known {
                let answers = self.importers_now(importers).await;
                before.importers = importers
                    .iter()
                    .cloned()
                    .zip(answers)
                    .filter_map(|(path, answer)| answer.map(|answer| (path, answer)))
                    .filter(|(_, answer)| answer.outcome().is_checked())
                    .collect();
            }
        } else {
            drop(ticket);
        }
        before.store = self.diagnostics().await;
        before
    }

    /// The importers' answers now: each one's last answer in a feedback when no text changed
    /// since (the steady case of an agent's edit and fix), else a check.
    async fn importers_now(&self, importers: &[PathBuf]) -> Vec<Option<CheckResult>> {
        let changes = self.changes();
        let mut known: Vec<Option<CheckResult>> = {
            let cache = lock(&self.inner.reach_known);
            importers
                .iter()
                .map(|path| cache.get(path).filter(|(at, _)| *at == changes))
                .map(|hit| hit.map(|(_, result)| result.clone()))
                .collect()
        };
        let unknown: Vec<&PathBuf> = importers
            .iter()
            .zip(&known)
            .filter(|(_, hit)| hit.is_none())
            .map(|(path, _)| path)
            .collect();
        let checked = self.checks_within(&unknown).await;
        let answered: Vec<(&PathBuf, CheckResult)> = unknown
            .iter()
            .zip(checked)
            .filter_map(|(path, result)| result.map(|result| (*path, result)))
            .collect();
        for (path, result) in &answered {
            self.remember_importers(&[path], changes, std::slice::from_ref(result));
        }
        // Each gap takes the unknown importer's answer, if it came in time.
        let mut answered: HashMap<&PathBuf, CheckResult> = answered.into_iter().collect();
        importers
            .iter()
            .zip(known.iter_mut())
            .map(|(path, hit)| hit.take().or_else(|| answered.remove(path)))
            .collect()
    }

    /// Checks `paths` together (as [`Squiggle::check_files_for_feedback`]), keeping the
    /// answers that came within `dependent_files_wait_ms`: the other files' search never holds
    /// an edit's answer up for longer. The checks still under way then are dropped.
    pub(crate) async fn checks_within(&self, paths: &[&PathBuf]) -> Vec<Option<CheckResult>> {
        let wait = Duration::from_millis(self.inner.config.dependent_files_wait_ms);
        let deadline = tokio::time::Instant::now() + wait;
        let allowance = super::batch_deadline::allowance(paths.len());
        // The turns are taken here, in order, before anything is awaited.
        let mut pending: futures::stream::FuturesUnordered<_> = paths
            .iter()
            .enumerate()
            .map(|(i, path)| {
                let ticket = self.ticket(path);
                let check = self.check_in_turn(ticket, path, None, Saved::IfOnDisk, allowance);
                async move { (i, check.await) }
            })
            .collect();
        let mut results: Vec<Option<CheckResult>> = paths.iter().map(|_| None).collect();
        while let Ok(Some((i, result))) =
            tokio::time::timeout_at(deadline, futures::StreamExt::next(&mut pending)).await
        {
            results[i] = Some(result);
        }
        results
    }

    /// How many changed texts the servers were handed so far.
    pub(crate) fn changes(&self) -> u64 {
        self.inner
            .changes
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Keeps the importers' final answers, given when `changes` texts had changed.
    pub(crate) fn remember_importers(
        &self,
        paths: &[&PathBuf],
        changes: u64,
        results: &[CheckResult],
    ) {
        let mut cache = lock(&self.inner.reach_known);
        for (path, result) in paths.iter().zip(results) {
            match result.outcome().is_checked() {
                true => cache.insert((*path).clone(), (changes, result.clone())),
                false => cache.remove(*path),
            };
        }
    }

    /// The errors the edit caused in other files: in each importer checked before and after
    /// (both final), and in the store's other files (not `edited`, not an importer) whose
    /// lists changed, when this runtime had a final answer to a check before the edit (else
    /// the store's lists from before are no baseline). Each file's list holds only the new diagnostics.
    pub(crate) async fn caused_elsewhere(
        &self,
        edited: &CheckResult,
        epoch: u64,
        before: &Before,
        after: &[Option<CheckResult>],
    ) -> BTreeMap<String, Vec<Diagnostic>> {
        let mut caused = BTreeMap::new();
        for ((_, then), now) in before.importers.iter().zip(after) {
            let Some(now) = now else { continue };
            if !then.outcome().is_checked() || !now.outcome().is_checked() {
                continue;
            }
            let baseline = Baseline::of(&then.diagnostics, then.text.as_deref());
            let new = only_new(&baseline, &now.diagnostics, now.text.as_deref());
            if !new.is_empty() {
                caused.insert(now.file.clone(), new);
            }
        }
        if !before.warm {
            return caused;
        }
        let searched: HashSet<&str> = before
            .importers
            .iter()
            .map(|(_, check)| check.file.as_str())
            .chain([edited.file.as_str()])
            .collect();
        // A build check publishes every file it found errors in, from the server's worker
        // threads, around its end: the store is read once they stopped coming.
        let built = edited
            .servers
            .iter()
            .any(|server| server.basis == Some(Basis::PullAndCheck));
        let now = match built {
            true => {
                let wait = Duration::from_millis(self.inner.config.other_files_wait_ms);
                self.diagnostics_after(epoch, wait).await
            }
            false => self.diagnostics().await,
        };
        for (file, now) in now {
            if searched.contains(file.as_str()) {
                continue;
            }
            let then = before
                .store
                .get(&file)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let new = only_new(&Baseline::of(then, None), &now, None);
            if !new.is_empty() {
                caused.insert(file, new);
            }
        }
        caused
    }
}

/// The diagnostics of `now` that are not the same as one of `baseline`.
fn only_new(baseline: &Baseline, now: &[Diagnostic], text: Option<&str>) -> Vec<Diagnostic> {
    let flags = baseline.new_flags(now, text);
    now.iter()
        .zip(flags)
        .filter(|(_, new)| *new)
        .map(|(diagnostic, _)| diagnostic.clone())
        .collect()
}
