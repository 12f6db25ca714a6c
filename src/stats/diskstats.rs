//! What the kernel counted for a block device, from /proc/diskstats: completed I/Os, merges,
//! sectors (always 512 bytes there, whatever the device's block size), time spent. Two
//! snapshots around a group give what the device really did while iogauge measured, which is
//! how a report can tell a device's speed from the page cache's. Reads /proc only; decides
//! nothing (the report does).

use std::path::Path;

/// One device's counters (cumulative since boot, or a difference of two snapshots).
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
    /// `self - earlier`, saturating (a counter that wrapped or a device that went away reads
    /// as zero rather than garbage).
    pub fn since(&self, e: &DiskCounters) -> DiskCounters {
        DiskCounters {
            read_ios: self.read_ios.saturating_sub(e.read_ios),
            read_merges: self.read_merges.saturating_sub(e.read_merges),
            read_sectors: self.read_sectors.saturating_sub(e.read_sectors),
            read_ms: self.read_ms.saturating_sub(e.read_ms),
            write_ios: self.write_ios.saturating_sub(e.write_ios),
            write_merges: self.write_merges.saturating_sub(e.write_merges),
            write_sectors: self.write_sectors.saturating_sub(e.write_sectors),
            write_ms: self.write_ms.saturating_sub(e.write_ms),
            io_ms: self.io_ms.saturating_sub(e.io_ms),
            queue_ms: self.queue_ms.saturating_sub(e.queue_ms),
        }
    }
}

/// A device under a target: its kernel name and numbers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DiskId {
    pub major: u32,
    pub minor: u32,
}

/// The block device holding `path` (the device itself for a block device node, else the file
/// system's device, or that of its directory while the file does not exist yet). `None` when
/// the file system has no block device (tmpfs, NFS: st_dev has no /sys/dev/block entry).
pub fn device_of(path: &Path) -> Option<DiskId> {
    let st = crate::platform::sys::fs::stat(path)
        .or_else(|_| crate::platform::sys::fs::stat(crate::rawpath::parent_dir(path)))
        .ok()?;
    let dev = crate::files::fsinfo::block_dev_of(&st);
    let (major, minor) = (
        crate::platform::sys::fs::major(dev),
        crate::platform::sys::fs::minor(dev),
    );
    Path::new(&format!("/sys/dev/block/{major}:{minor}"))
        .exists()
        .then_some(DiskId { major, minor })
}

/// Current counters of `ids`, with each device's name; devices missing from /proc/diskstats
/// are left out.
pub fn snapshot(ids: &[DiskId]) -> Vec<(DiskId, String, DiskCounters)> {
    let text = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
    parse(&text, ids)
}

fn parse(text: &str, ids: &[DiskId]) -> Vec<(DiskId, String, DiskCounters)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 14 {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        let id = DiskId {
            major: n(0) as u32,
            minor: n(1) as u32,
        };
        if !ids.contains(&id) {
            continue;
        }
        let c = DiskCounters {
            read_ios: n(3),
            read_merges: n(4),
            read_sectors: n(5),
            read_ms: n(6),
            write_ios: n(7),
            write_merges: n(8),
            write_sectors: n(9),
            write_ms: n(10),
            io_ms: n(12),
            queue_ms: n(13),
        };
        out.push((id, f[2].to_string(), c));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernel_format_and_subtracts() {
        let text = " 253       0 vda 100 5 8000 40 200 10 16000 90 0 120 130 0 0 0 0 0 0\n\
                      253       1 vda1 1 0 8 1 0 0 0 0 0 1 1\n";
        let id = DiskId {
            major: 253,
            minor: 0,
        };
        let got = parse(text, std::slice::from_ref(&id));
        assert_eq!(got.len(), 1);
        let (_, name, c) = &got[0];
        assert_eq!(name, "vda");
        assert_eq!(
            (c.read_ios, c.read_sectors, c.write_sectors),
            (100, 8000, 16000)
        );
        assert_eq!((c.io_ms, c.queue_ms), (120, 130));
        let earlier = DiskCounters {
            read_sectors: 1000,
            ..*c
        };
        assert_eq!(c.since(&earlier).read_sectors, 7000);
        assert_eq!(earlier.since(c).read_sectors, 0);
    }

    #[test]
    fn tmpfs_has_no_device() {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        if mounts.lines().any(|l| l.contains(" /dev/shm tmpfs ")) {
            // tmpfs's st_dev is anonymous: no /sys/dev/block entry.
            assert_eq!(device_of(Path::new("/dev/shm/x")), None);
        } else {
            println!("skipped: /dev/shm is not a tmpfs mount here");
        }
    }
}
