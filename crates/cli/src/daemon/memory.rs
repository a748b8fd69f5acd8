//! The resident memory of a process with all its descendants (a daemon and its servers, and
//! theirs), from `/proc`.

use std::collections::HashMap;

use super::process::stat_fields;

/// The resident memory of `pid` and its descendants, in bytes; `None` when `pid` is gone.
pub fn of_tree(pid: u32) -> Option<u64> {
    of_trees(&[pid]).pop().flatten()
}

/// [`of_tree`] of each pid, reading the process table once.
pub fn of_trees(pids: &[u32]) -> Vec<Option<u64>> {
    let children = children_by_parent();
    pids.iter()
        .map(|pid| {
            let mut total = rss(*pid)?;
            let mut stack: Vec<u32> = children.get(pid).cloned().unwrap_or_default();
            while let Some(child) = stack.pop() {
                total += rss(child).unwrap_or(0);
                stack.extend(children.get(&child).into_iter().flatten());
            }
            Some(total)
        })
        .collect()
}

/// The resident memory of one process, in bytes.
pub fn rss(pid: u32) -> Option<u64> {
    rss_of(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

/// The resident memory in a `/proc/<pid>/status` text, in bytes.
fn rss_of(status: &str) -> Option<u64> {
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Every process's children, by parent pid.
fn children_by_parent() -> HashMap<u32, Vec<u32>> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return children;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if let Some(parent) = parent_in_stat(&stat) {
            children.entry(parent).or_default().push(pid);
        }
    }
    children
}

/// The parent pid in a `/proc/<pid>/stat` line (the field after the state).
fn parent_in_stat(stat: &str) -> Option<u32> {
    stat_fields(stat)?.nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_is_read_past_an_odd_name() {
        assert_eq!(parent_in_stat("12 (a) b (c)) S 7 12 12 0"), Some(7));
        assert_eq!(parent_in_stat("garbage"), None);
    }

    #[test]
    fn memory_is_read_from_proc_status() {
        let status = "Name:\tsquiggle\nVmPeak:\t  9000 kB\nVmRSS:\t   12345 kB\n";
        assert_eq!(rss_of(status), Some(12345 * 1024));
        assert_eq!(rss_of("Name: x\n"), None);
    }

    #[test]
    fn this_process_tree_holds_at_least_this_process() {
        let own = rss(std::process::id()).unwrap_or(0);
        assert!(of_tree(std::process::id()).is_some_and(|tree| tree >= own && tree > 0));
    }
}
