//! What a trace says about its program's I/O (`iogauge trace stats`): per file, the calls,
//! bytes, I/O sizes, how sequential each direction is, the sync calls and how the file was
//! opened; per thread, the time spent in recorded calls (busy) and between them (think).
//! Pure: a function of a [`Recording`].

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::recording::{Event, NO_FILE, Op, Recording, flag};

/// A trace's figures.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    pub command: Vec<String>,
    pub method: String,
    pub duration_ns: u64,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<i32>,
    /// Calls by operation (fio-like words: read, write, fsync…).
    pub calls: BTreeMap<String, u64>,
    pub files: Vec<FileStats>,
    pub threads: Vec<ThreadStats>,
    /// Completeness: calls perf dropped, half-seen calls, calls not on storage, calls on
    /// descriptors the trace could not tie to a file.
    pub lost: u64,
    /// Records past the recorder's memory cap.
    pub capped: u64,
    /// Tasks the program started that the capture could not follow.
    pub untracked_tasks: u64,
    /// Processes that ran a 32-bit program (their calls not decoded).
    pub processes_32bit: u64,
    pub unmatched: u64,
    pub other_calls: u64,
    pub unknown_fd_calls: u64,
    /// io_uring_enter and io_submit calls whose I/O is not in the trace.
    pub async_calls: u64,
    /// Native AIO I/Os the trace holds (each with its submission and reaping), and those
    /// submitted that it does not.
    pub async_ios: u64,
    pub async_unseen: u64,
    /// Syncs on no file of the trace: a directory's fsync or fdatasync, a file system's
    /// syncfs, sync's of them all — how many, and the time in them (ns).
    pub syncs_on_no_file: u64,
    pub syncs_on_no_file_ns: u64,
    pub overhead_pct: Option<f64>,
    /// The capture's cost per watched call, and what of it lies between the recorded calls
    /// (`Overhead::between_calls_ns`), ns.
    pub overhead_per_call_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead_between_calls_ns: Option<f64>,
    /// System calls the capture does not watch, counted (they cost the program too).
    pub unwatched_calls: u64,
    /// The program's signals to a process group (`kill 0`, `kill -PGID`; each a tell to the
    /// group's processes alive then, in their `signalled`), and those to a task of the
    /// program that had ended and been waited for (kill's ESRCH). None: the trace does not
    /// hold the signals.
    pub signals_to_groups: Option<u64>,
    pub signals_late: Option<u64>,
    /// Signals sent through a pidfd whose process the trace cannot tell (clone's
    /// CLONE_PIDFD): not among the tells.
    pub signals_unfollowed: Option<u64>,
    /// The program's major page faults: I/O through its mappings, which no call shows (None:
    /// the trace does not hold them — recorded under ptrace, or by an older iogauge).
    pub faults: Option<FaultStats>,
}

/// Major page faults, all the program's: how many, the time its threads slept in them, and
/// how many lay outside every mapping of a file the trace saw (the program's own executable,
/// memory swapped back in).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FaultStats {
    pub faults: u64,
    pub asleep_ns: u64,
    pub outside_files: u64,
}

/// One file's figures.
#[derive(Debug, Clone, Serialize)]
pub struct FileStats {
    pub path: String,
    pub kind: String,
    pub size_at_open: Option<u64>,
    pub extent: u64,
    pub removed: bool,
    pub opens: u64,
    /// Opens that found nothing at the path (ENOENT): the program looked for the file.
    pub not_found: u64,
    pub reads: Direction,
    pub writes: Direction,
    /// fsync, fdatasync and sync_file_range calls.
    pub syncs: u64,
    pub sync_ns: u64,
    /// Share of reads and writes made through O_DIRECT, and through O_DSYNC/O_SYNC (the
    /// descriptor's or the call's), percent.
    pub direct_pct: f64,
    pub sync_write_pct: f64,
    /// Calls that returned an error (looks that found nothing are `not_found`).
    pub errors: u64,
    /// Its pages read in by major page faults through the program's mappings, and the time
    /// the program slept in those (0 where the trace does not hold its faults).
    pub major_faults: u64,
    pub fault_asleep_ns: u64,
    /// The advice the program gave on its mappings of it (madvise: "random", "sequential",
    /// "willneed"…), each once, in the order first given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub advice: Vec<String>,
}

impl FileStats {
    /// The program only looked for it and never found it there.
    pub fn only_looked_for(&self) -> bool {
        self.opens == self.not_found
            && self.reads.calls + self.writes.calls + self.syncs == 0
            && self.size_at_open.is_none()
    }
}

/// Reads or writes of one file.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Direction {
    pub calls: u64,
    pub bytes: u64,
    /// Time in these calls, ns.
    pub busy_ns: u64,
    /// Percent of calls that began where the previous one of this direction ended.
    pub sequential_pct: f64,
    /// The most common sizes asked for: (bytes, calls), largest count first, at most 5.
    pub sizes: Vec<(u64, u64)>,
}

/// One thread's figures.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadStats {
    pub tid: u32,
    pub pid: u32,
    pub calls: u64,
    /// Time inside recorded calls, and the rest of its recorded span (first call's issue to
    /// last call's completion), ns.
    pub busy_ns: u64,
    pub think_ns: u64,
    /// The recorded thread that created it (through tasks that made no recorded call), where
    /// the capture saw it.
    pub parent: Option<u32>,
    /// Its time off the CPU (perf captures): how much of the think time it slept or waited
    /// for a CPU, and how many of its calls slept.
    pub off_cpu: Option<crate::trace::recording::OffCpu>,
    /// Its sleeps that another task of the program ended (None: the trace does not say who
    /// woke whom).
    pub woken: Option<Woken>,
    /// The signals other tasks of the program sent it (None: the trace does not hold them),
    /// and those sent it after it had ended and been waited for (kill's ESRCH).
    pub signalled: Option<u64>,
    pub signalled_late: Option<u64>,
}

/// A thread's sleeps that the program's own tasks ended: how many, how long it slept in
/// them, and the task that ended most of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Woken {
    pub sleeps: u64,
    pub asleep_ns: u64,
    pub most_by: Option<u32>,
}

/// Each thread's [`Woken`], where the trace knows who woke whom.
pub fn woken(r: &Recording) -> Option<HashMap<u32, Woken>> {
    if !r.footer.wakes_seen {
        return None;
    }
    let mut by: HashMap<u32, HashMap<u32, u64>> = HashMap::new();
    let mut out: HashMap<u32, Woken> = HashMap::new();
    for w in &r.footer.wakes {
        let k = out.entry(w.tid).or_default();
        k.sleeps += 1;
        k.asleep_ns = k.asleep_ns.saturating_add(w.asleep_ns);
        *by.entry(w.tid).or_default().entry(w.by).or_default() += 1;
    }
    for (tid, k) in &mut out {
        k.most_by = by[tid]
            .iter()
            .max_by_key(|(b, n)| (**n, std::cmp::Reverse(**b)))
            .map(|(b, _)| *b);
    }
    Some(out)
}

#[derive(Default)]
struct Acc {
    dir: [Direction; 2],
    sizes: [HashMap<u64, u64>; 2],
    seq: [u64; 2],
    next: [Option<u64>; 2],
    opens: u64,
    not_found: u64,
    syncs: u64,
    sync_ns: u64,
    direct: u64,
    dsync_writes: u64,
    errors: u64,
    faults: u64,
    fault_asleep_ns: u64,
    advice: Vec<String>,
}

/// One thread's figures: (its process, calls, time in them, first issue, last completion).
fn thread_stats(
    r: &Recording,
    woken: Option<&HashMap<u32, Woken>>,
    tid: u32,
    (pid, n, busy, first, last): (u32, u64, u64, u64, u64),
) -> ThreadStats {
    let info = r.footer.threads.iter().find(|t| t.tid == tid);
    ThreadStats {
        tid,
        pid,
        calls: n,
        busy_ns: busy,
        think_ns: (last - first).saturating_sub(busy),
        parent: info.and_then(|t| t.parent),
        off_cpu: info.and_then(|t| t.off_cpu),
        woken: woken.map(|w| w.get(&tid).copied().unwrap_or_default()),
        signalled: r
            .footer
            .signals_seen
            .then(|| r.footer.signals.iter().filter(|s| s.tid == tid).count() as u64),
        signalled_late: r.footer.signals_seen.then(|| {
            let late = r.footer.kills.iter().flat_map(|k| &k.late);
            late.filter(|s| s.tid == tid).count() as u64
        }),
    }
}

/// A read's or write's figures added to its file's.
fn add_io(a: &mut Acc, e: &crate::trace::recording::Event) {
    let w = usize::from(e.op == Op::Write);
    let d = &mut a.dir[w];
    d.calls += 1;
    d.bytes = d.bytes.saturating_add(e.bytes());
    d.busy_ns = d.busy_ns.saturating_add(e.dur);
    *a.sizes[w].entry(e.len).or_default() += 1;
    if e.flags & flag::OFFSET_UNKNOWN == 0 {
        if a.next[w] == Some(e.offset) {
            a.seq[w] += 1;
        }
        a.next[w] = Some(e.offset.saturating_add(e.bytes()));
    }
    if e.flags & flag::DIRECT != 0 {
        a.direct += 1;
    }
    if w == 1 && e.flags & (flag::DSYNC | flag::SYNC) != 0 {
        a.dsync_writes += 1;
    }
}

/// A call on no file of the trace: an io_submit or io_uring_enter whose I/O the trace does not
/// hold counted in `async_calls`, a sync (a directory's, a file system's) in `syncs` (calls,
/// ns in them).
fn on_no_file(e: &Event, async_calls: &mut u64, syncs: &mut (u64, u64)) {
    *async_calls +=
        u64::from(matches!(e.op, Op::AioSubmit | Op::UringEnter) && e.io_unseen() && e.arg > 0);
    if e.op.is_sync() {
        syncs.0 += 1;
        syncs.1 = syncs.1.saturating_add(e.dur);
    }
}

pub fn stats(r: &Recording) -> Stats {
    let mut calls: BTreeMap<String, u64> = BTreeMap::new();
    let mut acc: Vec<Acc> = r.footer.files.iter().map(|_| Acc::default()).collect();
    let mut threads: BTreeMap<u32, (u32, u64, u64, u64, u64)> = BTreeMap::new();
    let pid_of: HashMap<u32, u32> = r.footer.threads.iter().map(|t| (t.tid, t.pid)).collect();
    let (mut async_calls, mut async_ios) = (0, 0);
    let mut syncs_on_no_file = (0u64, 0u64);
    for e in &r.events {
        async_ios += u64::from(e.is_async_io());
        let word = if e.is_sqpoll() {
            "sqpoll_batch"
        } else {
            e.op.word()
        };
        *calls.entry(word.to_string()).or_default() += 1;
        let th = threads.entry(e.tid).or_insert((
            pid_of.get(&e.tid).copied().unwrap_or(e.tid),
            0,
            0,
            e.t,
            e.t,
        ));
        th.1 += 1;
        // An asynchronous I/O is in flight, not its thread's time in a call.
        if !e.is_async_io() {
            th.2 = th.2.saturating_add(e.dur);
            th.4 = th.4.max(e.done_ns());
        }
        if e.file == NO_FILE {
            on_no_file(e, &mut async_calls, &mut syncs_on_no_file);
            continue;
        }
        let a = &mut acc[e.file as usize];
        // A look that found nothing is counted as such, not as an error.
        if e.result < 0 && e.op != Op::Open {
            a.errors += 1;
        }
        match e.op {
            Op::Open => {
                a.opens += 1;
                a.not_found += u64::from(e.result < 0);
            }
            op if op.is_sync() => {
                a.syncs += 1;
                a.sync_ns = a.sync_ns.saturating_add(e.dur);
            }
            Op::Read | Op::Write => add_io(a, e),
            _ => {}
        }
    }
    let faults = fault_stats(r, &mut acc);
    let files = r
        .footer
        .files
        .iter()
        .zip(acc)
        .map(|(f, a)| file_stats(f, a))
        .collect();
    let woken = woken(r);
    // Where the trace holds the signals: its kills (None in it: none made).
    let kills = r.footer.signals_seen.then_some(r.footer.kills.as_ref());
    let overhead = r.footer.overhead.as_ref();
    Stats {
        command: r.header.command.clone(),
        method: r.header.method.clone(),
        duration_ns: r.footer.duration_ns,
        exit_code: r.footer.exit_code,
        exit_signal: r.footer.exit_signal,
        calls,
        files,
        threads: threads
            .into_iter()
            .map(|(tid, figures)| thread_stats(r, woken.as_ref(), tid, figures))
            .collect(),
        lost: r.footer.lost,
        unmatched: r.footer.unmatched,
        other_calls: r.footer.other_calls,
        unknown_fd_calls: r.footer.unknown_fd_calls,
        capped: r.footer.capped,
        untracked_tasks: r.footer.untracked_tasks,
        processes_32bit: r.footer.processes_32bit,
        async_calls,
        async_ios,
        async_unseen: r.footer.aio_unseen,
        syncs_on_no_file: syncs_on_no_file.0,
        syncs_on_no_file_ns: syncs_on_no_file.1,
        overhead_pct: overhead.map(|o| o.added_pct),
        overhead_per_call_ns: overhead.map(|o| o.per_call_ns),
        overhead_between_calls_ns: overhead.and_then(|o| o.between_calls_ns),
        unwatched_calls: overhead.map_or(0, |o| o.unwatched_calls),
        signals_to_groups: kills.map(|k| k.map_or(0, |k| k.to_groups.len() as u64)),
        signals_late: kills.map(|k| k.map_or(0, |k| k.late.len() as u64)),
        signals_unfollowed: kills.map(|k| k.map_or(0, |k| k.unfollowed)),
        faults,
    }
}

/// The trace's major page faults, in all and on each file (None: the trace does not hold
/// them).
fn fault_stats(r: &Recording, acc: &mut [Acc]) -> Option<FaultStats> {
    let held = r.footer.faults.as_ref()?;
    let mut all = FaultStats::default();
    for f in held {
        all.faults += 1;
        all.asleep_ns = all.asleep_ns.saturating_add(f.asleep_ns);
        match acc.get_mut(f.file as usize) {
            Some(a) => {
                a.faults += 1;
                a.fault_asleep_ns = a.fault_asleep_ns.saturating_add(f.asleep_ns);
            }
            None => all.outside_files += 1,
        }
    }
    for a in r.footer.advice.iter().flatten() {
        if let Some(acc) = acc.get_mut(a.file as usize) {
            let name = advice_name(a.advice);
            if !acc.advice.contains(&name) {
                acc.advice.push(name);
            }
        }
    }
    Some(all)
}

/// madvise's advice by its name.
fn advice_name(advice: u32) -> String {
    let name = match advice {
        0 => "normal",
        1 => "random",
        2 => "sequential",
        3 => "willneed",
        4 => "dontneed",
        8 => "free",
        9 => "remove",
        14 => "hugepage",
        15 => "nohugepage",
        20 => "cold",
        21 => "pageout",
        22 => "populate_read",
        23 => "populate_write",
        n => return format!("advice {n}"),
    };
    name.to_string()
}

fn file_stats(f: &super::recording::FileInfo, mut a: Acc) -> FileStats {
    for w in 0..2 {
        let d = &mut a.dir[w];
        d.sequential_pct = pct(a.seq[w], d.calls.saturating_sub(1));
        let mut sizes: Vec<(u64, u64)> = a.sizes[w].drain().collect();
        sizes.sort_unstable_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        sizes.truncate(5);
        d.sizes = sizes;
    }
    let [reads, writes] = a.dir;
    FileStats {
        path: f.path.clone(),
        kind: f.kind.clone(),
        size_at_open: f.size_at_open,
        extent: f.extent,
        removed: f.removed,
        opens: a.opens,
        not_found: a.not_found,
        direct_pct: pct(a.direct, reads.calls + writes.calls),
        sync_write_pct: pct(a.dsync_writes, writes.calls),
        reads,
        writes,
        syncs: a.syncs,
        sync_ns: a.sync_ns,
        errors: a.errors,
        major_faults: a.faults,
        fault_asleep_ns: a.fault_asleep_ns,
        advice: a.advice,
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Whether a read of `bytes` taking `ns` looks served from memory: faster than 5 µs plus
/// 4 GiB/s (a copy from the page cache runs several GiB/s; a read that waits for a device
/// costs tens of µs at least).
pub fn from_memory(ns: u64, bytes: u64) -> bool {
    (ns as f64) < 5_000.0 + bytes as f64 / (4u64 << 30) as f64 * 1e9
}

/// Per file of the trace: whether it existed, was read through the page cache, and its reads
/// say it was cached when the program ran. Never for a file on a file system held in memory
/// (tmpfs: its reads say nothing of a cache).
///
/// Where the capture saw the scheduler (`Footer::knows_sleeps`), a file read cold has a read
/// that slept — its first at least, waiting for the device to fill the page it wanted — and a
/// cached one has none: a read of cached pages copies them and never waits. That holds whatever
/// the device's read-ahead: with a window of 8 MiB (this project's virtio disk) read-ahead
/// keeps ahead of a program reading a 24 MiB file in 4 KiB calls, and 2 of its 5,187 reads
/// slept; 38 took longer than a copy from memory (they started the next read-ahead), few
/// enough that the timing rule below took the file for cached in some recordings and not in
/// others.
///
/// Without the scheduler's view (ptrace, older traces), by time: more than one read in 256
/// slower than a copy from memory (`from_memory`) says cold — one read in each read-ahead
/// window waits for the device where the program reads faster than the device fills the
/// window, 1 in 32 for 4 KiB reads of a 128 KiB window; a program slower than its device
/// with a large window can look cached.
///
/// A file with a major page fault (`Footer::faults`) was not: the kernel read storage for it.
pub fn read_from_memory(r: &Recording) -> Vec<bool> {
    let sleeps = r.footer.knows_sleeps();
    // Per file: reads, and those that waited for a device.
    let mut acc = vec![(0u64, 0u64); r.footer.files.len()];
    for e in r.events.iter().filter(|e| {
        e.op == Op::Read && e.result > 0 && e.flags & flag::DIRECT == 0 && e.file != NO_FILE
    }) {
        let a = &mut acc[e.file as usize];
        a.0 += 1;
        a.1 += u64::from(if sleeps {
            e.flags & flag::SLEPT != 0
        } else {
            !from_memory(e.dur, e.result as u64)
        });
    }
    // A major page fault read storage: its file was not all in memory.
    for f in r
        .footer
        .faults
        .iter()
        .flatten()
        .filter(|f| f.file != NO_FILE)
    {
        if let Some(a) = acc.get_mut(f.file as usize) {
            a.1 = u64::MAX;
        }
    }
    let allowed = |n: u64| if sleeps { 0 } else { n / 256 };
    r.footer
        .files
        .iter()
        .zip(acc)
        .map(|(f, (n, waited))| {
            f.size_at_open.is_some() && !f.in_memory && n > 0 && waited <= allowed(n)
        })
        .collect()
}
