//! The tracer: starts the program under ptrace with a seccomp filter, so it stops only at the
//! calls the filter names, and follows every thread and child it starts. With perf recording
//! the calls, only calls that name a path stop (the path is read from the program's memory
//! while it is stopped, and resolved against its working directory or directory descriptor);
//! without perf (the fallback) every watched call stops twice, at entry and at exit, and the
//! tracer records the call itself.

use std::collections::{HashMap, HashSet};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::calls::{AUDIT_ARCH, Call};
use super::perf::Raw;
use super::sys::{self, Insn, Regs};

/// A path a call named, read while the program was stopped at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathNote {
    /// When the tracer read it (before the call ran).
    pub t: u64,
    pub tid: u32,
    pub call: Call,
    /// The path made absolute (not resolved through links), as bytes.
    pub path: Vec<u8>,
    /// rename's second path.
    pub path2: Option<Vec<u8>>,
    /// Read in the kernel (eBPF): the directory descriptor `path` is relative to (AT_FDCWD:
    /// the working directory), resolved when decoding. None: read under ptrace, where
    /// `path` is already absolute.
    pub at: Option<i32>,
    pub at2: Option<i32>,
    /// openat2's flags (read from its `open_how`); other calls' flags are in their arguments.
    pub flags: Option<u64>,
    /// What was at the path before the call: its kind and size (None: nothing there).
    pub before: Option<Existing>,
    /// Read in the kernel at an open's exit: what it opened (its size after the open).
    pub opened: Option<Existing>,
}

/// A file found at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Existing {
    pub kind: FileKind,
    pub size: u64,
}

/// What kind of file a descriptor or path is; only regular files and block devices are
/// storage I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Regular,
    Block,
    Directory,
    /// Pipes, sockets, terminals, character devices, and files of pseudo file systems
    /// (/proc, /sys, cgroup, tracefs…): their calls are counted, not recorded.
    Other,
}

/// What the tracer saw.
#[derive(Debug, Default)]
pub struct Traced {
    pub notes: Vec<PathNote>,
    /// Fallback only: the calls (one record each, written at its exit) and tasks.
    pub raw: Vec<Raw>,
    /// The root program's wait status.
    pub status: Option<i32>,
    /// When the root program's exec completed: the trace's start.
    pub exec_t: Option<u64>,
    /// Records (or path notes) left out past the memory cap.
    pub capped: u64,
    /// Fallback: calls entered by tasks that ended before their exit.
    pub unfinished: u64,
    /// Processes that ran a 32-bit program, and when: their calls are not decoded.
    pub runs32: Vec<super::narrow::Run>,
}

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_RET_K: u16 = 0x06;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_TRACE: u32 = 0x7ff0_0000;

/// The seccomp program: RET_TRACE for the calls `stops` says, ALLOW for the rest (and for
/// any other architecture's calls, whose numbers mean other calls). Empty where no call
/// stops: no filter at all, which costs the program nothing.
pub fn filter(stops: impl Fn(Call) -> bool) -> Vec<Insn> {
    let nrs: Vec<u32> = Call::numbers()
        .filter(|&n| Call::of(n).is_some_and(&stops))
        .map(|n| n as u32)
        .collect();
    let n = nrs.len();
    if n == 0 {
        return Vec::new();
    }
    let mut p = vec![
        // seccomp_data.arch
        Insn {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 4,
        },
        // Another architecture: past the number's load and tests, to ALLOW.
        Insn {
            code: BPF_JEQ_K,
            jt: 0,
            jf: (n + 1) as u8,
            k: AUDIT_ARCH,
        },
        // seccomp_data.nr
        Insn {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
    ];
    for (i, nr) in nrs.iter().enumerate() {
        // Equal: jump past the remaining tests and the ALLOW, to TRACE.
        p.push(Insn {
            code: BPF_JEQ_K,
            jt: (n - i) as u8,
            jf: 0,
            k: *nr,
        });
    }
    p.push(Insn {
        code: BPF_RET_K,
        jt: 0,
        jf: 0,
        k: SECCOMP_RET_ALLOW,
    });
    p.push(Insn {
        code: BPF_RET_K,
        jt: 0,
        jf: 0,
        k: SECCOMP_RET_TRACE,
    });
    p
}

const OPTIONS: usize = (libc::PTRACE_O_TRACESECCOMP
    | libc::PTRACE_O_TRACECLONE
    | libc::PTRACE_O_TRACEFORK
    | libc::PTRACE_O_TRACEVFORK
    | libc::PTRACE_O_TRACEEXEC
    | libc::PTRACE_O_TRACESYSGOOD
    | libc::PTRACE_O_EXITKILL) as usize;

/// The process tracing iogauge itself, if one is.
fn traced_by() -> Option<i32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let pid: i32 = status
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))?
        .trim()
        .parse()
        .ok()?;
    (pid != 0).then_some(pid)
}

/// Waits for the freshly forked child's self-stop and sets the tracing options; the child
/// is left stopped for the caller to finish its setup and [`resume`].
pub fn attach(pid: i32) -> io::Result<()> {
    match sys::wait_any()? {
        Some((p, st)) if p == pid && libc::WIFSTOPPED(st) => {}
        Some((_, st)) => {
            return Err(io::Error::other(match traced_by() {
                // Its tracer follows iogauge's children: the program's process is that
                // tracer's before it can ask to be iogauge's (PTRACE_TRACEME fails).
                Some(t) => format!(
                    "iogauge is itself traced, by process {t} (strace -f, a debugger, or \
                     another iogauge record), which takes its children too: run iogauge \
                     record outside it"
                ),
                None => {
                    format!("the program's process did not stop for the tracer (status {st:#x})")
                }
            }));
        }
        None => return Err(io::Error::other("the program's process is gone")),
    }
    sys::ptrace(libc::PTRACE_SETOPTIONS, pid, OPTIONS)
}

/// Lets a stopped tracee go on.
pub fn resume(pid: i32) -> io::Result<()> {
    sys::ptrace(libc::PTRACE_CONT, pid, 0)
}

/// The program's tasks still alive, as the tracer knows them: what iogauge signals when it is
/// asked to stop — the program's first process may have ended and left children running (a
/// shell's `cmd &`), which the recording goes on following.
#[derive(Debug, Default)]
pub struct Live(std::sync::Mutex<HashSet<i32>>);

impl Live {
    fn set(&self, pid: i32, alive: bool) {
        if alive {
            // Its signals to iogauge's process group are not requests to stop.
            crate::platform::signals::program_task(pid);
        }
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match alive {
            true => s.insert(pid),
            false => s.remove(&pid),
        };
    }

    /// The tasks alive now.
    pub fn tasks(&self) -> Vec<i32> {
        let s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        s.iter().copied().collect()
    }
}

/// Follows the program until its last task has ended, keeping `live` up to date. `fallback`:
/// record every watched call (no perf).
pub fn trace(root: i32, fallback: bool, live: &Live) -> io::Result<Traced> {
    live.set(root, true);
    crate::trace::capture::set_left_running(None);
    let mut t = Tracer {
        root,
        fallback,
        cap: super::perf::max_records(1),
        out: Traced::default(),
        live,
        known: HashSet::from([root]),
        inside: HashMap::new(),
        tgid: HashMap::from([(root, root as u32)]),
        expect_stop: HashSet::new(),
        early: HashSet::new(),
        narrow: super::narrow::Narrow::default(),
    };
    while let Some((pid, st)) = sys::wait_any()? {
        if libc::WIFEXITED(st) || libc::WIFSIGNALED(st) {
            if pid == root {
                t.out.status = Some(st);
            }
            if t.fallback {
                t.out.raw.push(Raw::End {
                    t: sys::monotonic_ns(),
                    tid: pid as u32,
                });
            }
            t.known.remove(&pid);
            t.live.set(pid, false);
            if pid == root {
                crate::trace::capture::set_left_running(left_running(root, &t.known));
            }
            t.narrow.end(pid as u32, sys::monotonic_ns());
            // A call it entered and never left (killed in it): seen only half.
            if t.inside.remove(&pid).is_some() {
                t.out.unfinished += 1;
            }
            continue;
        }
        if !libc::WIFSTOPPED(st) {
            continue;
        }
        let deliver = match t.stopped(pid, st) {
            Ok(sig) => sig,
            // Killed while stopped (SIGKILL from elsewhere): its end comes through wait.
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => continue,
            Err(e) => return Err(e),
        };
        let req = if t.inside.contains_key(&pid) {
            libc::PTRACE_SYSCALL
        } else {
            libc::PTRACE_CONT
        };
        // ESRCH: killed meanwhile; its end comes through wait.
        let _ = sys::ptrace(req, pid, deliver as usize);
    }
    let mut out = t.out;
    out.runs32 = t.narrow.finish();
    Ok(out)
}

/// The tracer's state between stops.
struct Tracer<'a> {
    root: i32,
    live: &'a Live,
    fallback: bool,
    /// The most records (and notes) kept in memory.
    cap: usize,
    out: Traced,
    known: HashSet<i32>,
    /// Fallback: each task's call in progress (entered, exit not yet seen): its entry's
    /// time, process and registers.
    inside: HashMap<i32, (u64, u32, Regs)>,
    tgid: HashMap<i32, u32>,
    /// New tasks start with a SIGSTOP of the kernel's, which is not delivered: those whose
    /// stop is still to come, and those whose stop came before their parent's fork event.
    expect_stop: HashSet<i32>,
    early: HashSet<i32>,
    /// Processes running a 32-bit program.
    narrow: super::narrow::Narrow,
}

impl Tracer<'_> {
    fn tgid(&mut self, pid: i32) -> u32 {
        *self.tgid.entry(pid).or_insert_with(|| tgid_of(pid))
    }

    /// Handles one stop; returns the signal to deliver as the task goes on (0: none).
    fn stopped(&mut self, pid: i32, st: i32) -> io::Result<i32> {
        let t = sys::monotonic_ns();
        let sig = libc::WSTOPSIG(st);
        let event = st >> 16;
        if sig == libc::SIGTRAP && event == libc::PTRACE_EVENT_SECCOMP {
            let regs = sys::regs(pid)?;
            if let Some(call) = Call::of(regs.nr) {
                // Past the memory cap, calls are counted, not kept (nor their exits).
                if self.out.raw.len() + self.out.notes.len() >= self.cap {
                    self.out.capped += 1;
                    return Ok(0);
                }
                if call.has_path() {
                    self.out.notes.push(note(pid, t, call, &regs));
                }
                if self.fallback {
                    // Kept until its exit, where the whole call is one record.
                    let pid_of = self.tgid(pid);
                    self.inside.insert(pid, (t, pid_of, regs));
                }
            }
        } else if sig == (libc::SIGTRAP | 0x80) {
            // Fallback: the exit of a call entered at its seccomp stop.
            if let Some((entered, pid_of, at_entry)) = self.inside.remove(&pid) {
                let regs = sys::regs(pid)?;
                self.out.raw.push(Raw::Call {
                    t: entered,
                    exit: t,
                    pid: pid_of,
                    tid: pid as u32,
                    nr: at_entry.nr as i32,
                    args: at_entry.args,
                    ret: regs.ret,
                });
            }
        } else if sig == libc::SIGTRAP
            && matches!(
                event,
                libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK | libc::PTRACE_EVENT_CLONE
            )
        {
            self.forked(pid, t, event)?;
        } else if sig == libc::SIGTRAP && event == libc::PTRACE_EVENT_EXEC {
            if pid == self.root && self.out.exec_t.is_none() {
                self.out.exec_t = Some(t);
            }
            // The exec's task now has the process's id (a thread that execs takes it).
            self.narrow.exec(pid as u32, t);
            if self.fallback {
                let pid_of = self.tgid(pid);
                self.out.raw.push(Raw::Exec { t, pid: pid_of });
            }
        } else if sig == libc::SIGSTOP && self.expect_stop.remove(&pid) {
            // A new task's first stop, after its parent's fork event.
        } else if sig == libc::SIGSTOP && !self.known.contains(&pid) {
            // A new task's first stop, before its parent's fork event.
            self.known.insert(pid);
            self.live.set(pid, true);
            self.early.insert(pid);
        } else if !sys::in_group_stop(pid) {
            return Ok(sig);
        }
        Ok(0)
    }

    fn forked(&mut self, pid: i32, t: u64, event: i32) -> io::Result<()> {
        let new = sys::event_msg(pid)? as i32;
        self.known.insert(new);
        self.live.set(new, true);
        if !self.early.remove(&new) {
            self.expect_stop.insert(new);
        }
        // Whose task it is matters to the fallback's records and to a 32-bit parent's child.
        if !self.fallback && !self.narrow.any() {
            return Ok(());
        }
        let parent = self.tgid(pid);
        let pid_of = if event == libc::PTRACE_EVENT_CLONE {
            tgid_of(new)
        } else {
            new as u32
        };
        if pid_of == new as u32 {
            self.narrow.fork(parent, pid_of);
        }
        if self.fallback {
            self.tgid.insert(new, pid_of);
            self.out.raw.push(Raw::Fork {
                t,
                pid: pid_of,
                ppid: parent,
                tid: new as u32,
                ptid: pid as u32,
            });
        }
        Ok(())
    }
}

/// The processes other than `root`'s that `tasks` (those alive) belong to, as `root` ends;
/// None where there are none.
fn left_running(root: i32, tasks: &HashSet<i32>) -> Option<crate::trace::capture::LeftRunning> {
    let mut processes: Vec<u32> = tasks
        .iter()
        .map(|&t| tgid_of(t))
        .filter(|&p| p != root as u32)
        .collect();
    processes.sort_unstable();
    processes.dedup();
    if processes.is_empty() {
        return None;
    }
    Some(crate::trace::capture::LeftRunning {
        program: root as u32,
        count: processes.len(),
        processes: processes
            .into_iter()
            .take(crate::trace::capture::LeftRunning::NAMED)
            .map(|pid| (pid, comm_of(pid)))
            .collect(),
    })
}

/// A process's name (`comm`), "?" where it cannot be read (it has ended).
fn comm_of(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim_end().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// A task's process id, from /proc (the task itself when it cannot be read).
fn tgid_of(tid: i32) -> u32 {
    std::fs::read_to_string(format!("/proc/{tid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Tgid:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(tid as u32)
}

/// The path (and for renames, both paths) of a stopped call.
fn note(pid: i32, t: u64, call: Call, r: &Regs) -> PathNote {
    let a = r.args;
    const CWD: i64 = libc::AT_FDCWD as i64;
    let (first, second): ((i64, u64), Option<(i64, u64)>) = match call {
        Call::Open | Call::Creat | Call::Truncate | Call::Unlink | Call::Chdir => {
            ((CWD, a[0]), None)
        }
        Call::Rename => ((CWD, a[0]), Some((CWD, a[1]))),
        Call::Openat | Call::Openat2 | Call::Unlinkat => ((a[0] as i32 as i64, a[1]), None),
        Call::Renameat | Call::Renameat2 => {
            ((a[0] as i32 as i64, a[1]), Some((a[2] as i32 as i64, a[3])))
        }
        _ => ((CWD, 0), None),
    };
    let path = absolute(pid, first.0, &read_string(pid, first.1));
    let path2 = second.map(|(d, p)| absolute(pid, d, &read_string(pid, p)));
    let flags = (call == Call::Openat2).then(|| {
        let mut b = [0u8; 8];
        let _ = sys::read_mem(pid, a[2], &mut b);
        u64::from_ne_bytes(b)
    });
    let before = existing(&path);
    // Nothing there yet: what an open that creates it will make, judged now, while the
    // directory is sure to exist (the program may remove it before the trace is decoded).
    let opened = match before {
        None if matches!(
            call,
            Call::Open | Call::Creat | Call::Openat | Call::Openat2
        ) =>
        {
            match existing(parent_of(&path)) {
                Some(p) if p.kind == FileKind::Directory => Some(Existing {
                    kind: FileKind::Regular,
                    size: 0,
                }),
                _ => None,
            }
        }
        _ => None,
    };
    PathNote {
        t,
        tid: pid as u32,
        call,
        path,
        path2,
        at: None,
        at2: None,
        flags,
        before,
        opened,
    }
}

/// The directory part of a path (bytes).
pub fn parent_of(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&b| b == b'/') {
        Some(0) => b"/",
        Some(i) => &path[..i],
        None => b".",
    }
}

/// A NUL-terminated string of the tracee's, read page by page (at most 4096 bytes).
fn read_string(pid: i32, addr: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < 4096 && addr != 0 {
        let to_page_end = 4096 - (at % 4096) as usize;
        let mut buf = vec![0u8; to_page_end];
        let n = match sys::read_mem(pid, at, &mut buf) {
            Ok(n) if n > 0 => n,
            _ => break,
        };
        if let Some(end) = buf[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&buf[..end]);
            return out;
        }
        out.extend_from_slice(&buf[..n]);
        at += n as u64;
    }
    out
}

/// `path` made absolute against the task's working directory or directory descriptor.
fn absolute(pid: i32, dirfd: i64, path: &[u8]) -> Vec<u8> {
    if path.first() == Some(&b'/') {
        return path.to_vec();
    }
    let base = if dirfd == libc::AT_FDCWD as i64 {
        format!("/proc/{pid}/cwd")
    } else {
        format!("/proc/{pid}/fd/{dirfd}")
    };
    let mut dir = std::fs::read_link(base)
        .map(|p| p.as_os_str().as_bytes().to_vec())
        .unwrap_or_default();
    if path.is_empty() {
        return dir;
    }
    if dir.last() != Some(&b'/') {
        dir.push(b'/');
    }
    dir.extend_from_slice(path);
    dir
}

/// What is at `path` now (following links, as open does).
pub fn existing(path: &[u8]) -> Option<Existing> {
    let p = PathBuf::from(std::ffi::OsStr::from_bytes(path));
    let st = rustix::fs::stat(&p).ok()?;
    let kind = match rustix::fs::FileType::from_raw_mode(st.st_mode) {
        rustix::fs::FileType::RegularFile if !pseudo(&p, st.st_dev) => FileKind::Regular,
        rustix::fs::FileType::BlockDevice => FileKind::Block,
        rustix::fs::FileType::Directory => FileKind::Directory,
        _ => FileKind::Other,
    };
    Some(Existing {
        kind,
        size: st.st_size as u64,
    })
}

/// On a pseudo file system (proc, sysfs, cgroup, tracefs, debugfs, securityfs, bpf, configfs):
/// its files are the kernel's, not storage. Known per device after the first file, so the
/// program stopped at an open waits for one stat, not a statfs too.
fn pseudo(path: &std::path::Path, dev: u64) -> bool {
    static SEEN: std::sync::Mutex<Option<HashMap<u64, bool>>> = std::sync::Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    *seen
        .get_or_insert_with(HashMap::new)
        .entry(dev)
        .or_insert_with(|| on_pseudo_fs(path))
}

/// The magic numbers of the pseudo file systems.
pub const PSEUDO_FS: [i64; 9] = [
    0x9fa0,      // proc
    0x6265_6572, // sysfs
    0x6367_7270, // cgroup2
    0x0027_e0eb, // cgroup
    0x7472_6163, // tracefs
    0x6462_6720, // debugfs
    0x7363_6673, // securityfs
    0xcafe_4a11, // bpf
    0x6265_6570, // configfs
];

fn on_pseudo_fs(path: &std::path::Path) -> bool {
    rustix::fs::statfs(path).is_ok_and(|s| PSEUDO_FS.contains(&{ s.f_type }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter's verdict on a call numbered `nr` of architecture `arch` (an interpreter of
    /// the three instructions it is made of).
    fn verdict(p: &[Insn], arch: u32, nr: u32) -> u32 {
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = p[pc];
            match i.code {
                BPF_LD_W_ABS => acc = if i.k == 4 { arch } else { nr },
                BPF_JEQ_K => pc += usize::from(if acc == i.k { i.jt } else { i.jf }),
                BPF_RET_K => return i.k,
                c => panic!("opcode {c:#x}"),
            }
            pc += 1;
        }
    }

    #[test]
    fn the_filter_stops_the_asked_calls_of_this_architecture_alone() {
        let p = filter(|c| c.has_path());
        let mut stopped = 0;
        for n in Call::numbers() {
            let path = Call::of(n).is_some_and(|c| c.has_path());
            stopped += usize::from(path);
            let want = if path {
                SECCOMP_RET_TRACE
            } else {
                SECCOMP_RET_ALLOW
            };
            assert_eq!(verdict(&p, AUDIT_ARCH, n as u32), want, "call {n}");
            // Another architecture's number means another call: never stopped.
            assert_eq!(verdict(&p, AUDIT_ARCH ^ 1, n as u32), SECCOMP_RET_ALLOW);
        }
        assert!(stopped > 3);
        assert_eq!(verdict(&p, AUDIT_ARCH, 100_000), SECCOMP_RET_ALLOW);
        // Nothing to stop: no filter.
        assert!(filter(|_| false).is_empty());
    }
}
