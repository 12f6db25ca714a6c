//! The main capture path: the kernel's `raw_syscalls:sys_enter` and `sys_exit` tracepoints
//! through perf_event_open, on every CPU, following the recorded program and every task it
//! starts (`inherit`), filtered in the kernel to the watched calls. Each CPU's two events
//! share one ring buffer, which a reader thread drains into [`Raw`] records; the kernel also
//! reports the tasks' forks, exits and execs there, time-stamped on the same clock
//! (CLOCK_MONOTONIC) as everything else the recorder notes.

pub use super::records::{records, sample_raw, u32_at, u64_at};
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::calls::Call;
use super::sys::{self, PerfAttr, Ring};

/// One thing the kernel reported, in its CPU's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Raw {
    /// A whole call (the eBPF ring's record, written at its exit): one record (96 bytes, as
    /// every record is) where an entry and an exit take two. At `t` it is entered, at `exit`
    /// it ends.
    Call {
        t: u64,
        exit: u64,
        pid: u32,
        tid: u32,
        nr: i32,
        args: [u64; 6],
        ret: i64,
    },
    Enter {
        t: u64,
        pid: u32,
        tid: u32,
        nr: i32,
        args: [u64; 6],
    },
    Exit {
        t: u64,
        tid: u32,
        nr: i32,
        ret: i64,
    },
    /// A new task: `tid` in process `pid`, started by `ptid` of `ppid`.
    Fork {
        t: u64,
        pid: u32,
        ppid: u32,
        tid: u32,
        ptid: u32,
    },
    /// A task ended.
    End {
        t: u64,
        tid: u32,
    },
    /// A process replaced its program (close-on-exec descriptors are gone).
    Exec {
        t: u64,
        pid: u32,
    },
    /// A major page fault (one that read storage) of task `tid` of process `pid`, at user
    /// address `addr`, reported as it ended.
    Fault {
        t: u64,
        pid: u32,
        tid: u32,
        addr: u64,
    },
}

/// A task left its CPU (`out`: asleep, or `preempted` while it could still run) or came back
/// to one. Kept in a list of its own (16 bytes where a [`Raw`] takes 88): a call that waits for
/// the device brings two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switch {
    pub t: u64,
    pub tid: u32,
    pub out: bool,
    pub preempted: bool,
}

impl Raw {
    /// A call's entry, as an entry record or a whole call says it: (time, thread).
    pub fn entry(&self) -> Option<(u64, u32)> {
        match *self {
            Raw::Call { t, tid, .. } | Raw::Enter { t, tid, .. } => Some((t, tid)),
            _ => None,
        }
    }

    pub fn time(&self) -> u64 {
        match *self {
            Raw::Call { t, .. }
            | Raw::Enter { t, .. }
            | Raw::Exit { t, .. }
            | Raw::Fork { t, .. }
            | Raw::End { t, .. }
            | Raw::Exec { t, .. }
            | Raw::Fault { t, .. } => t,
        }
    }
}

/// A task of the program woke another of its tasks (the scheduler's `sched_waking`, in the
/// waker's context outside interrupts): at `t`, `by` woke `tid`. Kept in a list of its own, as
/// the switches are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waking {
    pub t: u64,
    pub by: u32,
    pub tid: u32,
}

/// The two tracepoints' ids, and the scheduler's `sched_waking` (its id and where its `pid`
/// field is) where tracefs has it.
#[derive(Debug, Clone, Copy)]
pub struct Tracepoints {
    pub enter: u64,
    pub exit: u64,
    pub waking: Option<(u64, usize)>,
}

/// Reads the tracepoints' ids from tracefs.
pub fn tracepoints() -> io::Result<Tracepoints> {
    in_tracefs(read_ids)
}

/// Runs `read` on tracefs: where it is mounted, or on a private mount in a temporary
/// directory that is unmounted and removed at once (nothing is left mounted).
pub fn in_tracefs<T>(read: impl Fn(&Path) -> io::Result<T>) -> io::Result<T> {
    for root in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        if root_has_events(Path::new(root)) {
            if let Ok(t) = read(Path::new(root)) {
                return Ok(t);
            }
        }
    }
    let dir = std::env::temp_dir().join(format!("iogauge-tracefs-{}", std::process::id()));
    std::fs::create_dir(&dir)?;
    let mounted = rustix::mount::mount(
        "nodev",
        &dir,
        "tracefs",
        rustix::mount::MountFlags::empty(),
        None,
    );
    let found = match mounted {
        Ok(()) => {
            let found = read(&dir);
            let _ = rustix::mount::unmount(&dir, rustix::mount::UnmountFlags::DETACH);
            found
        }
        Err(e) => Err(io::Error::other(format!(
            "tracefs is not mounted and cannot be mounted ({e})"
        ))),
    };
    let _ = std::fs::remove_dir(&dir);
    found
}

fn root_has_events(root: &Path) -> bool {
    root.join("events").is_dir()
}

fn read_ids(root: &Path) -> io::Result<Tracepoints> {
    let id = |name: &str| -> io::Result<u64> {
        let p: PathBuf = root.join("events/raw_syscalls").join(name).join("id");
        std::fs::read_to_string(&p)?
            .trim()
            .parse()
            .map_err(io::Error::other)
    };
    Ok(Tracepoints {
        enter: id("sys_enter")?,
        exit: id("sys_exit")?,
        waking: waking_format(root),
    })
}

/// `sched_waking`'s id and the offset of its `pid` field (the woken task), from its format.
fn waking_format(root: &Path) -> Option<(u64, usize)> {
    let dir = root.join("events/sched/sched_waking");
    let id = std::fs::read_to_string(dir.join("id"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let format = std::fs::read_to_string(dir.join("format")).ok()?;
    let offset = format
        .lines()
        .find(|l| l.contains(" pid;") && !l.contains("common_pid"))?
        .split(';')
        .find_map(|f| f.trim().strip_prefix("offset:"))?
        .trim()
        .parse()
        .ok()?;
    Some((id, offset))
}

pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_TYPE_TRACEPOINT: u32 = 2;
/// The software event that counts nothing (its records are the side records asked for).
const SW_DUMMY: u64 = 9;
pub const SAMPLE_TID: u64 = 1 << 1;
pub const SAMPLE_TIME: u64 = 1 << 2;
pub const SAMPLE_RAW: u64 = 1 << 10;
pub const DISABLED: u64 = 1 << 0;
pub(super) const INHERIT: u64 = 1 << 1;
const COMM: u64 = 1 << 9;
pub(super) const ENABLE_ON_EXEC: u64 = 1 << 12;
const TASK: u64 = 1 << 13;
pub const WATERMARK: u64 = 1 << 14;
pub const SAMPLE_ID_ALL: u64 = 1 << 18;
const COMM_EXEC: u64 = 1 << 24;
pub const USE_CLOCKID: u64 = 1 << 25;
/// A record each time a task of the event leaves or regains a CPU.
const CONTEXT_SWITCH: u64 = 1 << 26;

/// Data pages per CPU's ring buffer (16 MiB of 4 KiB pages): about 100,000 calls before the
/// reader must have drained it.
pub const RING_PAGES: usize = 4096;
/// Where the calls go to the eBPF ring, the perf rings hold only the tasks' records and the
/// paths (2 MiB a CPU: tens of thousands of records between two of the reader's 2 ms polls).
const SIDE_RING_PAGES: usize = 512;

/// The events of one CPU: enter (owns the buffer) and exit (writes into it); for the block
/// capture, issue and complete; where the calls are read by eBPF, one event that gives the
/// tasks' records alone.
pub struct CpuEvents {
    pub cpu: i32,
    pub enter: OwnedFd,
    pub _exit: Option<OwnedFd>,
    pub ring: Ring,
}

/// The recorder's perf events on `pid`, not yet counting: they start when the program is
/// executed (`enable_on_exec`).
pub struct Session {
    cpus: Vec<CpuEvents>,
    ids: Tracepoints,
    /// The kernel gives the tasks' context switches (Linux 4.3 and later).
    switches: bool,
    /// A counter of every system call the program and its tasks make (watched or not: each
    /// passes the tracepoint and its probes, and costs the program that).
    all: Option<OwnedFd>,
    /// Where the calls are read by eBPF (their ring, and its counters in place of `all`).
    calls: Option<super::callring::CallReader>,
    /// Each CPU's `sched_waking` event (its records in that CPU's ring), where perf allows it.
    wakings: Vec<OwnedFd>,
    /// Each CPU's major page fault event and its own ring (its samples' layout is not the
    /// others'), where perf allows it.
    faults: Vec<(OwnedFd, Ring)>,
}

/// What the reader gives back.
#[derive(Debug, Default)]
pub struct Drained {
    /// The calls and tasks.
    pub raw: Vec<Raw>,
    /// The path probes' records.
    pub seen: Vec<super::bpf::Seen>,
    /// Records the kernel had to drop (a buffer full before it was drained).
    pub lost: u64,
    /// Records dropped here past the memory cap: the calls after it are not in the trace.
    pub capped: u64,
    /// Every system call the program and its tasks made (None: not counted).
    pub syscalls: Option<u64>,
    /// Tasks the program started that the capture could not follow (its map of them full):
    /// their calls are not in the trace.
    pub untracked: u64,
    /// Watched calls the tasks entered and ended in, which the ring's records (one at each
    /// call's exit) do not hold: counted as calls seen only half.
    pub unfinished: u64,
    /// The kernel gave the tasks' context switches.
    pub switches: bool,
    /// The switches, each CPU's in its order.
    pub switched: Vec<Switch>,
    /// The kernel gave who woke whom among the tasks, and those wake-ups, each CPU's in its
    /// order.
    pub wakes: bool,
    pub woken: Vec<Waking>,
    /// The kernel gave the tasks' major page faults (`Raw::Fault`, among `raw`).
    pub faults: bool,
}

/// What one record costs the recorder at its peak, bytes: the record (88), its share of the
/// scheduler's switches (at most two a record kept, 16 bytes each) and wake-ups (at most one,
/// 16 bytes), and the most the sort's
/// scratch (half the records) or the path notes' index of the calls (32 bytes a call) adds
/// while the records are decoded; the trace's events (56 bytes) and their gaps (24 bytes, at
/// most one an event: a thread off its CPU between calls) grow as the walk gives back the
/// room of the records, switches and wake-ups (136 bytes a record): at most 160 bytes a call
/// while both lists double, so the walk never holds more than 160, within the peak.
/// Measured (`bench/record_replay.py --only memory`, docs/trace.md): 88–110 bytes a call with
/// the eBPF ring's one record a call.
const PEAK_BYTES_PER_RECORD: usize = 184;

/// The switches kept for each record the cap allows: a call that sleeps brings two.
const SWITCHES_PER_RECORD: usize = 2;

const _: () = assert!(
    std::mem::size_of::<Raw>() == 88
        && std::mem::size_of::<Switch>() == 16
        && std::mem::size_of::<Waking>() == 16
);

/// The most records a recording keeps in memory (`per_call` records a call): those of
/// `IOGAUGE_RECORD_MAX_CALLS` calls, or as many as keep the recorder's peak within a quarter
/// of the memory available at the start.
pub fn max_records(per_call: usize) -> usize {
    if let Some(n) = std::env::var("IOGAUGE_RECORD_MAX_CALLS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return n.saturating_mul(per_call).max(per_call);
    }
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(1 << 30, |kib| kib.saturating_mul(1024));
    ((available / 4) as usize / PEAK_BYTES_PER_RECORD).max(1 << 16)
}

impl Session {
    /// Opens the events for `pid` on every online CPU, filtered to the watched calls; the
    /// path probes' records, when given, are sent into the same rings. Where the probes read
    /// the calls themselves, perf's events give only the tasks' records.
    pub fn open(
        pid: i32,
        ids: Tracepoints,
        probes: Option<&super::bpf::PathProbes>,
    ) -> io::Result<Session> {
        let calls = match probes.map(|p| p.calls()) {
            Some(Ok(c)) => Some(c.watch(pid)?),
            _ => None,
        };
        let filter = watched_filter();
        let pages = if calls.is_some() {
            SIDE_RING_PAGES
        } else {
            RING_PAGES
        };
        let mut cpus = Vec::new();
        let mut switches = true;
        for cpu in online_cpus()? {
            let attr = |config: u64, extra: u64| {
                let mut a = PerfAttr {
                    type_: PERF_TYPE_TRACEPOINT,
                    size: std::mem::size_of::<PerfAttr>() as u32,
                    config,
                    sample_period: 1,
                    sample_type: SAMPLE_TID | SAMPLE_TIME | SAMPLE_RAW,
                    flags: DISABLED
                        | INHERIT
                        | ENABLE_ON_EXEC
                        | WATERMARK
                        | SAMPLE_ID_ALL
                        | USE_CLOCKID
                        | extra,
                    clockid: libc::CLOCK_MONOTONIC,
                    ..Default::default()
                };
                if calls.is_some() {
                    // No samples: a software event that counts nothing, for its side records.
                    a.type_ = PERF_TYPE_SOFTWARE;
                    a.config = SW_DUMMY;
                }
                a.wakeup = (pages * rustix::param::page_size() / 8) as u32;
                a
            };
            let tasks = TASK | COMM | COMM_EXEC;
            // Context switches since Linux 4.3: an older kernel refuses the flag (EINVAL),
            // and the recording goes on without them.
            let enter = match switches
                .then(|| sys::perf_event_open(&attr(ids.enter, tasks | CONTEXT_SWITCH), pid, cpu))
            {
                Some(Err(e)) if e.raw_os_error() == Some(libc::EINVAL) => {
                    switches = false;
                    sys::perf_event_open(&attr(ids.enter, tasks), pid, cpu)?
                }
                Some(opened) => opened?,
                None => sys::perf_event_open(&attr(ids.enter, tasks), pid, cpu)?,
            };
            let ring = map_ring(&enter, pages)?;
            let exit = if calls.is_some() {
                None
            } else {
                let exit = sys::perf_event_open(&attr(ids.exit, 0), pid, cpu)?;
                sys::set_filter(&enter, &filter)?;
                sys::set_filter(&exit, &filter)?;
                sys::set_output(&exit, &enter)?;
                Some(exit)
            };
            cpus.push(CpuEvents {
                cpu,
                enter,
                _exit: exit,
                ring,
            });
        }
        let wakings = if switches {
            open_wakings(pid, ids, &cpus)
        } else {
            Vec::new()
        };
        let faults = super::faults::open(pid, &cpus);
        if let Some(p) = probes {
            let rings: Vec<(i32, &OwnedFd)> = cpus.iter().map(|c| (c.cpu, &c.enter)).collect();
            p.output_to(&rings)?;
        }
        // The ring's programs count the calls for themselves.
        let all = match calls {
            Some(_) => None,
            None => count_calls(pid, ids),
        };
        Ok(Session {
            cpus,
            ids,
            all,
            switches,
            calls,
            wakings,
            faults,
        })
    }

    /// Drains every CPU's buffer until `done` is set and a last drain finds nothing, on a
    /// thread of its own; the records come back, each CPU's in its order.
    pub fn read_until(self, done: Arc<AtomicBool>) -> std::thread::JoinHandle<Drained> {
        std::thread::spawn(move || {
            let Session {
                mut cpus,
                ids,
                all,
                switches,
                mut calls,
                wakings,
                mut faults,
            } = self;
            // The ring's records are whole calls; perf's, an entry and an exit.
            let cap = max_records(if calls.is_some() { 1 } else { 2 });
            let mut d = Drained {
                switches,
                wakes: !wakings.is_empty(),
                faults: !faults.is_empty(),
                ..Default::default()
            };
            // The ring's calls and the faults go to `d.raw` as the perf rings' records do,
            // capped alike; both rings are polled (they wake no one): every 2 ms where the
            // calls are in the ring, else at each of the perf rings' wake-ups (at most 50 ms
            // apart: a CPU's fault ring holds 8,192 faults, 160,000 a second).
            let raw = std::cell::RefCell::new(Vec::new());
            let faults_lost = std::cell::Cell::new(0u64);
            let mut fault_bytes = Vec::new();
            let polled = calls.is_some() || !faults.is_empty();
            let calls_in_ring = calls.is_some();
            d.lost = {
                let mut from_rings = || {
                    let mut took = calls.as_mut().map_or(0, |c| c.drain(&mut raw.borrow_mut()));
                    for (_, ring) in &mut faults {
                        fault_bytes.clear();
                        took += ring.drain(&mut fault_bytes);
                        let lost = super::faults::parse(&fault_bytes, &mut raw.borrow_mut());
                        faults_lost.set(faults_lost.get() + lost);
                    }
                    took
                };
                pump(
                    &mut cpus,
                    &done,
                    (
                        polled.then_some(&mut from_rings as &mut dyn FnMut() -> usize),
                        if calls_in_ring { 2 } else { 50 },
                    ),
                    |bytes| {
                        let mut raw = raw.borrow_mut();
                        let side = (&mut d.seen, &mut d.switched, &mut d.woken);
                        let lost = parse(bytes, ids, &mut raw, side);
                        let over = raw.len().saturating_sub(cap)
                            + d.seen.len().saturating_sub(cap)
                            + d.switched.len().saturating_sub(SWITCHES_PER_RECORD * cap)
                            + d.woken.len().saturating_sub(cap);
                        raw.truncate(cap);
                        d.seen.truncate(cap);
                        d.switched.truncate(SWITCHES_PER_RECORD * cap);
                        d.woken.truncate(cap);
                        d.capped += over as u64;
                        lost
                    },
                )
            };
            // Closing the last event on a tracepoint waits for a grace period (~40 ms here):
            // on a thread of its own, while the records are decoded.
            if !wakings.is_empty() {
                std::thread::spawn(move || drop(wakings));
            }
            d.lost += faults_lost.get();
            drop(faults);
            d.raw = raw.into_inner();
            if d.raw.len() > cap {
                d.capped += (d.raw.len() - cap) as u64;
                d.raw.truncate(cap);
            }
            d.syscalls = match calls {
                Some(c) => {
                    let counted = c.finish();
                    d.lost += counted.lost;
                    d.untracked = counted.untracked;
                    d.unfinished = counted.unfinished;
                    Some(counted.syscalls)
                }
                None => all.and_then(|fd| {
                    let mut b = [0u8; 8];
                    matches!(rustix::io::read(&fd, &mut b), Ok(8)).then(|| u64::from_ne_bytes(b))
                }),
            };
            d
        })
    }
}

/// A counter of every system call `pid` and its tasks make: counting, not sampling — no
/// records, a number read at the end (the tasks' counts are added to it as they end).
fn count_calls(pid: i32, ids: Tracepoints) -> Option<OwnedFd> {
    let count = PerfAttr {
        type_: PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<PerfAttr>() as u32,
        config: ids.enter,
        flags: DISABLED | INHERIT | ENABLE_ON_EXEC,
        ..Default::default()
    };
    sys::perf_event_open(&count, pid, -1).ok()
}

/// `sched_waking` on every CPU for `pid` and the tasks it starts, each sent to its CPU's ring:
/// who woke whom among the program's tasks (the event runs in the waker's context). None
/// where the kernel has no such tracepoint or perf refuses it: the trace then holds no
/// wake-ups, and says so.
fn open_wakings(pid: i32, ids: Tracepoints, cpus: &[CpuEvents]) -> Vec<OwnedFd> {
    let Some((id, _)) = ids.waking else {
        return Vec::new();
    };
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

/// The tracepoints' filter that keeps the watched calls.
fn watched_filter() -> String {
    Call::numbers()
        .map(|n| format!("id == {n}"))
        .collect::<Vec<_>>()
        .join(" || ")
}

/// Drains every CPU's buffer into `parse` (which returns the records the kernel lost), and
/// `other` (buffers that wake no one, polled each round; it returns the bytes it took), until
/// `done` is set and a last drain finds nothing; then stops the events. A round waits for
/// a buffer past its watermark, at most `wait_ms` (2 where the calls are in a buffer that
/// wakes no one). Returns the count of lost records.
pub fn pump(
    cpus: &mut [CpuEvents],
    done: &AtomicBool,
    (mut other, wait_ms): (Option<&mut dyn FnMut() -> usize>, i64),
    mut parse: impl FnMut(&[u8]) -> u64,
) -> u64 {
    let mut lost = 0u64;
    let mut bytes = Vec::with_capacity(1 << 20);
    loop {
        let finishing = done.load(Ordering::Acquire);
        let mut took = 0;
        for c in cpus.iter_mut() {
            bytes.clear();
            took += c.ring.drain(&mut bytes);
            lost += parse(&bytes);
        }
        if let Some(f) = other.as_mut() {
            took += f();
        }
        if finishing && took == 0 {
            break;
        }
        if took == 0 {
            wait_readable(cpus, wait_ms);
        }
    }
    for c in cpus.iter() {
        let _ = sys::enable(&c.enter, false);
        if let Some(e) = &c._exit {
            let _ = sys::enable(e, false);
        }
    }
    lost
}

/// A ring as large as allowed: `pages` (RING_PAGES for a capture's samples), halved while the
/// locked-memory limit refuses.
pub fn map_ring(event: &OwnedFd, pages: usize) -> io::Result<Ring> {
    let mut pages = pages;
    loop {
        match Ring::map(event, pages) {
            Ok(r) => return Ok(r),
            Err(e) if e.raw_os_error() == Some(libc::EPERM) && pages > 8 => pages /= 2,
            Err(e) => return Err(e),
        }
    }
}

/// Waits up to `ms` for any buffer to pass its watermark.
fn wait_readable(cpus: &[CpuEvents], ms: i64) {
    let mut fds: Vec<rustix::event::PollFd> = cpus
        .iter()
        .map(|c| rustix::event::PollFd::new(&c.enter, rustix::event::PollFlags::IN))
        .collect();
    let _ = rustix::event::poll(
        &mut fds,
        Some(&rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: ms * 1_000_000,
        }),
    );
}

pub fn online_cpus() -> io::Result<Vec<i32>> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online")?;
    let mut cpus = Vec::new();
    for part in text.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (i32, i32) = (
            a.parse().map_err(io::Error::other)?,
            b.parse().map_err(io::Error::other)?,
        );
        cpus.extend(a..=b);
    }
    Ok(cpus)
}

pub const RECORD_LOST: u32 = 2;
const RECORD_COMM: u32 = 3;
const RECORD_EXIT: u32 = 4;
const RECORD_FORK: u32 = 7;
pub const RECORD_SAMPLE: u32 = 9;
const MISC_COMM_EXEC: u16 = 1 << 13;
const RECORD_SWITCH: u32 = 14;
const MISC_SWITCH_OUT: u16 = 1 << 13;
/// Out while still runnable (since Linux 4.17; before, every switch out reads as asleep).
const MISC_SWITCH_OUT_PREEMPT: u16 = 1 << 14;

/// Parses whole perf records into `out` (and the path probes' into `seen`); returns the count
/// of records the kernel lost.
fn parse(
    bytes: &[u8],
    ids: Tracepoints,
    out: &mut Vec<Raw>,
    (seen, switched, woken): (
        &mut Vec<super::bpf::Seen>,
        &mut Vec<Switch>,
        &mut Vec<Waking>,
    ),
) -> u64 {
    let mut lost = 0;
    for (kind, misc, r) in records(bytes) {
        let size = r.len();
        match kind {
            RECORD_SAMPLE if size >= 32 => {
                let (pid, tid, t) = (u32_at(r, 8), u32_at(r, 12), u64_at(r, 16));
                let raw = sample_raw(r);
                if let Some(w) = waking(ids, t, tid, raw) {
                    woken.extend(w);
                } else if let Some(s) = super::bpf::parse(t, tid, raw) {
                    seen.push(s);
                } else if raw.len() >= 24 {
                    let tp = u16::from_ne_bytes([raw[0], raw[1]]) as u64;
                    // The tracepoint's id is a long; the calls' numbers fit an i32.
                    let nr = u64_at(raw, 8) as i32;
                    if tp == ids.enter && raw.len() >= 64 {
                        let mut args = [0u64; 6];
                        for (i, a) in args.iter_mut().enumerate() {
                            *a = u64_at(raw, 16 + 8 * i);
                        }
                        out.push(Raw::Enter {
                            t,
                            pid,
                            tid,
                            nr,
                            args,
                        });
                    } else if tp == ids.exit {
                        let ret = u64_at(raw, 16) as i64;
                        out.push(Raw::Exit { t, tid, nr, ret });
                    }
                }
            }
            RECORD_FORK if size >= 8 + 16 + 8 => out.push(Raw::Fork {
                t: u64_at(r, 24),
                pid: u32_at(r, 8),
                ppid: u32_at(r, 12),
                tid: u32_at(r, 16),
                ptid: u32_at(r, 20),
            }),
            RECORD_EXIT if size >= 8 + 16 + 8 => out.push(Raw::End {
                t: u64_at(r, 24),
                tid: u32_at(r, 16),
            }),
            RECORD_COMM if misc & MISC_COMM_EXEC != 0 && size >= 32 => out.push(Raw::Exec {
                // sample_id_all: the record ends with pid, tid and time.
                t: u64_at(r, size - 8),
                pid: u32_at(r, 8),
            }),
            // sample_id_all: pid, tid, time.
            RECORD_SWITCH if size >= 24 => switched.push(Switch {
                t: u64_at(r, 16),
                tid: u32_at(r, 12),
                out: misc & MISC_SWITCH_OUT != 0,
                preempted: misc & MISC_SWITCH_OUT_PREEMPT != 0,
            }),
            RECORD_LOST if size >= 24 => lost += u64_at(r, 16),
            _ => {}
        }
    }
    lost
}

/// A `sched_waking` sample's wake-up: Some(None) for one the records leave out (made in an
/// interrupt, whatever task it interrupted, or a task waking itself); None: not such a sample.
fn waking(ids: Tracepoints, t: u64, by: u32, raw: &[u8]) -> Option<Option<Waking>> {
    let (id, at) = ids.waking?;
    if raw.len() < at + 4 || u64::from(u16::from_ne_bytes([raw[0], raw[1]])) != id {
        return None;
    }
    // common_flags: in a hard or soft interrupt, or an NMI.
    const IN_INTERRUPT: u8 = 0x08 | 0x10 | 0x40;
    let tid = u32_at(raw, at);
    Some((raw[2] & IN_INTERRUPT == 0 && tid != by).then_some(Waking { t, by, tid }))
}

/// The tracepoints' ids (tracefs read, or mounted for a moment where it is not).
pub fn known() -> io::Result<Tracepoints> {
    tracepoints().map_err(|e| io::Error::other(format!("the raw_syscalls tracepoints: {e}")))
}

/// Whether perf may open events on the tracepoints here (root, or perf_event_paranoid low
/// enough): the calls as perf's samples need it, the eBPF ring does not (its programs are on
/// the raw tracepoints, and perf's events are software ones). Opening one and closing it
/// costs ~50 ms here (the close waits for the tracepoint's grace period).
pub fn allowed(ids: Tracepoints) -> io::Result<()> {
    let attr = PerfAttr {
        type_: PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<PerfAttr>() as u32,
        config: ids.enter,
        sample_period: 1,
        flags: DISABLED,
        ..Default::default()
    };
    sys::perf_event_open(&attr, 0, -1)
        .map(drop)
        .map_err(|e| io::Error::other(format!("perf_event_open on a tracepoint: {e}")))
}
