//! Keeping a server's copy of each document in step with squiggle's: the version each sync
//! sends (1 to open, one more each change, going on across a close and a reopen so that a
//! late answer for old text is never taken for new), whether a sync opens or changes the
//! document, when a didSave follows (and with the text or not), and what a close sends. Pure:
//! each step returns the notifications to send ([`Notice`]); the server actor writes them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use async_lsp::lsp_types::Url;
use squiggle_protocol::paths;

use super::documents::{Document, Documents};
use super::lifecycle::Save;
use super::request_error::RequestError;

/// Why a URI could not be made of a path.
type UrlError = <Url as FromStr>::Err;

/// The documents one server has open, and the versions of those it closed.
#[derive(Debug)]
pub struct DocumentSync {
    /// The open documents (the map the client loop reads to convert positions).
    documents: Documents,
    /// The last version sent for each document closed since: a reopened document goes on from
    /// it, so that a late answer for its old text is never taken for the new one's.
    closed: HashMap<PathBuf, i32>,
}

/// A notification to send the server about a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// `didOpen` with this version and text.
    Open {
        uri: Url,
        version: i32,
        text: Arc<str>,
    },
    /// A full-text `didChange` to this version.
    Change {
        uri: Url,
        version: i32,
        text: Arc<str>,
    },
    /// `didSave`, with the text when the server asked for it.
    Save { uri: Url, text: Option<Arc<str>> },
    /// `didClose`.
    Close { uri: Url },
}

/// What one sync sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synced {
    /// The version the document has now.
    pub version: i32,
    /// The notifications to send, in order.
    pub notices: Vec<Notice>,
}

/// Why a document could not be synced.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// Its path makes no URI.
    #[error("cannot make a URI of {}: {reason}", path.display())]
    NoUri { path: PathBuf, reason: UrlError },
    /// The notification could not be sent: the connection is gone.
    #[error("{server} is not connected: {reason}")]
    NotConnected {
        server: String,
        reason: RequestError,
    },
}

impl DocumentSync {
    /// No document open yet; open ones are kept in `documents`.
    pub fn new(documents: Documents) -> Self {
        Self {
            documents,
            closed: HashMap::new(),
        }
    }

    /// The version the next sync of a document sends: 1 to open it, then one more each time
    /// (also across a close and a reopen).
    pub fn next_version(&self, path: &Path) -> i32 {
        match self.documents.get(path) {
            Some(doc) => doc.version + 1,
            None => self.closed.get(path).map_or(1, |last| last + 1),
        }
    }

    /// The open document at `path`, if it is open.
    pub fn get(&self, path: &Path) -> Option<Document> {
        self.documents.get(path).map(|doc| doc.clone())
    }

    /// The paths of the open documents.
    pub fn open_paths(&self) -> Vec<PathBuf> {
        self.documents.iter().map(|doc| doc.key().clone()).collect()
    }

    /// Takes this full text as the document's next version: didOpen when it is not open, else
    /// a full-text didChange, then didSave when the file on disk holds the text (`saved`) and
    /// the server wants it (`save`).
    pub fn sync(
        &mut self,
        path: &Path,
        text: Arc<str>,
        saved: bool,
        save: Save,
    ) -> Result<Synced, SyncError> {
        let version = self.next_version(path);
        let (uri, opening) = match self.documents.get(path) {
            Some(doc) => (doc.uri.clone(), false),
            None => (uri_of(path)?, true),
        };
        self.closed.remove(path);
        self.documents.insert(
            path.to_path_buf(),
            Document {
                uri: uri.clone(),
                version,
                text: text.clone(),
            },
        );
        let mut notices = vec![if opening {
            Notice::Open {
                uri: uri.clone(),
                version,
                text: text.clone(),
            }
        } else {
            Notice::Change {
                uri: uri.clone(),
                version,
                text: text.clone(),
            }
        }];
        if saved {
            notices.extend(save_notice(uri, &text, save));
        }
        Ok(Synced { version, notices })
    }

    /// didSave for an open document, when the server wants it.
    pub fn save(&self, path: &Path, save: Save) -> Option<Notice> {
        let doc = self.get(path)?;
        save_notice(doc.uri, &doc.text, save)
    }

    /// didClose for an open document, which is forgotten (but for its version).
    pub fn close(&mut self, path: &Path) -> Option<Notice> {
        let (_, doc) = self.documents.remove(path)?;
        self.closed.insert(path.to_path_buf(), doc.version);
        Some(Notice::Close { uri: doc.uri })
    }
}

/// The URI a document is opened under.
fn uri_of(path: &Path) -> Result<Url, SyncError> {
    Url::parse(&paths::path_to_uri(&path.to_string_lossy())).map_err(|reason| SyncError::NoUri {
        path: path.to_path_buf(),
        reason,
    })
}

/// didSave of this text, if the server wants it.
fn save_notice(uri: Url, text: &Arc<str>, save: Save) -> Option<Notice> {
    match save {
        Save::Send { include_text } => Some(Notice::Save {
            uri,
            text: include_text.then(|| text.clone()),
        }),
        Save::Skip => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn p(name: &str) -> PathBuf {
        PathBuf::from(format!("/ws/{name}"))
    }

    fn uri(name: &str) -> Url {
        Url::parse(&format!("file:///ws/{name}")).unwrap()
    }

    fn text(t: &str) -> Arc<str> {
        Arc::from(t)
    }

    const SKIP: Save = Save::Skip;

    #[test]
    fn versions_start_at_one_and_go_on_across_a_close() {
        let mut sync = DocumentSync::new(Documents::default());
        let steps: Vec<(&str, &str, i32)> = vec![
            // (action, document, version after)
            ("sync", "a", 1),
            ("sync", "a", 2),
            ("sync", "b", 1),
            ("close", "a", 2),
            ("sync", "a", 3),
            ("sync", "a", 4),
            ("close", "b", 1),
            ("close", "b", 1),
            ("sync", "b", 2),
        ];
        for (action, name, version) in steps {
            match action {
                "sync" => {
                    assert_eq!(sync.next_version(&p(name)), version, "{action} {name}");
                    let synced = sync.sync(&p(name), text("x"), false, SKIP).unwrap();
                    assert_eq!(synced.version, version, "{action} {name}");
                    assert_eq!(sync.get(&p(name)).unwrap().version, version);
                }
                _ => {
                    sync.close(&p(name));
                    assert_eq!(sync.next_version(&p(name)), version + 1, "{action} {name}");
                }
            }
        }
    }

    #[test]
    fn the_first_sync_opens_and_later_ones_change_the_full_text() {
        let mut sync = DocumentSync::new(Documents::default());
        let opened = sync.sync(&p("a.rs"), text("one"), false, SKIP).unwrap();
        assert_eq!(
            opened.notices,
            vec![Notice::Open {
                uri: uri("a.rs"),
                version: 1,
                text: text("one")
            }]
        );
        let changed = sync.sync(&p("a.rs"), text("two"), false, SKIP).unwrap();
        assert_eq!(
            changed.notices,
            vec![Notice::Change {
                uri: uri("a.rs"),
                version: 2,
                text: text("two")
            }]
        );
        assert_eq!(&*sync.get(&p("a.rs")).unwrap().text, "two");
        assert_eq!(sync.open_paths(), vec![p("a.rs")]);
    }

    #[test]
    fn did_save_follows_a_saved_text_when_the_server_wants_it() {
        let with_text = Save::Send { include_text: true };
        let bare = Save::Send {
            include_text: false,
        };
        let table = [
            // (saved, what the server wants, the didSave sent)
            (false, with_text, None),
            (false, SKIP, None),
            (true, SKIP, None),
            (true, bare, Some(None)),
            (true, with_text, Some(Some(text("t")))),
        ];
        for (saved, save, sent) in table {
            let mut sync = DocumentSync::new(Documents::default());
            let synced = sync.sync(&p("a"), text("t"), saved, save).unwrap();
            let expected = sent.map(|text| Notice::Save {
                uri: uri("a"),
                text,
            });
            assert_eq!(synced.notices.get(1).cloned(), expected, "{saved} {save:?}");
            assert!(synced.notices.len() <= 2);
            assert_eq!(
                sync.save(&p("a"), save),
                save_notice(uri("a"), &text("t"), save),
                "a save of an open document follows the same policy"
            );
        }
    }

    #[test]
    fn only_an_open_document_is_saved_or_closed() {
        let mut sync = DocumentSync::new(Documents::default());
        let save = Save::Send { include_text: true };
        assert_eq!(sync.save(&p("a"), save), None);
        assert_eq!(sync.close(&p("a")), None);
        sync.sync(&p("a"), text("t"), false, SKIP).unwrap();
        assert_eq!(sync.close(&p("a")), Some(Notice::Close { uri: uri("a") }));
        assert!(sync.get(&p("a")).is_none());
        assert_eq!(sync.save(&p("a"), save), None, "closed now");
        assert!(sync.open_paths().is_empty());
    }

    #[test]
    fn a_failed_sync_reads_as_before() {
        let reason = Url::parse("http://").unwrap_err();
        let no_uri = SyncError::NoUri {
            path: p("a"),
            reason,
        };
        assert_eq!(no_uri.to_string(), "cannot make a URI of /ws/a: empty host");
        let gone = SyncError::NotConnected {
            server: "ra".to_string(),
            reason: RequestError::from(async_lsp::Error::ServiceStopped),
        };
        assert_eq!(gone.to_string(), "ra is not connected: service stopped");
    }
}
