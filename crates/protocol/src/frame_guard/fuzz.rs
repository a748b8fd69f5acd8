//! Seeded random and mutated streams through the guard: whatever a broken or hostile peer sends
//! before two clean frames, the guard never panics, reports a bounded number of bad frames, and
//! hands both clean frames on, however the bytes are split into reads.

#![allow(clippy::unwrap_used)]

use super::header::find_length_header;
use super::*;

/// How many streams each run tries.
const CASES: u64 = 3_000;

/// A small xorshift64* generator: the same seed gives the same streams on every machine.
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value; zero is moved off).
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// One of `items`.
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Bytes the frame syntax is made of, so that random bytes often come close to a frame.
const ALPHABET: &[u8] =
    b"Content-Length: 0123456789\r\n\r\n{}[]\":,.-+ \tabcxyzCONTENT-LENGTH\\\x00\xff";

/// Pieces a broken peer puts together.
const PIECES: &[&[u8]] = &[
    b"Content-Length: ",
    b"content-length:",
    b"Content-Length: 0\r\n\r\n",
    b"Content-Length: 5\r\n\r\n",
    b"Content-Length: 99999999999\r\n",
    b"Content-Length: -1\r\n",
    b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n",
    b"\r\n",
    b"\n",
    b"\r\n\r\n",
    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}",
    b"{\"jsonrpc\":\"2.0\",\"method\":\"Content-Length: 3\"}",
    b"[INFO] listening on stdio",
    b"y\n",
];

/// A clean request body with a given id.
fn clean(id: &str) -> Vec<u8> {
    format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"lsp/status","params":{{}}}}"#).into_bytes()
}

/// Random bytes, mostly from the frame syntax.
fn random_bytes(rng: &mut Rng, max: usize) -> Vec<u8> {
    let len = rng.below(max + 1);
    let any = rng.below(4) == 0;
    (0..len)
        .map(|_| match any {
            true => rng.next_u64() as u8,
            false => *rng.pick(ALPHABET),
        })
        .collect()
}

/// A clean frame with a few random edits: flipped, inserted, deleted or repeated bytes, or cut.
fn mutated_frame(rng: &mut Rng) -> Vec<u8> {
    let mut frame = encode_frame(&clean("bad"));
    for _ in 0..=rng.below(4) {
        let at = rng.below(frame.len());
        match rng.below(6) {
            0 => frame[at] ^= 1 << rng.below(8),
            1 => frame.insert(at, *rng.pick(ALPHABET)),
            2 => {
                frame.remove(at);
            }
            3 => {
                let end = (at + rng.below(16)).min(frame.len());
                let copy = frame[at..end].to_vec();
                frame.splice(at..at, copy);
            }
            4 => frame.truncate(at),
            _ => frame[at] = *rng.pick(ALPHABET),
        }
        if frame.is_empty() {
            break;
        }
    }
    frame
}

/// A header announcing a random length, before a random or clean body.
fn wrong_length(rng: &mut Rng) -> Vec<u8> {
    let body = match rng.below(2) {
        0 => clean("bad"),
        _ => random_bytes(rng, 60),
    };
    let len = rng.below(body.len() * 2 + 2);
    let mut frame = format!("Content-Length: {len}\r\n\r\n").into_bytes();
    frame.extend(body);
    frame
}

/// What a broken or hostile peer sends before a clean frame.
fn bad_bytes(rng: &mut Rng) -> Vec<u8> {
    match rng.below(5) {
        0 => random_bytes(rng, 120),
        1 => mutated_frame(rng),
        2 => wrong_length(rng),
        3 => (0..=rng.below(5))
            .flat_map(|_| rng.pick(PIECES).to_vec())
            .collect(),
        _ => {
            let mut bytes = mutated_frame(rng);
            bytes.extend(random_bytes(rng, 40));
            bytes
        }
    }
}

/// Cuts `stream` into reads of random sizes (often one byte, sometimes all of it).
fn reads(rng: &mut Rng, stream: &[u8]) -> Vec<Vec<u8>> {
    let mut reads = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        let size = match rng.below(4) {
            0 => 1,
            1 => rest.len(),
            _ => 1 + rng.below(32),
        }
        .min(rest.len());
        reads.push(rest[..size].to_vec());
        rest = &rest[size..];
    }
    reads
}

/// How many times `Content-Length:` appears in `bytes`.
fn headers_in(bytes: &[u8]) -> usize {
    let mut count = 0;
    let mut from = 0;
    while let Some(at) = find_length_header(bytes, from) {
        count += 1;
        from = at + 1;
    }
    count
}

/// Runs one case: `bad`, then two clean frames, read as `reads` says; panics on a violation.
fn run_case(case: u64, rng: &mut Rng) {
    let bad = bad_bytes(rng);
    let (first, second) = (
        clean(&format!("probe-{case}-a")),
        clean(&format!("probe-{case}-b")),
    );
    let mut stream = bad.clone();
    stream.extend(encode_frame(&first));
    stream.extend(encode_frame(&second));

    let mut guard = FrameGuard::named("fuzz");
    let mut bodies = Vec::new();
    let mut errors = 0;
    for read in reads(rng, &stream) {
        guard.push(&read);
        while let Some(item) = guard.next_body() {
            match item {
                Ok(body) => {
                    // Like `squiggle serve`: a body that is not JSON is answered and rejected.
                    if serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_err() {
                        guard.reject(BadFrame::NotJson);
                        errors += 1;
                    }
                    bodies.push(body);
                }
                Err(_) => errors += 1,
            }
        }
    }
    let shown = String::from_utf8_lossy(&bad);
    let n = bodies.len();
    assert!(
        n >= 2 && bodies[n - 2] == first && bodies[n - 1] == second,
        "case {case}: the clean frames after {shown:?} were not both handed on: {:?}",
        bodies
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect::<Vec<_>>()
    );
    let bound = 1 + 2 * headers_in(&bad);
    assert!(
        errors <= bound,
        "case {case}: {errors} errors for {shown:?} (at most {bound})"
    );
    assert!(
        guard.unconsumed().len() <= KEEP_FOR_HEADER,
        "case {case}: bytes left after the last frame"
    );
}

#[test]
fn random_and_mutated_frames_never_cost_the_clean_frames_after_them() {
    // Another seed: SQUIGGLE_FUZZ_SEED=<n> cargo test -p squiggle-protocol fuzz
    let seed = std::env::var("SQUIGGLE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED);
    let mut rng = Rng::new(seed);
    for case in 0..CASES {
        run_case(case, &mut rng);
    }
}

#[test]
fn the_generator_is_deterministic() {
    let (mut a, mut b) = (Rng::new(7), Rng::new(7));
    let first: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
    assert_eq!(first, (0..5).map(|_| b.next_u64()).collect::<Vec<_>>());
    assert_ne!(first[0], first[1]);
}
