//! The disks under targets and their counters on Linux: a target's device from its status
//! (a block device's own number, or the file system's), counted where /sys/dev/block knows it,
//! and the counters from /proc/diskstats (sectors there are always 512 bytes, whatever the
//! device's block size). Reads only.

use std::path::Path;

use crate::platform::DiskCounters;

/// A disk by its kernel numbers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DiskId {
    pub major: u32,
    pub minor: u32,
}

impl DiskId {
    /// How reports number it: `major:minor`.
    pub fn label(&self) -> String {
        format!("{}:{}", self.major, self.minor)
    }
}

/// The block device holding `path` (the device itself for a block device node, else the file
/// system's device, or that of its directory while the file does not exist yet). `None` when
/// the file system has no block device (tmpfs, NFS: st_dev has no /sys/dev/block entry).
pub fn device_of(path: &Path) -> Option<DiskId> {
    let (major, minor) = super::host::device_numbers(path)?;
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
    fn parses_the_kernel_format() {
        let text = " 253       0 vda 100 5 8000 40 200 10 16000 90 0 120 130 0 0 0 0 0 0\n\
                      253       1 vda1 1 0 8 1 0 0 0 0 0 1 1\n";
        let id = DiskId {
            major: 253,
            minor: 0,
        };
        let got = parse(text, std::slice::from_ref(&id));
        assert_eq!(got.len(), 1);
        let (_, name, c) = &got[0];
        assert_eq!((name.as_str(), id.label().as_str()), ("vda", "253:0"));
        assert_eq!(
            (c.read_ios, c.read_sectors, c.write_sectors),
            (100, 8000, 16000)
        );
        assert_eq!((c.io_ms, c.queue_ms), (120, 130));
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
