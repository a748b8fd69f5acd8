//! The watcher actor: file-system events under the servers' roots, sent as
//! `workspace/didChangeWatchedFiles` to exactly the servers whose registered globs match,
//! debounced and batched; and, when asked to follow the disk, news of the documents squiggle
//! synced that changed or went away on disk.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_lsp::lsp_types::{FileChangeType, FileEvent, Url};
use notify::event::{ModifyKind, RenameMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use ractor::{Actor, ActorProcessingErr, ActorRef};
use squiggle_protocol::paths;
use squiggle_protocol::watch::{WatchPattern, SKIPPED_FOLDERS};

use tokio::sync::mpsc::UnboundedSender;

use crate::key::ServerKey;

/// How long events are gathered before they are sent.
const DEBOUNCE: Duration = Duration::from_millis(100);
/// The most folders watched under all roots together.
const MAX_FOLDERS: usize = 20_000;

/// Messages of the watcher actor.
#[derive(Debug)]
enum WatcherMsg {
    /// A server registered file watchers under a registration id.
    Register {
        key: ServerKey,
        server: Arc<dyn Listener>,
        id: String,
        patterns: Vec<WatchPattern>,
    },
    /// A server withdrew a registration.
    Unregister { key: ServerKey, id: String },
    /// A server is gone: forget its registrations.
    Forget { key: ServerKey },
    /// Squiggle checked this file (synced this text to its servers); watchers of it hear of a
    /// change.
    Synced { path: PathBuf, text: Arc<str> },
    /// From now on, watch the folders under `root` and report synced documents that change
    /// or go away on disk to `changes`.
    Follow {
        root: PathBuf,
        changes: UnboundedSender<DiskChange>,
    },
    /// The operating system reported a change.
    Disk(Event),
    /// Timer: send what was gathered.
    Flush,
}

/// Who hears of the file events a registration matched: the server that registered it.
pub trait Listener: Send + Sync + std::fmt::Debug {
    /// Files that changed on disk (one event per file), as `workspace/didChangeWatchedFiles`.
    fn watched_files(&self, events: Vec<FileEvent>);
}

/// The watcher actor as the rest of the runtime talks to it; its messages stay inside.
#[derive(Debug, Clone)]
pub struct WatcherHandle(ActorRef<WatcherMsg>);

impl WatcherHandle {
    /// Spawns the watcher actor.
    pub async fn spawn() -> Result<Self, ractor::SpawnErr> {
        let (actor, _) = Actor::spawn(None, WatcherActor, ()).await?;
        Ok(Self(actor))
    }

    /// A server registered file watchers under a registration id; `server` hears of matches.
    pub fn register(
        &self,
        key: ServerKey,
        server: Arc<dyn Listener>,
        id: String,
        patterns: Vec<WatchPattern>,
    ) {
        let _ = self.0.cast(WatcherMsg::Register {
            key,
            server,
            id,
            patterns,
        });
    }

    /// A server withdrew a registration.
    pub fn unregister(&self, key: ServerKey, id: String) {
        let _ = self.0.cast(WatcherMsg::Unregister { key, id });
    }

    /// A server is gone: forget its registrations.
    pub fn forget(&self, key: ServerKey) {
        let _ = self.0.cast(WatcherMsg::Forget { key });
    }

    /// Squiggle synced this text of a file to its servers.
    pub fn synced(&self, path: PathBuf, text: Arc<str>) {
        let _ = self.0.cast(WatcherMsg::Synced { path, text });
    }

    /// From now on, watch the folders under `root` and report synced documents that change
    /// or go away on disk to `changes`.
    pub fn follow(&self, root: PathBuf, changes: UnboundedSender<DiskChange>) {
        let _ = self.0.cast(WatcherMsg::Follow { root, changes });
    }

    /// Stops the watcher actor and waits for it, at most `limit`.
    pub async fn stop(&self, limit: Duration) {
        let _ = self.0.stop_and_wait(None, Some(limit)).await;
    }
}

/// A file changed on disk by someone else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiskChange {
    /// A synced document's text on disk changed (or it was made again): sync it again.
    Changed(PathBuf),
    /// A synced document is gone: close it.
    Deleted(PathBuf),
    /// A file a server watches and squiggle holds no synced text of was written: the server
    /// may read it (rust-analyzer's `cargo check` does) before a hook for the write comes.
    /// Told at once.
    Written(PathBuf),
}

/// The watcher actor.
#[derive(Debug)]
struct WatcherActor;

/// One server's registrations.
#[derive(Debug)]
struct Watching {
    server: Arc<dyn Listener>,
    registrations: HashMap<String, Vec<WatchPattern>>,
}

impl Watching {
    /// Whether one of its registrations watches this change of `path`.
    fn wants(&self, path: &Path, change: FileChangeType) -> bool {
        (self.registrations.values().flatten()).any(|pattern| pattern.matches(path, change))
    }
}

/// The state of the watcher actor.
pub struct Watches {
    servers: HashMap<ServerKey, Watching>,
    os: Option<RecommendedWatcher>,
    folders: HashSet<PathBuf>,
    pending: HashMap<ServerKey, Vec<FileEvent>>,
    flush_scheduled: bool,
    /// Where news of synced documents changed on disk goes, when followed.
    follow: Option<UnboundedSender<DiskChange>>,
    /// The synced documents whose changes on disk are followed, with a hash of the text last
    /// synced.
    documents: HashMap<PathBuf, u64>,
    /// Followed documents that changed on disk since the last flush.
    stale: HashSet<PathBuf>,
}

impl std::fmt::Debug for Watches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watches")
            .field("servers", &self.servers.len())
            .field("folders", &self.folders.len())
            .finish()
    }
}

impl Actor for WatcherActor {
    type Msg = WatcherMsg;
    type State = Watches;
    type Arguments = ();

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        (): (),
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(Watches {
            servers: HashMap::new(),
            os: None,
            folders: HashSet::new(),
            pending: HashMap::new(),
            flush_scheduled: false,
            follow: None,
            documents: HashMap::new(),
            stale: HashSet::new(),
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        watches: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            WatcherMsg::Register {
                key,
                server,
                id,
                patterns,
            } => {
                tracing::debug!(server = %key.id, %id, count = patterns.len(), "file watchers registered");
                let root = key.root.clone();
                let watching = watches.servers.entry(key).or_insert_with(|| Watching {
                    server,
                    registrations: HashMap::new(),
                });
                watching.registrations.insert(id, patterns);
                watches.watch_tree(&myself, &root);
            }
            WatcherMsg::Unregister { key, id } => {
                if let Some(watching) = watches.servers.get_mut(&key) {
                    watching.registrations.remove(&id);
                }
            }
            WatcherMsg::Forget { key } => {
                watches.servers.remove(&key);
                watches.pending.remove(&key);
                if watches.servers.is_empty() && watches.follow.is_none() {
                    watches.os = None;
                    watches.folders.clear();
                }
            }
            WatcherMsg::Synced { path, text } => {
                if watches.follow.is_some() {
                    let hash = hash_of(text.as_bytes());
                    if (watches.documents.insert(path.clone(), hash)).is_none() {
                        if let Some(folder) = path.parent() {
                            watches.watch_folder(&myself, folder);
                        }
                    }
                    // Compared with the disk at the next flush: a write between the check's
                    // read and now (before any event could be matched to it) is caught too.
                    watches.note_stale(&myself, &[(path.clone(), FileChangeType::CHANGED)]);
                }
                watches.gather(&myself, vec![(path, FileChangeType::CHANGED)])
            }
            WatcherMsg::Follow { root, changes } => {
                watches.follow = Some(changes);
                // Watched up front, so that a change right after a document's first check
                // is seen (its folder is watched when it is synced, if new).
                watches.watch_tree(&myself, &root);
            }
            WatcherMsg::Disk(event) => {
                let mut changes = changes_of(&event);
                watches.note_stale(&myself, &changes);
                watches.note_written(&changes);
                for (path, change) in &changes {
                    if *change == FileChangeType::DELETED {
                        watches.forget_folders(path);
                    }
                }
                let created: Vec<PathBuf> = changes
                    .iter()
                    .filter(|(path, change)| *change == FileChangeType::CREATED && path.is_dir())
                    .map(|(path, _)| path.clone())
                    .collect();
                for folder in created {
                    // Files made in a new folder before it was watched are news too.
                    let files = watches.watch_tree(&myself, &folder);
                    changes.extend(
                        files
                            .into_iter()
                            .map(|file| (file, FileChangeType::CREATED)),
                    );
                }
                watches.gather(&myself, changes);
            }
            WatcherMsg::Flush => watches.flush(),
        }
        Ok(())
    }
}

impl Watches {
    /// Watches `top` and the folders under it, but not the skipped ones no pattern names;
    /// returns the files found in the folders it started to watch.
    fn watch_tree(&mut self, myself: &ActorRef<WatcherMsg>, top: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        if !self.os_watcher(myself) {
            return files;
        }
        let mut stack = vec![top.to_path_buf()];
        while let Some(folder) = stack.pop() {
            if self.folders.len() >= MAX_FOLDERS || self.folders.contains(&folder) {
                continue;
            }
            let Some(os) = self.os.as_mut() else {
                return files;
            };
            if os.watch(&folder, RecursiveMode::NonRecursive).is_err() {
                continue;
            }
            self.folders.insert(folder.clone());
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
                let name = entry.file_name();
                if !is_dir {
                    files.push(entry.path());
                } else if !self.skipped(&name.to_string_lossy()) {
                    stack.push(entry.path());
                }
            }
        }
        files
    }

    /// Watches one folder (not the folders under it), for the documents in it.
    fn watch_folder(&mut self, myself: &ActorRef<WatcherMsg>, folder: &Path) {
        if self.folders.contains(folder) || !self.os_watcher(myself) {
            return;
        }
        if let Some(os) = self.os.as_mut() {
            if os.watch(folder, RecursiveMode::NonRecursive).is_ok() {
                self.folders.insert(folder.to_path_buf());
            }
        }
    }

    /// Tells the follower of the files servers watch that were written and are not synced.
    fn note_written(&self, changes: &[(PathBuf, FileChangeType)]) {
        let Some(follow) = &self.follow else {
            return;
        };
        let watched = |path, change| self.servers.values().any(|w| w.wants(path, change));
        for (path, change) in changes {
            let written = *change != FileChangeType::DELETED && !self.documents.contains_key(path);
            if written && watched(path, *change) {
                let _ = follow.send(DiskChange::Written(path.clone()));
            }
        }
    }

    /// Notes followed documents that changed on disk, and schedules a flush.
    fn note_stale(&mut self, myself: &ActorRef<WatcherMsg>, changes: &[(PathBuf, FileChangeType)]) {
        let before = self.stale.len();
        for (path, _) in changes {
            if self.documents.contains_key(path) {
                self.stale.insert(path.clone());
            }
        }
        if self.stale.len() > before && !self.flush_scheduled {
            self.flush_scheduled = true;
            myself.send_after(DEBOUNCE, || WatcherMsg::Flush);
        }
    }

    /// The OS watcher, made if there is none yet; false when none can be made.
    fn os_watcher(&mut self, myself: &ActorRef<WatcherMsg>) -> bool {
        if self.os.is_some() {
            return true;
        }
        let actor = myself.clone();
        let handler = move |event: notify::Result<Event>| match event {
            Ok(event) => {
                let _ = actor.cast(WatcherMsg::Disk(event));
            }
            Err(err) => tracing::debug!(%err, "file watcher error"),
        };
        match notify::recommended_watcher(handler) {
            Ok(watcher) => {
                self.os = Some(watcher);
                true
            }
            Err(err) => {
                tracing::warn!(%err, "cannot watch files; servers will not hear of changes on disk");
                false
            }
        }
    }

    /// Forgets a deleted folder and the folders under it, so that they are watched again if
    /// they come back.
    fn forget_folders(&mut self, gone: &Path) {
        let os = self.os.as_mut();
        let mut forgotten = Vec::new();
        self.folders.retain(|folder| {
            let under = folder.starts_with(gone);
            if under {
                forgotten.push(folder.clone());
            }
            !under
        });
        if let Some(os) = os {
            for folder in forgotten {
                let _ = os.unwatch(&folder);
            }
        }
    }

    /// Whether a folder is skipped: a skipped name no registered pattern names.
    fn skipped(&self, name: &str) -> bool {
        SKIPPED_FOLDERS.contains(&name)
            && !self
                .servers
                .values()
                .flat_map(|w| w.registrations.values().flatten())
                .any(|pattern| pattern.names(name))
    }

    /// Adds changes for the servers that watch them and schedules a flush.
    fn gather(&mut self, myself: &ActorRef<WatcherMsg>, changes: Vec<(PathBuf, FileChangeType)>) {
        let mut any = false;
        for (path, change) in changes {
            // The URI is made once, and only for a file some server watches.
            let mut uri = None;
            for (key, watching) in &self.servers {
                if !watching.wants(&path, change) {
                    continue;
                }
                if uri.is_none() {
                    uri = Url::parse(&paths::path_to_uri(&path.to_string_lossy())).ok();
                }
                if let Some(uri) = &uri {
                    self.pending
                        .entry(key.clone())
                        .or_default()
                        .push(FileEvent {
                            uri: uri.clone(),
                            typ: change,
                        });
                    any = true;
                }
            }
        }
        if any && !self.flush_scheduled {
            self.flush_scheduled = true;
            myself.send_after(DEBOUNCE, || WatcherMsg::Flush);
        }
    }

    /// Sends each server its gathered events, one event per file, and reports the followed
    /// documents that changed (or went away) on disk.
    fn flush(&mut self) {
        self.flush_scheduled = false;
        if let Some(follow) = &self.follow {
            for path in self.stale.drain() {
                // What the disk holds now decides, whatever the events on the way were
                // (`sed -i` and editors replace a file through a rename); a file that holds
                // the text last synced (the write its check read) needs nothing.
                let change = match std::fs::read(&path) {
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                        self.documents.remove(&path);
                        DiskChange::Deleted(path)
                    }
                    Err(_) => continue,
                    Ok(bytes) if self.documents.get(&path) == Some(&hash_of(&bytes)) => continue,
                    Ok(_) => DiskChange::Changed(path),
                };
                let _ = follow.send(change);
            }
        }
        for (key, events) in self.pending.drain() {
            let Some(watching) = self.servers.get(&key) else {
                continue;
            };
            watching.server.watched_files(squash(events));
        }
    }
}

/// A hash of a document's bytes, to tell whether the disk still holds what was synced.
fn hash_of(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

/// What an OS event means for LSP: (path, created | changed | deleted) pairs.
fn changes_of(event: &Event) -> Vec<(PathBuf, FileChangeType)> {
    let all = |change| event.paths.iter().map(|p| (p.clone(), change)).collect();
    match &event.kind {
        EventKind::Create(_) => all(FileChangeType::CREATED),
        EventKind::Remove(_) => all(FileChangeType::DELETED),
        EventKind::Modify(ModifyKind::Name(RenameMode::From)) => all(FileChangeType::DELETED),
        EventKind::Modify(ModifyKind::Name(RenameMode::To)) => all(FileChangeType::CREATED),
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => {
            let mut changes = Vec::new();
            if let [from, to, ..] = event.paths.as_slice() {
                changes.push((from.clone(), FileChangeType::DELETED));
                changes.push((to.clone(), FileChangeType::CREATED));
            }
            changes
        }
        EventKind::Modify(ModifyKind::Name(_)) => event
            .paths
            .iter()
            .map(|p| {
                (
                    p.clone(),
                    if p.exists() {
                        FileChangeType::CREATED
                    } else {
                        FileChangeType::DELETED
                    },
                )
            })
            .collect(),
        EventKind::Modify(ModifyKind::Metadata(_)) => Vec::new(),
        EventKind::Modify(_) => all(FileChangeType::CHANGED),
        _ => Vec::new(),
    }
}

/// One event per file: the first kind, except that a delete wins.
fn squash(events: Vec<FileEvent>) -> Vec<FileEvent> {
    let mut squashed: Vec<FileEvent> = Vec::new();
    for event in events {
        match squashed.iter_mut().find(|e| e.uri == event.uri) {
            Some(seen) if event.typ == FileChangeType::DELETED => {
                seen.typ = FileChangeType::DELETED
            }
            Some(seen) if seen.typ == FileChangeType::DELETED => seen.typ = event.typ,
            Some(_) => {}
            None => squashed.push(event),
        }
    }
    squashed
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn event(path: &str, typ: FileChangeType) -> FileEvent {
        FileEvent {
            uri: Url::parse(&format!("file://{path}")).unwrap(),
            typ,
        }
    }

    #[test]
    fn squash_keeps_one_event_per_file() {
        let squashed = squash(vec![
            event("/ws/a", FileChangeType::CREATED),
            event("/ws/a", FileChangeType::CHANGED),
            event("/ws/b", FileChangeType::CHANGED),
            event("/ws/b", FileChangeType::DELETED),
            event("/ws/c", FileChangeType::DELETED),
            event("/ws/c", FileChangeType::CREATED),
        ]);
        let kinds: Vec<_> = squashed
            .iter()
            .map(|e| (e.uri.path().to_string(), e.typ))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("/ws/a".to_string(), FileChangeType::CREATED),
                ("/ws/b".to_string(), FileChangeType::DELETED),
                ("/ws/c".to_string(), FileChangeType::CREATED),
            ]
        );
    }

    #[test]
    fn renames_are_a_delete_and_a_create() {
        let rename = Event::new(EventKind::Modify(ModifyKind::Name(RenameMode::Both)))
            .add_path(PathBuf::from("/ws/old"))
            .add_path(PathBuf::from("/ws/new"));
        assert_eq!(
            changes_of(&rename),
            vec![
                (PathBuf::from("/ws/old"), FileChangeType::DELETED),
                (PathBuf::from("/ws/new"), FileChangeType::CREATED)
            ]
        );
    }
}
