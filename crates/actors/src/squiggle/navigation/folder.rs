//! Diagnostics for many files at once (a folder, a glob): asked with `workspace/diagnostic`
//! of the servers that offer it, and checked one by one (opened, synced, waited for) for the
//! rest, so no file is reported clean that no server looked at.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

use async_lsp::lsp_types::{WorkspaceDiagnosticReportResult, WorkspaceDocumentDiagnosticReport};
use futures::StreamExt;
use squiggle_protocol::folder_report::FolderReport;
use squiggle_protocol::{convert_diagnostics, merge, paths, Diagnostic};

use super::{Answer, NavError, Ready};
use crate::key::ServerKey;
use crate::registry::restarts::Restart;
use crate::registry::Acquired;
use crate::server::navigate::{NavAnswer, NavRequest};
use crate::squiggle::{Squiggle, ASK_LIMIT};

/// How many files are checked at the same time.
const PARALLEL_CHECKS: usize = 4;

impl Squiggle {
    /// The diagnostics (all severities) of `files`: from `workspace/diagnostic` for the files
    /// every one of whose servers reported them that way, else by checking each file. Files
    /// outside the workspace or that no server checked are named in `not_checked`, with why.
    pub async fn workspace_diagnostics(
        &self,
        files: &[PathBuf],
    ) -> Result<Answer<FolderReport>, NavError> {
        if !self.inner.config.enabled {
            return Err(NavError::Disabled);
        }
        let mut notes = Vec::new();
        let mut keys_of = Vec::new();
        for file in files {
            let (path, _) = self.locate(file);
            let keys = self.keys_for(&path).await;
            keys_of.push((path, keys));
        }
        let distinct: HashSet<&ServerKey> = keys_of.iter().flat_map(|(_, keys)| keys).collect();
        let mut pulled: HashMap<(ServerKey, PathBuf), Vec<Diagnostic>> = HashMap::new();
        for key in distinct {
            let Some(server) = self.pulling_server(key).await else {
                continue;
            };
            let request = NavRequest::WorkspaceDiagnostics;
            if let Some(NavAnswer::WorkspaceDiagnostics(result)) =
                self.navigate_noting(&server, request, &mut notes).await
            {
                let found = self.workspace_report(result, server.info.encoding).await;
                for (path, diagnostics) in found {
                    pulled.insert((key.clone(), path), diagnostics);
                }
            }
        }
        let mut report = FolderReport {
            files_asked: files.len(),
            ..FolderReport::default()
        };
        let mut to_check = Vec::new();
        let mut answered_by_pull = 0;
        for (path, keys) in keys_of {
            let lists: Option<Vec<&Vec<Diagnostic>>> = (!keys.is_empty())
                .then(|| {
                    keys.iter()
                        .map(|key| pulled.get(&(key.clone(), path.clone())))
                        .collect()
                })
                .flatten();
            match lists {
                Some(lists) => {
                    answered_by_pull += 1;
                    let merged = merge::merge(lists.into_iter().flatten());
                    let relative = paths::relative_to(&self.inner.workspace_root, &path);
                    report.files.insert(relative, merged);
                }
                None => to_check.push(path),
            }
        }
        if answered_by_pull > 0 {
            notes.push(format!(
                "{answered_by_pull} files answered from workspace/diagnostic, {} checked one by one",
                to_check.len()
            ));
        }
        let checks = futures::stream::iter(to_check)
            .map(|path| async move { self.check_file(&path, None).await })
            .buffer_unordered(PARALLEL_CHECKS)
            .collect::<Vec<_>>()
            .await;
        for check in checks {
            let outcome = check.outcome();
            if let Some(reason) = outcome.reason() {
                report
                    .not_checked
                    .insert(check.file.clone(), reason.to_string());
            }
            if outcome.is_checked() || !check.diagnostics.is_empty() {
                report.files.insert(check.file, check.diagnostics);
            }
        }
        Ok(Answer {
            items: report,
            position: None,
            subject: None,
            notes,
        })
    }

    /// The server for `key`, started within the first-touch timeout, if it offers
    /// `workspace/diagnostic`.
    async fn pulling_server(&self, key: &ServerKey) -> Option<Ready> {
        let limit = Duration::from_millis(self.inner.config.first_touch_timeout_ms);
        let acquired = self
            .inner
            .registry
            .acquire(key.clone(), Restart::Automatic, limit);
        let Some(Acquired::Ready { server, .. }) = acquired.await else {
            return None;
        };
        let info = server.info(ASK_LIMIT).await?;
        info.provides.workspace_diagnostics.then(|| Ready {
            key: key.clone(),
            server,
            info,
        })
    }

    /// The full reports of a workspace diagnostic answer, by file (unchanged ones, which
    /// squiggle never asks for, are left out).
    async fn workspace_report(
        &self,
        result: WorkspaceDiagnosticReportResult,
        encoding: squiggle_protocol::PositionEncoding,
    ) -> BTreeMap<PathBuf, Vec<Diagnostic>> {
        let items = match result {
            WorkspaceDiagnosticReportResult::Report(report) => report.items,
            WorkspaceDiagnosticReportResult::Partial(partial) => partial.items,
        };
        let full: Vec<(PathBuf, Vec<async_lsp::lsp_types::Diagnostic>)> = items
            .into_iter()
            .filter_map(|item| match item {
                WorkspaceDocumentDiagnosticReport::Full(full) => {
                    let path = paths::uri_to_path(full.uri.as_str())?;
                    Some((
                        PathBuf::from(path),
                        full.full_document_diagnostic_report.items,
                    ))
                }
                WorkspaceDocumentDiagnosticReport::Unchanged(_) => None,
            })
            .collect();
        let texts = self
            .read_texts(full.iter().map(|(path, _)| path.clone()))
            .await;
        full.into_iter()
            .map(|(path, items)| {
                let relative = paths::relative_to(&self.inner.workspace_root, &path);
                let text = texts.get(&path).cloned().flatten();
                let converted = convert_diagnostics(items, &relative, text.as_deref(), encoding);
                (path, converted)
            })
            .collect()
    }
}
