//! The capture's own cost, measured before each recording: iogauge runs itself as a small
//! program (`iogauge __iogauge_calibrate`) plain and under the same capture, five times each,
//! and the difference is what the capture adds per watched call, per call that names a path
//! and per call it does not watch. The program times each call and the work between calls on
//! its own, and reports their medians: a run's total moves with the machine (a neighbour's
//! burst, the disk's drift, a vCPU descheduled), a median of 10,000 does not — totals made the
//! figure vary 3x between recordings on this project's VM. The capture's cost lies inside the calls
//! (the tracepoints, the probes, the records) and around them (its records push the program's
//! lines out of the caches, which the work after a call pays): both medians count.

use std::ffi::OsString;
use std::io::Read;

use super::{Paths, perf, prepare, run_traced, sys};
use crate::trace::recording::{Event, Op, Overhead};

/// The program's argument that names the calibration.
pub const CALIBRATE_ARG: &str = "__iogauge_calibrate";

/// What the calibration measured: the capture's added cost per watched call, per call that
/// names a path, and per call it does not watch (each passes the tracepoints and the probes),
/// ns.
#[derive(Debug, Clone, Copy)]
pub(super) struct Calibration {
    per_call: f64,
    per_path: f64,
    per_other: f64,
    /// Of `per_call`, what lies between the recorded calls (`Overhead::between_calls_ns`).
    between: Option<f64>,
}

impl Calibration {
    /// The cost to a run of `calls` watched calls, `path_calls` of them naming a path, and
    /// `unwatched` other system calls, lasting `duration_ns`.
    pub(super) fn applied(
        self,
        (calls, path_calls, unwatched): (u64, u64, u64),
        duration_ns: u64,
    ) -> Overhead {
        let added = self.per_call * calls as f64
            + self.per_path * path_calls as f64
            + self.per_other * unwatched as f64;
        Overhead {
            per_call_ns: self.per_call,
            per_path_call_ns: self.per_path,
            per_unwatched_call_ns: self.per_other,
            unwatched_calls: unwatched,
            between_calls_ns: self.between,
            added_ns: added as u64,
            added_pct: if duration_ns > 0 {
                100.0 * added / duration_ns as f64
            } else {
                0.0
            },
        }
    }
}

/// Calls per calibration run: positioned one-byte reads (`read_from`), and opens of /dev/null —
/// spread out where each stops the program for the tracer to read its path, back to back
/// (with the same work between them as between the reads) where eBPF reads paths in the
/// kernel.
const CAL_READS: u32 = 3_000;
const CAL_OPENS_SPACED: u32 = 200;
const CAL_OPENS_DENSE: u32 = 750;
/// The calibration program's argument for back-to-back opens.
const CAL_DENSE: &str = "dense";
/// getppid() calls per calibration run: a call the capture does not watch.
const CAL_OTHER: u32 = 3_000;
/// Calibration rounds (each a plain and a traced run); odd, for a median.
const CAL_ROUNDS: usize = 5;
/// Work without system calls between two calibration opens: a real program's opens are
/// spread out, and a stop that finds the tracer asleep costs its wake-up (on this project's
/// VM about 80 µs, against 12 µs for opens back to back).
const CAL_OPEN_GAP_NS: u64 = 250_000;

/// The calibration's work between two calls: 64 cache lines of a 1 MiB buffer, a different
/// stretch each time, as a program's work between its calls leaves the caches the capture's
/// code shares with it (in a tight loop of calls the capture's code stays cached, and costs
/// a third of what it costs a real program).
const WORK_BYTES: usize = 1 << 20;
const WORK_LINES: usize = 64;

fn work(buf: &[u8], i: u32) -> u64 {
    let base = (i as usize).wrapping_mul(WORK_LINES * 64 + 64);
    (0..WORK_LINES)
        .map(|j| u64::from(buf[(base + j * 64 * 17) % buf.len()]))
        .sum()
}

/// The median of `v` (reordered).
fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// `n` rounds of work then `call`, each timed on its own: the medians of the work's time, of
/// the call's, and of a round's (from one round's start to the next's: the work, the call and
/// the loop's own steps), ns.
fn timed(n: u32, mut before: impl FnMut(u32), mut call: impl FnMut()) -> [u64; 3] {
    let (mut w, mut c) = (vec![0u64; n as usize], vec![0u64; n as usize]);
    let mut p = Vec::with_capacity(n as usize);
    let mut last = None;
    for i in 0..n {
        let t0 = sys::monotonic_ns();
        before(i);
        let t1 = sys::monotonic_ns();
        call();
        let t2 = sys::monotonic_ns();
        w[i as usize] = t1 - t0;
        c[i as usize] = t2 - t1;
        p.extend(last.map(|l| t0 - l));
        last = Some(t0);
    }
    [median(&mut w), median(&mut c), median(&mut p)]
}

/// What the calibration reads: iogauge's own executable — a file, whose reads the trace
/// keeps (`recorded_gap` needs them; a memfd's are no storage's, and left out), opened to
/// read only, its first page in memory as it runs —, else a memfd of one byte.
fn read_from() -> Option<std::os::fd::OwnedFd> {
    let own = std::env::current_exe().ok().and_then(|p| {
        let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC;
        rustix::fs::open(&p, flags, rustix::fs::Mode::empty()).ok()
    });
    own.or_else(|| {
        let fd = rustix::fs::memfd_create("iogauge-calibrate", rustix::fs::MemfdFlags::CLOEXEC);
        let fd = fd.ok()?;
        rustix::io::write(&fd, b"x").ok()?;
        Some(fd)
    })
}

/// iogauge as the calibration program (`iogauge __iogauge_calibrate dense|spaced`): CAL_READS
/// one-byte preads, open+close pairs (CAL_OPENS_DENSE with the reads' work between them, or
/// CAL_OPENS_SPACED each after CAL_OPEN_GAP_NS), and CAL_OTHER getppid()s; prints for each
/// the median time of the work before a call, of the call and of a round, ns.
pub fn calibrate_child() -> std::process::ExitCode {
    let dense = std::env::args().nth(2).as_deref() == Some(CAL_DENSE);
    let Some(fd) = read_from() else {
        return std::process::ExitCode::from(1);
    };
    let mut b = [0u8; 1];
    let buf: Vec<u8> = (0..WORK_BYTES).map(|i| i as u8).collect();
    let work = |i| {
        std::hint::black_box(work(&buf, i));
    };
    let reads = timed(CAL_READS, work, || {
        let _ = rustix::io::pread(&fd, &mut b, 0);
    });
    let gap = |_| {
        let until = sys::monotonic_ns() + CAL_OPEN_GAP_NS;
        while sys::monotonic_ns() < until {
            std::hint::spin_loop();
        }
    };
    let open = || {
        if let Ok(f) = rustix::fs::open(
            "/dev/null",
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        ) {
            drop(f);
        }
    };
    let opens = if dense {
        timed(CAL_OPENS_DENSE, work, open)
    } else {
        // The gap is not work a program does between its calls: only the calls count.
        [0, timed(CAL_OPENS_SPACED, gap, open)[1], 0]
    };
    let other = timed(CAL_OTHER, work, || {
        std::hint::black_box(rustix::process::getppid());
    });
    let words: Vec<String> = [reads, opens, other]
        .iter()
        .flatten()
        .map(u64::to_string)
        .collect();
    println!("{}", words.join(" "));
    std::process::ExitCode::SUCCESS
}

/// The capture's added cost per watched call, per call that names a path and per call it
/// does not watch: the calibration program run plain and under the capture, CAL_ROUNDS times
/// each; per round and kind of call the traced medians (work and call) less the plain ones,
/// and the median of those over the rounds. None when it cannot be run.
pub(super) fn calibrate(ids: Option<perf::Tracepoints>, paths: &mut Paths) -> Option<Calibration> {
    let me = std::env::current_exe().ok()?;
    let mode = if matches!(paths, Paths::Kernel(_)) {
        CAL_DENSE
    } else {
        "spaced"
    };
    let argv = [
        me.clone().into_os_string(),
        OsString::from(CALIBRATE_ARG),
        OsString::from(mode),
    ];
    let exec = prepare(&argv).ok()?;
    // Per kind (reads, opens, others): each round's added time per call; and the part of a
    // read's that lies between the recorded calls.
    let mut diffs: [Vec<i64>; 3] = Default::default();
    let mut between = Vec::new();
    // Plain runs are without the eBPF probes: attached, they cost every call on the machine,
    // the plain run's as much as the recorded program's. They are taken off for each plain
    // run and put back for each traced one (a fraction of a millisecond on their raw
    // tracepoints), and the rounds alternate which goes first (plain then traced, traced then
    // plain), so a drift of the machine's speed during the calibration falls on both alike.
    let plain = |paths: &mut Paths| {
        if let Paths::Kernel(p) = paths {
            p.detach();
        }
        let out = std::process::Command::new(&me)
            .args([CALIBRATE_ARG, mode])
            .output()
            .ok()?;
        medians(&String::from_utf8_lossy(&out.stdout))
    };
    let traced = |paths: &mut Paths| {
        if let Paths::Kernel(p) = paths {
            p.attach().ok()?;
        }
        traced_calibration(&exec, ids, paths)
    };
    for round in 0..CAL_ROUNDS {
        let (plain, traced) = if round % 2 == 0 {
            let p = plain(paths)?;
            (p, traced(paths)?)
        } else {
            let t = traced(paths)?;
            (plain(paths)?, t)
        };
        for (k, d) in diffs.iter_mut().enumerate() {
            let added = |m: &Medians| (m[3 * k] + m[3 * k + 1]) as i64;
            d.push(added(&traced.medians) - added(&plain));
        }
        between.extend(traced.gap.map(|g| between_calls(g, &plain)));
    }
    let per = |k: usize| {
        let mut d = diffs[k].clone();
        d.sort_unstable();
        d[CAL_ROUNDS / 2].max(0) as f64
    };
    // An open+close pair is two watched calls, one of which names a path.
    let per_call = per(0);
    between.sort_unstable();
    Some(Calibration {
        per_call,
        per_path: (per(1) - 2.0 * per_call).max(0.0),
        per_other: per(2),
        between: (between.len() == CAL_ROUNDS).then(|| between[CAL_ROUNDS / 2].max(0) as f64),
    })
}

/// The calibration program's medians (per kind of call: reads, opens, others; the work
/// before a call, the call, a round), ns.
type Medians = [u64; 9];

/// What the capture adds between two recorded reads, given the recorded time between them
/// (`gap`, median, ns) and the plain run's medians: the gap less what lies between the calls
/// untraced — a round less the call as the program times it, which a replay's own clock
/// times the same way. More than the whole cost per call where the recorded call leaves out
/// part of what the program's clock counts in it (the way into the kernel and back, before
/// and after the tracepoints): a replay, timing its calls as the program does, would count
/// that twice.
fn between_calls(gap: u64, plain: &Medians) -> i64 {
    gap as i64 - plain[2].saturating_sub(plain[1]) as i64
}

/// The median recorded time between two consecutive reads of one thread (from one's return
/// to the next's entry), ns: the calibration's reads, where the trace holds most of them.
fn recorded_gap(events: &[Event]) -> Option<u64> {
    let mut gaps: Vec<u64> = events
        .windows(2)
        .filter(|w| w[0].op == Op::Read && w[1].op == Op::Read && w[0].tid == w[1].tid)
        .map(|w| w[1].t.saturating_sub(w[0].done_ns()))
        .collect();
    (gaps.len() >= CAL_READS as usize / 2).then(|| median(&mut gaps))
}

/// One traced calibration run: the program's medians, and its reads' recorded gap
/// (`recorded_gap`).
struct Traced {
    medians: Medians,
    gap: Option<u64>,
}

/// The calibration program's medians, ns, as it prints them.
fn medians(text: &str) -> Option<Medians> {
    let v: Vec<u64> = text
        .split_whitespace()
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    v.try_into().ok()
}

/// The calibration program's medians under the capture (its output read from a pipe).
fn traced_calibration(
    exec: &sys::Exec,
    ids: Option<perf::Tracepoints>,
    paths: &Paths,
) -> Option<Traced> {
    let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).ok()?;
    let exec = sys::Exec {
        stdout: Some(std::os::fd::AsRawFd::as_raw_fd(&w)),
        ..exec.clone()
    };
    // Without who woke whom: the calibration program wakes no task of its own, and each
    // session with the sched_waking tracepoint costs its close a tracepoint grace period
    // (~40 ms here), five times over.
    let ids = ids.map(|i| perf::Tracepoints { waking: None, ..i });
    let run = run_traced(&exec, ids, paths, None);
    drop(w);
    let run = run.ok()?;
    let mut text = String::new();
    std::fs::File::from(r).read_to_string(&mut text).ok()?;
    Some(Traced {
        medians: medians(&text)?,
        gap: recorded_gap(&run.decoded.events),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_prints_nine_medians_and_they_read_back() {
        assert_eq!(
            medians("1 2 3 4 5 6 7 8 9\n"),
            Some([1, 2, 3, 4, 5, 6, 7, 8, 9])
        );
        assert_eq!(medians("1 2 3 4 5 6"), None);
        assert_eq!(medians("1 2 3 4 5 6 7 8 x"), None);
        let mut v = vec![9, 1, 5, 3, 7];
        assert_eq!(median(&mut v), 5);
    }

    /// A round of 1,000 ns untraced, 300 of them in the call as the program times it: 700
    /// between calls. Recorded 1,000 apart, the capture put 300 there.
    #[test]
    fn the_cost_between_calls_is_the_recorded_gap_less_the_untraced_one() {
        let plain = [650, 300, 1_000, 0, 0, 0, 0, 0, 0];
        assert_eq!(between_calls(1_000, &plain), 300);
        assert_eq!(between_calls(600, &plain), -100);
    }

    /// The median gap from one read's return to the next read's entry of the same thread;
    /// other calls and other threads' reads between are no pair; too few reads, no figure.
    #[test]
    fn the_recorded_gap_is_taken_between_one_threads_consecutive_reads() {
        let read = |t: u64, tid: u32| Event {
            t,
            dur: 100,
            offset: 0,
            len: 1,
            result: 1,
            tid,
            file: 0,
            arg: 0,
            op: Op::Read,
            flags: 0,
        };
        let mut events: Vec<Event> = (0..CAL_READS as u64).map(|i| read(i * 1_000, 7)).collect();
        assert_eq!(recorded_gap(&events), Some(900));
        // Every other call made by another thread: no two reads of one thread in a row.
        for (i, e) in events.iter_mut().enumerate() {
            e.tid = 7 + (i % 2) as u32;
        }
        assert_eq!(recorded_gap(&events), None);
    }
}
