//! The per-user warm budget, as a pure policy: given this user's daemons (their memory with
//! their servers, when each was last used, whether a check is under way in it) and the budget
//! (how many workspaces, how much memory), which to stop. The least recently used idle one
//! goes first; one with a check under way, and the one asking, never go.

/// One warm workspace (a daemon and its servers) as the policy sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warm<Id> {
    /// What names it to the caller (its pid, its socket).
    pub id: Id,
    /// The resident memory of the daemon and its servers, in bytes (0 when unknown).
    pub memory: u64,
    /// When a check last began or ended in it, in milliseconds since the epoch.
    pub last_use_ms: u64,
    /// Whether a check is under way in it.
    pub busy: bool,
    /// Whether it is the one asking (the workspace in use): never stopped.
    pub current: bool,
}

/// How much may stay warm for this user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The most workspaces (at least 1).
    pub workspaces: usize,
    /// The most resident memory of daemons and servers together, in bytes.
    pub memory: u64,
}

impl Budget {
    /// The budget of a configuration on a machine with `physical` bytes of memory (when
    /// known): `daemon_max_workspaces` (0 counts as 1), and `daemon_max_memory_mb`, or when 0
    /// a quarter of the physical memory (unbounded when that is unknown).
    pub fn of(config: &squiggle_actors::Config, physical: Option<u64>) -> Self {
        let memory = match config.daemon_max_memory_mb {
            0 => physical.map_or(u64::MAX, |bytes| bytes / 4),
            mb => mb.saturating_mul(1024 * 1024),
        };
        Budget {
            workspaces: config.daemon_max_workspaces.max(1),
            memory,
        }
    }
}

/// The workspaces to stop so that the rest fit the budget, least recently used first: only
/// idle ones that are not the one asking. When those are not enough (the busy ones alone are
/// over it), every idle other one is stopped and the rest stay: a check never waits or fails
/// for the budget.
pub fn to_stop<Id: Clone>(warm: &[Warm<Id>], budget: Budget) -> Vec<Id> {
    let mut count = warm.len();
    let mut memory: u64 = warm.iter().map(|w| w.memory).sum();
    let mut idle: Vec<&Warm<Id>> = warm.iter().filter(|w| !w.busy && !w.current).collect();
    idle.sort_by_key(|w| w.last_use_ms);
    let mut stop = Vec::new();
    for w in idle {
        if count <= budget.workspaces && memory <= budget.memory {
            break;
        }
        stop.push(w.id.clone());
        count -= 1;
        memory = memory.saturating_sub(w.memory);
    }
    stop
}

/// The machine's physical memory, from `/proc/meminfo`, in bytes.
pub fn physical_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    fn warm(id: &'static str, memory_mib: u64, last_use_ms: u64) -> Warm<&'static str> {
        Warm {
            id,
            memory: memory_mib * MIB,
            last_use_ms,
            busy: false,
            current: false,
        }
    }

    fn busy(w: Warm<&'static str>) -> Warm<&'static str> {
        Warm { busy: true, ..w }
    }

    fn current(w: Warm<&'static str>) -> Warm<&'static str> {
        Warm { current: true, ..w }
    }

    /// A table row: its name, the warm workspaces, the budget, and which to stop.
    type Case = (
        &'static str,
        Vec<Warm<&'static str>>,
        Budget,
        Vec<&'static str>,
    );

    fn budget(workspaces: usize, memory_mib: u64) -> Budget {
        Budget {
            workspaces,
            memory: memory_mib * MIB,
        }
    }

    #[test]
    fn the_policy_stops_the_least_recently_used_idle_workspaces_first() {
        let cases: Vec<Case> = vec![
            (
                "within the budget: nothing",
                vec![warm("a", 100, 1), current(warm("b", 100, 2))],
                budget(2, 1000),
                vec![],
            ),
            (
                "one over the count: the oldest idle",
                vec![
                    warm("b", 10, 2),
                    warm("a", 10, 1),
                    current(warm("c", 10, 3)),
                ],
                budget(2, 1000),
                vec!["a"],
            ),
            (
                "two over the count: the two oldest, oldest first",
                vec![
                    warm("c", 10, 3),
                    warm("a", 10, 1),
                    warm("b", 10, 2),
                    current(warm("d", 10, 4)),
                ],
                budget(1, 1000),
                vec!["a", "b", "c"],
            ),
            (
                "the oldest is busy: the next oldest instead",
                vec![
                    busy(warm("a", 10, 1)),
                    warm("b", 10, 2),
                    current(warm("c", 10, 3)),
                ],
                budget(2, 1000),
                vec!["b"],
            ),
            (
                "the one asking is never stopped, even when it is the oldest",
                vec![
                    current(warm("a", 10, 1)),
                    warm("b", 10, 2),
                    warm("c", 10, 3),
                ],
                budget(2, 1000),
                vec!["b"],
            ),
            (
                "over the memory: as many of the oldest as it takes",
                vec![
                    warm("a", 300, 1),
                    warm("b", 300, 2),
                    warm("c", 300, 3),
                    current(warm("d", 300, 4)),
                ],
                budget(8, 700),
                vec!["a", "b"],
            ),
            (
                "a tiny memory budget: every idle other one",
                vec![
                    warm("a", 20, 1),
                    warm("b", 20, 2),
                    current(warm("c", 20, 3)),
                ],
                budget(8, 1),
                vec!["a", "b"],
            ),
            (
                "only busy ones and the one asking: nothing, over budget or not",
                vec![busy(warm("a", 500, 1)), current(warm("b", 500, 2))],
                budget(1, 1),
                vec![],
            ),
            (
                "unknown memory counts as none",
                vec![warm("a", 0, 1), current(warm("b", 0, 2))],
                budget(2, 1),
                vec![],
            ),
        ];
        for (name, warm, budget, expected) in cases {
            assert_eq!(to_stop(&warm, budget), expected, "{name}");
        }
    }

    #[test]
    fn the_default_memory_budget_is_a_quarter_of_the_machine() {
        let mut config = squiggle_actors::Config::default();
        let gib = 1024 * MIB;
        assert_eq!(
            Budget::of(&config, Some(24 * gib)),
            Budget {
                workspaces: 8,
                memory: 6 * gib
            }
        );
        assert_eq!(Budget::of(&config, Some(8 * gib)).memory, 2 * gib);
        assert_eq!(Budget::of(&config, None).memory, u64::MAX);
        config.daemon_max_memory_mb = 512;
        config.daemon_max_workspaces = 0;
        assert_eq!(
            Budget::of(&config, Some(24 * gib)),
            Budget {
                workspaces: 1,
                memory: 512 * MIB
            }
        );
    }

    #[test]
    fn physical_memory_is_known_here() {
        assert!(physical_memory().is_some_and(|bytes| bytes > 0));
    }
}
