//! iogauge's trace format, version 1: what `iogauge record` writes and `trace`, `replay` and
//! `predict` read. A file is the magic `IOGTRACE`, the version (u32, little-endian), then one
//! zlib stream holding: the header (u32 length + JSON), the event count (u64), the events (56
//! bytes each, little-endian, in issue order), and the footer (u32 length + JSON: the files,
//! threads and what the capture saw). The layout of an event is in [`Event`]; docs/trace.md
//! describes all of it for readers in other languages.

use std::io::{self, Read, Write};

use serde::{Deserialize, Serialize};

mod check;
mod mapped;
pub use mapped::{Advice, Fault};

pub const MAGIC: &[u8; 8] = b"IOGTRACE";
pub const VERSION: u32 = 1;
/// Bytes of one encoded event.
pub const EVENT_BYTES: usize = 56;

/// What a recorded call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum Op {
    /// open/openat/openat2/creat: `arg` the open flags, `result` the descriptor.
    Open = 1,
    /// `arg` the descriptor closed.
    Close = 2,
    /// read/pread/readv/preadv(2): `offset`, `len` asked (readv: moved), `result` moved.
    Read = 3,
    Write = 4,
    Fsync = 5,
    Fdatasync = 6,
    /// `offset`, `len` (0: to the end), `arg` its flags.
    SyncFileRange = 7,
    /// `offset`, `len`, `arg` the mode.
    Fallocate = 8,
    /// ftruncate/truncate: `len` the new size.
    Truncate = 9,
    /// lseek: `offset` the new position, `arg` whence.
    Seek = 10,
    /// A file mapped: `offset`, `len`, `arg` prot | flags << 8. One flagged MAP_POPULATE
    /// ([`MAP_POPULATE`]) read the range in before it returned, and is replayed so.
    Mmap = 11,
    Unlink = 12,
    /// The file renamed: it keeps its place in the trace under its new name; `arg` the file of
    /// the trace that name held, which is gone, plus one (0: none, and in traces made before
    /// 2026-12-02).
    Rename = 13,
    /// Native AIO's io_submit: `result` the count submitted, `arg` the count asked, `offset`
    /// the AIO context. Flagged `ASYNC` where the trace holds its I/Os (`len` of them: the
    /// events flagged `ASYNC` that follow it in its thread).
    AioSubmit = 14,
    /// io_getevents (and io_pgetevents): `result` the count completed, `arg` the least asked
    /// for, `offset` the context; flagged `ASYNC` where it reaped I/Os the trace holds (`len`
    /// of them).
    AioGetevents = 15,
    /// io_uring_enter: `arg` to_submit, `result` consumed. Flagged `ASYNC` where the trace
    /// holds the requests it submitted (`len` of them: the events flagged `ASYNC` that follow
    /// it in its thread) or requests completed while it ran; `offset` the ring.
    UringEnter = 16,
    /// posix_fadvise: `offset`, `len`, `arg` the advice (4: DONTNEED drops cached pages).
    Fadvise = 17,
    /// syncfs(2) of a descriptor's file system (`file` its file; NO_FILE flagged `DIR`: a
    /// directory's), or, `arg` [`SYNC_ALL`] on NO_FILE, sync(2): every file system's. A
    /// replay syncs the file system its files are on. Since 2026-12-08.
    Syncfs = 18,
}

/// mmap(2)'s MAP_POPULATE in `Op::Mmap`'s `arg` (Linux's flag, 0x8000, past the 8 bits of
/// prot): the mapping's pages read in as the call returned.
pub const MAP_POPULATE: u32 = 0x8000 << 8;

/// `Op::Syncfs`'s `arg` for sync(2), which names no file system: all of them.
pub const SYNC_ALL: u32 = 1;

impl Op {
    /// One past the highest operation's number: the size of a table indexed by operation.
    pub const TABLE: usize = Op::Syncfs as usize + 1;

    pub fn from_u8(v: u8) -> Option<Op> {
        use Op::*;
        Some(match v {
            1 => Open,
            2 => Close,
            3 => Read,
            4 => Write,
            5 => Fsync,
            6 => Fdatasync,
            7 => SyncFileRange,
            8 => Fallocate,
            9 => Truncate,
            10 => Seek,
            11 => Mmap,
            12 => Unlink,
            13 => Rename,
            14 => AioSubmit,
            15 => AioGetevents,
            16 => UringEnter,
            17 => Fadvise,
            18 => Syncfs,
            _ => return None,
        })
    }

    pub fn word(self) -> &'static str {
        use Op::*;
        match self {
            Open => "open",
            Close => "close",
            Read => "read",
            Write => "write",
            Fsync => "fsync",
            Fdatasync => "fdatasync",
            SyncFileRange => "sync_file_range",
            Fallocate => "fallocate",
            Truncate => "truncate",
            Seek => "seek",
            Mmap => "mmap",
            Unlink => "unlink",
            Rename => "rename",
            AioSubmit => "io_submit",
            AioGetevents => "io_getevents",
            UringEnter => "io_uring_enter",
            Fadvise => "fadvise",
            Syncfs => "syncfs",
        }
    }

    /// fsync, fdatasync, sync_file_range and syncfs (sync): the calls that wait for the
    /// device.
    pub fn is_sync(self) -> bool {
        matches!(
            self,
            Op::Fsync | Op::Fdatasync | Op::SyncFileRange | Op::Syncfs
        )
    }

    /// io_submit, io_getevents and io_uring_enter: the calls that submit or wait for I/Os
    /// they do not move themselves.
    pub fn is_async(self) -> bool {
        matches!(self, Op::AioSubmit | Op::AioGetevents | Op::UringEnter)
    }
}

/// Event flags.
pub mod flag {
    /// The descriptor was opened (or set by fcntl) with O_DIRECT.
    pub const DIRECT: u16 = 1;
    /// O_DSYNC on the descriptor, or RWF_DSYNC on the call.
    pub const DSYNC: u16 = 2;
    /// O_SYNC on the descriptor, or RWF_SYNC on the call.
    pub const SYNC: u16 = 4;
    /// O_APPEND (the offset is the file's end as the trace knows it).
    pub const APPEND: u16 = 8;
    /// readv/writev/preadv/pwritev: `len` is what moved (the vectors' total is not seen).
    pub const VECTORED: u16 = 16;
    /// The call named its offset (pread, pwrite, preadv…); without it, the descriptor's
    /// position, which the trace follows.
    pub const POSITIONAL: u16 = 32;
    /// The offset could not be known (a position the trace did not follow): `offset` is 0.
    pub const OFFSET_UNKNOWN: u16 = 64;
    /// open: the call created the file.
    pub const CREATED: u16 = 128;
    /// fsync/fdatasync of a directory (`file` is NO_FILE): a replay syncs its own directory.
    pub const DIR: u16 = 256;
    /// The call slept: its thread gave up the CPU to wait (for the device, a lock, a page).
    /// Set where the capture saw the scheduler (perf); never under ptrace or in older traces.
    pub const SLEPT: u16 = 512;
    /// A read, write, fsync or fdatasync submitted by the io_submit or io_uring_enter before
    /// it in its thread (issued at that call's time; complete at the return of the
    /// io_getevents that reaped it, or at io_uring's completion of the request; `dur` 0 where
    /// none was seen); on io_submit, io_getevents and io_uring_enter, that the trace holds
    /// their I/Os.
    pub const ASYNC: u16 = 1024;
    /// io_uring_enter: not a call the program made but a batch of requests a SQPOLL kernel
    /// thread of its ring took from the submission queue (`tid` is that thread's).
    pub const SQPOLL: u16 = 2048;
}

/// One recorded call. Encoded as t, dur, offset, len (u64), result (i64), tid, file, arg
/// (u32), op (u8), one zero byte, flags (u16): 56 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Issue time: nanoseconds from the trace's start (the program's exec).
    pub t: u64,
    /// Nanoseconds from issue to completion (the call's return).
    pub dur: u64,
    pub offset: u64,
    pub len: u64,
    /// The call's result: bytes moved, a descriptor, 0, or a negative errno.
    pub result: i64,
    pub tid: u32,
    /// Index into the footer's files.
    pub file: u32,
    pub arg: u32,
    pub op: Op,
    pub flags: u16,
}

impl Event {
    /// A 4 KiB call of `op` on file 0 that moved its bytes, at `t` for `dur` ns (tests).
    #[cfg(test)]
    pub fn test(t: u64, dur: u64, tid: u32, op: Op) -> Event {
        Event {
            t,
            dur,
            offset: 0,
            len: 4096,
            result: 4096,
            tid,
            file: 0,
            arg: 0,
            op,
            flags: 0,
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        for v in [self.t, self.dur, self.offset, self.len] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.result.to_le_bytes());
        for v in [self.tid, self.file, self.arg] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.push(self.op as u8);
        out.push(0);
        out.extend_from_slice(&self.flags.to_le_bytes());
    }

    fn decode(b: &[u8; EVENT_BYTES]) -> Result<Event, BadTrace> {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8"));
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4"));
        Ok(Event {
            t: u64_at(0),
            dur: u64_at(8),
            offset: u64_at(16),
            len: u64_at(24),
            result: u64_at(32) as i64,
            tid: u32_at(40),
            file: u32_at(44),
            arg: u32_at(48),
            op: Op::from_u8(b[52])
                .ok_or_else(|| BadTrace(format!("unknown operation {}", b[52])))?,
            flags: u16::from_le_bytes([b[54], b[55]]),
        })
    }

    /// An io_submit, io_getevents or io_uring_enter whose I/Os the trace does not hold (its
    /// recorded time stands for them).
    pub fn io_unseen(&self) -> bool {
        self.op.is_async() && self.flags & flag::ASYNC == 0
    }

    /// A batch of io_uring requests a SQPOLL kernel thread submitted: not a call the program
    /// made.
    pub fn is_sqpoll(&self) -> bool {
        self.op == Op::UringEnter && self.flags & flag::SQPOLL != 0
    }

    /// A read, write or sync an io_submit before it issued (flag `ASYNC`): not a call of its
    /// thread.
    pub fn is_async_io(&self) -> bool {
        self.flags & flag::ASYNC != 0
            && matches!(self.op, Op::Read | Op::Write | Op::Fsync | Op::Fdatasync)
    }

    /// When the call completed, ns: its issue time plus its duration.
    pub fn done_ns(&self) -> u64 {
        self.t.saturating_add(self.dur)
    }

    /// Moved bytes, for reads and writes that succeeded.
    pub fn bytes(&self) -> u64 {
        match self.op {
            Op::Read | Op::Write if self.result > 0 => self.result as u64,
            _ => 0,
        }
    }
}

/// How the trace was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    pub iogauge: String,
    /// The recorded command line.
    pub command: Vec<String>,
    /// Wall-clock start, Unix milliseconds.
    pub started_unix_ms: u64,
    pub host: String,
    /// How the calls were captured, in words.
    pub method: String,
}

/// A file the recorded program touched (regular files and block devices only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileInfo {
    /// The path at first open, absolute (lossless: see `rawpath`).
    pub path: String,
    /// "regular" or "block".
    pub kind: String,
    /// Its size when first opened; None when that open created it.
    pub size_at_open: Option<u64>,
    /// One past the highest byte any call read, wrote, allocated or truncated to.
    pub extent: u64,
    /// Unlinked or renamed away by the program.
    pub removed: bool,
    /// On a file system held in memory (tmpfs, ramfs) when recorded: its reads say nothing of
    /// the page cache. Absent in older traces.
    #[serde(default)]
    pub in_memory: bool,
}

/// A thread of the recorded program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadInfo {
    pub tid: u32,
    pub pid: u32,
    /// Its first and last recorded event's issue time (ns from the start).
    pub first_ns: u64,
    pub last_ns: u64,
    /// The recorded thread that created it (directly, or through tasks that made no recorded
    /// call); None for the program's first thread. Absent in traces before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    /// When it was created and when it ended, ns from the start, where the capture saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub born_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ns: Option<u64>,
    /// Its time off the CPU, from the scheduler's switch records (perf captures; None under
    /// ptrace and in older traces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_cpu: Option<OffCpu>,
}

/// A sleep of a thread that another task of the program ended: `by` woke `tid` at `t` (ns
/// from the start) after `asleep_ns` asleep — the scheduler's `sched_waking`, made by the
/// waker itself (a write to a pipe or socket the thread read, a lock or futex released, a
/// child's exit), never an interrupt's. Written as `[t, tid, by, asleep_ns]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "(u64, u32, u32, u64)", into = "(u64, u32, u32, u64)")]
pub struct Wake {
    pub t: u64,
    pub tid: u32,
    pub by: u32,
    pub asleep_ns: u64,
}

impl From<(u64, u32, u32, u64)> for Wake {
    fn from((t, tid, by, asleep_ns): (u64, u32, u32, u64)) -> Wake {
        Wake {
            t,
            tid,
            by,
            asleep_ns,
        }
    }
}

impl From<Wake> for (u64, u32, u32, u64) {
    fn from(w: Wake) -> Self {
        (w.t, w.tid, w.by, w.asleep_ns)
    }
}

/// What the program's signals say beyond their tells (`Footer::signals`), for a prediction
/// to reach, in a replay, the tasks they would have reached there: the members of a process
/// group alive at a signal to it there that had ended before it when recorded (a helper's
/// `sleep`, killed with the helper where its storage is faster), and a child its parent's
/// trap meant to kill but that had ended just before (`kill $child` failing there).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kills {
    /// Each signal to a process group (a script's `kill 0`, `kill -PGID`), whose tells to the
    /// members alive then are among `Footer::signals`: `[t, by, group]`, ns from the start and
    /// the sender's thread, as its tells.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub to_groups: Vec<(u64, u32, u32)>,
    /// Where there were any, each process of the program (its main thread's id) and its group
    /// when it ended (or when the recording did): `[pid, group]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<(u32, u32)>,
    /// Each signal sent to a task of the program that had ended and been waited for (kill's
    /// ESRCH), as a tell: `[t, tid, by, 0]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub late: Vec<Wake>,
    /// Signals sent through a pidfd the trace cannot follow to its process (one that
    /// clone's CLONE_PIDFD made, written into the program's memory): to whom is not known.
    /// Absent in older traces.
    #[serde(default)]
    pub unfollowed: u64,
}

/// The time a thread was off its CPU outside its calls just before one of its events (since
/// its previous event, or its start): asleep (page faults, calls the trace does not hold,
/// waits for other tasks and timers) and ready to run but waiting for a CPU. The rest of the
/// recorded time between the two calls it ran. Written as `[event, asleep_ns, preempted_ns]`
/// (`event` the index in the trace's events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "(u64, u64, u64)", into = "(u64, u64, u64)")]
pub struct Gap {
    pub event: u64,
    pub asleep_ns: u64,
    pub preempted_ns: u64,
}

impl From<(u64, u64, u64)> for Gap {
    fn from((event, asleep_ns, preempted_ns): (u64, u64, u64)) -> Gap {
        Gap {
            event,
            asleep_ns,
            preempted_ns,
        }
    }
}

impl From<Gap> for (u64, u64, u64) {
    fn from(g: Gap) -> Self {
        (g.event, g.asleep_ns, g.preempted_ns)
    }
}

/// A thread's time off its CPU, as the scheduler's switch records tell it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffCpu {
    /// Its watched calls that slept (each also flagged `SLEPT` where it is a trace event).
    pub calls_slept: u64,
    /// Outside the calls the trace holds: time asleep (page faults, calls not watched or on
    /// pipes, sockets and terminals, waits for other threads and processes) and how many times
    /// it fell asleep. (Traces before 2026-12-03 counted sleeps in calls on pipes and sockets
    /// as the calls', not here.)
    pub think_asleep_ns: u64,
    pub think_sleeps: u64,
    /// Outside its watched calls: time it was ready to run but waited for a CPU.
    pub think_preempted_ns: u64,
}

/// The capture's own cost, measured on this machine at record time: a calibration loop timed
/// with and without the same capture, and that difference times the calls recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    /// Added time per watched call, ns.
    pub per_call_ns: f64,
    /// Added time per call that names a path (they stop the program under ptrace), ns.
    pub per_path_call_ns: f64,
    /// Added time per system call the capture does not watch (under perf each still passes
    /// the tracepoints and their probes), ns, and how many the program made (counted by perf;
    /// 0 under ptrace, where they cost nothing). Absent in older traces.
    #[serde(default)]
    pub per_unwatched_call_ns: f64,
    #[serde(default)]
    pub unwatched_calls: u64,
    /// Estimated time the capture added to the run, ns, and as a share of its run time.
    pub added_ns: u64,
    pub added_pct: f64,
    /// What the capture adds between two recorded calls of a thread (after one's recorded
    /// return, before the next's recorded entry: in the think time), per call, ns, as a
    /// replay's clock counts the rest — it times a call from just before its entry to just
    /// after its return, as the program's own clock would. A closed replay takes it out of
    /// each think time. It can exceed `per_call_ns`: the recorded call leaves out the way
    /// into the kernel and back around the tracepoints, which the replay's clock counts in
    /// the call. Absent in older traces, and where the calibration's trace held too few of
    /// its reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_calls_ns: Option<f64>,
}

/// What the capture saw, after the events.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Footer {
    /// From the program's exec to its last task's end, ns.
    pub duration_ns: u64,
    /// The program's exit code, or the signal that ended it.
    pub exit_code: Option<i32>,
    pub exit_signal: Option<i32>,
    pub files: Vec<FileInfo>,
    pub threads: Vec<ThreadInfo>,
    /// Calls perf had to drop (its buffer full): the trace is incomplete when not 0.
    pub lost: u64,
    /// Records left out past the recorder's memory cap (the calls after it): the trace is
    /// incomplete when not 0. Absent in traces written before it existed.
    #[serde(default)]
    pub capped: u64,
    /// Tasks the program started that the capture could not follow (eBPF's map of the
    /// program's live tasks full): their calls are not in the trace. Absent in older traces.
    #[serde(default)]
    pub untracked_tasks: u64,
    /// Processes that ran a 32-bit program (another ABI's call numbers and arguments, which
    /// the capture does not decode): their calls are not in the trace. Absent in older traces.
    #[serde(default)]
    pub processes_32bit: u64,
    /// Calls seen only half (entry without exit or the reverse), left out.
    pub unmatched: u64,
    /// Watched calls on pipes, sockets, terminals, directories and pseudo files: counted only.
    pub other_calls: u64,
    /// Calls on descriptors the trace could not tie to a file.
    pub unknown_fd_calls: u64,
    /// Native AIO I/Os submitted that the trace does not hold (the capture could not see
    /// them, or they were not on a file of the trace): their io_submit and io_getevents are
    /// in it, as calls. Absent in older traces, which held none.
    #[serde(default)]
    pub aio_unseen: u64,
    /// I/Os the trace holds (flag `ASYNC`) whose completion no io_getevents was seen to reap
    /// (`dur` 0).
    #[serde(default)]
    pub aio_unreaped: u64,
    pub overhead: Option<Overhead>,
    /// Who woke whom among the program's threads, in time order (perf captures that could
    /// see it: `wakes_seen`; absent in older traces and under ptrace).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wakes_seen: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wakes: Vec<Wake>,
    /// The signals one task of the program sent another, in time order, each written as a
    /// wake-up after no sleep (`by` signalled `tid` at `t`, the end of its call; `asleep_ns`
    /// 0): a tell that need not wake its target (one running, or waiting for a CPU, takes it
    /// at its next return to user space, and no wake-up shows it). From the program's kill,
    /// tkill, tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo calls that succeeded, to a task
    /// of the trace (one to a process group: to each of its processes alive then,
    /// `kills`); signals to the sender's own process, SIGCHLD, signal 0,
    /// pidfd_send_signal's and those the kernel raises are left out. Every capture from
    /// 2026-12-06 (`signals_seen`); absent before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub signals_seen: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<Wake>,
    /// What the program's signals say beyond their tells: those to a process group, and
    /// those that came after their target had ended (captures from 2026-12-06; absent
    /// before, and where there were none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kills: Option<Kills>,
    /// Where each thread was off its CPU between its calls, gap by gap: for each event whose
    /// thread was asleep or waiting for a CPU outside its calls since its previous event, the
    /// event and those times (perf captures from 2026-12-05; None under ptrace and in older
    /// traces, which hold the threads' totals alone, `ThreadInfo::off_cpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gaps: Option<Vec<Gap>>,
    /// The program's major page faults, in time order (perf captures from 2026-12-07 that
    /// could count them; None under ptrace and in older traces): the I/O it did through
    /// mappings, which no call shows. Replayed since 2026-12-07 (`runner::replay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<Vec<Fault>>,
    /// The program's madvise calls on mappings of its files, in time order: how the kernel
    /// read around its faults (captures from 2026-12-07 that saw the faults; None elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advice: Option<Vec<Advice>>,
}

impl Footer {
    /// Whether the capture saw the scheduler: its events' `SLEPT` flags say which calls slept
    /// (not under ptrace, nor in older traces).
    pub fn knows_sleeps(&self) -> bool {
        self.threads.iter().any(|t| t.off_cpu.is_some())
    }

    /// What `trace::anchor` follows from one thread's calls to another's: the threads, who
    /// woke whom, and how each think time was spent (where the capture saw them).
    pub fn sleeps(&self) -> (&[ThreadInfo], &[Wake], Option<&[Gap]>) {
        (&self.threads, &self.wakes, self.gaps.as_deref())
    }

    /// What may have told a thread to end: the wake-ups and the signals, in time order (a
    /// signal that woke its target comes after that wake-up, at its call's end; a signal
    /// first in a tie).
    pub fn tells(&self) -> Vec<Wake> {
        let mut all: Vec<Wake> = self.signals.iter().chain(&self.wakes).copied().collect();
        all.sort_by_key(|w| w.t);
        all
    }

    /// What the trace misses, in words (None: nothing it knows of).
    pub fn missing(&self) -> Option<String> {
        missing(
            self.lost,
            self.capped,
            self.unmatched,
            self.untracked_tasks,
            self.processes_32bit,
        )
    }
}

/// What a trace misses, in words, from its counts: records dropped by the kernel, left out
/// past the recorder's memory cap, calls seen only half, tasks not followed, and processes
/// that ran a 32-bit program.
pub fn missing(
    lost: u64,
    capped: u64,
    unmatched: u64,
    untracked: u64,
    processes_32bit: u64,
) -> Option<String> {
    // Each count with its words for one and for more.
    let parts: Vec<String> = [
        (
            lost,
            "record",
            "records",
            " dropped by the kernel (its buffer full)",
        ),
        (
            capped,
            "record",
            "records",
            " past the recorder's memory cap",
        ),
        (unmatched, "call", "calls", " seen only half"),
        (
            untracked,
            "task the program started, and all its",
            "tasks the program started, and all their",
            " calls (the capture's map of the program's live tasks was full)",
        ),
        (
            processes_32bit,
            "process that ran a 32-bit program, and all its calls while it did",
            "processes that ran a 32-bit program, and all their calls while they did",
            " (this build decodes 64-bit programs' calls only)",
        ),
    ]
    .iter()
    .filter(|(n, ..)| *n > 0)
    .map(|(n, one, more, rest)| format!("{n} {}{rest}", if *n == 1 { one } else { more }))
    .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// A trace in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    pub header: Header,
    pub events: Vec<Event>,
    pub footer: Footer,
}

impl Recording {
    /// The trace as its file's bytes.
    pub fn encode(&self) -> io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(64 + self.events.len() * 20);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        let mut z = flate2::write::ZlibEncoder::new(out, flate2::Compression::fast());
        let header = serde_json::to_vec(&self.header).map_err(io::Error::other)?;
        z.write_all(&(header.len() as u32).to_le_bytes())?;
        z.write_all(&header)?;
        z.write_all(&(self.events.len() as u64).to_le_bytes())?;
        let mut buf = Vec::with_capacity(EVENT_BYTES * 4096);
        for chunk in self.events.chunks(4096) {
            buf.clear();
            for e in chunk {
                e.encode(&mut buf);
            }
            z.write_all(&buf)?;
        }
        let footer = serde_json::to_vec(&self.footer).map_err(io::Error::other)?;
        z.write_all(&(footer.len() as u32).to_le_bytes())?;
        z.write_all(&footer)?;
        z.finish()
    }

    /// Reads a trace file's bytes; the error says what is wrong with it.
    pub fn decode(mut r: impl Read) -> Result<Recording, BadTrace> {
        let bad = |s: String| BadTrace(s);
        let mut magic = [0u8; 12];
        r.read_exact(&mut magic)
            .map_err(|_| bad("not an iogauge trace (too short)".into()))?;
        if &magic[..8] != MAGIC {
            return Err(bad("not an iogauge trace (no IOGTRACE magic)".into()));
        }
        let version = u32::from_le_bytes(magic[8..].try_into().expect("4"));
        if version != VERSION {
            return Err(bad(format!(
                "trace format version {version}; this iogauge reads version {VERSION}"
            )));
        }
        let mut z = io::BufReader::new(flate2::read::ZlibDecoder::new(r));
        let cut = |what: &str| bad(format!("the trace is cut short or damaged (in its {what})"));
        let header: Header = read_json(&mut z).map_err(|_| cut("header"))?;
        let mut n = [0u8; 8];
        z.read_exact(&mut n).map_err(|_| cut("event count"))?;
        let n = u64::from_le_bytes(n);
        let mut events = Vec::with_capacity(n.min(1 << 24) as usize);
        let mut b = [0u8; EVENT_BYTES];
        for i in 0..n {
            z.read_exact(&mut b)
                .map_err(|_| cut(&format!("event {i} of {n}")))?;
            events.push(Event::decode(&b).map_err(|e| bad(format!("event {i}: {}", e.0)))?);
        }
        let footer: Footer = read_json(&mut z).map_err(|_| cut("footer"))?;
        let r = Recording {
            header,
            events,
            footer,
        };
        r.check()?;
        Ok(r)
    }
}

/// Why a file is not a readable trace, said for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadTrace(pub String);

/// The file index of events that touch no file of the trace (io_uring_enter, io_submit).
pub const NO_FILE: u32 = u32::MAX;

fn read_json<T: serde::de::DeserializeOwned>(r: &mut impl Read) -> io::Result<T> {
    let mut n = [0u8; 4];
    r.read_exact(&mut n)?;
    let n = u32::from_le_bytes(n) as usize;
    if n > 1 << 30 {
        return Err(io::Error::other("too long"));
    }
    let mut b = vec![0u8; n];
    r.read_exact(&mut b)?;
    serde_json::from_slice(&b).map_err(io::Error::other)
}

#[cfg(test)]
mod tests;
