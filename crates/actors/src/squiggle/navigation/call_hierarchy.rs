//! Call hierarchy: who calls the function at a position (incoming) or what it calls
//! (outgoing), followed up to three levels, each call with its call sites and their lines.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use async_lsp::lsp_types::{CallHierarchyItem, Range, Url};
use futures::future::BoxFuture;
use futures::FutureExt;
use squiggle_protocol::navigation::{
    location_from_lsp, sort_calls, symbol_kind_name, Call, Direction, MAX_DEPTH,
};
use squiggle_protocol::paths;

use super::{Answer, Kind, NavError, Ready, Target};
use crate::server::navigate::{NavAnswer, NavRequest};
use crate::squiggle::Squiggle;

/// At most this many callers or callees are asked about in one hierarchy (every level).
const MAX_EXPANDED: usize = 60;

/// What one walk of the hierarchy has seen and may still spend.
struct Walk {
    /// Items already expanded (file, start of the name), so a recursion is shown once.
    seen: HashSet<(Url, u32, u32)>,
    /// How many more items may be expanded.
    budget: usize,
    /// Notes for the answer.
    notes: Vec<String>,
}

impl Squiggle {
    /// The callers (`Direction::Incoming`) or callees (`Outgoing`) of the function at `target`
    /// in `file`, `depth` levels deep (1 to 3; others are clamped), each with its call sites.
    pub async fn call_hierarchy(
        &self,
        file: impl AsRef<Path>,
        target: Target,
        direction: Direction,
        depth: u32,
    ) -> Result<Answer<Vec<Call>>, NavError> {
        let depth = depth.clamp(1, MAX_DEPTH);
        let asked = self
            .ask_at(file.as_ref(), &target, Kind::CallHierarchy)
            .await?;
        let mut walk = Walk {
            seen: HashSet::new(),
            budget: MAX_EXPANDED,
            notes: asked.notes,
        };
        let mut calls = Vec::new();
        let mut prepared = false;
        for ((_, answer), server) in asked.answers.into_iter().zip(&asked.answered_by) {
            let NavAnswer::CallHierarchy(Some(items)) = answer else {
                continue;
            };
            prepared |= !items.is_empty();
            for item in items {
                walk.seen.insert(item_key(&item));
                calls.extend(self.expand(server, item, direction, depth, &mut walk).await);
            }
            if prepared {
                break;
            }
        }
        if !prepared {
            walk.notes
                .push("the server found no function or method at this position".to_string());
        }
        if walk.budget == 0 {
            walk.notes.push(format!(
                "the hierarchy was followed for {MAX_EXPANDED} calls; ask from a deeper call to see more"
            ));
        }
        sort_calls(&mut calls);
        Ok(Answer {
            items: calls,
            position: asked.position,
            subject: asked.subject,
            notes: walk.notes,
        })
    }

    /// The calls into (or out of) `item`, and below each, `depth - 1` more levels.
    fn expand<'a>(
        &'a self,
        server: &'a Ready,
        item: CallHierarchyItem,
        direction: Direction,
        depth: u32,
        walk: &'a mut Walk,
    ) -> BoxFuture<'a, Vec<Call>> {
        async move {
            if depth == 0 || walk.budget == 0 {
                return Vec::new();
            }
            let request = match direction {
                Direction::Incoming => NavRequest::IncomingCalls(item.clone()),
                Direction::Outgoing => NavRequest::OutgoingCalls(item.clone()),
            };
            // (the caller or callee, the file of its call sites, the call sites)
            let found: Vec<(CallHierarchyItem, Url, Vec<Range>)> =
                match self.navigate_noting(server, request, &mut walk.notes).await {
                    Some(NavAnswer::IncomingCalls(Some(calls))) => calls
                        .into_iter()
                        .map(|call| {
                            let uri = call.from.uri.clone();
                            (call.from, uri, call.from_ranges)
                        })
                        .collect(),
                    Some(NavAnswer::OutgoingCalls(Some(calls))) => calls
                        .into_iter()
                        .map(|call| (call.to, item.uri.clone(), call.from_ranges))
                        .collect(),
                    _ => Vec::new(),
                };
            let files = found.iter().flat_map(|(other, sites_in, _)| {
                [&other.uri, sites_in]
                    .into_iter()
                    .filter_map(|uri| paths::uri_to_path(uri.as_str()).map(PathBuf::from))
            });
            let texts = self.read_texts(files.collect::<Vec<_>>()).await;
            let encoding = server.info.encoding;
            let mut calls = Vec::new();
            for (other, sites_in, ranges) in found {
                if walk.budget == 0 {
                    break;
                }
                walk.budget -= 1;
                let place = |uri: &Url| {
                    let path = paths::uri_to_path(uri.as_str()).map(PathBuf::from);
                    let relative = path.as_ref().map_or_else(
                        || uri.to_string(),
                        |path| paths::relative_to(&self.inner.workspace_root, path),
                    );
                    let text = path.and_then(|path| texts.get(&path).cloned().flatten());
                    (relative, text)
                };
                let (file, text) = place(&other.uri);
                let named =
                    location_from_lsp(&file, &other.selection_range, text.as_deref(), encoding);
                let (sites_file, sites_text) = place(&sites_in);
                let sites = ranges
                    .iter()
                    .map(|range| {
                        location_from_lsp(&sites_file, range, sites_text.as_deref(), encoding)
                    })
                    .collect();
                let deeper = if depth > 1 && walk.seen.insert(item_key(&other)) {
                    self.expand(server, other.clone(), direction, depth - 1, walk)
                        .await
                } else {
                    Vec::new()
                };
                calls.push(Call {
                    name: other.name.clone(),
                    kind: symbol_kind_name(other.kind).to_string(),
                    detail: other.detail.clone().filter(|d| !d.trim().is_empty()),
                    file,
                    line: named.line,
                    column: named.column,
                    sites,
                    calls: deeper,
                });
            }
            calls
        }
        .boxed()
    }
}

/// What identifies a call-hierarchy item: its file and the start of its name.
fn item_key(item: &CallHierarchyItem) -> (Url, u32, u32) {
    let start = item.selection_range.start;
    (item.uri.clone(), start.line, start.character)
}
