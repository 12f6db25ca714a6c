//! `iogauge record --block DEVICE -- COMMAND`: the block layer's view of a run, where blktrace
//! cannot run (its relay files live in debugfs, which kernel lockdown closes) or is not
//! installed. The `block:block_rq_issue` and `block:block_rq_complete` tracepoints through
//! perf, on every CPU, filtered in the kernel to the device, while the command runs: every
//! process's requests to that device, each from its issue to the driver to its completion,
//! made into blktrace's terms and then a trace as `trace import --blktrace` makes one.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::perf::{self, CpuEvents};
use super::sys::{self, PerfAttr};
use super::{CaptureError, Captured};
use crate::trace::import::{self, Blk};
use crate::trace::recording::Header;

/// Where the fields of one tracepoint's record are: name → (offset, size).
type Fields = HashMap<String, (usize, usize)>;

/// The two tracepoints' ids and layouts.
struct Points {
    issue: (u64, Fields),
    complete: (u64, Fields),
}

/// A tracepoint's id and its fields' places, from its `format` file.
fn point(root: &Path, name: &str) -> io::Result<(u64, Fields)> {
    let text = std::fs::read_to_string(root.join("events/block").join(name).join("format"))?;
    let mut id = None;
    let mut fields = Fields::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(v) = line.strip_prefix("ID:") {
            id = v.trim().parse().ok();
        }
        let Some(rest) = line.strip_prefix("field:") else {
            continue;
        };
        let mut parts = rest.split(';').map(str::trim);
        let decl = parts.next().unwrap_or("");
        let name = decl
            .rsplit(' ')
            .next()
            .unwrap_or("")
            .split('[')
            .next()
            .unwrap_or("");
        let num = |key: &str, p: &str| p.strip_prefix(key).and_then(|v| v.parse::<usize>().ok());
        let (mut off, mut size) = (None, None);
        for p in parts {
            off = off.or(num("offset:", p));
            size = size.or(num("size:", p));
        }
        if let (Some(o), Some(s)) = (off, size) {
            fields.insert(name.to_string(), (o, s));
        }
    }
    let id = id.ok_or_else(|| io::Error::other(format!("block:{name} has no ID")))?;
    Ok((id, fields))
}

/// The kernel's number (MAJOR << 20 | MINOR) of the block device at `path`.
pub fn device_number(path: &Path) -> Result<u32, CaptureError> {
    let shown = crate::rawpath::display(path);
    let m = std::fs::metadata(path)
        .map_err(|e| CaptureError::Usage(format!("--block={shown}: {e}")))?;
    if !m.file_type().is_block_device() {
        return Err(CaptureError::Usage(format!(
            "--block={shown}: not a block device (expected one such as /dev/sdb or /dev/loop0)"
        )));
    }
    let rdev = m.rdev();
    Ok(((libc::major(rdev) & 0xfff) << 20) | (libc::minor(rdev) & 0xfffff))
}

/// An unsigned field of a raw record, by its place.
fn field(raw: &[u8], f: Option<&(usize, usize)>) -> Option<u64> {
    let &(o, s) = f?;
    let b = raw.get(o..o + s)?;
    Some(match s {
        8 => u64::from_ne_bytes(b.try_into().ok()?),
        4 => u64::from(u32::from_ne_bytes(b.try_into().ok()?)),
        2 => u64::from(u16::from_ne_bytes(b.try_into().ok()?)),
        _ => return None,
    })
}

/// blktrace's categories for the kernel's `rwbs` text (blk_fill_rwbs: an optional F for a
/// preflush, the operation — W, D (E: secure erase), F (a flush), R or N — then F for FUA,
/// A, S, M).
fn categories(rwbs: &[u8]) -> u32 {
    let end = rwbs.iter().position(|&b| b == 0).unwrap_or(rwbs.len());
    let mut s = &rwbs[..end];
    let mut c = 0;
    if s.len() > 1 && s[0] == b'F' {
        c |= import::TC_FLUSH;
        s = &s[1..];
    }
    match s.first() {
        Some(b'W') => c |= import::TC_WRITE,
        Some(b'D') => c |= import::TC_DISCARD | import::TC_WRITE,
        Some(b'F') => c |= import::TC_FLUSH,
        Some(b'R') => c |= import::TC_READ,
        _ => {}
    }
    if s.iter().skip(1).any(|&b| b == b'F') {
        c |= import::TC_FUA;
    }
    c
}

/// Parses whole perf records into `out`; returns the count the kernel lost.
fn parse(bytes: &[u8], p: &Points, out: &mut Vec<Blk>) -> u64 {
    let mut lost = 0;
    for (kind, _, r) in perf::records(bytes) {
        let size = r.len();
        if kind == perf::RECORD_SAMPLE && size >= 32 {
            let (tid, t) = (perf::u32_at(r, 12), perf::u64_at(r, 16));
            let raw = perf::sample_raw(r);
            let tp = raw
                .get(..2)
                .map_or(0, |b| u64::from(u16::from_ne_bytes([b[0], b[1]])));
            let (action, f) = if tp == p.issue.0 {
                (import::TA_ISSUE, &p.issue.1)
            } else {
                (import::TA_COMPLETE, &p.complete.1)
            };
            let rwbs = f
                .get("rwbs")
                .and_then(|&(o, s)| raw.get(o..o + s))
                .unwrap_or(&[]);
            let error = field(raw, f.get("error")).unwrap_or(0) as u32 as i32;
            out.push(Blk {
                time: t,
                sector: field(raw, f.get("sector")).unwrap_or(0),
                bytes: field(raw, f.get("bytes")).unwrap_or(0) as u32,
                action: action | categories(rwbs),
                pid: tid,
                device: field(raw, f.get("dev")).unwrap_or(0) as u32,
                error: error.unsigned_abs().min(u32::from(u16::MAX)) as u16,
            });
        } else if kind == perf::RECORD_LOST && size >= 24 {
            lost += perf::u64_at(r, 16);
        }
    }
    lost
}

/// The two events on every online CPU, filtered to `dev`, counting from now.
fn open(p: &Points, dev: u32) -> io::Result<Vec<CpuEvents>> {
    let filter = format!("dev == {dev}");
    let mut cpus = Vec::new();
    for cpu in perf::online_cpus()? {
        let attr = |config: u64| PerfAttr {
            type_: perf::PERF_TYPE_TRACEPOINT,
            size: std::mem::size_of::<PerfAttr>() as u32,
            config,
            sample_period: 1,
            sample_type: perf::SAMPLE_TID | perf::SAMPLE_TIME | perf::SAMPLE_RAW,
            flags: perf::DISABLED | perf::SAMPLE_ID_ALL | perf::USE_CLOCKID,
            clockid: libc::CLOCK_MONOTONIC,
            ..Default::default()
        };
        let issue = sys::perf_event_open(&attr(p.issue.0), -1, cpu)?;
        let complete = sys::perf_event_open(&attr(p.complete.0), -1, cpu)?;
        sys::set_filter(&issue, &filter)?;
        sys::set_filter(&complete, &filter)?;
        let ring = perf::map_ring(&issue, perf::RING_PAGES)?;
        sys::set_output(&complete, &issue)?;
        cpus.push(CpuEvents {
            cpu,
            enter: issue,
            _exit: Some(complete),
            ring,
        });
    }
    for c in &cpus {
        sys::enable(&c.enter, true)?;
        if let Some(e) = &c._exit {
            sys::enable(e, true)?;
        }
    }
    Ok(cpus)
}

/// The trace's header for a block recording of `device` (number `dev`) while `argv` ran.
fn header(argv: &[OsString], dev: u32, device: &Path, started_unix_ms: u64) -> Header {
    super::header(
        argv,
        started_unix_ms,
        format!(
            "perf: block:block_rq_issue/block_rq_complete tracepoints on every CPU, filtered \
             to device {}:{} ({}): every process's requests to it while the command ran, \
             from issue to the driver to completion",
            dev >> 20,
            dev & 0xfffff,
            crate::rawpath::display(device)
        ),
    )
}

/// Records the requests to `device` while `argv` runs.
pub fn record(
    argv: &[OsString],
    device: &Path,
    stop: Arc<AtomicBool>,
) -> Result<Captured, CaptureError> {
    let dev = device_number(device)?;
    let Some(program) = argv.first() else {
        return Err(CaptureError::Usage(
            "record: no command given (iogauge record --block DEVICE -- COMMAND ARGS…)".into(),
        ));
    };
    let found = super::find_program(program).ok_or_else(|| {
        CaptureError::Usage(format!(
            "record: {}: no such program (not a path to an executable, nor in PATH)",
            Path::new(program).display()
        ))
    })?;
    let failed =
        |what: &str, e: io::Error| CaptureError::Failed(format!("record --block: {what}: {e}"));
    let points = perf::in_tracefs(|root| {
        Ok(Points {
            issue: point(root, "block_rq_issue")?,
            complete: point(root, "block_rq_complete")?,
        })
    })
    .map_err(|e| failed("the block tracepoints", e))?;
    let mut cpus = open(&points, dev).map_err(|e| failed("perf_event_open", e))?;
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let cap = perf::max_records(2);
            let (mut out, mut capped) = (Vec::new(), 0u64);
            let lost = perf::pump(&mut cpus, &done, (None, 50), |b| {
                let lost = parse(b, &points, &mut out);
                capped += out.len().saturating_sub(cap) as u64;
                out.truncate(cap);
                lost
            });
            (out, lost, capped)
        })
    };
    let started_unix_ms = crate::units::unix_ns() / 1_000_000;
    let t0 = sys::monotonic_ns();
    let child = std::process::Command::new(&found).args(&argv[1..]).spawn();
    let status = match child {
        Ok(mut c) => {
            let pid = c.id() as i32;
            let ended = Arc::new(AtomicBool::new(false));
            let watcher = super::forward_stop(stop, Arc::clone(&ended), pid, None);
            let st = c.wait();
            ended.store(true, Ordering::Release);
            let _ = watcher.join();
            st.ok()
        }
        Err(e) => {
            done.store(true, Ordering::Release);
            let _ = reader.join();
            return Err(CaptureError::Usage(format!(
                "record: cannot run {}: {e}",
                found.display()
            )));
        }
    };
    let end = sys::monotonic_ns();
    done.store(true, Ordering::Release);
    let (recs, lost, capped) = reader
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p));
    let header = header(argv, dev, device, started_unix_ms);
    let name = crate::rawpath::text(device);
    let mut recording = import::requests(recs, Some(t0), &|_| name.clone(), header);
    recording.footer.duration_ns = end.saturating_sub(t0);
    recording.footer.lost = lost;
    recording.footer.capped = capped;
    use std::os::unix::process::ExitStatusExt;
    recording.footer.exit_code = status.and_then(|s| s.code());
    recording.footer.exit_signal = status.and_then(|s| s.signal());
    Ok(Captured {
        recording,
        fallback_reason: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rwbs_says_what_blktrace_would() {
        use import::{TC_DISCARD, TC_FLUSH, TC_FUA, TC_READ, TC_WRITE};
        assert_eq!(categories(b"WS\0\0"), TC_WRITE);
        assert_eq!(categories(b"WFS"), TC_WRITE | TC_FUA);
        assert_eq!(categories(b"FWS"), TC_FLUSH | TC_WRITE);
        assert_eq!(categories(b"FN"), TC_FLUSH);
        assert_eq!(categories(b"F"), TC_FLUSH);
        assert_eq!(categories(b"RA"), TC_READ);
        assert_eq!(categories(b"D"), TC_DISCARD | TC_WRITE);
        assert_eq!(categories(b"N"), 0);
    }

    #[test]
    fn a_file_that_is_not_a_block_device_is_the_users_error() {
        for p in ["/dev/null", "/", "/no/such/device"] {
            assert!(
                matches!(device_number(Path::new(p)), Err(CaptureError::Usage(_))),
                "{p}"
            );
        }
    }
}
