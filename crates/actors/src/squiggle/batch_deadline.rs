//! The deadline of files checked together (a folder named to `squiggle check`): their server
//! gets them all at once and answers them in turn, so each check of a batch of N files waits
//! its own timeout plus [`PER_FILE`] for every other file of the batch. A busy server answers
//! well before that bound (pyright checks the 213 files of rich in about 20 to 50 s on two
//! cores); a server that answers nothing costs the bound once. Pure: sizes in, time out.

use std::time::Duration;

/// What each further file of a batch adds to the deadline of every check in it.
pub const PER_FILE: Duration = Duration::from_millis(500);

/// How much longer than alone each check of a batch of `files` files may wait.
pub fn allowance(files: usize) -> Duration {
    let others = u32::try_from(files.saturating_sub(1)).unwrap_or(u32::MAX);
    PER_FILE.saturating_mul(others)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_adds_per_file_for_every_other_file() {
        let table = [
            (0, Duration::ZERO),
            (1, Duration::ZERO),
            (2, Duration::from_millis(500)),
            (5, Duration::from_secs(2)),
            (213, Duration::from_secs(106)),
            (500, Duration::from_millis(249_500)),
        ];
        for (files, expected) in table {
            assert_eq!(allowance(files), expected, "{files} files");
        }
    }
}
