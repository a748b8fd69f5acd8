//! Navigation for agents: definition, references, hover, outlines and symbol search, addressed
//! the way a model can: a line and column that may be a little off, or a symbol's name.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_lsp::lsp_types::{Position, TextDocumentIdentifier, TextDocumentPositionParams, Url};
use squiggle_protocol::navigation::{
    document_symbols, hover_text, location_from_lsp, resolve_symbol, snap_to_identifier,
    without_locals, word_at,
};
use squiggle_protocol::{lsp_character, paths, Location, PositionEncoding, Symbol};
use tokio::time::Instant;

mod workspace;

mod body;
mod call_hierarchy;
mod code_actions;
mod folder;
mod refactor;
mod targets;

pub use code_actions::{ActionInfo, ActionPick, CodeActions};
pub use refactor::{EditFailure, EditMode, EditOutcome};

use super::{read_text, Squiggle, ASK_LIMIT};
use crate::diagnostics::Freshness;
use crate::key::ServerKey;
use crate::registry::restarts::Restart;
use crate::registry::Acquired;
use crate::server::navigate::{NavAnswer, NavRequest};
use crate::server::{Opened, ServerHandle, ServerInfo};

/// Where in a file a question points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A 1-based line and character column; moved onto the nearest identifier when it misses.
    At {
        /// The line, 1-based.
        line: u32,
        /// The column in characters, 1-based.
        column: u32,
    },
    /// A symbol's name in the file; `line` picks among several.
    Symbol {
        /// The symbol's name.
        name: String,
        /// The line of the one meant, among several of that name.
        line: Option<u32>,
    },
}

/// An answer with what the model should know about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer<T> {
    /// The answer itself.
    pub items: T,
    /// Where the question pointed in the end (1-based line, column), for position questions.
    pub position: Option<(u32, u32)>,
    /// The identifier at that position, for position questions.
    pub subject: Option<String>,
    /// Notes: a moved position, a server still starting or indexing.
    pub notes: Vec<String>,
}

/// Why a navigation question could not be asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NavError {
    /// The configuration says `lsp = false`.
    #[error("LSP is disabled by configuration")]
    Disabled,
    /// The file lies outside the workspace root.
    #[error(
        "{file} is outside the workspace root {root}; only files inside it can be asked about"
    )]
    OutsideWorkspace {
        /// The file asked about.
        file: String,
        /// The workspace root.
        root: String,
    },
    /// The file lies in a folder that is not analysed (`excluded_folders`).
    #[error("{file} is in {folder}, which squiggle does not analyse (configuration key excluded_folders)")]
    Excluded {
        /// The file asked about.
        file: String,
        /// The excluded folder it lies in.
        folder: String,
    },
    /// The file cannot be read.
    #[error("{file}: {reason}")]
    Unreadable {
        /// The file.
        file: String,
        /// Why it cannot be read.
        reason: String,
    },
    /// No running server answers this question for this file.
    #[error("no language server answers this for {file}{why}")]
    NoServer {
        /// The file.
        file: String,
        /// Why none answers (its servers' states), starting with its separator.
        why: String,
    },
    /// The named symbol is not in the file.
    #[error("no symbol `{name}` in {file}")]
    SymbolNotFound {
        /// The name asked for.
        name: String,
        /// The file.
        file: String,
    },
    /// The line has no identifier to ask about.
    #[error("{file}:{line} has no identifier to ask about")]
    NoIdentifier {
        /// The file.
        file: String,
        /// The line, 1-based.
        line: u32,
    },
    /// A line or column below 1.
    #[error("{what} {value} is not a position: lines and columns are 1-based (the first is 1)")]
    NotOneBased {
        /// What was given (`line`, `column`).
        what: &'static str,
        /// Its value.
        value: u32,
    },
    /// The file's servers run but none offers this request (the capability is absent).
    #[error("{servers} (the language {} for {file}) {} not offer {what}", several(.servers, "servers", "server"), several(.servers, "do", "does"))]
    NotOffered {
        /// The file.
        file: String,
        /// The servers that run for it.
        servers: String,
        /// The request none offers.
        what: String,
    },
}

/// `many` when `servers` names several (comma-separated), else `one`.
fn several(servers: &str, many: &'static str, one: &'static str) -> &'static str {
    if servers.contains(", ") {
        many
    } else {
        one
    }
}

impl NavError {
    /// The error naming the request a server does not offer (other errors unchanged).
    fn offering(self, request: &str) -> Self {
        match self {
            NavError::NotOffered { file, servers, .. } => NavError::NotOffered {
                file,
                servers,
                what: request.to_string(),
            },
            other => other,
        }
    }
}

impl Target {
    /// The target if its line and column are 1-based, else why not.
    fn validated(&self) -> Result<&Self, NavError> {
        let (line, column) = match self {
            Target::At { line, column } => (Some(*line), Some(*column)),
            Target::Symbol { line, .. } => (*line, None),
        };
        for (what, value) in [("line", line), ("column", column)] {
            if value == Some(0) {
                return Err(NavError::NotOneBased { what, value: 0 });
            }
        }
        Ok(self)
    }
}

/// What the servers answered to a position question, and where it pointed.
struct Asked {
    answers: Vec<(PositionEncoding, NavAnswer)>,
    /// The server of each answer, in the same order.
    answered_by: Vec<Ready>,
    position: Option<(u32, u32)>,
    subject: Option<String>,
    notes: Vec<String>,
}

/// A server ready to answer, with what it can do.
#[derive(Clone)]
struct Ready {
    key: ServerKey,
    server: ServerHandle,
    info: ServerInfo,
}

impl Squiggle {
    /// Where the symbol at `target` in `file` is defined.
    pub async fn goto_definition(
        &self,
        file: impl AsRef<Path>,
        target: Target,
    ) -> Result<Answer<Vec<Location>>, NavError> {
        self.located_at(file.as_ref(), &target, Kind::Definition)
            .await
    }

    /// Where the symbol at `target` in `file` is used (and declared, when asked).
    pub async fn find_references(
        &self,
        file: impl AsRef<Path>,
        target: Target,
        include_declaration: bool,
    ) -> Result<Answer<Vec<Location>>, NavError> {
        let kind = Kind::References {
            include_declaration,
        };
        self.located_at(file.as_ref(), &target, kind).await
    }

    /// The type and documentation of the symbol at `target` in `file`, as plain text.
    pub async fn hover(
        &self,
        file: impl AsRef<Path>,
        target: Target,
    ) -> Result<Answer<Option<String>>, NavError> {
        let asked = self.ask_at(file.as_ref(), &target, Kind::Hover).await?;
        let text = asked
            .answers
            .into_iter()
            .find_map(|(_, answer)| match answer {
                NavAnswer::Hover(Some(hover)) => Some(hover_text(&hover)).filter(|t| !t.is_empty()),
                _ => None,
            });
        Ok(Answer {
            items: text,
            position: asked.position,
            subject: asked.subject,
            notes: asked.notes,
        })
    }

    /// The outline of `file`: its symbols, nested; what is declared inside functions and
    /// methods only when `include_locals` (a note counts what was left out).
    pub async fn document_symbols(
        &self,
        file: impl AsRef<Path>,
        include_locals: bool,
    ) -> Result<Answer<Vec<Symbol>>, NavError> {
        let (path, relative, text) = self.open_target(file.as_ref()).await?;
        let (ready, mut notes) = self
            .ready_servers(&path, &relative, |p| p.document_symbols)
            .await
            .map_err(|err| err.offering("textDocument/documentSymbol"))?;
        for server in ready {
            let Some(server_text) = self.open_on(&server, &path, &text, &mut notes).await else {
                continue;
            };
            if let Some(mut symbols) = self.outline(&server, &path, &relative, &server_text).await {
                if !include_locals {
                    let (kept, left_out) = without_locals(&symbols);
                    symbols = kept;
                    match left_out {
                        0 => {}
                        1 => notes.push("1 local symbol (declared inside a function or method) is left out; ask with include_locals to list it".to_string()),
                        n => notes.push(format!("{n} local symbols (declared inside functions and methods) are left out; ask with include_locals to list them")),
                    }
                }
                self.note_busy(&server, &mut notes).await;
                return Ok(Answer {
                    items: symbols,
                    position: None,
                    subject: None,
                    notes,
                });
            }
        }
        Ok(Answer {
            items: Vec::new(),
            position: None,
            subject: None,
            notes,
        })
    }

    /// Asks every server for `file` that answers `kind` at `target`; returns their answers,
    /// the position asked about, and notes.
    async fn ask_at(&self, file: &Path, target: &Target, kind: Kind) -> Result<Asked, NavError> {
        let target = target.validated()?;
        let (path, relative, text) = self.open_target(file).await?;
        let (ready, mut notes) = self
            .ready_servers(&path, &relative, |p| kind.provided(p))
            .await
            .map_err(|err| err.offering(kind.method()))?;
        let mut position = None;
        let mut subject = None;
        let mut answers = Vec::new();
        let mut answered_by = Vec::new();
        for server in &ready {
            let Some(server_text) = self.open_on(server, &path, &text, &mut notes).await else {
                continue;
            };
            let (line, column) = match position {
                Some(at) => at,
                None => {
                    let at = self
                        .resolve_target(server, &path, &relative, &server_text, target, &mut notes)
                        .await?;
                    position = Some(at);
                    at
                }
            };
            let line_text = server_text
                .lines()
                .nth(line.saturating_sub(1) as usize)
                .unwrap_or_default();
            subject = subject.or_else(|| word_at(line_text, column));
            let params = TextDocumentPositionParams {
                text_document: TextDocumentIdentifier { uri: uri_of(&path) },
                position: Position::new(
                    line.saturating_sub(1),
                    lsp_character(line_text, column, server.info.encoding),
                ),
            };
            self.note_busy(server, &mut notes).await;
            let request = kind.request(params);
            if let Some(answer) = self.navigate_noting(server, request, &mut notes).await {
                answers.push((server.info.encoding, answer));
                answered_by.push(server.clone());
            }
        }
        if position.is_none() && notes.is_empty() {
            let why = " (its servers did not take the file)".to_string();
            return Err(NavError::NoServer {
                file: relative,
                why,
            });
        }
        Ok(Asked {
            answers,
            answered_by,
            position,
            subject,
            notes,
        })
    }

    /// Turns a (validated, 1-based) target into a 1-based position on the server's copy of the
    /// file; a symbol's name that is ambiguous or found only in the text gets a note.
    async fn resolve_target(
        &self,
        server: &Ready,
        path: &Path,
        relative: &str,
        text: &str,
        target: &Target,
        notes: &mut Vec<String>,
    ) -> Result<(u32, u32), NavError> {
        match target {
            Target::At { line, column } => {
                let no_identifier = || NavError::NoIdentifier {
                    file: relative.to_string(),
                    line: *line,
                };
                let line_text = text
                    .lines()
                    .nth(line.saturating_sub(1) as usize)
                    .ok_or_else(no_identifier)?;
                let snapped = snap_to_identifier(line_text, *column).ok_or_else(no_identifier)?;
                if snapped != *column {
                    notes.push(format!("{line}:{column} is not on an identifier; asked about {line}:{snapped} instead"));
                }
                Ok((*line, snapped))
            }
            Target::Symbol { name, line } => {
                let symbols = if server.info.provides.document_symbols {
                    self.outline(server, path, relative, text)
                        .await
                        .unwrap_or_default()
                } else {
                    Vec::new()
                };
                let resolved =
                    resolve_symbol(&symbols, relative, text, name, *line).ok_or_else(|| {
                        NavError::SymbolNotFound {
                            name: name.clone(),
                            file: relative.to_string(),
                        }
                    })?;
                notes.extend(resolved.note(name));
                Ok((resolved.line, resolved.column))
            }
        }
    }

    /// The file to ask about: resolved, inside the workspace, readable.
    async fn open_target(&self, file: &Path) -> Result<(PathBuf, String, Arc<str>), NavError> {
        if !self.inner.config.enabled {
            return Err(NavError::Disabled);
        }
        let (path, relative) = self.locate(file);
        if !path.starts_with(&self.inner.workspace_root) {
            let root = self.inner.workspace_root.display().to_string();
            return Err(NavError::OutsideWorkspace {
                file: file.display().to_string(),
                root,
            });
        }
        if let Some(folder) = self.inner.config.excluded_folder(Path::new(&relative)) {
            return Err(NavError::Excluded {
                file: relative,
                folder: folder.to_string(),
            });
        }
        let text = self
            .text_of(&path, None)
            .await
            .map_err(|skip| NavError::Unreadable {
                file: relative.clone(),
                reason: skip.to_string(),
            })?;
        Ok((path, relative, Arc::from(text)))
    }

    /// The servers for `path` that are ready (starting them, within the first-touch timeout)
    /// and answer what `wanted` says; notes for the ones that are not.
    async fn ready_servers(
        &self,
        path: &Path,
        relative: &str,
        wanted: impl Fn(&crate::server::navigate::Provides) -> bool,
    ) -> Result<(Vec<Ready>, Vec<String>), NavError> {
        let keys = self.keys_for(path).await;
        if keys.is_empty() {
            let why = " (no server is configured for this file type)".to_string();
            return Err(NavError::NoServer {
                file: relative.to_string(),
                why,
            });
        }
        let limit = Duration::from_millis(self.inner.config.first_touch_timeout_ms);
        let mut ready = Vec::new();
        let mut notes = Vec::new();
        let mut reasons = Vec::new();
        let mut declined = Vec::new();
        for key in keys {
            let acquired = self
                .inner
                .registry
                .acquire(key.clone(), Restart::Automatic, limit);
            match acquired.await {
                Some(Acquired::Ready { server, .. }) => {
                    let Some(info) = server.info(ASK_LIMIT).await else {
                        continue;
                    };
                    if wanted(&info.provides) {
                        ready.push(Ready { key, server, info });
                    } else {
                        declined.push(key.id);
                    }
                }
                Some(Acquired::Unusable { state, reason }) => {
                    reasons.push(format!("{} is {state}: {reason}", key.id))
                }
                None => notes.push(format!(
                    "{} is still starting; results may be incomplete",
                    key.id
                )),
            }
        }
        if ready.is_empty() && notes.is_empty() && !declined.is_empty() {
            return Err(NavError::NotOffered {
                file: relative.to_string(),
                servers: declined.join(", "),
                what: "this request".to_string(),
            });
        }
        if ready.is_empty() && notes.is_empty() {
            let why = if reasons.is_empty() {
                String::new()
            } else {
                format!(" ({})", reasons.join("; "))
            };
            return Err(NavError::NoServer {
                file: relative.to_string(),
                why,
            });
        }
        Ok((ready, notes))
    }

    /// Opens the file on a server (unless open) and returns the text the server has.
    async fn open_on(
        &self,
        server: &Ready,
        path: &Path,
        text: &Arc<str>,
        notes: &mut Vec<String>,
    ) -> Option<Arc<str>> {
        let limit = Duration::from_millis(self.inner.config.first_touch_timeout_ms);
        let deadline = Instant::now() + limit;
        let open = server
            .server
            .open(path.to_path_buf(), text.clone(), deadline, ASK_LIMIT);
        match open.await?.ok()? {
            Opened::Already(text) => Some(text),
            Opened::Now(answer) => {
                // A server answers from the project it has loaded: wait until its diagnostics
                // for the file are final (it has loaded what the file needs), or say it was not.
                let waited = tokio::time::timeout(limit + ASK_LIMIT, answer).await;
                if !matches!(waited, Ok(Ok(Freshness::Final { .. }))) {
                    notes.push(format!(
                        "{} had not finished loading the project within {} ms; the answer may be incomplete",
                        server.key.id,
                        limit.as_millis()
                    ));
                }
                Some(text.clone())
            }
        }
    }

    /// Notes that a server is busy (indexing, checking) now, so its answer may be incomplete.
    async fn note_busy(&self, server: &Ready, notes: &mut Vec<String>) {
        let busy = server
            .server
            .info(ASK_LIMIT)
            .await
            .and_then(|info| info.busy);
        if let Some(doing) = busy {
            let note = format!(
                "{} is busy ({doing}); results may be incomplete",
                server.key.id
            );
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
    }

    /// The outline of a file from one server.
    async fn outline(
        &self,
        server: &Ready,
        path: &Path,
        relative: &str,
        text: &str,
    ) -> Option<Vec<Symbol>> {
        let request = NavRequest::DocumentSymbols(TextDocumentIdentifier { uri: uri_of(path) });
        match self.navigate(server, request).await? {
            NavAnswer::DocumentSymbols(Some(response)) => Some(document_symbols(
                &response,
                relative,
                Some(text),
                server.info.encoding,
            )),
            _ => None,
        }
    }

    /// Sends a navigation request to one server and waits for its answer.
    async fn navigate(&self, server: &Ready, request: NavRequest) -> Option<NavAnswer> {
        match (server.server.navigate(request, Duration::from_secs(15))).await {
            Ok(answer) => Some(answer),
            Err(err) => {
                tracing::debug!(server = %server.key.id, %err, "navigation request failed");
                None
            }
        }
    }

    /// Locations for (uri, range) pairs, each file's text read once, off the runtime's workers.
    async fn locations(
        &self,
        targets: Vec<(Url, async_lsp::lsp_types::Range)>,
        encoding: PositionEncoding,
    ) -> Vec<Location> {
        let targets: Vec<(PathBuf, async_lsp::lsp_types::Range)> = targets
            .into_iter()
            .filter_map(|(uri, range)| {
                Some((PathBuf::from(paths::uri_to_path(uri.as_str())?), range))
            })
            .collect();
        let texts = self
            .read_texts(targets.iter().map(|(path, _)| path.clone()))
            .await;
        targets
            .into_iter()
            .map(|(path, range)| {
                let relative = paths::relative_to(&self.inner.workspace_root, &path);
                let text = texts.get(&path).cloned().flatten();
                location_from_lsp(&relative, &range, text.as_deref(), encoding)
            })
            .collect()
    }

    /// The texts of files, each read once if it is a small regular text file; read off the
    /// runtime's workers.
    async fn read_texts(
        &self,
        paths: impl IntoIterator<Item = PathBuf>,
    ) -> HashMap<PathBuf, Option<Arc<str>>> {
        let mut texts: HashMap<PathBuf, Option<Arc<str>>> =
            paths.into_iter().map(|path| (path, None)).collect();
        if texts.is_empty() {
            return texts;
        }
        let limit = self.inner.config.max_file_bytes;
        tokio::task::spawn_blocking(move || {
            for (path, text) in texts.iter_mut() {
                *text = read_text(path, limit).ok().map(Arc::from);
            }
            texts
        })
        .await
        .unwrap_or_default()
    }
}

/// Which position question is asked.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Definition,
    References { include_declaration: bool },
    Hover,
    Implementation,
    TypeDefinition,
    CallHierarchy,
}

impl Kind {
    fn provided(self, provides: &crate::server::navigate::Provides) -> bool {
        match self {
            Kind::Definition => provides.definition,
            Kind::References { .. } => provides.references,
            Kind::Hover => provides.hover,
            Kind::Implementation => provides.implementation,
            Kind::TypeDefinition => provides.type_definition,
            Kind::CallHierarchy => provides.call_hierarchy,
        }
    }

    /// The LSP method asked, for a refusal.
    fn method(self) -> &'static str {
        match self {
            Kind::Definition => "textDocument/definition",
            Kind::References { .. } => "textDocument/references",
            Kind::Hover => "textDocument/hover",
            Kind::Implementation => "textDocument/implementation",
            Kind::TypeDefinition => "textDocument/typeDefinition",
            Kind::CallHierarchy => "textDocument/prepareCallHierarchy",
        }
    }

    fn request(self, position: TextDocumentPositionParams) -> NavRequest {
        match self {
            Kind::Definition => NavRequest::Definition(position),
            Kind::References {
                include_declaration,
            } => NavRequest::References {
                position,
                include_declaration,
            },
            Kind::Hover => NavRequest::Hover(position),
            Kind::Implementation => NavRequest::Implementation(position),
            Kind::TypeDefinition => NavRequest::TypeDefinition(position),
            Kind::CallHierarchy => NavRequest::PrepareCallHierarchy(position),
        }
    }
}

/// The `file://` URI of a path.
fn uri_of(path: &Path) -> Url {
    Url::parse(&paths::path_to_uri(&path.to_string_lossy()))
        .unwrap_or_else(|_| Url::parse("file:///").expect("a valid URI"))
}

/// Locations without repeats, sorted by file and position.
fn dedup(mut locations: Vec<Location>) -> Vec<Location> {
    locations.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
    locations.dedup_by(|a, b| a.file == b.file && a.line == b.line && a.column == b.column);
    locations
}

impl Squiggle {
    /// Sends a navigation request to one server and waits for its answer; a failure becomes a
    /// note (the server's error, said, never an empty answer that looks like "nothing found").
    async fn navigate_noting(
        &self,
        server: &Ready,
        request: NavRequest,
        notes: &mut Vec<String>,
    ) -> Option<NavAnswer> {
        match (server.server.navigate(request, Duration::from_secs(15))).await {
            Ok(answer) => Some(answer),
            Err(err) => {
                notes.push(err.note_for(&server.key.id));
                None
            }
        }
    }
}
