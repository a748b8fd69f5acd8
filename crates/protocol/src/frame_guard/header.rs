//! Reading the header block of an LSP frame, and finding the next `Content-Length:` in bytes
//! that are not one.

use super::BadFrame;

/// The largest body accepted in one frame.
pub(super) const MAX_BODY: usize = 64 * 1024 * 1024;
/// The largest header block (or junk line) kept while waiting for its end.
pub(super) const MAX_HEADER: usize = 8 * 1024;
/// The header that carries the body length, with its colon, lowercase.
const LENGTH_HEADER: &[u8] = b"content-length:";
/// Where the hyphen sits in [`LENGTH_HEADER`]: the byte searched for first, as it is rare in
/// JSON and logs.
const HYPHEN: usize = 7;
/// How many bytes at the end of skipped junk are kept, in case a `Content-Length:` starts there.
pub(super) const KEEP_FOR_HEADER: usize = LENGTH_HEADER.len() - 1;

/// What the start of the unread bytes holds.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Header {
    /// Not enough bytes to tell yet.
    Incomplete,
    /// Not a usable header: the first `skip` bytes are dropped (at least one) and the rest is
    /// searched for the next `Content-Length:`.
    Bad { why: BadFrame, skip: usize },
    /// A complete header of `header_len` bytes announcing a body of `body_len` bytes.
    Frame { header_len: usize, body_len: usize },
}

/// Parses the header block at the start of `buf`, which does not start with whitespace.
///
/// A bad `Content-Length` is refused as soon as its line is read, and any line with
/// `Content-Length:` after its first byte ends the block there: the header is searched for
/// wherever it appears, since a client may send it right after garbage with no newline.
pub(super) fn parse_header(buf: &[u8]) -> Header {
    let mut pos = 0;
    let mut body_len = None;
    loop {
        let Some(newline) = buf[pos..].iter().position(|&b| b == b'\n') else {
            return incomplete_line(buf, pos);
        };
        let end = pos + newline;
        let line = &buf[pos..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(at) = find_length_header(line, 1) {
            return bad(BadFrame::Junk, pos + at);
        }
        let next = end + 1;
        if next > MAX_HEADER {
            return bad(BadFrame::HeaderTooLong, 1);
        }
        if line.is_empty() {
            return match body_len {
                Some(body_len) => Header::Frame {
                    header_len: next,
                    body_len,
                },
                None => bad(BadFrame::NoLength, next),
            };
        }
        let Some((name, value)) = split_header(line) else {
            return bad(BadFrame::Junk, 1);
        };
        if name.eq_ignore_ascii_case(&LENGTH_HEADER[..LENGTH_HEADER.len() - 1]) {
            if body_len.is_some() {
                return bad(BadFrame::CutShort, pos);
            }
            match parse_length(value) {
                Some(len) if len <= MAX_BODY => body_len = Some(len),
                Some(_) => return bad(BadFrame::TooLarge, next),
                None => return bad(BadFrame::InvalidLength, next),
            }
        }
        pos = next;
    }
}

/// What an unfinished line at `pos` (after the complete lines of the block) means.
fn incomplete_line(buf: &[u8], pos: usize) -> Header {
    let partial = &buf[pos..];
    if let Some(at) = find_length_header(partial, 1) {
        return bad(BadFrame::Junk, pos + at);
    }
    if buf.len() > MAX_HEADER {
        return bad(BadFrame::HeaderTooLong, 1);
    }
    match could_be_header_line(partial) {
        Ok(()) => Header::Incomplete,
        Err(why) => bad(why, if pos == 0 { 1 } else { pos }),
    }
}

/// A bad header that drops `skip` bytes (at least one, so that skipping always moves on).
fn bad(why: BadFrame, skip: usize) -> Header {
    Header::Bad {
        why,
        skip: skip.max(1),
    }
}

/// Whether the start of a line can still become a header line; if not, what it is.
fn could_be_header_line(partial: &[u8]) -> Result<(), BadFrame> {
    if partial == b"\r" {
        return Ok(());
    }
    let Some(colon) = partial.iter().position(|&b| b == b':') else {
        return match partial.iter().all(is_token) {
            true => Ok(()),
            false => Err(BadFrame::Junk),
        };
    };
    let (name, value) = (&partial[..colon], &partial[colon + 1..]);
    if name.is_empty() || !name.iter().all(is_token) {
        return Err(BadFrame::Junk);
    }
    let is_length = name.eq_ignore_ascii_case(&LENGTH_HEADER[..LENGTH_HEADER.len() - 1]);
    let value = value.strip_suffix(b"\r").unwrap_or(value);
    if is_length
        && !value
            .iter()
            .all(|b| b.is_ascii_digit() || *b == b' ' || *b == b'\t')
    {
        return Err(BadFrame::InvalidLength);
    }
    Ok(())
}

/// Whether a byte may be part of a header name.
fn is_token(b: &u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_.".contains(b)
}

/// Splits `Name: value` into name and trimmed value; None unless the name is a header token.
fn split_header(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = line.iter().position(|&b| b == b':')?;
    let name = &line[..colon];
    if name.is_empty() || !name.iter().all(is_token) {
        return None;
    }
    Some((name, line[colon + 1..].trim_ascii()))
}

/// The decimal length in a `Content-Length` value.
fn parse_length(value: &[u8]) -> Option<usize> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // All digits: only an overflow fails, and that length is too large anyway.
    Some(
        std::str::from_utf8(value)
            .ok()?
            .parse()
            .unwrap_or(usize::MAX),
    )
}

/// Where the first `Content-Length:` (in any case) starts in `bytes`, at or after `from`.
pub(super) fn find_length_header(bytes: &[u8], from: usize) -> Option<usize> {
    let mut hyphen = from + HYPHEN;
    while hyphen < bytes.len() {
        hyphen += bytes[hyphen..].iter().position(|&b| b == b'-')?;
        let start = hyphen - HYPHEN;
        if bytes
            .get(start..start + LENGTH_HEADER.len())
            .is_some_and(|candidate| candidate.eq_ignore_ascii_case(LENGTH_HEADER))
        {
            return Some(start);
        }
        hyphen += 1;
    }
    None
}

/// What a search for a header line inside a body found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum InBody {
    /// A complete `Content-Length: N` line starts here.
    Found(usize),
    /// None so far; a later search may start here (a header line may still complete there).
    NotYet(usize),
}

/// Searches `body` from `from` for a complete `Content-Length: N` line (ended by a newline).
///
/// JSON never holds one: `Content-Length:` can only be inside a string there, and a string
/// holds no raw newline. So a body awaited under a length that holds one proves the length
/// wrong, and the next frame starts there.
pub(super) fn find_header_line(body: &[u8], from: usize) -> InBody {
    let mut search = from;
    while let Some(at) = find_length_header(body, search) {
        let value = &body[at + LENGTH_HEADER.len()..];
        let end = value
            .iter()
            .position(|b| !(b.is_ascii_digit() || b" \t\r".contains(b)));
        match end {
            None => return InBody::NotYet(at),
            Some(end) if value[end] == b'\n' && value[..end].iter().any(u8::is_ascii_digit) => {
                return InBody::Found(at);
            }
            Some(_) => search = at + 1,
        }
    }
    InBody::NotYet(search.max(body.len().saturating_sub(KEEP_FOR_HEADER)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_length_is_found_anywhere_in_any_case() {
        assert_eq!(find_length_header(b"Content-Length: 5", 0), Some(0));
        assert_eq!(find_length_header(b"xyzCONTENT-length:5", 0), Some(3));
        assert_eq!(find_length_header(b"Content-Length: 5", 1), None);
        assert_eq!(find_length_header(b"a-b-c content-length:", 0), Some(6));
        assert_eq!(find_length_header(b"Content-Length", 0), None);
        assert_eq!(find_length_header(b"-------", 0), None);
        assert_eq!(find_length_header(b"", 3), None);
    }

    #[test]
    fn a_complete_header_line_in_a_body_is_found_and_a_partial_one_waits() {
        assert_eq!(
            find_header_line(b"{\"a\":1}Content-Length: 12\r\n", 0),
            InBody::Found(7)
        );
        assert_eq!(
            find_header_line(b"{\"a\":1}Content-Length: 12\r", 0),
            InBody::NotYet(7)
        );
        assert_eq!(
            find_header_line(b"\"Content-Length: 12\" and more", 0),
            InBody::NotYet(29 - KEEP_FOR_HEADER)
        );
        assert_eq!(
            find_header_line(b"Content-Length:\nContent-Length: 3\n", 0),
            InBody::Found(16)
        );
    }

    #[test]
    fn a_header_block_gives_its_lengths() {
        assert_eq!(
            parse_header(b"Content-Length: 12\r\n\r\n{"),
            Header::Frame {
                header_len: 22,
                body_len: 12
            }
        );
        assert_eq!(parse_header(b"Content-Length: 12\r\n"), Header::Incomplete);
        assert_eq!(parse_header(b"Content-Len"), Header::Incomplete);
    }

    #[test]
    fn bad_lengths_are_refused_before_the_block_ends() {
        for (header, why) in [
            ("Content-Length: -5\r\n", BadFrame::InvalidLength),
            ("Content-Length: abc\r\n", BadFrame::InvalidLength),
            ("Content-Length: 5x", BadFrame::InvalidLength),
            (
                "Content-Length: 99999999999999999999999\r\n",
                BadFrame::TooLarge,
            ),
            ("Content-Length: 67108865\r\n", BadFrame::TooLarge),
        ] {
            assert!(
                matches!(parse_header(header.as_bytes()), Header::Bad { why: got, .. } if got == why),
                "{header:?}"
            );
        }
    }

    #[test]
    fn junk_ends_where_a_content_length_starts() {
        assert_eq!(
            parse_header(b"helloContent-Length: 3\r\n\r\n"),
            Header::Bad {
                why: BadFrame::Junk,
                skip: 5
            }
        );
        assert_eq!(
            parse_header(b"X: 1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n"),
            Header::Bad {
                why: BadFrame::CutShort,
                skip: 25
            }
        );
        assert_eq!(
            parse_header(b"{\"jsonrpc\""),
            Header::Bad {
                why: BadFrame::Junk,
                skip: 1
            }
        );
    }
}
