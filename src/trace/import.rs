//! Traces from other tools' logs: fio's I/O log (versions 2 and 3, read by the same reader as
//! fio mode's `read_iolog`) and blktrace's binary trace (the block layer's view: each request
//! from its issue to the driver, `D`, to its completion, `C`). What a log does not hold is
//! said in the trace's method and left unknown, never made up: an iolog has no durations
//! (0) and version 2 no issue times beyond its `wait`s; a block trace has no files (the
//! device is the one file) and its threads are the processes that issued the requests.

use std::collections::HashMap;

use crate::trace::iolog::{self, Action};
use crate::trace::recording::{
    Event, FileInfo, Footer, Header, Op, Recording, ThreadInfo, VERSION, flag,
};

/// Why a log cannot be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("not fio's I/O log: {0}")]
    Iolog(#[from] iolog::ParseError),
    #[error("not a blktrace binary trace: {0}")]
    Blktrace(String),
    #[error("no I/O to import: {0}")]
    Empty(&'static str),
}

/// fallocate's mode for a trim: punch the range out, keep the size.
const PUNCH_HOLE: u32 =
    crate::platform::abi::FALLOC_FL_PUNCH_HOLE | crate::platform::abi::FALLOC_FL_KEEP_SIZE;

pub fn header(what: &str, source: &str, method: String) -> Header {
    Header {
        format: "iogauge-trace".into(),
        version: VERSION,
        iogauge: env!("CARGO_PKG_VERSION").into(),
        command: vec![format!("iogauge trace import --{what}"), source.into()],
        started_unix_ms: 0,
        host: String::new(),
        method,
    }
}

/// A footer for imported events: files with their reach, one thread per tid.
fn footer(mut files: Vec<FileInfo>, events: &[Event]) -> Footer {
    let mut threads: HashMap<u32, ThreadInfo> = HashMap::new();
    for e in events {
        let f = &mut files[e.file as usize];
        f.extent = f.extent.max(e.offset.saturating_add(e.len));
        let th = threads.entry(e.tid).or_insert(ThreadInfo {
            tid: e.tid,
            pid: e.tid,
            first_ns: e.t,
            last_ns: e.t,
            parent: None,
            born_ns: None,
            ended_ns: None,
            off_cpu: None,
        });
        th.last_ns = th.last_ns.max(e.t);
    }
    // Files are there before the first call, at least as large as what was touched.
    for f in &mut files {
        f.size_at_open = Some(f.size_at_open.unwrap_or(0).max(f.extent));
    }
    let mut threads: Vec<ThreadInfo> = threads.into_values().collect();
    threads.sort_unstable_by_key(|t| (t.first_ns, t.tid));
    Footer {
        duration_ns: events.iter().map(|e| e.done_ns()).max().unwrap_or(0),
        files,
        threads,
        // Another tool's log says nothing of what a capture saw: none of it.
        ..Default::default()
    }
}

fn file(path: String, kind: &str) -> FileInfo {
    FileInfo {
        path,
        kind: kind.into(),
        size_at_open: None,
        extent: 0,
        removed: false,
        in_memory: false,
    }
}

/// fio's I/O log as a trace: one thread, each action a positioned call of its file at the
/// log's time (version 3: its issue time; version 2: the last `wait` before it), durations
/// unknown (0); a trim is a hole punched in the file.
pub fn from_iolog(bytes: &[u8], source: &str) -> Result<Recording, ImportError> {
    let log = iolog::parse(bytes)?;
    let mut events = Vec::with_capacity(log.ops.len());
    let mut now_ns = 0u64;
    for op in &log.ops {
        let t = if log.version >= 3 {
            op.t_us.saturating_mul(1000)
        } else {
            now_ns
        };
        let (kind, arg) = match op.action {
            Action::Wait => {
                now_ns = op.offset.saturating_mul(1_000_000);
                continue;
            }
            Action::Read => (Op::Read, 0),
            Action::Write => (Op::Write, 0),
            Action::Trim => (Op::Fallocate, PUNCH_HOLE),
            Action::Sync => (Op::Fsync, 0),
            Action::Datasync => (Op::Fdatasync, 0),
            Action::SyncFileRange => (Op::SyncFileRange, 0),
        };
        let moves = matches!(kind, Op::Read | Op::Write);
        events.push(Event {
            t,
            dur: 0,
            offset: op.offset,
            len: op.len,
            result: if moves { op.len as i64 } else { 0 },
            tid: 1,
            file: op.file,
            arg,
            op: kind,
            flags: flag::POSITIONAL,
        });
    }
    if events.is_empty() {
        return Err(ImportError::Empty(
            "the log has no reads, writes, trims or syncs",
        ));
    }
    events.sort_by_key(|e| e.t);
    let files = log
        .files
        .iter()
        .map(|p| file(p.clone(), "regular"))
        .collect();
    let method = format!(
        "imported from fio's I/O log version {}: {}; call durations are not in the log (0)",
        log.version,
        if log.version >= 3 {
            "issue times from the log"
        } else {
            "issue times from its waits only"
        }
    );
    Ok(Recording {
        header: header("iolog", source, method),
        footer: footer(files, &events),
        events,
    })
}

/// blktrace's `struct blk_io_trace`: 48 bytes, then `pdu_len` bytes.
const BLK_RECORD: usize = 48;
const BLK_MAGIC: u32 = 0x6561_7400;
pub const TA_ISSUE: u32 = 7;
pub const TA_COMPLETE: u32 = 8;
pub const TC_READ: u32 = 1 << 16;
pub const TC_WRITE: u32 = 1 << 17;
pub const TC_FLUSH: u32 = 1 << 18;
pub const TC_NOTIFY: u32 = 1 << 26;
pub const TC_DISCARD: u32 = 1 << 29;
pub const TC_FUA: u32 = 1 << 31;

/// One block-layer record's fields that matter here (blktrace's, or the block tracepoints'
/// made into blktrace's terms): `action` is blktrace's (TA_* | TC_* categories).
#[derive(Debug, Clone, Copy)]
pub struct Blk {
    pub time: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub pid: u32,
    pub device: u32,
    pub error: u16,
}

/// The records of a blktrace binary (either byte order, told by the magic).
fn blk_records(b: &[u8]) -> Result<Vec<Blk>, ImportError> {
    let big = match b.get(..4) {
        Some(m) if u32::from_le_bytes(m.try_into().expect("4")) & 0xffff_ff00 == BLK_MAGIC => false,
        Some(m) if u32::from_be_bytes(m.try_into().expect("4")) & 0xffff_ff00 == BLK_MAGIC => true,
        _ => {
            return Err(ImportError::Blktrace(
                "no BLK_IO_TRACE_MAGIC at its start".into(),
            ));
        }
    };
    // An unsigned field of `n` bytes at `at`, in the trace's byte order.
    let num = |r: &[u8], at: usize, n: usize| {
        let fold = |acc: u64, b: &u8| (acc << 8) | u64::from(*b);
        let bytes = &r[at..at + n];
        if big {
            bytes.iter().fold(0, fold)
        } else {
            bytes.iter().rev().fold(0, fold)
        }
    };
    let mut out = Vec::new();
    let mut at = 0;
    while at < b.len() {
        let Some(r) = b.get(at..at + BLK_RECORD) else {
            return Err(ImportError::Blktrace(format!(
                "cut short: {} bytes left at byte {at}, a record is {BLK_RECORD}",
                b.len() - at
            )));
        };
        if num(r, 0, 4) as u32 & 0xffff_ff00 != BLK_MAGIC {
            return Err(ImportError::Blktrace(format!(
                "no record magic at byte {at}"
            )));
        }
        out.push(Blk {
            time: num(r, 8, 8),
            sector: num(r, 16, 8),
            bytes: num(r, 24, 4) as u32,
            action: num(r, 28, 4) as u32,
            pid: num(r, 32, 4) as u32,
            device: num(r, 36, 4) as u32,
            error: num(r, 44, 2) as u16,
        });
        let pdu = num(r, 46, 2) as usize;
        at += BLK_RECORD + pdu;
    }
    Ok(out)
}

/// A blktrace binary (one device's, or several concatenated) as a trace (see
/// [`requests`]).
pub fn from_blktrace(bytes: &[u8], source: &str) -> Result<Recording, ImportError> {
    let method = "imported from a blktrace binary: block requests from issue to the driver (D) \
                  to completion (C), per issuing process; no files (each device is one)";
    let r = requests(
        blk_records(bytes)?,
        None,
        &|d| format!("blktrace-dev-{}-{}", d >> 20, d & 0xfffff),
        header("blktrace", source, method.into()),
    );
    if r.events.is_empty() {
        return Err(ImportError::Empty(
            "the trace has no request both issued (D) and completed (C)",
        ));
    }
    Ok(r)
}

/// Block requests as a trace: each from its issue to the driver (`D`) to its completion
/// (`C`), paired by device and sector, a positioned read, write (FUA: write-through), trim
/// (discard: a hole punched) or fsync (an empty flush) of the device, by the process that
/// issued it, timed from `t0` (None: the first record). Each device is a file of the trace
/// (named by `name`); a replay makes it a file of the size the requests reach. Requests
/// still in flight at the end are left out and counted as unmatched.
pub fn requests(
    mut recs: Vec<Blk>,
    t0: Option<u64>,
    name: &dyn Fn(u32) -> String,
    header: Header,
) -> Recording {
    recs.sort_by_key(|r| r.time);
    let t0 = t0.unwrap_or_else(|| recs.iter().map(|r| r.time).min().unwrap_or(0));
    let mut devices: Vec<u32> = Vec::new();
    let mut issued: HashMap<(u32, u64), Blk> = HashMap::new();
    let mut events = Vec::new();
    let mut unmatched = 0u64;
    for r in recs {
        if r.action & TC_NOTIFY != 0 {
            continue;
        }
        match r.action & 0xffff {
            // A second issue of a sector still in flight: the first is never completed.
            TA_ISSUE if issued.insert((r.device, r.sector), r).is_some() => unmatched += 1,
            TA_COMPLETE => {
                let Some(d) = issued.remove(&(r.device, r.sector)) else {
                    unmatched += 1;
                    continue;
                };
                let file = match devices.iter().position(|&x| x == d.device) {
                    Some(i) => i,
                    None => {
                        devices.push(d.device);
                        devices.len() - 1
                    }
                } as u32;
                if let Some(e) = request(&d, &r, file, t0) {
                    events.push(e);
                }
            }
            _ => {}
        }
    }
    unmatched += issued.len() as u64;
    events.sort_by_key(|e| e.t);
    let files = devices.iter().map(|&d| file(name(d), "block")).collect();
    let mut footer = footer(files, &events);
    footer.unmatched = unmatched;
    Recording {
        header,
        footer,
        events,
    }
}

/// One request, issued `d` and completed `c`, as a call.
fn request(d: &Blk, c: &Blk, file: u32, t0: u64) -> Option<Event> {
    let (op, arg) = if d.action & TC_DISCARD != 0 {
        (Op::Fallocate, PUNCH_HOLE)
    } else if d.action & TC_WRITE != 0 && d.bytes > 0 {
        (Op::Write, 0)
    } else if d.action & TC_FLUSH != 0 && d.bytes == 0 {
        (Op::Fsync, 0)
    } else if d.action & TC_READ != 0 || d.bytes > 0 {
        (Op::Read, 0)
    } else {
        return None;
    };
    let fua = if d.action & TC_FUA != 0 {
        flag::DSYNC
    } else {
        0
    };
    let moves = matches!(op, Op::Read | Op::Write);
    Some(Event {
        t: d.time.saturating_sub(t0),
        dur: c.time.saturating_sub(d.time),
        offset: d.sector.saturating_mul(512),
        len: u64::from(d.bytes),
        result: if c.error != 0 {
            -i64::from(c.error)
        } else if moves {
            i64::from(d.bytes)
        } else {
            0
        },
        tid: d.pid,
        file,
        arg,
        op,
        flags: fua | flag::POSITIONAL,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blk_io_trace record as the kernel lays it out (blktrace_api.h), in either order.
    #[allow(clippy::too_many_arguments)]
    fn blk(
        big: bool,
        time: u64,
        sector: u64,
        bytes: u32,
        action: u32,
        pid: u32,
        pdu: &[u8],
    ) -> Vec<u8> {
        let mut r = Vec::new();
        let w32 = |r: &mut Vec<u8>, v: u32| {
            r.extend_from_slice(&if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            })
        };
        let w64 = |r: &mut Vec<u8>, v: u64| {
            r.extend_from_slice(&if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            })
        };
        w32(&mut r, BLK_MAGIC | 7);
        w32(&mut r, 0);
        w64(&mut r, time);
        w64(&mut r, sector);
        w32(&mut r, bytes);
        w32(&mut r, action);
        w32(&mut r, pid);
        w32(&mut r, (7 << 20) | 3);
        w32(&mut r, 0);
        let tail = [0u16, pdu.len() as u16];
        for v in tail {
            r.extend_from_slice(&if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            });
        }
        r.extend_from_slice(pdu);
        r
    }

    #[test]
    fn a_block_trace_pairs_issue_with_completion_in_either_byte_order() {
        for big in [false, true] {
            let mut b = Vec::new();
            // A process-name notice (with its payload), then: a 64 KiB FUA write, a 4 KiB
            // read, a flush, a discard, and a read issued but never completed.
            b.extend(blk(big, 1_000, 0, 0, TC_NOTIFY, 42, b"dd\0\0\0\0\0\0"));
            b.extend(blk(
                big,
                2_000,
                8,
                65536,
                TA_ISSUE | TC_WRITE | TC_FUA,
                42,
                &[],
            ));
            b.extend(blk(big, 3_000, 2048, 4096, TA_ISSUE | TC_READ, 43, &[]));
            b.extend(blk(big, 9_000, 8, 65536, TA_COMPLETE | TC_WRITE, 0, &[]));
            b.extend(blk(big, 9_500, 2048, 4096, TA_COMPLETE | TC_READ, 0, &[]));
            b.extend(blk(
                big,
                10_000,
                0,
                0,
                TA_ISSUE | TC_FLUSH | TC_WRITE,
                42,
                &[],
            ));
            b.extend(blk(big, 11_000, 0, 0, TA_COMPLETE | TC_FLUSH, 0, &[]));
            b.extend(blk(
                big,
                12_000,
                4096,
                1 << 20,
                TA_ISSUE | TC_DISCARD | TC_WRITE,
                42,
                &[],
            ));
            b.extend(blk(
                big,
                13_000,
                4096,
                1 << 20,
                TA_COMPLETE | TC_DISCARD,
                0,
                &[],
            ));
            b.extend(blk(big, 14_000, 99, 512, TA_ISSUE | TC_READ, 42, &[]));
            let r = from_blktrace(&b, "x").unwrap();
            let got: Vec<(u64, u64, Op, u64, u64, u32, u16)> = r
                .events
                .iter()
                .map(|e| {
                    (
                        e.t,
                        e.dur,
                        e.op,
                        e.offset,
                        e.len,
                        e.tid,
                        e.flags & flag::DSYNC,
                    )
                })
                .collect();
            assert_eq!(
                got,
                vec![
                    (1_000, 7_000, Op::Write, 4096, 65536, 42, flag::DSYNC),
                    (2_000, 6_500, Op::Read, 1 << 20, 4096, 43, 0),
                    (9_000, 1_000, Op::Fsync, 0, 0, 42, 0),
                    (11_000, 1_000, Op::Fallocate, 2 << 20, 1 << 20, 42, 0),
                ],
                "big-endian: {big}"
            );
            assert_eq!(r.footer.unmatched, 1, "the read still in flight");
            assert_eq!(r.footer.files.len(), 1);
            assert_eq!(r.footer.files[0].path, "blktrace-dev-7-3");
            assert_eq!(r.footer.files[0].size_at_open, Some(3 << 20));
            // It is a trace like any other: it encodes and reads back.
            let again = Recording::decode(&r.encode().unwrap()[..]).unwrap();
            assert_eq!(again.events, r.events);
        }
    }

    #[test]
    fn what_is_not_a_block_trace_is_refused_by_name() {
        assert!(matches!(
            from_blktrace(b"fio version 2 iolog\n", "x"),
            Err(ImportError::Blktrace(_))
        ));
        let mut b = blk(false, 1, 0, 512, TA_ISSUE | TC_READ, 1, &[]);
        b.truncate(40);
        let e = from_blktrace(&b, "x").unwrap_err().to_string();
        assert!(e.contains("cut short"), "{e}");
        let only_issue = blk(false, 1, 0, 512, TA_ISSUE | TC_READ, 1, &[]);
        assert!(matches!(
            from_blktrace(&only_issue, "x"),
            Err(ImportError::Empty(_))
        ));
    }

    #[test]
    fn an_iolog_keeps_its_times_files_and_actions() {
        let v3 = "fio version 3 iolog\n0 a add\n0 b add\n10 a open\n10 b open\n\
                  20 a write 0 4096\n30 b read 8192 512\n40 a trim 0 4096\n50 a sync 0 0\n\
                  60 b datasync 0 0\n70 a close\n70 b close\n";
        let r = from_iolog(v3.as_bytes(), "x").unwrap();
        let got: Vec<(u64, Op, u32, u64, u64)> = r
            .events
            .iter()
            .map(|e| (e.t, e.op, e.file, e.offset, e.len))
            .collect();
        assert_eq!(
            got,
            vec![
                (20_000, Op::Write, 0, 0, 4096),
                (30_000, Op::Read, 1, 8192, 512),
                (40_000, Op::Fallocate, 0, 0, 4096),
                (50_000, Op::Fsync, 0, 0, 0),
                (60_000, Op::Fdatasync, 1, 0, 0),
            ]
        );
        assert_eq!(r.footer.files[1].size_at_open, Some(8704));
        assert!(r.header.method.contains("version 3"), "{}", r.header.method);
        // Version 2: times only from its waits (milliseconds from the start).
        let v2 = "fio version 2 iolog\nf add\nf open\nf read 0 4096\nf wait 5 0\nf write 4096 4096\nf close\n";
        let r = from_iolog(v2.as_bytes(), "x").unwrap();
        let t: Vec<u64> = r.events.iter().map(|e| e.t).collect();
        assert_eq!(t, vec![0, 5_000_000]);
        assert!(matches!(
            from_iolog(b"fio version 2 iolog\nf add\n", "x"),
            Err(ImportError::Empty(_))
        ));
        assert!(matches!(
            from_iolog(b"hello\n", "x"),
            Err(ImportError::Iolog(_))
        ));
    }
}
