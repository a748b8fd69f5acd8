//! Where an edit reached beyond its file: the errors it caused in other files.
//!
//! Two sources, for two kinds of server:
//! - **The files that import the edited one**, directly or through others (`importers`:
//!   TypeScript, JavaScript, Python), those that take a name the edit changed first, then the
//!   nearest. Their servers report on open files only. After the edit's own answer they are
//!   checked with the edit's text, one at a time, for a bounded time, and then the importers
//!   of those that have errors the edit may have caused (those that take a name the errors
//!   quote first), while time is left (a type broken in one file breaks the files that use
//!   it). An importer
//!   with errors then is compared with its answer from before the edit: the one it gave last
//!   while the servers held the texts they held before this edit, or else one asked for now,
//!   with the text from before the edit handed to the servers for the time of that look and
//!   the edit's handed back after it. An error there after that was not there before is one
//!   the edit caused. The edited file's own answer comes first and never waits for this.
//! - **Files a server reports on by itself** (rust-analyzer's `cargo check` covers the crate):
//!   the store's lists before the edited file's check and after it.
//!
//! An error that was there before the edit is not the edit's. Where the text from before the
//! edit is unknown (a file never synced, with no original from the host), the importers are
//! not searched: their errors before the edit cannot be known.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use squiggle_protocol::{Baseline, Basis, Diagnostic, Severity, Unsearched};
use tokio::time::Instant;

use super::calls::Calls;
use super::disk_stamps::hash_of;
use super::turns::Ticket;
use super::{lock, read_text, Join, Saved, Squiggle, ASK_LIMIT, JOIN_IF_ON_DISK};
use crate::check::CheckResult;
use crate::importers::Takes;
use crate::key::ServerKey;

/// How many times `max_dependent_files` importers are looked over for those that name what an
/// edit changed (the nearest, each level's smallest first: a much-imported file has many
/// importers on the first level alone, and the large ones name the most).
const CANDIDATES: usize = 16;

/// How long an importer whose check a search cut short is not searched again: a busy machine
/// may have made it slow once, and its server will have finished with it long before.
const SLOW_FOR: Duration = Duration::from_secs(600);

/// What a kept store came before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// A sync that replaced the text with this hash.
    Replaced(u64),
    /// A write of the text with this hash, to a file no server held.
    Written(u64),
}

/// How many states of the texts each importer's answers are kept for: an edit's, the one from
/// before it, and a few more (an edit, its fix, its undoing).
const KEPT_STATES: usize = 4;

/// The store as it was before the edit reached the servers.
#[derive(Debug, Default)]
pub(crate) struct StoreBefore {
    /// Every file's diagnostics.
    pub lists: BTreeMap<String, Vec<Diagnostic>>,
    /// Whether the runtime had a final answer to a check before this edit's: if not, the
    /// lists are no baseline (they may be a server's first report on the project).
    pub warm: bool,
    /// How many new texts each document had been handed when the lists were taken: one that
    /// has been handed another since (another call opened or edited it meanwhile) changed for
    /// a reason of its own, not the edit's.
    pub changes: HashMap<PathBuf, u64>,
}

/// How many documents' syncs from the disk the store before them is kept for.
const KEPT_SYNCS: usize = 4;

/// How long the store from before a disk sync stands for "before" the hook of that write.
const SYNCED_FOR: Duration = Duration::from_secs(60);

/// The store before each of the last [`KEPT_SYNCS`] documents changed on disk was synced.
pub(crate) type SyncedOver = VecDeque<SyncedStore>;

/// Which of the two kept stores: before a sync from the disk, or right after a write.
#[derive(Debug, Clone, Copy)]
enum Kept {
    Synced,
    Written,
}

/// How many files written on disk while no server held them the store is kept for.
const KEPT_WRITES: usize = 16;

/// The store before a document changed on disk was synced, or right after a file no server
/// held was written (see [`Squiggle::keep_store_before_write`]).
#[derive(Debug)]
pub(crate) struct SyncedStore {
    /// The document.
    path: PathBuf,
    /// What changed: the text the sync replaced, or the text written.
    what: Change,
    /// The document's count of hand-overs once the sync handed the disk's text (see
    /// [`super::handed::Handed::changes`]): another hand-over since, and this is not the
    /// store from before the text the servers hold.
    changes: u64,
    /// When it was kept.
    at: Instant,
    /// The store then.
    store: StoreBefore,
}

impl SyncedStore {
    fn new(path: &Path, what: Change, changes: u64, store: StoreBefore) -> Self {
        SyncedStore {
            path: path.to_path_buf(),
            what,
            changes,
            at: Instant::now(),
            store,
        }
    }

    /// Puts it in `kept`, in place of one kept for its file, the oldest going past `bound`.
    fn into(self, kept: &mut SyncedOver, bound: usize) {
        kept.retain(|kept| kept.path != self.path);
        kept.push_back(self);
        if kept.len() > bound {
            kept.pop_front();
        }
    }
}

/// The importers a search looked at (see [`Squiggle::answers_before`]).
#[derive(Debug)]
pub(crate) struct Found<'a> {
    /// The importers, in the order they were looked at.
    pub importers: &'a [PathBuf],
    /// Each one's answer with the edit's text, if it came in time (one per importer).
    pub after: &'a [Option<CheckResult>],
    /// Each one's answer from before the edit, where one was kept (one per importer).
    pub known: Vec<Option<CheckResult>>,
    /// Those the servers did not hold before the search opened them.
    pub opened: Vec<PathBuf>,
}

/// A look at importers with the text from before an edit (see [`Squiggle::look_before`]).
#[derive(Debug)]
pub(crate) struct Look {
    /// The turns of the edited file's two syncs: the text from before, the edit's again.
    pub tickets: (Ticket, Ticket),
    /// The edited file.
    pub path: PathBuf,
    /// Its text from before the edit, and the edit's.
    pub texts: (Arc<str>, Arc<str>),
    /// The importers to look at.
    pub needs: Vec<PathBuf>,
    /// Those of them the search opened, closed after the look.
    pub opened: Vec<PathBuf>,
    /// The time the look has.
    pub window: Window,
}

/// The time a look at importers has: a check starts before the last third of it only, and
/// ends with it, or when a call from outside comes (for a search after an answer, see
/// [`super::later`]).
#[derive(Debug, Clone)]
pub(crate) struct Window {
    last_start: Instant,
    deadline: Instant,
    /// The calls from outside, and their count when the window opened.
    until_called: Option<(Arc<Calls>, u64)>,
    /// Whether a search after the answer goes on with what this one cuts short: then a check
    /// cut short is not remembered as too slow to search.
    hands_on: bool,
}

impl Window {
    /// A window of `wait` from now.
    pub(crate) fn of(wait: Duration) -> Self {
        let deadline = Instant::now() + wait;
        Window {
            last_start: deadline - wait / 3,
            deadline,
            until_called: None,
            hands_on: false,
        }
    }

    /// This window, before a search after the answer that goes on with what it cuts short.
    pub(crate) fn handing_on(self) -> Self {
        Window {
            hands_on: true,
            ..self
        }
    }

    /// This window, closed as soon as `calls` counts another call than `at` (closed now when
    /// it does already).
    pub(crate) fn until_called(self, calls: Arc<Calls>, at: u64) -> Self {
        Window {
            until_called: Some((calls, at)),
            ..self
        }
    }

    /// Whether a call from outside came since the window opened.
    pub(crate) fn called(&self) -> bool {
        (self.until_called.as_ref()).is_some_and(|(calls, at)| calls.count() != *at)
    }

    /// Done at the window's end; for a search after an answer, when a call from outside comes
    /// instead (no one waits for that search, and a check it gave up on at its end would keep
    /// the server busy for the next call all the same: it waits for the check to end, whose
    /// own deadlines bound it).
    async fn closed(&self) {
        match &self.until_called {
            Some((calls, at)) => calls.after(*at).await,
            None => tokio::time::sleep_until(self.deadline).await,
        }
    }

    /// Whether a check may start now.
    fn open(&self) -> bool {
        Instant::now() < self.last_start && !self.called()
    }
}

/// What the search of an edit's importers found, one entry per importer in each list.
#[derive(Debug, Default)]
pub(crate) struct Searched {
    /// The importers looked at, in the order they were.
    pub importers: Vec<PathBuf>,
    /// Each one's answer from before the edit, where one was kept.
    pub known: Vec<Option<CheckResult>>,
    /// Each one's answer with the edit's text, if it came in time.
    pub after: Vec<Option<CheckResult>>,
    /// Those of them the servers did not hold before the search opened them.
    pub opened: Vec<PathBuf>,
    /// The importers the search found, looked at or not (each round follows imports through
    /// other files: the importers of those the edit broke are among them).
    pub found: Vec<PathBuf>,
    /// Whether it left more unfound: a round found as many as it looks over.
    pub more: bool,
}

/// The importers a round of the search found, and those it chose to look at.
#[derive(Debug, Default)]
pub(crate) struct Candidates {
    /// Those to look at, in order.
    pub chosen: Vec<PathBuf>,
    /// How many of `chosen`, the first ones, take a telling name (see [`naming_first`]).
    pub naming: usize,
    /// All it found.
    pub found: Vec<PathBuf>,
    /// Whether it found as many as it looks over.
    pub more: bool,
}

/// The names that rank a round's importers (see [`Squiggle::importers_of`]).
#[derive(Debug, Clone)]
pub(crate) enum Names {
    /// Those on the lines the edit changed, for the edited file's importers.
    Changed(HashSet<String>),
    /// Those the errors of the importers the edit broke quote, for their importers: each
    /// tells only where at most half of them take it (not a type every module uses).
    Quoted(HashSet<String>),
}

/// Whether a look at importers remembers one whose check it cut short as too slow to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slow {
    /// Yes: the look after an edit, whose checks wait for nothing but the file's own.
    Remember,
    /// No: the look with the text from before, whose checks may wait for a server still at
    /// one cut short before; and a look that a search after the answer goes on from.
    Forget,
}

/// What a look at the importers with the text from before the edit found.
#[derive(Debug, Default)]
pub(crate) struct LookBefore {
    /// The edited file's answer for the text from before, if it came while the look lasted.
    pub edited: Option<CheckResult>,
    /// Each importer's answer, in the order asked, if it came in time.
    pub importers: Vec<Option<CheckResult>>,
}

impl Squiggle {
    /// The importers of `targets` this runtime can check (a server handles their type) and
    /// looks at (none a server was too slow over before, none of `skip`, not `edited`), at most
    /// `max_dependent_files`, of the nearest [`CANDIDATES`] times as many: those that take
    /// one of `names` first (an import of a target lists it, or one takes a whole module and
    /// the text names it), then the others, each the nearest first. With `refresh`, the index
    /// is brought up to date with the workspace first (a search's first round). Texts are read
    /// for that order only while `window` lets a check start (reading fp-ts's 60 importers
    /// takes 5 to 10 ms, more than a brief look before a search after the answer lasts): one
    /// not read then is ranked as taking none of the names.
    async fn importers_of(
        &self,
        targets: &[PathBuf],
        edited: &Path,
        names: &Names,
        skip: &HashSet<PathBuf>,
        refresh: bool,
        window: &Window,
    ) -> Candidates {
        let limit = self.inner.config.max_dependent_files;
        if limit == 0 {
            return Candidates::default();
        }
        let root = self.inner.workspace_root.clone();
        let targets = targets.to_vec();
        let edited = edited.to_path_buf();
        let importers = self.inner.importers.clone();
        let mut skip = skip.clone();
        skip.insert(edited.clone());
        let slow: HashSet<PathBuf> = (self.inner.documents)
            .with(|documents| {
                let slow = &mut documents.slow_importers;
                slow.retain(|_, at| at.elapsed() < SLOW_FOR);
                slow.keys().cloned().collect()
            })
            .await;
        let config = self.inner.config.clone();
        let names = names.clone();
        let window = window.clone();
        tokio::task::spawn_blocking(move || {
            let found = match refresh {
                true => lock(&importers).of(&root, &targets, limit * CANDIDATES, &skip),
                false => lock(&importers).of_indexed(&targets, limit * CANDIDATES, &skip),
            };
            let more = found.len() == limit * CANDIDATES;
            let found: Vec<PathBuf> = found
                .into_iter()
                // A link to the edited file is not one of its importers (whose checks would
                // wait for the edited file's turns).
                .filter(|file| {
                    squiggle_protocol::paths::canonicalize(file).map_or(true, |real| real != edited)
                })
                .filter(|file| (config.servers_matching(file).iter()).any(|spec| spec.enabled))
                .collect();
            // An import that lists what it takes says; one that takes a whole module leaves
            // it to the text (`m.Shape`).
            let all = match &names {
                Names::Changed(all) | Names::Quoted(all) => all,
            };
            let looked: Vec<&PathBuf> = found.iter().filter(|f| !slow.contains(*f)).collect();
            let takes: Vec<Takes> = match all.is_empty() {
                true => looked
                    .iter()
                    .map(|_| Takes::Listed(HashSet::new()))
                    .collect(),
                false => {
                    let importers = lock(&importers);
                    (looked.iter())
                        .map(|file| importers.taken(file, &targets, all))
                        .collect()
                }
            };
            let taken: Vec<(PathBuf, HashSet<String>)> = (looked.into_iter().zip(takes))
                .map(|(file, takes)| {
                    let taken = match (takes, &names) {
                        (Takes::Listed(taken), _) => taken,
                        // What a broken importer lacks, taken from elsewhere, is another thing.
                        (Takes::Through, Names::Quoted(_)) => HashSet::new(),
                        _ if !window.open() => HashSet::new(),
                        _ => (read_text(file, config.max_file_bytes).ok())
                            .map(|text| crate::importers::names_in(&text, all))
                            .unwrap_or_default(),
                    };
                    (file.clone(), taken)
                })
                .collect();
            let (chosen, naming) = naming_first(&taken, &names, limit);
            tracing::debug!(
                found = found.len(),
                naming,
                "importers: the candidates, those taking a name first"
            );
            Candidates {
                chosen,
                naming,
                found,
                more,
            }
        })
        .await
        .unwrap_or_default()
    }

    /// The importers of the edit of `edited` from `texts.0` to `texts.1`, checked with the
    /// edit's text while `dependent_files_wait_ms` lasts, in rounds: the importers of the
    /// edited file ([`Squiggle::importers_of`]), then those of the importers the edit may have
    /// broken (with errors now that were not known there before it: a type broken there breaks
    /// what uses it, like `Foldable.ts` through `Applicative.ts` after `Pointed` is no longer
    /// exported in fp-ts), and so on while the time lasts. Where some of a round's importers
    /// take a name the edit changed (see [`crate::importers::changed_names`]: the edited
    /// file's errors now are `edited_errors`), or one the errors of the importers it broke
    /// quote (`Applicative` in fp-ts's `Property 'of' does not exist on type
    /// 'Applicative<F>'`), the round is those, and the others wait until the rounds run out
    /// (each check costs a server a file: the likeliest broken first, wherever they are).
    /// `known_from` is the texts state the answers from before the edit were kept at, if the
    /// servers still held those texts.
    pub(crate) async fn search_importers(
        &self,
        edited: &Path,
        texts: (&str, &str),
        edited_errors: &[Diagnostic],
        known_from: Option<u64>,
        window: Window,
    ) -> Searched {
        let shown = self.inner.config.include_severities.clone();
        let mut searched = Searched::default();
        let mut found: HashSet<PathBuf> = HashSet::new();
        let mut targets = vec![edited.to_path_buf()];
        let (before, after) = (texts.0.to_string(), texts.1.to_string());
        let errors: Vec<u32> = (edited_errors.iter())
            .filter(|d| shown.contains(&d.severity))
            .map(|d| d.line)
            .collect();
        let changed = tokio::task::spawn_blocking(move || {
            crate::importers::changed_names(&before, &after, &errors)
        });
        let changed = changed.await.unwrap_or_default();
        let mut names = Names::Changed(changed.clone());
        // The importers found that take none of the names, while others did.
        let mut waiting: Vec<PathBuf> = Vec::new();
        // The first round is found even when the window is closed already (a search after the
        // answer goes on with it): the importers not checked are counted.
        let mut first = true;
        while std::mem::take(&mut first) || window.open() {
            let round = match targets.is_empty() {
                true => {
                    let limit = self.inner.config.max_dependent_files.min(waiting.len());
                    waiting.drain(..limit).collect()
                }
                false => {
                    let skip: HashSet<PathBuf> = searched.importers.iter().cloned().collect();
                    let refresh = searched.importers.is_empty();
                    let candidates = (self
                        .importers_of(&targets, edited, &names, &skip, refresh, &window))
                    .await;
                    found.extend(candidates.found);
                    searched.more |= candidates.more;
                    let mut round = candidates.chosen;
                    if candidates.naming > 0 {
                        let others = round.split_off(candidates.naming);
                        for file in others {
                            if !waiting.contains(&file) {
                                waiting.push(file);
                            }
                        }
                    }
                    // One waiting that this round looks at waits no more.
                    waiting.retain(|file| !round.contains(file));
                    round
                }
            };
            if round.is_empty() {
                match waiting.is_empty() {
                    true => break,
                    false => {
                        targets.clear();
                        continue;
                    }
                }
            }
            let known = match known_from {
                Some(state) => self.known_answers(&round, state).await,
                None => round.iter().map(|_| None).collect(),
            };
            let looked_at = round.clone();
            let opened: Vec<PathBuf> = (self.inner.documents)
                .with(move |documents| {
                    (looked_at.into_iter())
                        .filter(|path| !documents.held.contains_key(path))
                        .collect()
                })
                .await;
            let slow = match window.hands_on {
                true => Slow::Forget,
                false => Slow::Remember,
            };
            let after = (self.importers_now(&round, slow, window.clone())).await;
            let broken: Vec<(&PathBuf, &CheckResult)> = (round.iter().zip(&after).zip(&known))
                .filter_map(|((path, now), then)| {
                    let now = now.as_ref()?;
                    may_have_caused(then.as_ref(), now, &shown).then_some((path, now))
                })
                .collect();
            // What the broken ones now lack, as their errors say (the names the edit changed
            // ranked the importers that take them already).
            let errors = (broken.iter())
                .flat_map(|(_, now)| &now.diagnostics)
                .filter(|d| shown.contains(&d.severity));
            let quoted = errors.flat_map(|d| crate::importers::quoted_names(&d.message));
            names = Names::Quoted(quoted.filter(|name| !changed.contains(name)).collect());
            targets = broken.into_iter().map(|(path, _)| path.clone()).collect();
            tracing::debug!(
                looked = round.len(),
                answered = after.iter().flatten().count(),
                broken = targets.len(),
                waiting = waiting.len(),
                "importers: a round"
            );
            searched.importers.extend(round);
            searched.known.extend(known);
            searched.after.extend(after);
            searched.opened.extend(opened);
        }
        searched.found = found.into_iter().collect();
        searched
    }

    /// The importers of `edited` whose errors the edit caused cannot be known, when its text
    /// from before the edit is not: all those the search would look over (see
    /// [`Squiggle::unsearched`]).
    pub(crate) async fn unsearched_before_unknown(
        &self,
        edited: &Path,
        shows_all: bool,
    ) -> Unsearched {
        let targets = [edited.to_path_buf()];
        let (names, skip) = (Names::Changed(HashSet::new()), HashSet::new());
        // Counted only: no text is read to rank them.
        let closed = Window::of(Duration::ZERO);
        let candidates = (self.importers_of(&targets, edited, &names, &skip, true, &closed)).await;
        let searched = Searched {
            found: candidates.found,
            more: candidates.more,
            ..Searched::default()
        };
        Unsearched {
            before_unknown: true,
            ..self.unsearched(&searched, &[], shows_all).await
        }
    }

    /// The importers a search found where what the edit caused is not known: those not
    /// answered with the edit's text, and those answered with errors (of the severities shown)
    /// whose answer from before the edit (in `before`, one per importer searched) is not known.
    /// With `shows_all` (a write's feedback, which shows every file's errors whatever was there
    /// before), those answered are known, and so are those every server of theirs holds open
    /// and reports on by itself (see [`Squiggle::reported_by_servers`]).
    pub(crate) async fn unsearched(
        &self,
        searched: &Searched,
        before: &[Option<CheckResult>],
        shows_all: bool,
    ) -> Unsearched {
        let shown = &self.inner.config.include_severities;
        let known: HashSet<&PathBuf> = (searched.importers.iter())
            .zip(searched.after.iter().zip(before))
            .filter(|(_, (now, then))| match now {
                Some(now) if now.outcome().is_checked() => {
                    let then_known =
                        (then.as_ref()).is_some_and(|then| then.outcome().is_checked());
                    shows_all || !shows_errors(&now.diagnostics, shown) || then_known
                }
                _ => false,
            })
            .map(|(path, _)| path)
            .collect();
        let left: Vec<PathBuf> = (searched.found.iter())
            .filter(|file| !known.contains(file))
            .cloned()
            .collect();
        let reported = match shows_all {
            true => self.reported_by_servers(&left).await,
            false => HashSet::new(),
        };
        Unsearched {
            files: left.iter().filter(|file| !reported.contains(*file)).count(),
            more: searched.more,
            before_unknown: false,
            later: false,
        }
    }

    /// Those of `files` whose every server runs, holds the file open and reports on it by
    /// itself, so that the store's list for it is the server's word on the edit too. Not a
    /// file only pulled servers check: they answer for a document only when asked, and the
    /// store holds their answer from before the edit.
    async fn reported_by_servers(&self, files: &[PathBuf]) -> HashSet<PathBuf> {
        let mut asked: HashMap<ServerKey, Vec<PathBuf>> = HashMap::new();
        let mut candidates = Vec::new();
        for file in files {
            let keys = self.keys_for(file).await;
            if keys.is_empty() || keys.iter().any(|key| !self.inner.active.contains_key(key)) {
                continue;
            }
            for key in &keys {
                asked.entry(key.clone()).or_default().push(file.clone());
            }
            candidates.push((file, keys));
        }
        let answers = asked.into_iter().filter_map(|(key, paths)| {
            let server = self.inner.active.get(&key)?.clone();
            Some(async move { (key, server.reports_on(paths, ASK_LIMIT).await) })
        });
        let reports: HashMap<ServerKey, HashSet<PathBuf>> =
            (futures::future::join_all(answers).await.into_iter())
                .map(|(key, paths)| (key, paths.into_iter().collect()))
                .collect();
        (candidates.into_iter())
            .filter(|(file, keys)| {
                (keys.iter()).all(|key| reports.get(key).is_some_and(|held| held.contains(*file)))
            })
            .map(|(file, _)| file.clone())
            .collect()
    }

    /// The store's lists now, the baseline of the files servers report on by themselves.
    pub(crate) async fn store_before(&self) -> StoreBefore {
        StoreBefore {
            warm: self.inner.warm.load(std::sync::atomic::Ordering::Relaxed),
            changes: self.documents_changes().await,
            lists: self.store_lists().await,
        }
    }

    /// How many new texts each document has been handed (see [`StoreBefore::changes`]).
    async fn documents_changes(&self) -> HashMap<PathBuf, u64> {
        (self.inner.documents)
            .with(|documents| documents.handed.all_changes())
            .await
    }

    /// Keeps the store as it is now, before `path`, whose servers hold `held`, is synced with
    /// what the disk holds (another text): an edit the watcher saw before its hook came was
    /// answered before the hook, so the store at the hook's start already holds what it
    /// caused elsewhere. Called in the document's turn, right before that sync.
    pub(crate) async fn keep_store_before_sync(&self, path: &Path, held: &str) {
        let store = self.store_before().await;
        let (path, what) = (path.to_path_buf(), Change::Replaced(hash_of(held)));
        (self.inner.documents).tell(move |documents| {
            let changes = documents.handed.changes(&path) + 1;
            let kept = SyncedStore::new(&path, what, changes, store);
            kept.into(&mut documents.synced_over, KEPT_SYNCS);
        });
    }

    /// Keeps the store as it is now, right after `path`, a file no server holds, was written
    /// on disk: a server that reads the disk (rust-analyzer's `cargo check`, begun for an
    /// earlier save) may report what the write broke elsewhere before the write's hook comes.
    /// Kept for the text written, once for the several events one write makes; not when the
    /// file was handed to the servers meanwhile (its hook came first).
    pub(crate) async fn keep_store_before_write(&self, path: &Path) {
        let changes = self.changes_of(path).await;
        let Ok(text) = self.text_of(path, None).await else {
            return;
        };
        let (path, what) = (path.to_path_buf(), Change::Written(hash_of(&text)));
        let kept = (path.clone(), what);
        let kept_already = (self.inner.documents)
            .with(move |documents| {
                let (path, what) = kept;
                (documents.written_over.iter())
                    .any(|k| k.path == path && k.what == what && k.changes == changes)
            })
            .await;
        if kept_already {
            return;
        }
        let store = self.store_before().await;
        (self.inner.documents).tell(move |documents| {
            if documents.handed.changes(&path) == changes {
                let kept = SyncedStore::new(&path, what, changes, store);
                kept.into(&mut documents.written_over, KEPT_WRITES);
            }
        });
    }

    /// How many times `path` was handed a text other than its last
    /// ([`super::handed::Handed::changes`]).
    pub(crate) async fn changes_of(&self, path: &Path) -> u64 {
        let path = path.to_path_buf();
        (self.inner.documents)
            .with(move |documents| documents.handed.changes(&path))
            .await
    }

    /// The store kept before `path` was last synced from the disk (see
    /// [`Squiggle::keep_store_before_sync`]), taken: only if that sync replaced `before`, was
    /// the last hand-over of `path`, and came less than [`SYNCED_FOR`] ago.
    pub(crate) async fn store_before_sync(&self, path: &Path, before: &str) -> Option<StoreBefore> {
        let what = Change::Replaced(hash_of(before));
        self.take_kept(Kept::Synced, path, what).await
    }

    /// The store kept right after `path`, which no server held, was written on disk (see
    /// [`Squiggle::keep_store_before_write`]), taken: only if the text written is the one a
    /// check of it reads now (`text`, else the disk's), no hand-over of `path` came since, and
    /// it was kept less than [`SYNCED_FOR`] ago.
    pub(crate) async fn store_before_written(
        &self,
        path: &Path,
        text: Option<&str>,
    ) -> Option<StoreBefore> {
        let written = path.to_path_buf();
        let kept = (self.inner.documents)
            .with(move |documents| (documents.written_over.iter()).any(|k| k.path == written))
            .await;
        if !kept {
            return None;
        }
        let text = self.text_of(path, text.map(str::to_string)).await.ok()?;
        let what = Change::Written(hash_of(&text));
        self.take_kept(Kept::Written, path, what).await
    }

    /// The store kept in `kept` for `path` and `what`, taken (see the two above).
    async fn take_kept(&self, which: Kept, path: &Path, what: Change) -> Option<StoreBefore> {
        let path = path.to_path_buf();
        (self.inner.documents)
            .with(move |documents| {
                let changes = documents.handed.changes(&path);
                let kept = match which {
                    Kept::Synced => &mut documents.synced_over,
                    Kept::Written => &mut documents.written_over,
                };
                let at = kept.iter().position(|kept| kept.path == path)?;
                let found = kept.remove(at)?;
                let fits = found.what == what
                    && found.changes == changes
                    && found.at.elapsed() < SYNCED_FOR;
                fits.then_some(found.store)
            })
            .await
    }

    /// Each importer's kept final answer for the texts state `state` (see
    /// [`Squiggle::texts_state`]), where its file still holds on disk the text it was for.
    pub(crate) async fn known_answers(
        &self,
        importers: &[PathBuf],
        state: u64,
    ) -> Vec<Option<CheckResult>> {
        let paths = importers.to_vec();
        let hits: Vec<Option<CheckResult>> = (self.inner.documents)
            .with(move |documents| {
                (paths.iter())
                    .map(|path| {
                        let kept = documents.importer_answers.get(path);
                        let kept = kept.map(Vec::as_slice).unwrap_or_default();
                        let hit = kept.iter().find(|(at, _)| *at == state);
                        hit.map(|(_, result)| result.clone())
                    })
                    .collect()
            })
            .await;
        if hits.iter().all(Option::is_none) {
            return hits;
        }
        // A file changed on disk since (and not synced yet) has another answer now.
        let limit = self.inner.config.max_file_bytes;
        let paths = importers.to_vec();
        tokio::task::spawn_blocking(move || {
            paths
                .iter()
                .zip(hits)
                .map(|(path, hit)| {
                    hit.filter(|hit| {
                        let on_disk = read_text(path, limit).ok();
                        on_disk.is_some() && on_disk.as_deref() == hit.text.as_deref()
                    })
                })
                .collect()
        })
        .await
        .unwrap_or_default()
    }

    /// The importers' answers now: each one's last answer where it still holds (the steady
    /// case of an agent's edit and fix, and of an edit undone), else a check, within
    /// `dependent_files_wait_ms`.
    pub(crate) async fn importers_now(
        &self,
        importers: &[PathBuf],
        slow: Slow,
        window: Window,
    ) -> Vec<Option<CheckResult>> {
        let mut known = self
            .known_answers(importers, self.texts_state().await)
            .await;
        let unknown: Vec<&PathBuf> = importers
            .iter()
            .zip(&known)
            .filter(|(_, hit)| hit.is_none())
            .map(|(path, _)| path)
            .collect();
        let checked = self.checks_within(&unknown, slow, window).await;
        let answered: Vec<(&PathBuf, CheckResult)> = unknown
            .iter()
            .zip(checked)
            .filter_map(|(path, result)| result.map(|result| (*path, result)))
            .collect();
        // Each gap takes the unknown importer's answer, if it came in time.
        let mut answered: HashMap<&PathBuf, CheckResult> = answered.into_iter().collect();
        importers
            .iter()
            .zip(known.iter_mut())
            .map(|(path, hit)| hit.take().or_else(|| answered.remove(path)))
            .collect()
    }

    /// Each importer's answer from before the edit of `edited` from `texts.0` to `texts.1`:
    /// the one kept, else, for those with errors now (of the severities shown), one from a
    /// look with the text from before ([`Squiggle::look_before`], in the turns of `tickets`).
    /// The importers the search opened are closed. A first answer for the text from before
    /// the edit is the edited file's baseline, if it had none.
    pub(crate) async fn answers_before(
        &self,
        edited: &Path,
        texts: (Arc<str>, Arc<str>),
        found: Found<'_>,
        tickets: (Ticket, Ticket),
        window: Window,
    ) -> Vec<Option<CheckResult>> {
        let shown = &self.inner.config.include_severities;
        let Found {
            importers,
            after,
            known: mut before,
            opened,
        } = found;
        let needs: Vec<(usize, PathBuf)> = (importers.iter().enumerate())
            .zip(after.iter().zip(&before))
            .filter(|(_, (now, then))| {
                let errors = |now: &CheckResult| shows_errors(&now.diagnostics, shown);
                then.is_none() && now.as_ref().is_some_and(errors)
            })
            .map(|((i, path), _)| (i, path.clone()))
            .collect();
        // No time for a look (a brief answer, with a search after it to go on): none wanted.
        let needs = match window.open() {
            true => needs,
            false => Vec::new(),
        };
        let looked: Vec<PathBuf> = needs.iter().map(|(_, path)| path.clone()).collect();
        let (open, rest): (Vec<&Path>, Vec<&Path>) = (opened.iter())
            .map(PathBuf::as_path)
            .partition(|path| looked.iter().any(|looked| looked == *path));
        // Those not looked at again are closed first: the servers need not analyse them again
        // for the text from before.
        self.close_files(&rest).await;
        if needs.is_empty() {
            return before;
        }
        let look = Look {
            tickets,
            path: edited.to_path_buf(),
            texts,
            needs: looked,
            opened: open.iter().map(|path| path.to_path_buf()).collect(),
            window,
        };
        let look = self.look_before(look).await;
        for ((i, _), answer) in needs.iter().zip(look.importers) {
            before[*i] = answer;
        }
        if let Some((file, baseline)) = look.edited.as_ref().and_then(super::shown_baseline) {
            (self.inner.documents).tell(move |documents| {
                documents.shown.entry(file).or_insert(baseline);
            });
        }
        tracing::debug!(
            looked = needs.len(),
            answered = (needs.iter()).filter(|(i, _)| before[*i].is_some()).count(),
            "importers: their answers from before the edit"
        );
        before
    }

    /// The importers of `look.needs` as they were before the edit of `look.path`: its text from
    /// before is handed to the servers in the turn of `look.tickets.0`, the importers are
    /// looked at ([`Squiggle::importers_now`]), those of `look.opened` are closed, and the edit's
    /// text is handed back in the turn of `look.tickets.1` and answered again, so that the
    /// store holds what the servers say of the edit's text. It runs as a task of its own: a
    /// caller that gives up (a cancelled request) never leaves the servers with the text from
    /// before. What it found is returned once the importers are answered; the answer to the
    /// edit's text handed back is waited for by the next feedback (under
    /// [`Inner::restoring`](super::Inner)), not by this one (a server may take seconds over it).
    pub(crate) async fn look_before(&self, look: Look) -> LookBefore {
        let this = self.clone();
        let restoring = self.inner.restoring.clone().lock_owned().await;
        let (found, answer) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let _restoring = restoring;
            this.look_before_in_task(look, found).await;
        });
        answer.await.unwrap_or_default()
    }

    /// [`Squiggle::look_before`], in its task: what it found goes to `found` before the edit's
    /// text is answered again.
    async fn look_before_in_task(
        self,
        look: Look,
        found: tokio::sync::oneshot::Sender<LookBefore>,
    ) {
        let Look {
            tickets: (back, mut again),
            path,
            texts: (before, after),
            needs,
            opened,
            window,
        } = look;
        // Each sync in its own turn, never joined to a check of the same text under way: the
        // servers see the text from before, then the edit's, whatever else runs.
        let how = (Saved::IfOnDisk, Join::Never);
        let this = self.clone();
        let edited = path.clone();
        let prior = tokio::spawn(async move {
            let before = Some(before.to_string());
            (this.check_in_turn(back, &edited, before, how, Duration::ZERO)).await
        });
        // The text from before was handed over when the next turn comes.
        again.turn().await;
        let importers = (self.importers_now(&needs, Slow::Forget, window.clone())).await;
        let opened: Vec<&Path> = opened.iter().map(PathBuf::as_path).collect();
        self.close_files(&opened).await;
        // The edited file's answer for the text from before, if it comes while the look lasts.
        let edited = (tokio::time::timeout_at(window.deadline, prior).await)
            .ok()
            .and_then(Result::ok);
        // The caller may have given up: the edit's text goes back all the same.
        let _ = found.send(LookBefore { edited, importers });
        let after = Some(after.to_string());
        (self.check_in_turn(again, &path, after, how, Duration::ZERO)).await;
    }

    /// Checks `paths` one at a time, in order, while `window` lasts: the other files' search
    /// never holds an edit's answer up for longer, and leaves a server little to finish after
    /// it (a server checks what it was handed to the end, however long that takes: pyright
    /// spends 5 s on isort's `core.py`, and the next check waits for it). No check starts in
    /// the last third of the window, so the one the end cuts short had a third of it at least:
    /// with [`Slow::Remember`], that file is not looked at by a search again for [`SLOW_FOR`].
    pub(crate) async fn checks_within(
        &self,
        paths: &[&PathBuf],
        slow: Slow,
        window: Window,
    ) -> Vec<Option<CheckResult>> {
        let shown = &self.inner.config.include_severities;
        let mut results: Vec<Option<CheckResult>> = paths.iter().map(|_| None).collect();
        for (path, result) in paths.iter().zip(results.iter_mut()) {
            if !window.open() {
                break;
            }
            let ticket = self.ticket(path);
            let state = self.texts_state().await;
            let held = self.held(path).await.is_some();
            let check = self.check_in_turn(ticket, path, None, JOIN_IF_ON_DISK, Duration::ZERO);
            let began = Instant::now();
            let answer = tokio::select! {
                answer = check => Some(answer),
                () = window.closed() => None,
            };
            // One this check opened is closed at once when no look with the text from before
            // will want it (no errors now, or no answer): a server checks again what it holds
            // open whenever a file it imports is opened or changed (pyright spent 7 s on
            // isort's `core.py` after each importer the search opened after it), and the next
            // call would wait for that.
            let wanted = (answer.as_ref()).is_some_and(|now| shows_errors(&now.diagnostics, shown));
            if !held && !wanted {
                self.close_file(path).await;
            }
            match answer {
                Some(answer) => {
                    // Kept for the texts the servers held, unless they changed meanwhile (the
                    // importer's own text changed on disk since it was last handed, say).
                    self.remember_importer(state, path, &answer);
                    *result = Some(answer);
                }
                // Cut short by a call, not by its slowness: unless it had run for as long as a
                // costly check already, when its server goes on with it after the call came, and
                // holds up that call's answer (pyright spends seconds on isort's `core.py`).
                None if window.called() => {
                    if began.elapsed() >= crate::server::COSTLY {
                        tracing::debug!(path = %path.display(), "slow to check when a call came: not searched for a while");
                        self.slow_for_a_while(path);
                    }
                    break;
                }
                None if slow == Slow::Remember => {
                    tracing::debug!(path = %path.display(), "too slow to check: not searched for a while");
                    self.slow_for_a_while(path);
                    break;
                }
                None => break,
            }
        }
        results
    }

    /// The state of the texts the servers were handed ([`super::handed::Handed::state`]).
    pub(crate) async fn texts_state(&self) -> u64 {
        (self.inner.documents)
            .with(|documents| documents.handed.state())
            .await
    }

    /// Keeps `path` out of the searches for a while ([`SLOW_FOR`]).
    fn slow_for_a_while(&self, path: &Path) {
        let path = path.to_path_buf();
        (self.inner.documents).tell(move |documents| {
            documents.slow_importers.insert(path, Instant::now());
        });
    }

    /// Keeps an importer's final answer, given at texts state `state`, beside its answers at
    /// the [`KEPT_STATES`] states before; unless the texts changed meanwhile (the importer's
    /// own text changed on disk since it was last handed, say).
    fn remember_importer(&self, state: u64, path: &Path, result: &CheckResult) {
        let path = path.to_path_buf();
        let checked = result.outcome().is_checked().then(|| result.clone());
        (self.inner.documents).tell(move |documents| {
            if documents.handed.state() != state {
                return;
            }
            let kept = documents.importer_answers.entry(path).or_default();
            kept.retain(|(at, _)| *at != state);
            kept.extend(checked.map(|result| (state, result)));
            let extra = kept.len().saturating_sub(KEPT_STATES);
            kept.drain(..extra);
        });
    }

    /// The errors the edit caused in the store's other files (not one of `searched`, not the
    /// edited one) whose lists changed, when this runtime had a final answer to a check before
    /// the edit (else the store's lists from before are no baseline). Each file's list holds
    /// only the new diagnostics.
    pub(crate) async fn caused_in_store(
        &self,
        edited: &CheckResult,
        epoch: u64,
        before: &StoreBefore,
        searched: &HashSet<&str>,
    ) -> BTreeMap<String, Vec<Diagnostic>> {
        let mut caused = BTreeMap::new();
        if !before.warm {
            return caused;
        }
        // A build check publishes every file it found errors in, from the server's worker
        // threads, around its end: the store is read once they stopped coming.
        let built = edited
            .servers
            .iter()
            .any(|server| server.basis == Some(Basis::PullAndCheck));
        let now = match built {
            true => {
                let wait = Duration::from_millis(self.inner.config.other_files_wait_ms);
                self.store_lists_after(epoch, wait).await
            }
            false => self.store_lists().await,
        };
        let changes = self.documents_changes().await;
        // A file another call opened or edited while this edit was checked: its lists changed
        // with its own text, whatever the edit did (parallel hooks on unrelated files).
        let handed_meanwhile = |file: &str| {
            let path = self.inner.workspace_root.join(file);
            changes.get(&path) != before.changes.get(&path)
        };
        for (file, now) in now {
            if file == edited.file || searched.contains(file.as_str()) || handed_meanwhile(&file) {
                continue;
            }
            let then = before
                .lists
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

/// The errors the edit caused in the importers: in each with a final answer before and after
/// it, those after that are not the same as one before. Each file's list holds only those.
pub(crate) fn caused_in_importers(
    before: &[Option<CheckResult>],
    after: &[Option<CheckResult>],
) -> BTreeMap<String, Vec<Diagnostic>> {
    let mut caused = BTreeMap::new();
    for (then, now) in before.iter().zip(after) {
        let (Some(then), Some(now)) = (then, now) else {
            continue;
        };
        if !then.outcome().is_checked() || !now.outcome().is_checked() {
            continue;
        }
        let new = caused_by(then, now);
        if !new.is_empty() {
            caused.insert(now.file.clone(), new);
        }
    }
    caused
}

/// The diagnostics of `now` that are not the same as one of `then`, the file's answer from
/// before.
fn caused_by(then: &CheckResult, now: &CheckResult) -> Vec<Diagnostic> {
    let baseline = Baseline::of(&then.diagnostics, then.text.as_deref());
    only_new(&baseline, &now.diagnostics, now.text.as_deref())
}

/// The importers to look at, at most `limit`, and how many of them, the first ones, take a
/// telling one of `names`: each importer with the names it takes, in the order found. A quoted
/// name tells only if at most half of them take it.
fn naming_first(
    taken: &[(PathBuf, HashSet<String>)],
    names: &Names,
    limit: usize,
) -> (Vec<PathBuf>, usize) {
    let telling = |name: &String| match names {
        Names::Changed(_) => true,
        Names::Quoted(_) => {
            let takers = taken.iter().filter(|(_, taken)| taken.contains(name));
            2 * takers.count() <= taken.len()
        }
    };
    let (naming, others): (Vec<_>, Vec<_>) =
        (taken.iter()).partition(|(_, taken)| taken.iter().any(telling));
    let count = naming.len().min(limit);
    let chosen = (naming.into_iter().chain(others))
        .map(|(file, _)| file.clone())
        .take(limit)
        .collect();
    (chosen, count)
}

/// Whether an importer's answer `now`, with the edit's text, may hold errors (of the
/// severities in `shown`) the edit caused: it has some, and its answer from before the edit,
/// `then`, is unknown or did not have them all.
fn may_have_caused(then: Option<&CheckResult>, now: &CheckResult, shown: &[Severity]) -> bool {
    if !now.outcome().is_checked() || !shows_errors(&now.diagnostics, shown) {
        return false;
    }
    match then.filter(|then| then.outcome().is_checked()) {
        Some(then) => shows_errors(&caused_by(then, now), shown),
        None => true,
    }
}

/// Whether `list` holds a diagnostic of one of the severities in `shown`.
pub(crate) fn shows_errors(list: &[Diagnostic], shown: &[Severity]) -> bool {
    list.iter().any(|d| shown.contains(&d.severity))
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn taken(list: &[(&str, &[&str])]) -> Vec<(PathBuf, HashSet<String>)> {
        (list.iter())
            .map(|(file, names)| {
                let names = names.iter().map(|name| name.to_string()).collect();
                (PathBuf::from(file), names)
            })
            .collect()
    }

    #[test]
    fn the_importers_that_take_a_telling_name_come_first() {
        let changed = Names::Changed(HashSet::from(["X".to_string()]));
        let quoted = Names::Quoted(HashSet::from(["HKT".to_string(), "App".to_string()]));
        // (case, names, each importer with the names it takes, limit, chosen, how many take one)
        type Case<'a> = (
            &'a str,
            &'a Names,
            &'a [(&'a str, &'a [&'a str])],
            usize,
            &'a [&'a str],
            usize,
        );
        let table: &[Case] = &[
            (
                "a changed name",
                &changed,
                &[("a", &[]), ("b", &["X"]), ("c", &[]), ("d", &["X"])],
                3,
                &["b", "d", "a"],
                2,
            ),
            (
                "a quoted name most take tells nothing",
                &quoted,
                &[
                    ("a", &["HKT"]),
                    ("b", &["HKT", "App"]),
                    ("c", &["HKT"]),
                    ("d", &[]),
                ],
                4,
                &["b", "a", "c", "d"],
                1,
            ),
            (
                "more take one than are looked at",
                &changed,
                &[("a", &["X"]), ("b", &["X"]), ("c", &[])],
                1,
                &["a"],
                1,
            ),
            (
                "none takes one",
                &changed,
                &[("a", &[]), ("b", &[])],
                4,
                &["a", "b"],
                0,
            ),
        ];
        for (case, names, list, limit, chosen, naming) in table {
            let (found, count) = naming_first(&taken(list), names, *limit);
            let found: Vec<&str> = found.iter().map(|f| f.to_str().unwrap()).collect();
            assert_eq!((found.as_slice(), count), (*chosen, *naming), "{case}");
        }
    }
}
