//! The devices under targets and their counters on Windows: a file's volume (`\\.\C:`, or
//! its GUID name where it has no drive letter: `volume::volume_device`) or a raw device
//! itself, and what its driver counted (IOCTL_DISK_PERFORMANCE: I/Os, bytes, time reading and
//! writing, idle time), the counterpart of a partition's line in Linux's /proc/diskstats. The
//! first query turns the counting on where it was off, so the probe in `device_of` comes
//! before a group's first reading; a target whose counters cannot be read (a network share, a
//! driver that keeps none) has no device here, and the report says so. Reads only.

use std::path::Path;

use windows_sys::Win32::System::Ioctl::{DISK_PERFORMANCE, IOCTL_DISK_PERFORMANCE};

use super::host::{is_device_path, volume_of};
use super::volume::{ioctl, open_for_queries, read_struct};
use crate::platform::DiskCounters;

/// A counted device by the path it is opened by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DiskId {
    path: String,
}

impl DiskId {
    /// How reports number it: Windows numbers no device the way Linux's major:minor does (the
    /// path, in the device's name, says which it is).
    pub fn label(&self) -> String {
        String::new()
    }
}

/// The device whose counters tell what I/O on `path` did: a raw device's own, else the volume
/// holding the file (or its directory while the file does not exist yet). `None` when there
/// is none to read (a network share, a volume without a device name, no counters).
pub fn device_of(path: &Path) -> Option<DiskId> {
    let path = match is_device_path(path) {
        true => path.to_str()?.to_string(),
        false => volume_of(path)?.1?,
    };
    let id = DiskId { path };
    counters(&id).is_some().then_some(id)
}

/// Current counters of `ids`, each with its name; a device that cannot be read is left out.
pub fn snapshot(ids: &[DiskId]) -> Vec<(DiskId, String, DiskCounters)> {
    ids.iter()
        .filter_map(|id| Some((id.clone(), id.path.clone(), counters(id)?)))
        .collect()
}

fn counters(id: &DiskId) -> Option<DiskCounters> {
    let h = open_for_queries(&id.path)?;
    let mut out = [0u8; std::mem::size_of::<DISK_PERFORMANCE>()];
    ioctl(&h, IOCTL_DISK_PERFORMANCE, &[], &mut out)?;
    Some(from_performance(&read_struct(&out)?))
}

/// DISK_PERFORMANCE in Linux's terms: bytes as 512-byte sectors, times (100 ns units) as
/// milliseconds, busy time as the time counted less the idle time (a difference of two
/// readings is the time with I/O in flight), and the time in queue as the I/Os' own times
/// summed (what Linux's weighted field adds up). Windows merges nothing and counts I/Os in 32
/// bits (`DiskCounters::since` takes them round their top).
fn from_performance(p: &DISK_PERFORMANCE) -> DiskCounters {
    let ms = |t: i64| t.max(0) as u64 / 10_000;
    let sectors = |b: i64| b.max(0) as u64 / 512;
    DiskCounters {
        read_ios: u64::from(p.ReadCount),
        read_merges: 0,
        read_sectors: sectors(p.BytesRead),
        read_ms: ms(p.ReadTime),
        write_ios: u64::from(p.WriteCount),
        write_merges: 0,
        write_sectors: sectors(p.BytesWritten),
        write_ms: ms(p.WriteTime),
        io_ms: ms(p.QueryTime.saturating_sub(p.IdleTime)),
        queue_ms: ms(p.ReadTime) + ms(p.WriteTime),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drivers_counters_read_in_linux_terms() {
        let p = DISK_PERFORMANCE {
            BytesRead: 8 << 20,
            BytesWritten: 1 << 20,
            ReadTime: 25_000_000,
            WriteTime: 5_000_000,
            IdleTime: 70_000_000,
            ReadCount: 2048,
            WriteCount: 16,
            QueryTime: 100_000_000,
            ..Default::default()
        };
        let c = from_performance(&p);
        assert_eq!((c.read_ios, c.read_sectors, c.read_ms), (2048, 16384, 2500));
        assert_eq!((c.write_ios, c.write_sectors, c.write_ms), (16, 2048, 500));
        assert_eq!((c.io_ms, c.queue_ms), (3000, 3000));
        assert_eq!(c.read_merges + c.write_merges, 0);
    }

    #[test]
    fn the_temp_dirs_volume_is_counted_where_the_system_counts() {
        // Wine keeps no counters: the volume then has no device here, as a network share.
        let dir = std::env::temp_dir();
        match device_of(&dir.join("x.dat")) {
            Some(id) => {
                let got = snapshot(std::slice::from_ref(&id));
                assert_eq!(got.len(), 1, "{id:?}");
                assert!(got[0].1.starts_with(r"\\"), "{:?}", got[0].1);
            }
            None => println!(
                "skipped: this system keeps no counters for {}",
                dir.display()
            ),
        }
    }
}
