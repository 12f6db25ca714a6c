//! The program's major page faults (a page the kernel read storage for as a task touched it):
//! perf's software event on every CPU, inherited by every task, each fault a sample of its
//! task, time and address in a ring of its own (their layout is not the other samples').

use std::os::fd::OwnedFd;

use super::perf::{
    CpuEvents, DISABLED, ENABLE_ON_EXEC, INHERIT, PERF_TYPE_SOFTWARE, RECORD_LOST, RECORD_SAMPLE,
    Raw, SAMPLE_TID, SAMPLE_TIME, USE_CLOCKID, WATERMARK, map_ring, records, u32_at, u64_at,
};
use super::sys::{self, PerfAttr, Ring};

/// The software event of major page faults: those the kernel read storage for.
const SW_PAGE_FAULTS_MAJ: u64 = 6;
const SAMPLE_ADDR: u64 = 1 << 3;
/// Each CPU's ring of major page faults (256 KiB: 8,192 faults of 32 bytes between two of the
/// reader's 2 ms polls, where a fast device reads a few hundred pages a poll).
const FAULT_RING_PAGES: usize = 64;

/// The major page fault software event on every CPU for `pid` and the tasks it starts, each
/// with a ring of its own: every fault, with its address. None where perf refuses it: the
/// trace then says its faults were not seen.
pub(super) fn open(pid: i32, cpus: &[CpuEvents]) -> Vec<(OwnedFd, Ring)> {
    let attr = PerfAttr {
        type_: PERF_TYPE_SOFTWARE,
        size: std::mem::size_of::<PerfAttr>() as u32,
        config: SW_PAGE_FAULTS_MAJ,
        sample_period: 1,
        sample_type: SAMPLE_TID | SAMPLE_TIME | SAMPLE_ADDR,
        // Polled, never waited on: a watermark past what a poll's wait fills.
        flags: DISABLED | INHERIT | ENABLE_ON_EXEC | USE_CLOCKID | WATERMARK,
        wakeup: (FAULT_RING_PAGES * rustix::param::page_size() / 2) as u32,
        clockid: libc::CLOCK_MONOTONIC,
        ..Default::default()
    };
    let mut out = Vec::with_capacity(cpus.len());
    for c in cpus {
        let opened = sys::perf_event_open(&attr, pid, c.cpu)
            .and_then(|f| map_ring(&f, FAULT_RING_PAGES).map(|r| (f, r)));
        match opened {
            Ok(f) => out.push(f),
            Err(_) => return Vec::new(),
        }
    }
    out
}

/// Parses a fault ring's records (samples of pid and tid, time and address) into `out`;
/// returns the count of records the kernel lost.
pub(super) fn parse(bytes: &[u8], out: &mut Vec<Raw>) -> u64 {
    let mut lost = 0;
    for (kind, _, r) in records(bytes) {
        let size = r.len();
        match kind {
            RECORD_SAMPLE if size >= 32 => out.push(Raw::Fault {
                t: u64_at(r, 16),
                pid: u32_at(r, 8),
                tid: u32_at(r, 12),
                addr: u64_at(r, 24),
            }),
            RECORD_LOST if size >= 24 => lost += u64_at(r, 16),
            _ => {}
        }
    }
    lost
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A perf record: its type, then its size, then `body` (the header's misc bits 0).
    fn record(kind: u32, body: &[u64]) -> Vec<u8> {
        let size = 8 + 8 * body.len();
        let mut r = kind.to_ne_bytes().to_vec();
        r.extend_from_slice(&0u16.to_ne_bytes());
        r.extend_from_slice(&(size as u16).to_ne_bytes());
        for v in body {
            r.extend_from_slice(&v.to_ne_bytes());
        }
        r
    }

    #[test]
    fn a_rings_whole_records_are_read_and_a_cut_one_ends_them() {
        let pid_tid = 7u64 | (9u64 << 32);
        let mut bytes = record(RECORD_SAMPLE, &[pid_tid, 1_000, 0x7000]);
        bytes.extend(record(RECORD_LOST, &[0, 3]));
        bytes.extend(record(RECORD_SAMPLE, &[pid_tid, 2_000, 0x8000]));
        // The last record's tail is not in the bytes yet.
        let cut = bytes.len() - 4;
        let mut out = Vec::new();
        assert_eq!(parse(&bytes[..cut], &mut out), 3);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(matches!(
            out[0],
            Raw::Fault {
                t: 1_000,
                pid: 7,
                tid: 9,
                addr: 0x7000
            }
        ));
        out.clear();
        assert_eq!(parse(&bytes, &mut out), 3);
        assert_eq!(out.len(), 2);
        // A size that is no record's (below its header's) ends them too.
        let mut bad = record(RECORD_SAMPLE, &[pid_tid, 1_000, 0x7000]);
        bad[6] = 4;
        out.clear();
        assert_eq!(parse(&bad, &mut out), 0);
        assert!(out.is_empty());
    }
}
