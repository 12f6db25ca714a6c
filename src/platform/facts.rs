//! What the platform's halves hand back: the host's facts and a thread's CPU usage, plain data
//! that both halves fill in the same way (a field a platform cannot read is left empty). The
//! report keeps them as they are (the host and stats modules re-export them).

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Host {
    pub hostname: String,
    pub kernel: String,
    pub arch: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub memory_bytes: u64,
}

/// A target's place in the storage stack.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetInfo {
    #[serde(with = "crate::rawpath::serde_path")]
    pub path: PathBuf,
    pub kind: Cow<'static, str>,
    pub fs_type: String,
    pub mount_point: String,
    pub mount_options: String,
    pub mount_source: String,
    /// The block device under the file system (or the target itself); `None` when there is
    /// none (tmpfs, network file systems).
    pub device: Option<Device>,
    /// The file system's space when the target was described (after the run, before clean-up).
    pub space: Option<Space>,
}

/// statvfs of a target's file system.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Space {
    pub total_bytes: u64,
    /// Free for unprivileged users (df's "Available").
    pub avail_bytes: u64,
    /// Free including the root reserve.
    pub free_bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Device {
    pub name: String,
    pub model: String,
    pub major_minor: String,
    pub logical_block_size: Option<u64>,
    pub rotational: Option<bool>,
    /// The queue's settings that change what a test measures (`/sys/block/X/queue`): the
    /// volatile write cache ("write back" or "write through"), the I/O scheduler in use,
    /// read-ahead, the largest request and the queue's request slots.
    #[serde(default)]
    pub write_cache: Option<String>,
    #[serde(default)]
    pub scheduler: Option<String>,
    #[serde(default)]
    pub read_ahead_kb: Option<u64>,
    #[serde(default)]
    pub max_sectors_kb: Option<u64>,
    #[serde(default)]
    pub nr_requests: Option<u64>,
}

impl Device {
    /// The device as its system names it: `/dev/sda` on Linux (whose `name` is the kernel's,
    /// `sda`), `\\.\PhysicalDrive0` on Windows (whose `name` is that path already).
    pub fn path(&self) -> String {
        match self.name.starts_with(r"\\") {
            true => self.name.clone(),
            false => format!("/dev/{}", self.name),
        }
    }
}

/// What the system counted for one disk (cumulative since it began counting, or a difference
/// of two readings): completed I/Os, merges, 512-byte sectors moved, time spent. Two readings
/// around a group give what the device really did while iogauge measured, which is how a
/// report tells a device's speed from the page cache's. Each half fills what its system counts
/// (Windows merges nothing, so its merges stay 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskCounters {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ms: u64,
    /// Milliseconds with at least one I/O in flight (utilisation).
    pub io_ms: u64,
    /// Weighted milliseconds in queue (the sum of every I/O's time).
    pub queue_ms: u64,
}

impl DiskCounters {
    /// `self - earlier`. A counter of 32 bits that passed its top (Windows' I/O counts, every
    /// counter of a 32-bit Linux) is taken round it; one that went back otherwise (a device
    /// reset) reads as zero rather than garbage.
    pub fn since(&self, e: &DiskCounters) -> DiskCounters {
        fn d(now: u64, then: u64) -> u64 {
            const TOP: u64 = 1 << 32;
            match now.checked_sub(then) {
                Some(n) => n,
                None if (TOP / 2..TOP).contains(&then) && now < TOP / 2 => now + TOP - then,
                None => 0,
            }
        }
        DiskCounters {
            read_ios: d(self.read_ios, e.read_ios),
            read_merges: d(self.read_merges, e.read_merges),
            read_sectors: d(self.read_sectors, e.read_sectors),
            read_ms: d(self.read_ms, e.read_ms),
            write_ios: d(self.write_ios, e.write_ios),
            write_merges: d(self.write_merges, e.write_merges),
            write_sectors: d(self.write_sectors, e.write_sectors),
            write_ms: d(self.write_ms, e.write_ms),
            io_ms: d(self.io_ms, e.io_ms),
            queue_ms: d(self.queue_ms, e.queue_ms),
        }
    }
}

/// How a system's calls that give a new file its size are named in a report's file line
/// (`{size}` stands for the size).
#[derive(Debug, Clone, Copy)]
pub struct LayoutCalls {
    /// fallocate=native.
    pub native: &'static str,
    /// fallocate=keep: space without size.
    pub keep: &'static str,
    /// fallocate=posix.
    pub posix: &'static str,
    /// fallocate=truncate.
    pub truncate: &'static str,
}

/// The machine's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memory {
    pub total_bytes: u64,
    pub page_bytes: u64,
}

/// Resource usage at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuUsage {
    pub user: Duration,
    pub system: Duration,
    pub voluntary_ctx: u64,
    pub involuntary_ctx: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_subtract_round_a_32_bit_top_and_never_go_negative() {
        let c = |read_ios, read_sectors| DiskCounters {
            read_ios,
            read_sectors,
            ..DiskCounters::default()
        };
        assert_eq!(c(150, 9000).since(&c(100, 1000)), c(50, 8000));
        // A 32-bit count that passed its top between the readings.
        assert_eq!(c(10, 0).since(&c(u64::from(u32::MAX) - 5, 0)).read_ios, 16);
        // One that went back from low down (a reset) is not taken round.
        assert_eq!(c(10, 0).since(&c(1000, 0)).read_ios, 0);
        assert_eq!(c(0, 0).since(&c(1 << 40, 0)).read_ios, 0);
    }
}

/// One I/O to submit to an `aio::AioContext`: the descriptor, what to do, where, how many
/// bytes of the context's buffer (`data` comes back with its completion).
pub struct AioRequest<'a> {
    pub fd: crate::platform::fd::BorrowedFd<'a>,
    pub op: AioOp,
    pub offset: u64,
    pub len: usize,
    pub data: u64,
}

/// What an asynchronous I/O of `aio::AioContext` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AioOp {
    Read,
    Write,
    Fsync,
    Fdatasync,
}

/// A completed asynchronous I/O: its request's `data` and its result (bytes moved, 0, or a
/// negated errno).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AioReaped {
    pub data: u64,
    pub result: i64,
}
