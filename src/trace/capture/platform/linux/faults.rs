//! The program's major page faults (a page the kernel read storage for as a task touched it):
//! perf's software event on every CPU, inherited by every task, each fault a sample of its
//! task, time and address in a ring of its own (their layout is not the other samples').

use std::os::fd::OwnedFd;

use super::perf::{
    CpuEvents, DISABLED, ENABLE_ON_EXEC, INHERIT, PERF_TYPE_SOFTWARE, RECORD_LOST, RECORD_SAMPLE,
    Raw, SAMPLE_TID, SAMPLE_TIME, USE_CLOCKID, WATERMARK, map_ring, u32_at, u64_at,
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
    let mut at = 0;
    while at + 8 <= bytes.len() {
        let kind = u32_at(bytes, at);
        let size = u16::from_ne_bytes([bytes[at + 6], bytes[at + 7]]) as usize;
        if size < 8 || at + size > bytes.len() {
            break;
        }
        let r = &bytes[at..at + size];
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
        at += size;
    }
    lost
}
