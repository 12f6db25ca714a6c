//! I/O priorities, as fio sets them: the job's own (`prio`, `prioclass`: ioprio_set(2) on the
//! job's thread, so every I/O it issues carries it) and per-command ones for a share of the
//! I/Os (`cmdprio_percentage` with `cmdprio_class`/`cmdprio`, or per block size with
//! `cmdprio_bssplit`: the queued engine puts the value in each submission). A value is
//! Linux's ioprio: class << 13 | level. What the job measured per priority is kept per
//! direction when per-command priorities are in use, as fio's `prios` arrays show it.

/// Linux's priority classes: none (the CPU nice level decides), real-time, best-effort, idle.
pub const CLASS_RT: u16 = 1;
pub const CLASS_BE: u16 = 2;

/// An ioprio value from a class and a level, as fio makes it: no class means best-effort.
pub fn ioprio(class: u16, level: u16) -> u16 {
    let class = if class == 0 { CLASS_BE } else { class };
    (class << 13) | level
}

/// The class of an ioprio value.
pub fn class_of(ioprio: u16) -> u16 {
    ioprio >> 13
}

/// The level of an ioprio value (fio reads the low three bits).
pub fn level_of(ioprio: u16) -> u16 {
    ioprio & 7
}

/// One way a share of a direction's I/Os is prioritised: `pct` percent of the I/Os of size
/// `bs` (of any size with `None`) get `ioprio`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmdPrio {
    pub bs: Option<u64>,
    pub pct: u8,
    pub ioprio: u16,
}

/// A job's priorities.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Priorities {
    /// The job's own priority (`prio`/`prioclass`), set on its thread; 0 when not given.
    pub default: u16,
    /// `prio` or `prioclass` was given: the job's thread sets `default` before its first I/O.
    pub set: bool,
    /// Per-command priorities for reads and writes (fio gives trims none); empty: none.
    pub cmd: [Vec<CmdPrio>; 2],
    /// Per-priority latencies are total latencies (`lat_percentiles=1`), else completion
    /// latencies, as fio keeps them.
    pub by_total: bool,
}

impl Priorities {
    /// Whether the I/Os of direction `dir` (0 read, 1 write, 2 trim) are measured per
    /// priority: per-command priorities are in use for it.
    pub fn tracked(&self, dir: usize) -> bool {
        self.cmd.get(dir).is_some_and(|c| !c.is_empty())
    }

    /// The share (percent) of `dir`'s I/Os of `len` bytes that get a per-command priority.
    pub fn share(&self, dir: usize, len: u64) -> u32 {
        self.entries(dir, len).map(|e| u32::from(e.pct)).sum()
    }

    /// The priority of an I/O of direction `dir` and `len` bytes, given `roll`, a uniform
    /// draw from 0..100: the first entry for its size whose running share passes the roll,
    /// else the job's own.
    pub fn pick(&self, dir: usize, len: u64, roll: u32) -> u16 {
        let mut sum = 0;
        for e in self.entries(dir, len) {
            sum += u32::from(e.pct);
            if roll < sum {
                return e.ioprio;
            }
        }
        self.default
    }

    fn entries(&self, dir: usize, len: u64) -> impl Iterator<Item = &CmdPrio> {
        self.cmd
            .get(dir)
            .into_iter()
            .flatten()
            .filter(move |e| e.bs.is_none_or(|b| b == len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_linux_ioprio_and_no_class_is_best_effort() {
        assert_eq!(ioprio(1, 0), 0x2000);
        assert_eq!(ioprio(3, 2), 0x6002);
        assert_eq!(ioprio(0, 4), 0x4004);
        assert_eq!((class_of(0x6002), level_of(0x6002)), (3, 2));
    }

    #[test]
    fn picks_follow_the_running_share_of_the_io_size() {
        // cmdprio_bssplit=64k/25/1/1:64k/75/3/2 (1024k/0 left out: no share).
        let p = Priorities {
            default: 0,
            set: false,
            cmd: [
                vec![
                    CmdPrio {
                        bs: Some(65536),
                        pct: 25,
                        ioprio: ioprio(1, 1),
                    },
                    CmdPrio {
                        bs: Some(65536),
                        pct: 75,
                        ioprio: ioprio(3, 2),
                    },
                ],
                Vec::new(),
            ],
            by_total: false,
        };
        assert!(p.tracked(0) && !p.tracked(1) && !p.tracked(2));
        assert_eq!(p.share(0, 65536), 100);
        assert_eq!(p.share(0, 1 << 20), 0);
        assert_eq!(p.pick(0, 65536, 0), 0x2001);
        assert_eq!(p.pick(0, 65536, 24), 0x2001);
        assert_eq!(p.pick(0, 65536, 25), 0x6002);
        assert_eq!(p.pick(0, 65536, 99), 0x6002);
        assert_eq!(
            p.pick(0, 1 << 20, 0),
            0,
            "a size without entries keeps the default"
        );
        assert_eq!(p.pick(1, 65536, 0), 0, "writes have none");
    }
}
