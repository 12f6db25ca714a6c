//! Paths read in the kernel: an eBPF program on `raw_syscalls:sys_enter` copies the path of
//! each call that names a file (openat and the rest) from the caller's memory as the call
//! starts, and one on `raw_syscalls:sys_exit` reports what each open opened (its type,
//! size and file system, following task → files → fd table → file → inode with offsets from
//! the kernel's BTF). Their records go out through one `BPF_OUTPUT` perf event per CPU into
//! that CPU's ring of the perf capture, time-stamped on its clock, so the program never stops
//! for its paths. Where the calls themselves are read into a ring (`callring.rs`), this code
//! runs inside those programs, for the program's tasks alone; with perf samples it runs as
//! programs of its own that see every process's calls, and the records of tasks that are not
//! the program's are dropped when the trace is decoded.

use std::collections::HashMap;
use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::bpf_asm::*;
use super::calls::Call;
use super::pathprog::{OPENS, PROBES, Probe, enter_paths, exit_opened, offsets};
use super::pathprog::{enter_program, exit_program};
use super::perf::Raw;
use super::ptrace::{Existing, FileKind, PSEUDO_FS, PathNote};
use super::rawtp::{PROG_RAW_TRACEPOINT, Regs};
use super::sys::{self, BpfInsn, PerfAttr};

/// The longest path a record carries (PATH_MAX); a longer one is cut there.
pub(super) const PATH_MAX: i32 = 4096;
/// A path record's fixed part: tag, kind, which path, call number, directory fd, openat2 flags.
pub(super) const PATH_HEAD: i32 = 24;
/// The first two bytes of every record of these programs: no tracepoint has this id.
pub const TAG: u16 = 0xffff;
pub(super) const KIND_PATH: u8 = 1;
pub(super) const KIND_OPENED: u8 = 2;
/// A successful open's path read again at its exit (see `pathprog::exit_path`).
pub(super) const KIND_EXIT_PATH: u8 = 9;

/// What a program reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A path a call named (`which`: 0, or 1 for a rename's second), relative to `dirfd`.
    Path {
        t: u64,
        tid: u32,
        nr: i64,
        which: u8,
        dirfd: i32,
        /// openat2's `open_how.flags`.
        how_flags: u64,
        path: Vec<u8>,
    },
    /// The path of an open that returned a descriptor, read again at its exit.
    ExitPath {
        t: u64,
        tid: u32,
        nr: i64,
        path: Vec<u8>,
    },
    /// What an open that returned `fd` opened (mode 0: could not be read).
    Opened {
        t: u64,
        tid: u32,
        nr: i64,
        size: u64,
        mode: u32,
        magic: u64,
    },
    /// Native AIO's iocbs or events (`aio.rs`).
    Aio(super::aio::Seen),
}

impl Seen {
    fn time(&self) -> u64 {
        match self {
            Seen::Path { t, .. } | Seen::ExitPath { t, .. } | Seen::Opened { t, .. } => *t,
            Seen::Aio(a) => a.time(),
        }
    }
    fn tid(&self) -> u32 {
        match self {
            Seen::Path { tid, .. } | Seen::ExitPath { tid, .. } | Seen::Opened { tid, .. } => *tid,
            Seen::Aio(a) => a.tid(),
        }
    }
}

/// The native-endian u64 and u32 of a probe's record at byte `at` (None past its end).
pub(super) fn u64_in(raw: &[u8], at: usize) -> Option<u64> {
    raw.get(at..at + 8)
        .map(|b| u64::from_ne_bytes(b.try_into().expect("8")))
}

pub(super) fn u32_in(raw: &[u8], at: usize) -> Option<u32> {
    raw.get(at..at + 4)
        .map(|b| u32::from_ne_bytes(b.try_into().expect("4")))
}

/// A record of these programs, from a perf sample's raw data (None: not one of ours).
pub fn parse(t: u64, tid: u32, raw: &[u8]) -> Option<Seen> {
    let (u64_at, u32_at) = (|at| u64_in(raw, at), |at| u32_in(raw, at));
    if raw.len() < 8 || u16::from_ne_bytes([raw[0], raw[1]]) != TAG {
        return None;
    }
    let nr = i64::from(u32_at(4)? as i32);
    // A path record's path: up to its first NUL.
    let path = || {
        let body = raw.get(PATH_HEAD as usize..)?;
        let end = body.iter().position(|&b| b == 0).unwrap_or(body.len());
        Some(body[..end].to_vec())
    };
    match raw[2] {
        KIND_PATH => Some(Seen::Path {
            t,
            tid,
            nr,
            which: raw[3],
            dirfd: u64_at(8)? as i32,
            how_flags: u64_at(16)?,
            path: path()?,
        }),
        KIND_EXIT_PATH => Some(Seen::ExitPath {
            t,
            tid,
            nr,
            path: path()?,
        }),
        KIND_OPENED => Some(Seen::Opened {
            t,
            tid,
            nr,
            size: u64_at(16)?,
            mode: u32::from(u16::from_ne_bytes(raw.get(24..26)?.try_into().ok()?)),
            magic: u64_at(32)?,
        }),
        _ => super::aio::parse(t, tid, raw).map(Seen::Aio),
    }
}

/// Why the paths cannot be read in the kernel here.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct NoProbes(pub String);

impl From<String> for NoProbes {
    fn from(s: String) -> NoProbes {
        NoProbes(s)
    }
}

impl From<super::btf::BadBtf> for NoProbes {
    fn from(e: super::btf::BadBtf) -> NoProbes {
        NoProbes(e.to_string())
    }
}

/// The programs, loaded and attached, and the per-CPU events their records leave through.
/// Dropping it detaches everything.
///
/// Attached, the programs run for every system call of every task on the machine (they are
/// on the kernel's raw tracepoints, `rawtp.rs`, and ask whose call it is themselves), and
/// the tracepoint puts every task's calls on the kernel's slower traced path: about 0.4 µs a
/// call on this project's VM, for the recorded program and everyone else.
/// [`PathProbes::detach`] takes them off while nothing is recorded (the calibration's plain
/// runs); taking them off and putting them on costs a fraction of a millisecond.
pub struct PathProbes {
    _maps: [OwnedFd; 2],
    /// The AIO programs' map, where they run; else why they do not.
    aio: Result<OwnedFd, NoProbes>,
    /// Whether the io_uring programs run, or why not.
    uring: Result<(), NoProbes>,
    /// The maps of the programs that read the calls themselves, where they run; else why
    /// the calls are perf's samples.
    calls: Result<super::callring::CallProbes, NoProbes>,
    /// Each loaded program and the raw tracepoint it runs on.
    progs: Vec<(&'static CStr, OwnedFd)>,
    /// The raw tracepoint links that run them (none while detached).
    attached: Vec<OwnedFd>,
    /// (CPU, its BPF_OUTPUT event).
    outputs: Vec<(i32, OwnedFd)>,
}

const MAP_PERF_EVENT_ARRAY: u32 = 4;
const MAP_PERCPU_ARRAY: u32 = 6;
const PERF_TYPE_SOFTWARE: u32 = 1;
const SW_BPF_OUTPUT: u64 = 10;
/// The raw tracepoints of a system call's entry and exit.
pub(super) const SYS_ENTER: &CStr = c"sys_enter";
pub(super) const SYS_EXIT: &CStr = c"sys_exit";

/// What loads a program (for the raw tracepoint named) with the others of its kind.
pub(super) type Load<'a> = dyn FnMut(&'static CStr, Vec<BpfInsn>) -> Result<(), String> + 'a;

impl PathProbes {
    /// Loads the programs for the watched calls this kernel has, not yet attached
    /// ([`PathProbes::attach`]); any failure (no BTF, no eBPF rights, a refused program) is
    /// the reason paths are read some other way.
    pub fn open(cpus: &[i32]) -> Result<PathProbes, NoProbes> {
        let off = offsets()?;
        let regs = Regs::kernel()?;
        fn e(what: &'static str) -> impl Fn(io::Error) -> String {
            move |err| format!("{what}: {err}")
        }
        let size = ((PATH_HEAD + PATH_MAX) as u32).max(super::aio::SCRATCH);
        let scratch = sys::bpf_map(MAP_PERCPU_ARRAY, size, 1).map_err(e("an eBPF map"))?;
        let slots = cpus.iter().max().map_or(1, |m| m + 1) as u32;
        let out_map = sys::bpf_map(MAP_PERF_EVENT_ARRAY, 4, slots).map_err(e("an eBPF map"))?;
        let mut outputs = Vec::new();
        for &cpu in cpus {
            let attr = PerfAttr {
                type_: PERF_TYPE_SOFTWARE,
                size: std::mem::size_of::<PerfAttr>() as u32,
                config: SW_BPF_OUTPUT,
                sample_period: 1,
                sample_type: super::perf::SAMPLE_TID
                    | super::perf::SAMPLE_TIME
                    | super::perf::SAMPLE_RAW,
                flags: super::perf::SAMPLE_ID_ALL | super::perf::USE_CLOCKID,
                clockid: libc::CLOCK_MONOTONIC,
                ..Default::default()
            };
            let ev = sys::perf_event_open(&attr, -1, cpu).map_err(e("a BPF_OUTPUT perf event"))?;
            sys::bpf_map_set(&out_map, cpu as u32, ev.as_raw_fd() as u32)
                .map_err(e("an eBPF map entry"))?;
            outputs.push((cpu, ev));
        }
        let probes: Vec<&Probe> = PROBES
            .iter()
            .filter(|p| p.call.number().is_some())
            .collect();
        let opens: Vec<i64> = OPENS.iter().filter_map(|c| c.number()).collect();
        // Where the calls are read into a ring, the paths are read by the same programs, for
        // the program's tasks alone; else by programs of their own, for every task.
        let enter_paths = |a: &mut Asm| enter_paths(a, regs, &probes, &scratch, &out_map);
        let exit_paths = |a: &mut Asm| exit_opened(a, (off, regs), &opens, (&scratch, &out_map));
        // The asynchronous I/Os' code at the calls' entry and exit: in the ring's programs,
        // it runs for the program's tasks' io_submit, io_getevents and io_uring_register
        // alone; as programs of its own, every call of every task on the machine pays for
        // two more programs (+0.08 µs a call measured on dd: bench/results/2026-12-03-0256).
        let pending = super::aio::pending();
        let enter_all = |a: &mut Asm| {
            enter_paths(a);
            if let Ok(p) = &pending {
                super::aio::enter_code(a, regs, &scratch, p, &out_map);
            }
            super::uring::files_code(a, regs, &out_map);
        };
        let exit_all = |a: &mut Asm| {
            exit_paths(a);
            if let Ok(p) = &pending {
                super::aio::exit_code(a, regs, &scratch, p, &out_map);
            }
        };
        let (mut calls, mut progs) =
            loaded(|load| super::callring::load(load, regs, (&enter_all, &exit_all)));
        let folded = calls.is_ok();
        if !folded {
            // Where the kernel refuses the programs with that code, the ring may still run
            // without it, and the code as programs of their own.
            (calls, progs) =
                loaded(|load| super::callring::load(load, regs, (&enter_paths, &exit_paths)));
        }
        if calls.is_err() {
            let (paths, alone) = loaded(|load| {
                load(SYS_ENTER, enter_program(regs, &probes, &scratch, &out_map))?;
                load(
                    SYS_EXIT,
                    exit_program(regs, off, &opens, (&scratch, &out_map)),
                )?;
                Ok(())
            });
            paths?;
            progs = alone;
        }
        // The AIO and io_uring programs are kept only where all of theirs load.
        let aio = match pending {
            Ok(p) if folded => Ok(p),
            Ok(p) => {
                let (done, more) =
                    loaded(|load| super::aio::load(load, regs, &scratch, &p, &out_map));
                progs.extend(more);
                done.map(|()| p)
            }
            Err(e) => Err(e),
        };
        let (uring, more) = loaded(|load| super::uring::load(load, regs, &out_map, !folded));
        progs.extend(more);
        Ok(PathProbes {
            _maps: [scratch, out_map],
            aio,
            uring,
            calls,
            progs,
            attached: Vec::new(),
            outputs,
        })
    }

    /// Puts the loaded programs on their tracepoints (again, after [`PathProbes::detach`]).
    pub fn attach(&mut self) -> io::Result<()> {
        if !self.attached.is_empty() {
            return Ok(());
        }
        // All of them or none.
        self.attached = self
            .progs
            .iter()
            .map(|(name, prog)| {
                sys::bpf_raw_tracepoint_open(name, prog).map_err(|e| {
                    io::Error::new(e.kind(), format!("the raw tracepoint {name:?}: {e}"))
                })
            })
            .collect::<io::Result<_>>()?;
        Ok(())
    }

    /// Takes the programs off their tracepoints (they stay loaded): the machine's calls run
    /// as they do without iogauge.
    pub fn detach(&mut self) {
        self.attached.clear();
    }

    /// Why native AIO's I/Os are not seen (None: they are).
    pub fn aio_unseen(&self) -> Option<&str> {
        self.aio.as_ref().err().map(|e| e.0.as_str())
    }

    /// Why io_uring's I/Os are not seen (None: they are).
    pub fn uring_unseen(&self) -> Option<&str> {
        self.uring.as_ref().err().map(|e| e.0.as_str())
    }

    /// The programs that read the calls into a ring of their own, or why they do not run.
    pub fn calls(&self) -> Result<&super::callring::CallProbes, &str> {
        self.calls.as_ref().map_err(|e| e.0.as_str())
    }

    /// Sends each CPU's records into that CPU's ring (the perf capture's event `rings` gives
    /// for it).
    pub fn output_to(&self, rings: &[(i32, &OwnedFd)]) -> io::Result<()> {
        for (cpu, ev) in &self.outputs {
            if let Some((_, ring)) = rings.iter().find(|(c, _)| c == cpu) {
                sys::set_output(ev, ring)?;
            }
        }
        Ok(())
    }
}

/// The programs `load_all` loads (each with the raw tracepoint it is for), where it
/// succeeds.
fn loaded<T>(
    load_all: impl FnOnce(&mut Load) -> Result<T, NoProbes>,
) -> (Result<T, NoProbes>, Vec<(&'static CStr, OwnedFd)>) {
    let mut progs = Vec::new();
    let done = load_all(&mut |name, insns| {
        let prog = sys::bpf_load(PROG_RAW_TRACEPOINT, &insns)
            .map_err(|err| format!("loading an eBPF program for {name:?}: {err}"))?;
        progs.push((name, prog));
        Ok(())
    });
    match done {
        Ok(t) => (Ok(t), progs),
        Err(e) => (Err(e), Vec::new()),
    }
}

impl Drop for PathProbes {
    fn drop(&mut self) {
        self.detach();
    }
}

/// One call of a task, as perf saw it: its entry record's place in the records (its
/// arguments are read from there), its times and number. 32 bytes a call: a recording holds
/// millions.
struct Seq {
    enter: u64,
    exit: u64,
    nr: i32,
    at: usize,
}

/// What the probes' records said of one call (only the calls they speak of have one).
#[derive(Default)]
struct Said {
    path: [Option<(i32, Vec<u8>)>; 2],
    how_flags: u64,
    opened: Option<(u64, u32, u64)>,
    /// A successful open's path as read at its exit.
    exit_path: Option<Vec<u8>>,
}

/// The path notes of the calls perf saw, from the programs' records: each path record goes
/// to its task's first call that had not ended when it was made, each open's records made at
/// its exit (what it opened, its path read again) to the last call that had started, when
/// their numbers agree. A path the entry could not read (empty) is the one read at the exit.
/// Records of other processes' tasks find no call and are dropped.
pub fn notes(raw: &[Raw], seen: Vec<Seen>) -> Vec<PathNote> {
    let calls = calls_by_task(raw);
    let mut said: HashMap<usize, Said> = HashMap::new();
    for s in seen {
        let (t, tid) = (s.time(), s.tid());
        let Some(list) = calls.get(&tid) else {
            continue;
        };
        match s {
            Seen::Path {
                nr,
                which,
                dirfd,
                how_flags,
                path,
                ..
            } => {
                let i = list.partition_point(|c| c.exit < t);
                if let Some(c) = list.get(i).filter(|c| i64::from(c.nr) == nr) {
                    let said = said.entry(c.at).or_default();
                    if which == 0 {
                        said.how_flags = how_flags;
                    }
                    said.path[usize::from(which.min(1))] = Some((dirfd, path));
                }
            }
            Seen::Opened { nr, .. } | Seen::ExitPath { nr, .. } => {
                let i = list.partition_point(|c| c.enter <= t);
                let Some(c) = i
                    .checked_sub(1)
                    .and_then(|i| list.get(i))
                    .filter(|c| i64::from(c.nr) == nr)
                else {
                    continue;
                };
                let said = said.entry(c.at).or_default();
                match s {
                    Seen::Opened {
                        size, mode, magic, ..
                    } => said.opened = Some((size, mode, magic)),
                    Seen::ExitPath { path, .. } => said.exit_path = Some(path),
                    _ => {}
                }
            }
            Seen::Aio(_) => {}
        }
    }
    let mut out = Vec::new();
    for (at, s) in said {
        let (Raw::Enter {
            t, tid, nr, args, ..
        }
        | Raw::Call {
            t, tid, nr, args, ..
        }) = raw[at]
        else {
            continue;
        };
        let Some(call) = Call::of(nr.into()) else {
            continue;
        };
        let [first, second] = s.path;
        let Some(mut first) = first else { continue };
        if first.1.is_empty() {
            first.1 = s.exit_path.unwrap_or_default();
        }
        out.push(note(
            tid,
            call,
            &args,
            t,
            first,
            second,
            s.how_flags,
            s.opened,
        ));
    }
    out
}

/// Each task's calls in time order, from the records (in time order already, as a recording
/// sorts them, or sorted here through their indices).
fn calls_by_task(raw: &[Raw]) -> HashMap<u32, Vec<Seq>> {
    let order: Box<dyn Iterator<Item = usize>> = if raw.is_sorted_by_key(Raw::time) {
        Box::new(0..raw.len())
    } else {
        let mut order: Vec<usize> = (0..raw.len()).collect();
        order.sort_by_key(|&i| raw[i].time());
        Box::new(order.into_iter())
    };
    let mut calls: HashMap<u32, Vec<Seq>> = HashMap::new();
    let mut open: HashMap<u32, usize> = HashMap::new();
    for at in order {
        match raw[at] {
            Raw::Enter { t, tid, nr, .. } => {
                let list = calls.entry(tid).or_default();
                open.insert(tid, list.len());
                list.push(Seq {
                    enter: t,
                    exit: u64::MAX,
                    nr,
                    at,
                });
            }
            Raw::Call {
                t, exit, tid, nr, ..
            } => calls.entry(tid).or_default().push(Seq {
                enter: t,
                exit,
                nr,
                at,
            }),
            Raw::Exit { t, tid, .. } => {
                if let Some(i) = open.remove(&tid) {
                    calls.get_mut(&tid).expect("entered")[i].exit = t;
                }
            }
            _ => {}
        }
    }
    calls
}

/// A note from the records of one call. Whether an open created its file is judged from
/// what it opened: O_EXCL, or O_CREAT and an empty file (an existing empty file is the same
/// for a replay); an open of an existing non-empty file was not a create.
#[allow(clippy::too_many_arguments)]
fn note(
    tid: u32,
    call: Call,
    a: &[u64; 6],
    t: u64,
    (at, path): (i32, Vec<u8>),
    second: Option<(i32, Vec<u8>)>,
    how_flags: u64,
    opened: Option<(u64, u32, u64)>,
) -> PathNote {
    let flags = match call {
        Call::Open => a[1],
        Call::Openat => a[2],
        Call::Openat2 => how_flags,
        Call::Creat => (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64,
        _ => 0,
    };
    let opened = opened
        .filter(|o| o.1 != 0)
        .map(|(size, mode, magic)| Existing {
            kind: kind_of(mode, magic),
            size,
        });
    let creating = flags & libc::O_CREAT as u64 != 0;
    let created = opened.is_some_and(|o| {
        creating && o.kind == FileKind::Regular && (flags & libc::O_EXCL as u64 != 0 || o.size == 0)
    });
    let (at2, path2) = second.map_or((None, None), |(d, p)| (Some(d), Some(p)));
    PathNote {
        t,
        tid,
        call,
        path,
        path2,
        at: Some(at),
        at2,
        flags: (call == Call::Openat2).then_some(how_flags),
        before: if created { None } else { opened },
        opened,
    }
}

/// The kind of file an inode's mode and its file system's magic say.
fn kind_of(mode: u32, magic: u64) -> FileKind {
    match mode & libc::S_IFMT {
        libc::S_IFREG if !PSEUDO_FS.contains(&(magic as i64)) => FileKind::Regular,
        libc::S_IFBLK => FileKind::Block,
        libc::S_IFDIR => FileKind::Directory,
        _ => FileKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enter(t: u64, tid: u32, call: Call, args: [u64; 6]) -> Raw {
        Raw::Enter {
            t,
            pid: tid,
            tid,
            nr: call.number().unwrap() as i32,
            args,
        }
    }

    fn exit(t: u64, tid: u32, call: Call, ret: i64) -> Raw {
        Raw::Exit {
            t,
            tid,
            nr: call.number().unwrap() as i32,
            ret,
        }
    }

    fn path(t: u64, tid: u32, call: Call, which: u8, p: &str) -> Seen {
        Seen::Path {
            t,
            tid,
            nr: call.number().unwrap(),
            which,
            dirfd: libc::AT_FDCWD,
            how_flags: 0,
            path: p.as_bytes().to_vec(),
        }
    }

    fn opened(t: u64, tid: u32, size: u64, mode: u32) -> Seen {
        Seen::Opened {
            t,
            tid,
            nr: Call::Openat.number().unwrap(),
            size,
            mode,
            magic: 0xef53,
        }
    }

    #[test]
    fn records_go_to_their_threads_calls_whichever_came_first() {
        let creat = (libc::O_CREAT | libc::O_WRONLY) as u64;
        let raw = vec![
            enter(100, 7, Call::Openat, [0, 0, creat, 0, 0, 0]),
            exit(110, 7, Call::Openat, 3),
            enter(120, 8, Call::Openat, [0, 0, 0, 0, 0, 0]),
            exit(130, 8, Call::Openat, 4),
            enter(140, 7, Call::Renameat2, [0; 6]),
            exit(150, 7, Call::Renameat2, 0),
        ];
        let seen = vec![
            // Thread 7's path recorded a moment before perf's enter record.
            path(99, 7, Call::Openat, 0, "new"),
            opened(111, 7, 0, libc::S_IFREG | 0o644),
            path(121, 8, Call::Openat, 0, "/old"),
            opened(129, 8, 5000, libc::S_IFREG | 0o644),
            path(141, 7, Call::Renameat2, 0, "a"),
            path(142, 7, Call::Renameat2, 1, "b"),
            // Another process's open: no call of the program's.
            path(125, 99, Call::Openat, 0, "/elsewhere"),
            // A record whose call number does not match the call: dropped.
            path(135, 7, Call::Unlink, 0, "x"),
        ];
        let mut n = notes(&raw, seen);
        n.sort_by_key(|n| n.t);
        assert_eq!(n.len(), 3, "{n:?}");
        assert_eq!((n[0].tid, &n[0].path[..]), (7, &b"new"[..]));
        assert_eq!(n[0].before, None, "O_CREAT and empty: created");
        assert_eq!(n[0].opened.unwrap().kind, FileKind::Regular);
        assert_eq!(n[0].at, Some(libc::AT_FDCWD));
        assert_eq!((n[1].tid, &n[1].path[..]), (8, &b"/old"[..]));
        assert_eq!(n[1].before.unwrap().size, 5000, "existing");
        assert_eq!(n[2].path, b"a");
        assert_eq!(n[2].path2.as_deref(), Some(&b"b"[..]));
        assert_eq!(n[2].t, 140, "a note is dated at its call's entry");
    }

    /// An open whose path the entry could not read (empty) takes the one read at its exit
    /// (made after perf's exit record, as the open's own record is); a path the entry read
    /// stands.
    #[test]
    fn an_empty_entry_path_is_the_one_read_at_the_exit() {
        let exit_path = |t: u64, tid: u32, p: &str| Seen::ExitPath {
            t,
            tid,
            nr: Call::Openat.number().unwrap(),
            path: p.as_bytes().to_vec(),
        };
        let raw = vec![
            enter(100, 7, Call::Openat, [0; 6]),
            exit(110, 7, Call::Openat, 3),
            enter(120, 7, Call::Openat, [0; 6]),
            exit(130, 7, Call::Openat, 4),
        ];
        let seen = vec![
            path(100, 7, Call::Openat, 0, ""),
            opened(111, 7, 14, libc::S_IFREG | 0o644),
            exit_path(111, 7, "/d/target"),
            path(120, 7, Call::Openat, 0, "read"),
            exit_path(131, 7, "changed since"),
        ];
        let mut n = notes(&raw, seen);
        n.sort_by_key(|n| n.t);
        assert_eq!(n.len(), 2, "{n:?}");
        assert_eq!(n[0].path, b"/d/target");
        assert_eq!(n[0].opened.unwrap().size, 14);
        assert_eq!(n[1].path, b"read");
    }

    #[test]
    fn kinds_follow_the_inode_and_its_file_system() {
        assert_eq!(kind_of(libc::S_IFREG, 0xef53), FileKind::Regular);
        assert_eq!(kind_of(libc::S_IFREG, 0x9fa0), FileKind::Other, "proc");
        assert_eq!(kind_of(libc::S_IFBLK, 0x6264_6576), FileKind::Block);
        assert_eq!(kind_of(libc::S_IFDIR, 0xef53), FileKind::Directory);
        assert_eq!(kind_of(libc::S_IFIFO, 0), FileKind::Other);
    }

    #[test]
    fn parses_its_own_records_and_nothing_else() {
        let mut r = vec![0xff, 0xff, KIND_PATH, 1];
        r.extend_from_slice(&(Call::Rename.number().unwrap() as u32).to_ne_bytes());
        r.extend_from_slice(&(-100i64).to_ne_bytes());
        r.extend_from_slice(&0u64.to_ne_bytes());
        r.extend_from_slice(b"/x/y\0junk");
        assert_eq!(
            parse(5, 6, &r),
            Some(Seen::Path {
                t: 5,
                tid: 6,
                nr: Call::Rename.number().unwrap(),
                which: 1,
                dirfd: -100,
                how_flags: 0,
                path: b"/x/y".to_vec(),
            })
        );
        // A tracepoint's record starts with its id; short or unknown records are not ours.
        assert_eq!(parse(5, 6, &[0x10, 0x03, 0, 0, 0, 0, 0, 0, 0]), None);
        assert_eq!(parse(5, 6, &[0xff, 0xff, KIND_OPENED, 0, 0, 0, 0, 0]), None);
        assert_eq!(parse(5, 6, &[0xff, 0xff, 0x7f, 0, 0, 0, 0, 0]), None);
        // An open's path read at its exit: the same layout, its own kind.
        r[2] = KIND_EXIT_PATH;
        assert_eq!(
            parse(5, 6, &r),
            Some(Seen::ExitPath {
                t: 5,
                tid: 6,
                nr: Call::Rename.number().unwrap(),
                path: b"/x/y".to_vec(),
            })
        );
        assert_eq!(parse(5, 6, &r[..PATH_HEAD as usize - 1]), None);
    }
}
