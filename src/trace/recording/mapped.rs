//! What a trace holds of the I/O a program did through mappings of its files: its major page
//! faults and the advice it gave on the mappings (the footer's `faults` and `advice`).

use serde::{Deserialize, Serialize};

/// A major page fault of the program's (one the kernel had to read storage for): thread `tid`
/// at `t` (ns from the start, as the fault ended) touched page `offset` of `file` through a
/// mapping (`NO_FILE`, offset 0: outside every mapping the trace saw — the program's own
/// executable, memory swapped back in), and slept `asleep_ns` in it (the sleep that ended
/// just before, from the scheduler's switch records; 0 where none did). Read-ahead around
/// the page is the kernel's: one fault can read more than the page. Written as
/// `[t, tid, file, offset, asleep_ns]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "(u64, u32, u32, u64, u64)", into = "(u64, u32, u32, u64, u64)")]
pub struct Fault {
    pub t: u64,
    pub tid: u32,
    pub file: u32,
    pub offset: u64,
    pub asleep_ns: u64,
}

impl From<(u64, u32, u32, u64, u64)> for Fault {
    fn from((t, tid, file, offset, asleep_ns): (u64, u32, u32, u64, u64)) -> Fault {
        Fault {
            t,
            tid,
            file,
            offset,
            asleep_ns,
        }
    }
}

impl From<Fault> for (u64, u32, u32, u64, u64) {
    fn from(f: Fault) -> Self {
        (f.t, f.tid, f.file, f.offset, f.asleep_ns)
    }
}

/// A program's madvise(2) on a mapping of a file of the trace: thread `tid` at `t` (ns from the
/// start, as the call began) advised `advice` (madvise's number: 0 normal, 1 random, 2
/// sequential, 3 willneed…) for `len` bytes of `file` from `offset`, the part of its range
/// that the mapping at its address shows (the rest of a range over several mappings is left
/// out). Written as `[t, tid, file, offset, len, advice]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    from = "(u64, u32, u32, u64, u64, u32)",
    into = "(u64, u32, u32, u64, u64, u32)"
)]
pub struct Advice {
    pub t: u64,
    pub tid: u32,
    pub file: u32,
    pub offset: u64,
    pub len: u64,
    pub advice: u32,
}

impl From<(u64, u32, u32, u64, u64, u32)> for Advice {
    fn from((t, tid, file, offset, len, advice): (u64, u32, u32, u64, u64, u32)) -> Advice {
        Advice {
            t,
            tid,
            file,
            offset,
            len,
            advice,
        }
    }
}

impl From<Advice> for (u64, u32, u32, u64, u64, u32) {
    fn from(a: Advice) -> Self {
        (a.t, a.tid, a.file, a.offset, a.len, a.advice)
    }
}
