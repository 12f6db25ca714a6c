//! The device counters' verdicts: what a group's jobs moved, and how, compared with what the
//! block devices below their files did while they ran. The comparison's inputs are kept
//! ([`DeviceCheck`]) apart from its words, so that a merge of several processes' runs on one
//! host (a scale-out run's ranks share its devices) can add its ranks' jobs together and judge
//! the host's devices once, against all of them, instead of each rank judging the shared
//! device against its own share of the work.

use serde::{Deserialize, Serialize};

use super::super::{ADVICE_HIDDEN, ADVICE_READ, ADVICE_WRITE, DeviceIo, Measurement};
use crate::runner::JobOutcome;
use crate::units::human_bytes;

/// Reads or writes below this share of what iogauge moved mean the device did not do them.
const DEVICE_SHARE: f64 = 0.5;
/// Groups moving less than this are too small to judge against background I/O.
const DEVICE_MIN_BYTES: u64 = 1 << 20;
/// Device traffic past `EXCESS_FACTOR` × what the jobs moved plus `EXCESS_BYTES` is not
/// theirs: room for a file system's journal and metadata (a write-through log write can cost
/// a journal block of its own), not for another writer's gigabytes.
const EXCESS_FACTOR: f64 = 4.0;
const EXCESS_BYTES: u64 = 64 << 20;

/// The device moved more than the jobs can explain.
fn excess(device: u64, jobs: u64) -> bool {
    device as f64 > EXCESS_FACTOR * jobs as f64 + EXCESS_BYTES as f64
}

/// What a group's device verdicts compare the counters with: the bytes its jobs moved and the
/// ways they moved them. Several processes' checks of one group on one host add up
/// ([`DeviceCheck::add`]) to the check of all their jobs together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceCheck {
    /// The group as the verdicts name it ("group 1 (seqwrite)").
    pub group: String,
    pub read: u64,
    pub written: u64,
    /// Some job reads through the page cache (moving data: not falloc or a file operation).
    pub buffered_reads: bool,
    /// Every job that reads does so with direct I/O (no readahead to explain extra reads).
    pub direct_reads: bool,
    /// Some job's writes may still sit in the page cache when timing stops (buffered, with
    /// no sync, fsync or end_fsync to time them to the device).
    pub unflushed: bool,
}

impl DeviceCheck {
    /// The check of one group's `jobs`, which moved `total`.
    pub fn of(group: String, jobs: &[JobOutcome], total: &Measurement) -> DeviceCheck {
        DeviceCheck {
            group,
            read: total.read.bytes,
            written: total.write.bytes,
            // Engines that move no data (falloc, the file operations) read nothing through
            // the cache.
            buffered_reads: jobs
                .iter()
                .any(|j| j.spec.rw.reads() && !j.spec.direct && !j.spec.engine.moves_no_data()),
            direct_reads: jobs.iter().all(|j| !j.spec.rw.reads() || j.spec.direct),
            unflushed: jobs.iter().any(|j| {
                let s = &j.spec;
                // The engines that move no data (falloc, e4defrag…) leave nothing in the
                // cache.
                s.rw.writes()
                    && !s.engine.moves_no_data()
                    && !s.direct
                    && s.sync.mode == crate::plan::SyncMode::None
                    && !s.sync.flushes()
            }),
        }
    }

    /// Another process's jobs of the same group, run beside these on the same devices.
    pub fn add(&mut self, other: &DeviceCheck) {
        self.read = self.read.saturating_add(other.read);
        self.written = self.written.saturating_add(other.written);
        self.buffered_reads |= other.buffered_reads;
        self.direct_reads &= other.direct_reads;
        self.unflushed |= other.unflushed;
    }

    /// Where the `devices`' counters disagree with the jobs: reads the page cache served,
    /// buffered writes still unflushed when timing stopped, and traffic the jobs do not
    /// explain. Empty with no device to compare.
    pub fn verdicts(&self, devices: &[DeviceIo]) -> Vec<String> {
        let mut notes = Vec::new();
        if devices.is_empty() {
            return notes;
        }
        let group = &self.group;
        let dev_read: u64 = devices.iter().map(|d| d.read_bytes).sum();
        let dev_write: u64 = devices.iter().map(|d| d.write_bytes).sum();
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        let names = names.join(", ");
        let (read, written) = (self.read, self.written);
        if self.buffered_reads
            && read >= DEVICE_MIN_BYTES
            && (dev_read as f64) < DEVICE_SHARE * read as f64
        {
            notes.push(format!(
                "{group}: iogauge read {} but the device ({names}) read only {} ({:.0}%): the \
                 rest came from the page cache, so the read figures describe memory, not the \
                 device {ADVICE_READ}",
                human_bytes(read),
                human_bytes(dev_read),
                100.0 * dev_read as f64 / read as f64
            ));
        }
        // Worth saying when the writes are a share of the device's work, not its background
        // hum.
        let busy_writing =
            dev_write >= DEVICE_MIN_BYTES && dev_write as f64 >= 0.05 * dev_read.max(read) as f64;
        if written == 0 && read > 0 && busy_writing {
            notes.push(format!(
                "{group}: the jobs only read, yet the device ({names}) wrote {} while they ran \
                 (dirty pages of an earlier test being flushed, or another writer): the reads \
                 shared the device, so the read figures may be lower than it can do alone",
                human_bytes(dev_write)
            ));
        }
        self.excess(&mut notes, &names, (dev_read, dev_write));
        if self.unflushed
            && written >= DEVICE_MIN_BYTES
            && (dev_write as f64) < DEVICE_SHARE * written as f64
        {
            notes.push(format!(
                "{group}: iogauge wrote {} but only {} reached the device ({names}) while it \
                 ran: the rest was still in the page cache when timing stopped, so the write \
                 figures describe memory {ADVICE_WRITE}",
                human_bytes(written),
                human_bytes(dev_write)
            ));
        }
        notes
    }

    /// Traffic the jobs do not explain: another process shared the device (or an earlier
    /// test's dirty pages were flushed), and the figures are what was left to them. Reads are
    /// judged only where every reader is direct: readahead legitimately reads more.
    fn excess(&self, notes: &mut Vec<String>, names: &str, (dev_read, dev_write): (u64, u64)) {
        let (group, read, written) = (&self.group, self.read, self.written);
        if written > 0 && excess(dev_write, written) {
            notes.push(format!(
                "{group}: the device ({names}) wrote {} while the jobs wrote {}: the rest came \
                 from elsewhere (another process, or dirty pages of an earlier test being \
                 flushed), so the figures are what the device had left for these jobs{}",
                human_bytes(dev_write),
                human_bytes(written),
                if self.unflushed {
                    "; and with the jobs' writes left unflushed in the page cache, the counters \
                     cannot show whether those reached the device "
                        .to_string()
                        + ADVICE_HIDDEN
                } else {
                    String::new()
                }
            ));
        }
        if read > 0 && self.direct_reads && excess(dev_read, read) {
            notes.push(format!(
                "{group}: the device ({names}) read {} while the jobs read {} (direct I/O, no \
                 readahead): the rest was another process's, so the figures are what the \
                 device had left for these jobs",
                human_bytes(dev_read),
                human_bytes(read)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(read: u64, write: u64) -> DeviceIo {
        DeviceIo {
            name: "vda".into(),
            major_minor: "254:0".into(),
            read_ios: 0,
            read_merges: 0,
            read_bytes: read,
            write_ios: 0,
            write_merges: 0,
            write_bytes: write,
            read_ms: 0,
            write_ms: 0,
            in_queue_ms: 0,
            util_pct: 0.0,
            busy_ms: 0,
            wall_ms: 0,
            unmeasured_ms: 0,
            bytes_unknown: false,
            host: None,
            ranks: Vec::new(),
        }
    }

    fn writer(written: u64) -> DeviceCheck {
        DeviceCheck {
            group: "group 1 (w)".into(),
            read: 0,
            written,
            buffered_reads: false,
            direct_reads: true,
            unflushed: true,
        }
    }

    /// Four processes on one host each wrote 32 MiB to the device that wrote 300 MiB: each
    /// alone would call 268 MiB of it someone else's (past 4 × 32 MiB + 64 MiB of journal and
    /// metadata); together they explain it (under 4 × 128 MiB + 64 MiB).
    #[test]
    fn processes_on_one_device_are_judged_together_not_each_against_the_whole() {
        let mib = 1 << 20;
        let dev = [device(0, 300 * mib)];
        let one = writer(32 * mib);
        let alone = one.verdicts(&dev);
        assert_eq!(alone.len(), 1, "{alone:?}");
        assert!(
            alone[0].contains("wrote 300.00 MiB while the jobs wrote 32.00 MiB"),
            "{alone:?}"
        );
        let mut all = one.clone();
        for _ in 0..3 {
            all.add(&one);
        }
        assert_eq!(all.written, 128 * mib);
        assert_eq!(all.verdicts(&dev), Vec::<String>::new());
        // One buffered reader among direct ones makes the whole group's reads buffered.
        let mut reader = writer(0);
        reader.buffered_reads = true;
        reader.direct_reads = false;
        reader.unflushed = false;
        all.add(&reader);
        assert!(all.buffered_reads && !all.direct_reads && all.unflushed);
    }

    #[test]
    fn writes_left_in_the_page_cache_and_reads_it_served_are_said() {
        let mib = 1 << 20;
        let w = writer(64 * mib).verdicts(&[device(0, 4 * mib)]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("only 4.00 MiB reached the device (vda)"),
            "{w:?}"
        );
        let mut r = writer(0);
        (r.read, r.buffered_reads, r.direct_reads, r.unflushed) = (64 * mib, true, false, false);
        let v = r.verdicts(&[device(8 * mib, 0)]);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("read only 8.00 MiB (12%)"), "{v:?}");
        assert!(r.verdicts(&[]).is_empty());
    }
}
