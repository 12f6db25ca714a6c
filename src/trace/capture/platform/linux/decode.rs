//! From what the kernel and the tracer saw to a trace: system calls paired (entry with exit,
//! per thread), descriptors followed through open, dup, fcntl, fork, exec and close (per
//! process, sharing open file descriptions as the kernel does), positions followed through
//! read, write and lseek so that every read and write has its offset, and calls on anything
//! but a regular file or block device counted and left out.

use std::collections::{HashMap, VecDeque};
use std::os::unix::ffi::OsStrExt;

mod aio;
mod descriptors;
mod faults;
#[cfg(test)]
mod fixture;
mod looks;
mod order;
mod signals;
mod uring;
mod walk;

use super::args::{io_flags, lexical, rwf_flags};
use super::calls::Call;
use super::perf::Raw;
use super::ptrace::{FileKind, PathNote};
use crate::trace::recording::{
    Event, FileInfo, Gap, NO_FILE, Op, SYNC_ALL, ThreadInfo, Wake, flag,
};

/// A descriptor the program had before it started (its standard streams, a redirect).
#[derive(Debug, Clone)]
pub struct Inherited {
    pub fd: i32,
    pub path: Vec<u8>,
    pub kind: FileKind,
    pub size: u64,
    /// Its open flags and position, from /proc's fdinfo.
    pub flags: u64,
    pub pos: u64,
}

/// What decoding produced.
#[derive(Debug, Default)]
pub struct Decoded {
    pub events: Vec<Event>,
    pub files: Vec<FileInfo>,
    pub threads: Vec<ThreadInfo>,
    pub unmatched: u64,
    pub other_calls: u64,
    pub unknown_fd_calls: u64,
    /// Native AIO I/Os submitted that the trace does not hold; those it holds not seen done.
    pub aio_unseen: u64,
    pub aio_unreaped: u64,
    /// Who woke whom among the program's threads (`wakes_seen`: the capture could see it).
    pub wakes_seen: bool,
    pub wakes: Vec<Wake>,
    /// The signals one of the program's tasks sent another (kill, tkill, tgkill, sigqueue,
    /// pidfd_send_signal), each a tell at the call's end with `asleep_ns` 0, in time order;
    /// `kills`, the rest.
    pub signals: Vec<Wake>,
    pub kills: Option<crate::trace::recording::Kills>,
    /// Each thread's time off its CPU between its calls, gap by gap (None: not measured).
    pub gaps: Option<Vec<Gap>>,
    /// The major page faults among the records, in time order (whether the capture could see
    /// them is the capture's to say).
    pub faults: Vec<crate::trace::recording::Fault>,
    /// The madvise calls on mappings of the trace's files, in time order.
    pub advice: Vec<crate::trace::recording::Advice>,
}

/// An open file description: what it refers to, its position and its status flags.
#[derive(Debug, Clone)]
struct Desc {
    /// None: not storage (pipe, socket, pseudo file…).
    file: Option<u32>,
    pos: Option<u64>,
    flags: u64,
    /// A directory's path (for calls relative to it, and fchdir).
    dir: Option<Vec<u8>>,
    /// The process a pidfd names (pidfd_open's): where pidfd_send_signal sends.
    pidfd: Option<u32>,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    desc: usize,
    cloexec: bool,
}

struct Entered {
    t: u64,
    pid: u32,
    nr: i32,
    args: [u64; 6],
}

/// A finished call, as `handle` sees it.
struct Done {
    call: Call,
    t: u64,
    dur: u64,
    pid: u32,
    tid: u32,
    a: [u64; 6],
    ret: i64,
    /// It gave up its CPU to wait (from the switch records).
    slept: bool,
}

#[derive(Default)]
struct State {
    procs: HashMap<u32, HashMap<i32, Slot>>,
    descs: Vec<Desc>,
    live: HashMap<Vec<u8>, u32>,
    sizes: Vec<u64>,
    /// Files known only from looks that found nothing (an open that failed ENOENT): the
    /// first open that succeeds says whether the program made it or found it made.
    looked_only: std::collections::HashSet<u32>,
    notes: HashMap<u32, VecDeque<PathNote>>,
    /// Each process's working directory, followed through chdir, fchdir and fork.
    cwd: HashMap<u32, Vec<u8>>,
    /// The AIO probes' records per thread, in time order.
    aio: HashMap<u32, VecDeque<super::aio::Seen>>,
    /// Submitted AIO I/Os not yet reaped: (process, the iocb's address) → their event.
    in_flight: HashMap<(u32, u64), usize>,
    /// The entry times of the threads with AIO records, in order.
    aio_enters: HashMap<u32, Vec<u64>>,
    /// io_uring: each completion (time, request, result), and each request held (the
    /// record's time, the request, its event).
    uring_done: Vec<(u64, u64, i32)>,
    uring_sent: Vec<(u64, u64, usize)>,
    /// io_uring_enter calls of processes with io_uring records: (process, start, end — ns
    /// from the start — and their event).
    uring_enters: Vec<(u32, u64, u64, usize)>,
    /// Each held request's ring and process, by its event.
    uring_ring: HashMap<usize, u64>,
    uring_pid: HashMap<usize, u32>,
    /// Each ring's registered files, by ring.
    uring_files: HashMap<u64, Vec<uring::Registered>>,
    /// The processes with a SQPOLL thread, and its batches not yet decoded, in time order.
    uring_polled: std::collections::HashSet<u32>,
    uring_batches: VecDeque<uring::Batch>,
    groups: signals::Groups,
    /// Each process's mappings, for its page faults.
    maps: faults::Maps,
    out: Decoded,
    t0: u64,
}

/// Decodes a capture: `raw` in any order (sorted here), `notes` the paths the tracer or the
/// kernel read, `inherited` the root process's descriptors at its start, `t0` the start,
/// `cwd` its working directory then; `sched` the scheduler's records (None: none captured).
pub fn decode(
    mut raw: Vec<Raw>,
    (notes, aio): (Vec<PathNote>, Vec<super::aio::Seen>),
    root: u32,
    inherited: &[Inherited],
    (t0, cwd): (u64, Vec<u8>),
    sched: Option<super::sched::Records>,
) -> Decoded {
    if !raw.is_sorted_by_key(Raw::time) {
        raw.sort_by_key(Raw::time);
    }
    let mut s = State {
        t0,
        ..Default::default()
    };
    for n in notes {
        s.notes.entry(n.tid).or_default().push_back(n);
    }
    for q in s.notes.values_mut() {
        q.make_contiguous().sort_by_key(|n| n.t);
    }
    s.aio_records(aio, &raw);
    s.uring_sqpoll(&raw);
    s.inherit(root, inherited, cwd);
    let wakes_seen = sched.as_ref().is_some_and(|r| r.wakings.is_some());
    s.out.gaps = sched.as_ref().map(|_| Vec::new());
    let mut w = walk::Walk::new(sched);
    // The walk takes the records from the list's end, latest first after the reversal, and
    // gives their room back as it goes: the records and the events they become are never all
    // held at once (the recorder's peak is the records alone, not records and events).
    raw.reverse();
    while let Some(r) = pop_giving_back(&mut raw) {
        w.until(&mut s, r.time());
        // A SQPOLL thread's batches before this record, with the descriptors as they were.
        s.uring_polled_until(r.time());
        w.record(&mut s, r);
    }
    w.until(&mut s, u64::MAX);
    let walk::Walk {
        pending,
        threads,
        kin,
        sched,
        ..
    } = w;
    s.out.unmatched += pending.len() as u64;
    s.uring_polled_until(u64::MAX);
    s.uring_completions();
    s.aio_unreaped();
    order::by_issue_time(
        &mut s.out.events,
        s.out.gaps.as_deref_mut().unwrap_or_default(),
    );
    let mut threads: Vec<ThreadInfo> = threads.into_values().collect();
    for t in &mut threads {
        t.off_cpu = sched.off_cpu(t.tid);
    }
    threads.sort_unstable_by_key(|t| (t.first_ns, t.tid));
    super::family::relate(&mut threads, &kin);
    s.out.threads = threads;
    s.out.wakes_seen = wakes_seen;
    s.out.wakes = sched.wakes;
    for k in &mut s.out.wakes {
        k.t = k.t.saturating_sub(t0);
    }
    s.signals_to_known_tasks(&kin);
    s.out.advice.sort_by_key(|a| a.t);
    s.out
}

/// Records walked between two givings-back of their room (6 MiB of records): shrinking a list
/// this large gives its pages back in place (mremap), without a copy.
const GIVE_BACK: usize = 1 << 16;

/// The list's last item, the room of those taken before it given back every GIVE_BACK.
pub(super) fn pop_giving_back<T>(v: &mut Vec<T>) -> Option<T> {
    let last = v.pop();
    if v.capacity() - v.len() >= GIVE_BACK {
        v.shrink_to_fit();
    }
    last
}

/// A file's kind as the trace names it.
fn kind_word(kind: FileKind) -> &'static str {
    if kind == FileKind::Block {
        "block"
    } else {
        "regular"
    }
}

impl State {
    /// A task record: a new task (its creator's descriptors and directory are its own), an
    /// end, or a new program (its close-on-exec descriptors are gone).
    fn task(&mut self, r: Raw, kin: &mut HashMap<u32, super::family::Kin>) {
        match r {
            Raw::Fork {
                t,
                pid,
                ppid,
                tid,
                ptid,
            } => {
                kin.insert(tid, (Some(ptid), t.saturating_sub(self.t0), None));
                if pid != ppid {
                    let table = self.procs.get(&ppid).cloned().unwrap_or_default();
                    self.procs.insert(pid, table);
                    self.maps.forked(ppid, pid);
                    if let Some(dir) = self.cwd.get(&ppid).cloned() {
                        self.cwd.insert(pid, dir);
                    }
                }
            }
            Raw::End { t, tid } => {
                kin.entry(tid).or_insert((None, 0, None)).2 = Some(t.saturating_sub(self.t0));
            }
            Raw::Exec { pid, .. } => {
                if let Some(t) = self.procs.get_mut(&pid) {
                    t.retain(|_, slot| !slot.cloexec);
                }
                self.maps.exec(pid);
            }
            Raw::Call { .. } | Raw::Enter { .. } | Raw::Exit { .. } | Raw::Fault { .. } => {}
        }
    }

    /// The root process's descriptors and working directory at its start.
    fn inherit(&mut self, root: u32, inherited: &[Inherited], cwd: Vec<u8>) {
        let mut table = HashMap::new();
        for i in inherited {
            let file = matches!(i.kind, FileKind::Regular | FileKind::Block)
                .then(|| self.file(&i.path, i.kind, Some(i.size)));
            let desc = self.desc(file, Some(i.pos), i.flags);
            if i.kind == FileKind::Directory {
                self.descs[desc].dir = Some(i.path.clone());
            }
            table.insert(
                i.fd,
                Slot {
                    desc,
                    cloexec: false,
                },
            );
        }
        self.procs.insert(root, table);
        self.cwd.insert(root, cwd);
    }

    fn file(&mut self, path: &[u8], kind: FileKind, size: Option<u64>) -> u32 {
        if let Some(&id) = self.live.get(path) {
            return id;
        }
        let id = self.out.files.len() as u32;
        self.out.files.push(FileInfo {
            path: crate::rawpath::text(std::path::Path::new(std::ffi::OsStr::from_bytes(path))),
            kind: kind_word(kind).into(),
            size_at_open: size,
            extent: 0,
            removed: false,
            in_memory: false,
        });
        self.sizes.push(size.unwrap_or(0));
        self.live.insert(path.to_vec(), id);
        id
    }

    fn desc(&mut self, file: Option<u32>, pos: Option<u64>, flags: u64) -> usize {
        self.descs.push(Desc {
            file,
            pos,
            flags,
            dir: None,
            pidfd: None,
        });
        self.descs.len() - 1
    }

    fn slot(&self, pid: u32, fd: i32) -> Option<Slot> {
        self.procs.get(&pid)?.get(&fd).copied()
    }

    fn set_fd(&mut self, pid: u32, fd: i32, slot: Slot) {
        self.procs.entry(pid).or_default().insert(fd, slot);
    }

    /// The note of a call: the last one of its thread read before it, with paths read in
    /// the kernel made absolute here (and, where the kernel could not say what an open
    /// opened, what is at the path now).
    fn note(&mut self, d: &Done) -> Option<PathNote> {
        let q = self.notes.get_mut(&d.tid)?;
        let mut found = None;
        while q.front().is_some_and(|n| n.t <= d.t) {
            found = q.pop_front();
        }
        let mut n = found?;
        let opens = matches!(
            d.call,
            Call::Open | Call::Openat | Call::Openat2 | Call::Creat
        );
        // An open's path the probes could not read (its page not in memory at the call's
        // entry, and again not at its exit) stays empty: unknown, not the directory it would
        // be relative to.
        let unread = opens && n.at.is_some() && n.path.is_empty();
        if let Some(at) = n.at.take().filter(|_| !unread) {
            n.path = self.absolute(d.pid, at, std::mem::take(&mut n.path));
            let unknown = n.opened.is_none() && n.before.is_none();
            if unknown && d.ret >= 0 && opens && d.call != Call::Creat {
                n.before = super::ptrace::existing(&n.path);
            }
        }
        if let Some(at) = n.at2.take() {
            n.path2 = n.path2.take().map(|p| self.absolute(d.pid, at, p));
        }
        n.path = lexical(n.path);
        n.path2 = n.path2.map(lexical);
        Some(n)
    }

    /// `path` made absolute against the process's working directory (`at` AT_FDCWD) or the
    /// directory descriptor `at` (left as it is when neither is known).
    fn absolute(&self, pid: u32, at: i32, path: Vec<u8>) -> Vec<u8> {
        if path.first() == Some(&b'/') {
            return path;
        }
        let base = if at == libc::AT_FDCWD {
            self.cwd.get(&pid).cloned()
        } else {
            self.slot(pid, at)
                .and_then(|s| self.descs[s.desc].dir.clone())
        };
        let Some(mut dir) = base else { return path };
        if path.is_empty() {
            return dir;
        }
        if dir.last() != Some(&b'/') {
            dir.push(b'/');
        }
        dir.extend_from_slice(&path);
        dir
    }

    /// chdir and fchdir: the process's working directory changes.
    fn chdir(&mut self, d: &Done) {
        self.out.other_calls += 1;
        let dir = match d.call {
            Call::Chdir => self.note(d).map(|n| n.path),
            _ => self
                .slot(d.pid, d.a[0] as i32)
                .and_then(|s| self.descs[s.desc].dir.clone()),
        };
        if let (0, Some(dir)) = (d.ret, dir) {
            self.cwd.insert(d.pid, dir);
        }
    }

    fn emit(
        &mut self,
        d: &Done,
        op: Op,
        file: u32,
        (offset, len): (u64, u64),
        arg: u32,
        flags: u16,
    ) {
        self.out.events.push(Event {
            t: d.t.saturating_sub(self.t0),
            dur: d.dur,
            offset,
            len,
            result: d.ret,
            tid: d.tid,
            file,
            arg,
            op,
            flags: flags | if d.slept { flag::SLEPT } else { 0 },
        });
    }

    /// Grows what the trace knows of a file's size and reach.
    pub(super) fn reach(&mut self, file: u32, end: u64, grows: bool) {
        let f = &mut self.out.files[file as usize];
        f.extent = f.extent.max(end);
        if grows {
            let s = &mut self.sizes[file as usize];
            *s = (*s).max(end);
        }
    }

    fn handle(&mut self, d: Done) {
        match d.call {
            Call::Open | Call::Creat | Call::Openat | Call::Openat2 => self.open(&d),
            Call::Close => self.close(&d),
            Call::CloseRange => self.close_range(&d),
            Call::Dup | Call::Dup2 | Call::Dup3 | Call::Fcntl => self.dup_or_fcntl(&d),
            Call::Read | Call::Write | Call::Pread | Call::Pwrite => self.io(&d),
            Call::Readv | Call::Writev | Call::Preadv | Call::Pwritev => self.io(&d),
            Call::Preadv2 | Call::Pwritev2 => self.io(&d),
            Call::Sendfile | Call::CopyFileRange => self.copy(&d),
            Call::Truncate | Call::Unlink | Call::Unlinkat => self.by_path(&d),
            Call::Rename | Call::Renameat | Call::Renameat2 => self.rename(&d),
            Call::Chdir | Call::Fchdir => self.chdir(&d),
            Call::IoSubmit => self.aio_submit(&d),
            Call::IoGetevents | Call::IoPgetevents => self.aio_getevents(&d),
            Call::IoUringEnter => self.uring_enter(&d),
            Call::IoUringRegister => self.uring_register(&d),
            Call::Kill
            | Call::Tkill
            | Call::Tgkill
            | Call::SigQueue
            | Call::TgSigQueue
            | Call::PidfdSendSignal => self.signal(&d),
            Call::PidfdOpen => self.pidfd_open(&d),
            Call::Setpgid | Call::Setsid => self.group_change(&d),
            Call::Madvise => self.madvise(&d),
            // Every file system's data: the storage's, on no file of the trace.
            Call::Sync => self.emit(&d, Op::Syncfs, NO_FILE, (0, 0), SYNC_ALL, 0),
            _ => self.on_fd(&d),
        }
    }

    /// The descriptor's file, or a count of the call where it is not storage.
    fn storage(&mut self, pid: u32, fd: i32) -> Option<(usize, u32)> {
        match self.slot(pid, fd) {
            None => {
                self.out.unknown_fd_calls += 1;
                None
            }
            Some(slot) => match self.descs[slot.desc].file {
                Some(f) => Some((slot.desc, f)),
                None => {
                    self.out.other_calls += 1;
                    None
                }
            },
        }
    }

    fn io(&mut self, d: &Done) {
        let Some((desc, file)) = self.storage(d.pid, d.a[0] as i32) else {
            return;
        };
        let write = matches!(
            d.call,
            Call::Write | Call::Pwrite | Call::Writev | Call::Pwritev | Call::Pwritev2
        );
        let vectored = matches!(
            d.call,
            Call::Readv
                | Call::Writev
                | Call::Preadv
                | Call::Pwritev
                | Call::Preadv2
                | Call::Pwritev2
        );
        let mut fl = io_flags(self.descs[desc].flags);
        let explicit = match d.call {
            Call::Pread | Call::Pwrite | Call::Preadv | Call::Pwritev => Some(d.a[3]),
            Call::Preadv2 | Call::Pwritev2 if d.a[3] as i64 != -1 => Some(d.a[3]),
            _ => None,
        };
        if matches!(d.call, Call::Preadv2 | Call::Pwritev2) {
            fl |= rwf_flags(d.a[5]);
        }
        let moved = d.ret.max(0) as u64;
        let len = if vectored { moved } else { d.a[2] };
        let offset = match explicit {
            Some(o) => {
                fl |= flag::POSITIONAL;
                Some(o)
            }
            None if write && fl & flag::APPEND != 0 => Some(self.sizes[file as usize]),
            None => self.descs[desc].pos,
        };
        if vectored {
            fl |= flag::VECTORED;
        }
        if offset.is_none() {
            fl |= flag::OFFSET_UNKNOWN;
        }
        let op = if write { Op::Write } else { Op::Read };
        self.emit(d, op, file, (offset.unwrap_or(0), len), 0, fl);
        if let Some(o) = offset {
            self.reach(file, o + moved, write);
            if explicit.is_none() {
                self.descs[desc].pos = Some(o + moved);
            }
        }
    }

    fn copy(&mut self, d: &Done) {
        // sendfile(out, in, off*, n); copy_file_range(in, off_in*, out, off_out*, n).
        let (fin, fout, in_ptr, out_ptr) = match d.call {
            Call::Sendfile => (d.a[1], d.a[0], d.a[2], 0),
            _ => (d.a[0], d.a[2], d.a[1], d.a[3]),
        };
        let moved = d.ret.max(0) as u64;
        for (fd, ptr, op) in [(fin, in_ptr, Op::Read), (fout, out_ptr, Op::Write)] {
            let Some((desc, file)) = self.storage(d.pid, fd as i32) else {
                continue;
            };
            let mut fl = io_flags(self.descs[desc].flags);
            let offset = if ptr == 0 { self.descs[desc].pos } else { None };
            if offset.is_none() {
                fl |= flag::OFFSET_UNKNOWN;
            }
            self.emit(d, op, file, (offset.unwrap_or(0), moved), 0, fl);
            if let Some(o) = offset {
                self.descs[desc].pos = Some(o + moved);
                self.reach(file, o + moved, op == Op::Write);
            }
        }
    }

    /// Calls on a descriptor that are not reads or writes.
    fn on_fd(&mut self, d: &Done) {
        let fd = if d.call == Call::Mmap {
            d.a[4] as i32
        } else {
            d.a[0] as i32
        };
        // A mapping that shows no file of the trace hides those it lies over.
        let hides = |s: &mut State| {
            if d.call == Call::Mmap && d.ret > 0 {
                s.maps.mapped(d.pid, (d.ret as u64, d.a[1]), NO_FILE, 0);
            }
        };
        if d.call == Call::Mmap && (fd < 0 || d.a[3] & libc::MAP_ANONYMOUS as u64 != 0) {
            hides(self);
            return;
        }
        // A directory's sync (making a file's creation or removal durable) costs the storage
        // what a file's does: recorded, on no file.
        if let (Call::Fsync | Call::Fdatasync | Call::Syncfs, Some(slot)) =
            (d.call, self.slot(d.pid, fd))
        {
            if self.descs[slot.desc].dir.is_some() {
                let op = match d.call {
                    Call::Fsync => Op::Fsync,
                    Call::Fdatasync => Op::Fdatasync,
                    _ => Op::Syncfs,
                };
                self.emit(d, op, NO_FILE, (0, 0), 0, flag::DIR);
                return;
            }
        }
        let Some((desc, file)) = self.storage(d.pid, fd) else {
            hides(self);
            return;
        };
        let fl = io_flags(self.descs[desc].flags);
        match d.call {
            Call::Lseek => {
                if d.ret >= 0 {
                    self.descs[desc].pos = Some(d.ret as u64);
                }
                self.emit(
                    d,
                    Op::Seek,
                    file,
                    (d.ret.max(0) as u64, 0),
                    d.a[2] as u32,
                    fl,
                );
            }
            Call::Fsync => self.emit(d, Op::Fsync, file, (0, 0), 0, fl),
            Call::Fdatasync => self.emit(d, Op::Fdatasync, file, (0, 0), 0, fl),
            Call::Syncfs => self.emit(d, Op::Syncfs, file, (0, 0), 0, fl),
            Call::SyncFileRange => self.emit(
                d,
                Op::SyncFileRange,
                file,
                (d.a[1], d.a[2]),
                d.a[3] as u32,
                fl,
            ),
            Call::Fadvise => self.emit(d, Op::Fadvise, file, (d.a[1], d.a[2]), d.a[3] as u32, fl),
            Call::Fallocate => {
                let (mode, off, len) = (d.a[1], d.a[2], d.a[3]);
                self.emit(d, Op::Fallocate, file, (off, len), mode as u32, fl);
                if d.ret == 0 {
                    self.reach(file, off + len, mode & 1 == 0);
                }
            }
            Call::Ftruncate => {
                self.emit(d, Op::Truncate, file, (0, d.a[1]), 0, fl);
                if d.ret == 0 {
                    self.sizes[file as usize] = d.a[1];
                    self.reach(file, d.a[1], false);
                }
            }
            Call::Mmap => {
                let arg = (d.a[2] as u32 & 0xff) | ((d.a[3] as u32 & 0xff_ffff) << 8);
                self.emit(d, Op::Mmap, file, (d.a[5], d.a[1]), arg, fl);
                if d.ret > 0 {
                    self.maps
                        .mapped(d.pid, (d.ret as u64, d.a[1]), file, d.a[5]);
                }
            }
            _ => {}
        }
    }

    /// The path a call named and the file of the trace it is, or a count of the call.
    fn noted_file(&mut self, d: &Done) -> Option<(PathNote, u32)> {
        let found = self
            .note(d)
            .and_then(|n| self.live.get(&n.path).map(|&f| (n, f)));
        if found.is_none() {
            self.out.other_calls += 1;
        }
        found
    }

    /// truncate, unlink and unlinkat: by path.
    fn by_path(&mut self, d: &Done) {
        let Some((n, file)) = self.noted_file(d) else {
            return;
        };
        if d.call == Call::Truncate {
            self.emit(d, Op::Truncate, file, (0, d.a[1]), 0, 0);
            if d.ret == 0 {
                self.sizes[file as usize] = d.a[1];
            }
            return;
        }
        if d.call == Call::Unlinkat && d.a[2] & libc::AT_REMOVEDIR as u64 != 0 {
            return;
        }
        self.emit(d, Op::Unlink, file, (0, 0), 0, 0);
        if d.ret == 0 {
            self.live.remove(&n.path);
            self.out.files[file as usize].removed = true;
        }
    }

    /// rename*: the file keeps its place in the trace under its new name; a file of the trace
    /// the new name held is gone, and the event's `arg` names it (its index plus one).
    fn rename(&mut self, d: &Done) {
        let Some((n, file)) = self.noted_file(d) else {
            return;
        };
        let mut over = 0;
        if d.ret == 0 {
            if let Some(to) = n.path2 {
                self.live.remove(&n.path);
                if let Some(old) = self.live.insert(to, file).filter(|&old| old != file) {
                    self.out.files[old as usize].removed = true;
                    over = old + 1;
                }
            }
        }
        self.emit(d, Op::Rename, file, (0, 0), over, 0);
    }
}
