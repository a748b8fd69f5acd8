//! Paths on the daemon's wire as they are on disk, bytes and all: a path that is UTF-8 goes as
//! a JSON string, any other as `{"bytes": [...]}`, so that a file whose name is not UTF-8 is
//! checked by the daemon like any other (JSON strings cannot carry it). On Windows "bytes" are
//! the path's UTF-16 code units (a name there may hold an unpaired surrogate).

#[cfg(unix)]
use std::os::unix::ffi::{OsStrExt, OsStringExt};
#[cfg(windows)]
use std::os::windows::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One path on the wire.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum WirePath {
    /// A UTF-8 path.
    Text(String),
    /// Any other, as its bytes.
    #[cfg(unix)]
    Bytes { bytes: Vec<u8> },
    /// Any other, as its UTF-16 code units.
    #[cfg(windows)]
    Bytes { bytes: Vec<u16> },
}

impl WirePath {
    fn of(path: &Path) -> Self {
        match path.to_str() {
            Some(text) => WirePath::Text(text.to_string()),
            #[cfg(unix)]
            None => WirePath::Bytes {
                bytes: path.as_os_str().as_bytes().to_vec(),
            },
            #[cfg(windows)]
            None => WirePath::Bytes {
                bytes: path.as_os_str().encode_wide().collect(),
            },
        }
    }

    fn into_path(self) -> PathBuf {
        match self {
            WirePath::Text(text) => PathBuf::from(text),
            #[cfg(unix)]
            WirePath::Bytes { bytes } => PathBuf::from(std::ffi::OsString::from_vec(bytes)),
            #[cfg(windows)]
            WirePath::Bytes { bytes } => PathBuf::from(std::ffi::OsString::from_wide(&bytes)),
        }
    }
}

/// Serializes a list of paths (`#[serde(with = "...")]`).
pub fn serialize<S: Serializer>(paths: &[PathBuf], serializer: S) -> Result<S::Ok, S::Error> {
    let wire: Vec<WirePath> = paths.iter().map(|p| WirePath::of(p)).collect();
    wire.serialize(serializer)
}

/// Deserializes a list of paths (`#[serde(with = "...")]`).
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<PathBuf>, D::Error> {
    let wire = Vec::<WirePath>::deserialize(deserializer)?;
    Ok(wire.into_iter().map(WirePath::into_path).collect())
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Files {
        #[serde(with = "super")]
        files: Vec<PathBuf>,
    }

    #[test]
    fn paths_cross_as_text_or_bytes() {
        let odd = PathBuf::from(std::ffi::OsString::from_vec(b"/ws/bad\xff.py".to_vec()));
        let cases = [
            (
                PathBuf::from("/ws/a.py"),
                r#"{"files":["/ws/a.py"]}"#.to_string(),
            ),
            (
                odd.clone(),
                format!(r#"{{"files":[{{"bytes":{:?}}}]}}"#, b"/ws/bad\xff.py").replace(' ', ""),
            ),
        ];
        for (path, json) in cases {
            let files = Files { files: vec![path] };
            assert_eq!(serde_json::to_string(&files).unwrap(), json);
            assert_eq!(serde_json::from_str::<Files>(&json).unwrap(), files);
        }
    }
}
