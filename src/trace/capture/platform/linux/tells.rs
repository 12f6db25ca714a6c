//! Who told whom among the program's tasks: the scheduler's `sched:sched_waking` (who woke
//! whom) and `signal:signal_generate` (who signalled whom), each in the waker's or sender's
//! context, opened on every CPU and inherited by every task, into that CPU's ring. A signal
//! tells its target something — a shell's
//! `kill` tells a helper to exit — whether or not it wakes it: a target that is running, or
//! waiting for a CPU, takes it at its next return to user space, and no `sched_waking` shows
//! it. The trace holds them as tells (`Footer::signals`), which `trace::anchor::ends` follows
//! as it follows wake-ups.

use std::os::fd::OwnedFd;
use std::path::Path;

use super::perf::{
    self, CpuEvents, DISABLED, ENABLE_ON_EXEC, INHERIT, PERF_TYPE_TRACEPOINT, SAMPLE_ID_ALL,
    SAMPLE_RAW, SAMPLE_TID, SAMPLE_TIME, Tracepoints, USE_CLOCKID, Waking,
};
use super::sys::{self, PerfAttr};

/// `signal_generate`'s id and where its fields lie in its raw record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    id: u64,
    sig: usize,
    /// The target task.
    pid: usize,
    result: usize,
}

impl Format {
    /// The tracepoint's id, for perf.
    pub fn id(&self) -> u64 {
        self.id
    }
}

/// The tracepoint's format from tracefs at `root` (None: the kernel has no such tracepoint,
/// or its format lacks a field).
pub fn format(root: &Path) -> Option<Format> {
    let (id, f) = perf::tracepoint_format(root, "signal/signal_generate")?;
    Some(Format {
        id,
        sig: perf::field_offset(&f, "sig")?,
        pid: perf::field_offset(&f, "pid")?,
        result: perf::field_offset(&f, "result")?,
    })
}

/// `sched_waking`'s id and the offset of its `pid` field (the woken task), from its format.
pub fn waking_format(root: &Path) -> Option<(u64, usize)> {
    let (id, format) = perf::tracepoint_format(root, "sched/sched_waking")?;
    Some((id, perf::field_offset(&format, "pid")?))
}

/// A `sched_waking` sample's wake-up: Some(None) for one the records leave out (made in an
/// interrupt, whatever task it interrupted, or a task waking itself); None: not such a sample.
pub fn waking(ids: Tracepoints, t: u64, by: u32, raw: &[u8]) -> Option<Option<Waking>> {
    let (id, at) = ids.waking?;
    if raw.len() < at + 4 || u64::from(u16::from_ne_bytes([raw[0], raw[1]])) != id {
        return None;
    }
    // common_flags: in a hard or soft interrupt, or an NMI.
    const IN_INTERRUPT: u8 = 0x08 | 0x10 | 0x40;
    let tid = perf::u32_at(raw, at);
    Some((raw[2] & IN_INTERRUPT == 0 && tid != by).then_some(Waking { t, by, tid }))
}

/// `sched_waking` and `signal_generate` on every CPU (`side`), and whether the second
/// opened: signals only beside the wake-ups, both being what a wait's end follows.
pub fn open(pid: i32, ids: Tracepoints, cpus: &[CpuEvents]) -> (Vec<OwnedFd>, bool) {
    let Some((id, _)) = ids.waking else {
        return (Vec::new(), false);
    };
    let mut events = side(pid, id, cpus);
    let signals = match (events.is_empty(), ids.signal) {
        (false, Some(f)) => side(pid, f.id(), cpus),
        _ => Vec::new(),
    };
    let seen = !signals.is_empty();
    events.extend(signals);
    (events, seen)
}

/// Tracepoint `id` (`sched_waking`, `signal_generate`) on every CPU for `pid` and the tasks it
/// starts, each sent to its CPU's ring (such an event runs in the waker's or sender's
/// context). None where perf refuses one: the trace then holds none of them, and says so.
fn side(pid: i32, id: u64, cpus: &[CpuEvents]) -> Vec<OwnedFd> {
    let attr = PerfAttr {
        type_: PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<PerfAttr>() as u32,
        config: id,
        sample_period: 1,
        sample_type: SAMPLE_TID | SAMPLE_TIME | SAMPLE_RAW,
        flags: DISABLED | INHERIT | ENABLE_ON_EXEC | SAMPLE_ID_ALL | USE_CLOCKID,
        clockid: libc::CLOCK_MONOTONIC,
        ..Default::default()
    };
    let mut out = Vec::with_capacity(cpus.len());
    for c in cpus {
        let opened = sys::perf_event_open(&attr, pid, c.cpu)
            .and_then(|w| sys::set_output(&w, &c.enter).map(|()| w));
        match opened {
            Ok(w) => out.push(w),
            Err(_) => return Vec::new(),
        }
    }
    out
}

/// The kernel's `result` for a signal it queued (`TRACE_SIGNAL_DELIVERED`), and for one it
/// queued without its details (`TRACE_SIGNAL_LOSE_INFO`); the others (ignored, already
/// pending, a full queue) change nothing for the target.
const DELIVERED: i32 = 0;
const LOSE_INFO: i32 = 4;

/// A `signal_generate` sample's tell: `by` signalled `tid` at `t`. Some(None) for one the
/// trace leaves out: raised in an interrupt (a timer's), sent to the sender itself (a fault,
/// SIGPIPE, `raise`), SIGCHLD (a child's end, which the walk takes from the tasks' records),
/// or one the kernel did not queue. None: not such a sample.
pub fn parse(f: Option<Format>, t: u64, by: u32, raw: &[u8]) -> Option<Option<Waking>> {
    let f = f?;
    let end = f.sig.max(f.pid).max(f.result) + 4;
    if raw.len() < end || u64::from(u16::from_ne_bytes([raw[0], raw[1]])) != f.id {
        return None;
    }
    // common_flags: in a hard or soft interrupt, or an NMI.
    const IN_INTERRUPT: u8 = 0x08 | 0x10 | 0x40;
    let int = |at: usize| perf::u32_at(raw, at) as i32;
    let (sig, tid, result) = (int(f.sig), int(f.pid) as u32, int(f.result));
    let kept = raw[2] & IN_INTERRUPT == 0
        && tid != by
        && tid != 0
        && sig != libc::SIGCHLD
        && matches!(result, DELIVERED | LOSE_INFO);
    Some(kept.then_some(Waking { t, by, tid }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This kernel's format (Linux 6.x), as tracefs gives it.
    const FORMAT: &str = "name: signal_generate
ID: 261
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:int sig;\toffset:8;\tsize:4;\tsigned:1;
\tfield:int errno;\toffset:12;\tsize:4;\tsigned:1;
\tfield:int code;\toffset:16;\tsize:4;\tsigned:1;
\tfield:char comm[16];\toffset:20;\tsize:16;\tsigned:0;
\tfield:pid_t pid;\toffset:36;\tsize:4;\tsigned:1;
\tfield:int group;\toffset:40;\tsize:4;\tsigned:1;
\tfield:int result;\toffset:44;\tsize:4;\tsigned:1;
";

    fn sample(flags: u8, sig: i32, pid: i32, result: i32) -> Vec<u8> {
        let mut raw = vec![0u8; 48];
        raw[0..2].copy_from_slice(&261u16.to_ne_bytes());
        raw[2] = flags;
        raw[8..12].copy_from_slice(&sig.to_ne_bytes());
        raw[36..40].copy_from_slice(&pid.to_ne_bytes());
        raw[44..48].copy_from_slice(&result.to_ne_bytes());
        raw
    }

    #[test]
    fn a_signal_to_another_task_is_a_tell_and_the_rest_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let ev = dir.path().join("events/signal/signal_generate");
        std::fs::create_dir_all(&ev).unwrap();
        std::fs::write(ev.join("id"), "261\n").unwrap();
        std::fs::write(ev.join("format"), FORMAT).unwrap();
        let f = format(dir.path());
        assert_eq!(
            f,
            Some(Format {
                id: 261,
                sig: 8,
                pid: 36,
                result: 44
            })
        );
        let tell = |raw: &[u8]| parse(f, 1_000, 7, raw);
        // 7 sends SIGTERM to 9: kept.
        assert_eq!(
            tell(&sample(0, libc::SIGTERM, 9, 0)),
            Some(Some(Waking {
                t: 1_000,
                by: 7,
                tid: 9
            }))
        );
        assert!(
            tell(&sample(0, libc::SIGUSR1, 9, LOSE_INFO))
                .unwrap()
                .is_some()
        );
        // To itself; SIGCHLD; from an interrupt; ignored or already pending: left out.
        assert_eq!(tell(&sample(0, libc::SIGTERM, 7, 0)), Some(None));
        assert_eq!(tell(&sample(0, libc::SIGCHLD, 9, 0)), Some(None));
        assert_eq!(tell(&sample(0x08, libc::SIGALRM, 9, 0)), Some(None));
        assert_eq!(tell(&sample(0, libc::SIGTERM, 9, 1)), Some(None));
        assert_eq!(tell(&sample(0, libc::SIGTERM, 9, 2)), Some(None));
        // Another tracepoint's sample, a short one, or no format: not a signal.
        let mut other = sample(0, libc::SIGTERM, 9, 0);
        other[0] = 7;
        assert_eq!(tell(&other), None);
        assert_eq!(tell(&sample(0, libc::SIGTERM, 9, 0)[..40]), None);
        assert_eq!(parse(None, 0, 7, &sample(0, 15, 9, 0)), None);
        // A format without the target's field is none.
        std::fs::write(ev.join("format"), FORMAT.replace(" pid;", " target;")).unwrap();
        assert_eq!(format(dir.path()), None);
    }
}
