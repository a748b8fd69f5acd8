//! Pure path and `file://` URI functions that behave the same on every OS.

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

/// The bytes of a drive prefix such as `C:`, if `path` starts with one followed by a separator or nothing.
fn drive_prefix(path: &str) -> Option<&str> {
    let bytes = path.as_bytes();
    let is_drive = bytes.len() >= 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes.get(2), None | Some(b'/') | Some(b'\\'));
    is_drive.then(|| &path[..2])
}

/// Appends `text` to `out`, percent-encoding all but unreserved characters and `/`.
fn push_encoded(out: &mut String, text: &str) {
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
}

/// A relative path as a relative URI reference: `src/a b.py` -> `src/a%20b.py` (encoded as
/// [`path_to_uri`] encodes; SARIF's artifact locations are these).
pub fn relative_uri(path: &str) -> String {
    let mut uri = String::with_capacity(path.len());
    push_encoded(&mut uri, path);
    uri
}

/// A Windows path without its verbatim prefix, which `canonicalize` adds there and no server
/// understands: `\\?\C:\x` -> `C:\x`, `\\?\UNC\host\share\x` -> `\\host\share\x`; any other
/// path as it is.
pub fn without_verbatim_prefix(path: &str) -> Cow<'_, str> {
    let Some(rest) = path.strip_prefix(r"\\?\") else {
        return Cow::Borrowed(path);
    };
    if drive_prefix(rest).is_some() {
        return Cow::Borrowed(rest);
    }
    match rest.get(..4) {
        Some(unc) if unc.eq_ignore_ascii_case(r"UNC\") => Cow::Owned(format!(r"\\{}", &rest[4..])),
        _ => Cow::Borrowed(path),
    }
}

/// `std::fs::canonicalize`, with Windows' verbatim prefix taken off (see
/// [`without_verbatim_prefix`]), so that a path squiggle resolved is one a server (and a
/// person) writes the same way.
pub fn canonicalize(path: impl AsRef<Path>) -> std::io::Result<PathBuf> {
    let canonical = std::fs::canonicalize(path)?;
    Ok(match canonical.to_str() {
        Some(text) if text.starts_with(r"\\?\") => PathBuf::from(&*without_verbatim_prefix(text)),
        _ => canonical,
    })
}

/// `/a b/c#d%.py` -> `file:///a%20b/c%23d%25.py`; Windows `C:\x y\z.rs` or `C:/x/z.rs` ->
/// `file:///C:/x%20y/z.rs`, `\\host\share\x` -> `file://host/share/x` (a verbatim prefix is
/// taken off first).
///
/// Percent-encodes everything except unreserved (A-Z a-z 0-9 - . _ ~), `/`, and the drive
/// colon; non-ASCII as UTF-8 percent bytes.
pub fn path_to_uri(path: &str) -> String {
    let path = &*without_verbatim_prefix(path);
    let mut uri = String::from("file://");
    if let Some(unc) = path
        .strip_prefix(r"\\")
        .filter(|_| !path.starts_with(r"\\?\"))
    {
        let (host, rest) = unc.split_once('\\').unwrap_or((unc, ""));
        push_encoded(&mut uri, host);
        uri.push('/');
        push_encoded(&mut uri, &rest.replace('\\', "/"));
        return uri;
    }
    match drive_prefix(path) {
        Some(drive) => {
            uri.push('/');
            uri.push_str(drive);
            push_encoded(&mut uri, &path[drive.len()..].replace('\\', "/"));
        }
        None => {
            if !path.starts_with('/') {
                uri.push('/');
            }
            push_encoded(&mut uri, path);
        }
    }
    uri
}

/// The value of one hexadecimal digit.
fn hex_value(byte: u8) -> Option<u8> {
    char::from(byte)
        .to_digit(16)
        .and_then(|digit| u8::try_from(digit).ok())
}

/// Decodes `%XX` escapes; a `%` not followed by two hex digits is kept as is.
fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&high), Some(&low)) => hex_value(high).zip(hex_value(low)),
            _ => None,
        };
        match escaped {
            Some((high, low)) => {
                out.push(high * 16 + low);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    out
}

/// Inverse of path_to_uri; accepts `file:///...`, `file://localhost/...`, percent-encoded
/// colons and either case of drive letter, and on Windows `file://host/share/x`.
///
/// Drive paths come back with backslashes and the drive letter in upper case, as Windows
/// resolves them (`file:///c%3A/x` -> `C:\x`), so that every spelling is one document; UNC
/// ones as `\\host\share\x`; others as `/a b`. None if not a file URI, a host elsewhere than
/// on Windows, or not valid UTF-8 after decoding.
pub fn uri_to_path(uri: &str) -> Option<String> {
    let scheme = uri.get(..7)?;
    if !scheme.eq_ignore_ascii_case("file://") {
        return None;
    }
    let rest = &uri[7..];
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let slash = rest.find('/')?;
    let host = &rest[..slash];
    let path = String::from_utf8(percent_decode(&rest[slash..])).ok()?;
    if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
        let host = String::from_utf8(percent_decode(host)).ok()?;
        return cfg!(windows).then(|| format!(r"\\{host}{}", path.replace('/', "\\")));
    }
    let without_slash = &path[1..];
    match drive_prefix(without_slash) {
        Some(drive) => {
            let tail = without_slash[drive.len()..].replace('/', "\\");
            let tail = if tail.is_empty() { "\\" } else { &tail };
            Some(format!("{}{tail}", drive.to_ascii_uppercase()))
        }
        None => Some(path),
    }
}

/// Resolves `.` and `..` lexically (no file system).
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut parts: Vec<Component<'_>> = Vec::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match parts.last() {
                Some(Component::Normal(_)) => {
                    parts.pop();
                }
                Some(Component::RootDir) | Some(Component::Prefix(_)) => {}
                Some(Component::ParentDir) | Some(Component::CurDir) | None => {
                    parts.push(component);
                }
            },
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        return PathBuf::from(".");
    }
    parts.iter().collect()
}

/// Resolves symlinks of the longest existing ancestor (std::fs::canonicalize) and appends the rest lexically normalized; for paths that do not exist yet.
pub fn resolve(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match std::env::current_dir() {
            Ok(cwd) => cwd.join(path),
            Err(_) => path.to_path_buf(),
        }
    };
    let components: Vec<Component<'_>> = absolute.components().collect();
    for existing in (1..=components.len()).rev() {
        let ancestor: PathBuf = components[..existing].iter().collect();
        if let Ok(canonical) = canonicalize(&ancestor) {
            let rest: PathBuf = components[existing..].iter().collect();
            return normalize_lexically(&canonical.join(rest));
        }
    }
    normalize_lexically(&absolute)
}

/// [`resolve`] for a path under a root that is already resolved: only the parts below the
/// root are looked at, one `lstat` each, instead of a `readlink` for every part of the path.
/// A link, a `..`, or a path not under the root falls back to [`resolve`], so the result is
/// the same.
pub fn resolve_under(root: &Path, path: &Path) -> PathBuf {
    let Ok(below) = path.strip_prefix(root) else {
        return resolve(path);
    };
    let mut resolved = root.to_path_buf();
    let mut exists = true;
    for component in below.components() {
        let Component::Normal(name) = component else {
            return resolve(path);
        };
        resolved.push(name);
        if !exists {
            continue;
        }
        match std::fs::symlink_metadata(&resolved) {
            Ok(meta) if meta.file_type().is_symlink() => return resolve(path),
            Ok(_) => {}
            // The rest does not exist yet: it is kept as written, as `resolve` keeps it.
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => exists = false,
            Err(_) => return resolve(path),
        }
    }
    resolved
}

/// Whether `path` is `root` or inside it, segment-safe (`/ws2` is not inside `/ws`), after `resolve` of both (so `..` and symlinks pointing outside are caught).
pub fn is_within(root: &Path, path: &Path) -> bool {
    resolve(path).starts_with(resolve(root))
}

/// Whether a path a server reported on can be a document of the workspace at `root`: inside it,
/// not the root folder itself, and without a NUL byte (`%00` in a URI, which no file name
/// holds); anything else would become a "file" in other files' lists.
pub fn is_document_in(root: &Path, path: &Path) -> bool {
    path.starts_with(root) && path != root && !path.as_os_str().as_encoded_bytes().contains(&0)
}

/// `path` relative to `root` with `/` separators (`.` for the root itself); both are expected resolved; falls back to the full path if not within.
pub fn relative_to(root: &Path, path: &Path) -> String {
    // The root itself, as most servers' roots are: no need to compare part by part.
    if path.as_os_str() == root.as_os_str() {
        return ".".to_string();
    }
    match path.strip_prefix(root) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_string(),
        Ok(relative) => match relative.to_str() {
            // Already `/`-separated: no need to take it apart.
            Some(text) if cfg!(unix) => text.to_string(),
            _ => relative
                .components()
                .map(|component| component.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
        },
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_a_path_inside_the_root_without_a_nul_is_a_document() {
        let root = Path::new("/w");
        // (uri, a document)
        let table = [
            ("file:///w/a.py", true),
            ("file:///w/src/b.ts", true),
            ("file:///w", false),
            ("file:///w/", false),
            ("file:///w/a%00b.py", false),
            ("file:///elsewhere/a.py", false),
        ];
        for (uri, document) in table {
            let path = PathBuf::from(uri_to_path(uri).expect("a file URI"));
            assert_eq!(
                is_document_in(root, &normalize_lexically(&path)),
                document,
                "{uri}"
            );
        }
    }

    #[test]
    fn unix_path_with_space_hash_and_percent_is_encoded() {
        assert_eq!(path_to_uri("/a b/c#d%.py"), "file:///a%20b/c%23d%25.py");
    }

    #[test]
    fn unreserved_characters_are_kept() {
        assert_eq!(path_to_uri("/A-z_0.9~/x"), "file:///A-z_0.9~/x");
    }

    #[test]
    fn non_ascii_is_encoded_as_utf8_bytes() {
        assert_eq!(path_to_uri("/café/中.rs"), "file:///caf%C3%A9/%E4%B8%AD.rs");
    }

    #[test]
    fn other_reserved_characters_are_encoded() {
        assert_eq!(
            path_to_uri("/a:b?c&d=e+f@g[h]"),
            "file:///a%3Ab%3Fc%26d%3De%2Bf%40g%5Bh%5D"
        );
    }

    #[test]
    fn windows_backslash_path_becomes_uri() {
        assert_eq!(path_to_uri("C:\\x y\\z.rs"), "file:///C:/x%20y/z.rs");
    }

    #[test]
    fn windows_forward_slash_path_becomes_uri() {
        assert_eq!(path_to_uri("C:/x/z.rs"), "file:///C:/x/z.rs");
    }

    #[test]
    fn unix_uri_becomes_path() {
        assert_eq!(
            uri_to_path("file:///a%20b/c%23d%25.py").as_deref(),
            Some("/a b/c#d%.py")
        );
    }

    #[test]
    fn localhost_authority_is_accepted() {
        assert_eq!(uri_to_path("file://localhost/a/b").as_deref(), Some("/a/b"));
    }

    #[test]
    fn windows_uri_becomes_backslash_path() {
        assert_eq!(
            uri_to_path("file:///C:/x%20y/z.rs").as_deref(),
            Some("C:\\x y\\z.rs")
        );
    }

    #[test]
    fn lowercase_percent_encoded_drive_is_accepted() {
        // Every spelling of a drive is the one Windows resolves it to, upper case.
        for uri in [
            "file:///c%3A/x",
            "file:///c%3a/x",
            "file:///C%3A/x",
            "file:///c:/x",
        ] {
            assert_eq!(uri_to_path(uri).as_deref(), Some("C:\\x"), "{uri}");
        }
    }

    #[test]
    fn verbatim_and_unc_paths_are_written_as_servers_write_them() {
        // (path, without its verbatim prefix, as a URI)
        let table = [
            (r"\\?\C:\ws\a.py", r"C:\ws\a.py", "file:///C:/ws/a.py"),
            (
                r"\\?\UNC\host\share\a b.py",
                r"\\host\share\a b.py",
                "file://host/share/a%20b.py",
            ),
            (
                r"\\host\share\a.py",
                r"\\host\share\a.py",
                "file://host/share/a.py",
            ),
            (
                r"\\?\Volume{x}\a.py",
                r"\\?\Volume{x}\a.py",
                "file:///%5C%5C%3F%5CVolume%7Bx%7D%5Ca.py",
            ),
            ("/ws/a.py", "/ws/a.py", "file:///ws/a.py"),
        ];
        for (path, plain, uri) in table {
            assert_eq!(without_verbatim_prefix(path), plain, "{path}");
            assert_eq!(path_to_uri(path), uri, "{path}");
        }
        // A host's share is a path only on Windows.
        let unc = uri_to_path("file://host/share/a%20b.py");
        assert_eq!(
            unc.as_deref(),
            cfg!(windows).then_some(r"\\host\share\a b.py")
        );
    }

    #[test]
    fn bare_drive_uri_becomes_drive_root() {
        assert_eq!(uri_to_path("file:///D:").as_deref(), Some("D:\\"));
        assert_eq!(uri_to_path("file:///D:/").as_deref(), Some("D:\\"));
    }

    #[test]
    fn non_ascii_uri_is_decoded() {
        assert_eq!(
            uri_to_path("file:///caf%C3%A9/%E4%B8%AD.rs").as_deref(),
            Some("/café/中.rs")
        );
    }

    #[test]
    fn query_and_fragment_are_dropped() {
        assert_eq!(uri_to_path("file:///a/b.rs#L3").as_deref(), Some("/a/b.rs"));
        assert_eq!(
            uri_to_path("file:///a/b.rs?x=1").as_deref(),
            Some("/a/b.rs")
        );
    }

    #[test]
    fn stray_percent_is_kept() {
        assert_eq!(uri_to_path("file:///a%zz%4").as_deref(), Some("/a%zz%4"));
    }

    #[test]
    fn non_file_uris_are_rejected() {
        assert_eq!(uri_to_path("http://example.com/a"), None);
        assert_eq!(uri_to_path("untitled:Untitled-1"), None);
        assert_eq!(uri_to_path("file:"), None);
        assert_eq!(uri_to_path("file://"), None);
        assert_eq!(uri_to_path("file://server/share/a"), None);
    }

    #[test]
    fn invalid_utf8_after_decoding_is_rejected() {
        assert_eq!(uri_to_path("file:///a%FF"), None);
    }

    #[test]
    fn uppercase_scheme_is_accepted() {
        assert_eq!(uri_to_path("FILE:///a").as_deref(), Some("/a"));
    }

    #[test]
    fn paths_roundtrip_through_uris() {
        for path in [
            "/a b/c#d%.py",
            "/café/中.rs",
            "/",
            "/x/y?z",
            "C:\\x y\\z.rs",
            "C:\\中\\é.py",
        ] {
            assert_eq!(uri_to_path(&path_to_uri(path)).as_deref(), Some(path));
        }
    }

    #[test]
    fn normalize_resolves_dot_and_dot_dot() {
        assert_eq!(
            normalize_lexically(Path::new("/a/./b/../c/")),
            PathBuf::from("/a/c")
        );
        assert_eq!(normalize_lexically(Path::new("/..")), PathBuf::from("/"));
        assert_eq!(
            normalize_lexically(Path::new("../a/../../b")),
            PathBuf::from("../../b")
        );
        assert_eq!(normalize_lexically(Path::new("a/..")), PathBuf::from("."));
    }

    #[test]
    fn resolve_keeps_missing_tail_normalized() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(
            resolve(&dir.path().join("new/./x/../y.rs")),
            root.join("new/y.rs")
        );
    }

    #[test]
    fn resolve_of_existing_path_is_canonical() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(resolve(&dir.path().join("sub/../sub")), root.join("sub"));
    }

    #[test]
    fn resolve_under_agrees_with_resolve() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::write(root.join("src/deep/a.rs"), "").unwrap();
        std::fs::write(outside.path().join("secret.rs"), "").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("src/deep/a.rs"), root.join("alias.rs")).unwrap();
        let cases = [
            "src/deep/a.rs",
            "src/deep/new.rs",
            "src/missing/dir/x.rs",
            "src/deep/a.rs/under-a-file.rs",
            "out/secret.rs",
            "alias.rs",
            "src/../src/deep/a.rs",
            "src/../../escape.rs",
            ".",
        ];
        for case in cases {
            let path = root.join(case);
            assert_eq!(resolve_under(&root, &path), resolve(&path), "{case}");
        }
        let elsewhere = outside.path().join("secret.rs");
        assert_eq!(resolve_under(&root, &elsewhere), resolve(&elsewhere));
        assert!(!resolve_under(&root, &root.join("out/secret.rs")).starts_with(&root));
    }

    #[test]
    fn root_is_within_itself() {
        assert!(is_within(Path::new("/ws"), Path::new("/ws")));
        assert!(is_within(Path::new("/ws"), Path::new("/ws/a/b.rs")));
    }

    #[test]
    fn sibling_with_common_prefix_is_not_within() {
        assert!(!is_within(Path::new("/ws"), Path::new("/ws2/a.rs")));
        assert!(!is_within(Path::new("/ws"), Path::new("/w")));
    }

    #[test]
    fn dot_dot_escaping_the_root_is_not_within() {
        assert!(!is_within(
            Path::new("/ws"),
            Path::new("/ws/a/../../etc/passwd")
        ));
        assert!(is_within(Path::new("/ws"), Path::new("/ws/a/../b.rs")));
    }

    #[cfg(unix)]
    #[test]
    fn symlink_inside_root_pointing_outside_is_not_within() {
        let outside = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("link")).unwrap();
        assert!(!is_within(
            root.path(),
            &root.path().join("link/secret.txt")
        ));
        assert!(!is_within(
            root.path(),
            &root.path().join("link/new/file.rs")
        ));
        assert!(is_within(root.path(), &root.path().join("real/file.rs")));
    }

    #[cfg(unix)]
    #[test]
    fn root_given_through_a_symlink_still_contains_its_files() {
        let base = tempfile::tempdir().unwrap();
        std::fs::create_dir(base.path().join("real")).unwrap();
        std::os::unix::fs::symlink(base.path().join("real"), base.path().join("alias")).unwrap();
        assert!(is_within(
            &base.path().join("alias"),
            &base.path().join("real/a.rs")
        ));
    }

    #[test]
    fn relative_to_joins_with_forward_slashes() {
        assert_eq!(
            relative_to(Path::new("/ws"), Path::new("/ws/src/a.rs")),
            "src/a.rs"
        );
    }

    #[test]
    fn relative_to_root_itself_is_dot() {
        assert_eq!(relative_to(Path::new("/ws"), Path::new("/ws")), ".");
    }

    #[test]
    fn relative_to_outside_root_is_the_full_path() {
        assert_eq!(
            relative_to(Path::new("/ws"), Path::new("/ws2/a.rs")),
            "/ws2/a.rs"
        );
    }
}
