//! The capture on Linux: the calls come from the kernel's syscall tracepoints through perf
//! (`perf`: about 1–3 µs a call, measured), or, where perf is not allowed, from ptrace stops
//! at each call (`ptrace`: slower, the same trace). With perf, the paths of the calls that
//! name one are read in the kernel by eBPF programs (`bpf`), and where those are refused,
//! under ptrace at a seccomp stop made only for those calls. The capture's own cost is
//! measured before each recording with a calibration run of iogauge's own (see
//! [`calibrate_child`]) and written into the trace.

use std::ffi::{CString, OsString};
use std::io::Read;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

mod aio;
mod args;
pub mod block;
pub mod bpf;
mod bpf_asm;
mod btf;
mod calibrate;
pub mod callring;
pub mod calls;
pub mod decode;
pub mod family;
mod faults;
mod narrow;
mod pathprog;
pub mod perf;
pub mod ptrace;
mod rawtp;
mod records;
mod sched;
mod sys;
mod uring;

use crate::trace::capture::{CaptureError, Captured, Method};
use crate::trace::recording::{Footer, Header, Recording, VERSION};
use ptrace::FileKind;

/// The hidden first argument that makes iogauge the calibration program, and that program.
pub use calibrate::{CALIBRATE_ARG, calibrate_child};

/// Records `argv` (program and arguments). `stop` turns true when iogauge is asked to stop:
/// the program is sent SIGTERM and what was recorded until its end is kept.
pub fn record(
    argv: &[OsString],
    method: Method,
    stop: Arc<AtomicBool>,
) -> Result<Captured, CaptureError> {
    record_with(argv, method, stop, None)
}

/// `record`, the program's standard output made `stdout` where given (close-on-exec here).
pub fn record_with(
    argv: &[OsString],
    method: Method,
    stop: Arc<AtomicBool>,
    stdout: Option<&std::fs::File>,
) -> Result<Captured, CaptureError> {
    let mut exec = prepare(argv)?;
    exec.stdout = stdout.map(std::os::fd::AsRawFd::as_raw_fd);
    let (mut ids, mut fallback_reason) = choose(method)?;
    // The path probes are loaded once, for the calibration and the recording.
    let mut paths = paths(ids);
    // Without the eBPF ring the calls are perf's samples of the tracepoints, which perf must
    // allow here: else `auto` falls back to ptrace (and says why), `perf` is refused.
    let ring = matches!(&paths, Paths::Kernel(p) if p.calls().is_ok());
    if let Some(t) = ids
        && !ring
        && let Err(e) = perf::allowed(t)
    {
        if matches!(method, Method::Perf) {
            return Err(CaptureError::Failed(format!("--method=perf: {e}")));
        }
        (ids, fallback_reason, paths) = (None, Some(e.to_string()), Paths::Stops("no perf".into()));
    }
    let overhead = calibrate::calibrate(ids, &mut paths);
    // The probes are loaded detached; the calibration takes them off for its plain runs and
    // puts them on for its traced ones. On for the recording; where they will not go on,
    // paths are read at stops.
    if let Paths::Kernel(p) = &mut paths
        && let Err(e) = p.attach()
    {
        paths = Paths::Stops(format!("attaching the eBPF programs: {e}"));
    }
    let started_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let run = run_traced(&exec, ids, &paths, Some(stop))?;
    let Run {
        decoded,
        status,
        lost,
        t0,
        end,
        calls,
        path_calls,
        capped,
        syscalls,
        untracked,
        processes_32bit,
        faults_seen,
    } = run;
    let duration_ns = end.saturating_sub(t0);
    let unwatched = syscalls.map_or(0, |n| n.saturating_sub(calls));
    let overhead = overhead.map(|c| c.applied((calls, path_calls, unwatched), duration_ns));
    let method = captured_how(ids, paths)
        + &scheduler_how(ids.is_some(), decoded.wakes_seen)
        + faults_how(ids.is_some(), faults_seen);
    let recording = Recording {
        header: header(argv, started_unix_ms, method),
        events: decoded.events,
        footer: Footer {
            duration_ns,
            exit_code: status
                .filter(|s| libc::WIFEXITED(*s))
                .map(|s| libc::WEXITSTATUS(s)),
            exit_signal: status
                .filter(|s| libc::WIFSIGNALED(*s))
                .map(|s| libc::WTERMSIG(s)),
            files: in_memory(decoded.files),
            threads: decoded.threads,
            lost,
            unmatched: decoded.unmatched,
            other_calls: decoded.other_calls,
            unknown_fd_calls: decoded.unknown_fd_calls,
            aio_unseen: decoded.aio_unseen,
            aio_unreaped: decoded.aio_unreaped,
            capped,
            untracked_tasks: untracked,
            processes_32bit,
            overhead,
            wakes_seen: decoded.wakes_seen,
            wakes: decoded.wakes,
            signals_seen: true,
            signals: decoded.signals,
            kills: decoded.kills,
            gaps: decoded.gaps,
            faults: faults_seen.then_some(decoded.faults),
            advice: faults_seen.then_some(decoded.advice),
        },
    };
    Ok(Captured {
        recording,
        fallback_reason,
    })
}

/// What the trace's header says of the signals between the program's tasks and, for a perf
/// capture (`perf`), of who woke whom.
fn scheduler_how(perf: bool, wakes_seen: bool) -> String {
    let signals = "; signals between the program's tasks: their kill, tkill, tgkill, sigqueue \
                   and pidfd_send_signal calls";
    let woke = match (perf, wakes_seen) {
        (false, _) => "",
        (true, true) => {
            "; who woke whom among the tasks: the sched:sched_waking tracepoint, inherited by \
             every task (made by the waker; wake-ups from interrupts left out)"
        }
        (true, false) => {
            "; who woke whom among the tasks: not seen (no sched_waking tracepoint, or perf \
             refused it)"
        }
    };
    format!("{signals}{woke}")
}

/// What the trace's header says of the program's major page faults, for a perf capture
/// (`perf`) or one under ptrace.
fn faults_how(perf: bool, seen: bool) -> &'static str {
    match (perf, seen) {
        (true, true) => {
            "; major page faults (I/O through mappings): perf's page-faults-major software \
             event, inherited by every task, each fault with its address, tied to the page of \
             the file the program's mmap calls put there"
        }
        (true, false) => "; major page faults: not seen (perf refused its software event)",
        (false, _) => "; major page faults: not seen (ptrace)",
    }
}

/// How the calls, their paths and the asynchronous I/Os were captured, for the trace's header.
fn captured_how(ids: Option<perf::Tracepoints>, paths: Paths) -> String {
    match (ids, paths) {
        (Some(_), Paths::Kernel(p)) => format!(
            "{}; paths read in the kernel by eBPF programs on the sys_enter raw tracepoint, and \
            what each open opened on sys_exit; {}; {}",
            match p.calls() {
                Ok(_) => "eBPF: programs on the sys_enter/sys_exit raw tracepoints write the \
                          calls of the program's tasks (followed at fork, exec and exit by \
                          programs on the sched_process raw tracepoints) into a BPF ring \
                          buffer; perf events inherited by every task give their forks, exits \
                          and context switches"
                    .to_string(),
                Err(why) => format!(
                    "perf: raw_syscalls:sys_enter/sys_exit tracepoints on every CPU, \
                     inherited by every task, the calls as perf samples (no eBPF ring \
                     buffer: {why})"
                ),
            },
            match p.aio_unseen() {
                None => "libaio's I/Os read by eBPF programs on the sys_enter/sys_exit raw \
                         tracepoints, at io_submit's entry and io_getevents' exit"
                    .to_string(),
                Some(why) => format!("libaio's I/Os not seen ({why})"),
            },
            match p.uring_unseen() {
                None => "io_uring's I/Os read by eBPF programs on the io_uring_submit_req \
                         and io_uring_complete raw tracepoints"
                    .to_string(),
                Some(why) => format!("io_uring's I/Os not seen ({why})"),
            }
        ),
        (Some(_), Paths::Stops(why)) => format!(
            "perf: raw_syscalls:sys_enter/sys_exit tracepoints on every CPU, inherited by \
             every task, the calls as perf samples; paths read at ptrace stops made by a seccomp filter for the calls \
             that name one (eBPF not used: {why}); libaio's I/Os not seen; io_uring's I/Os \
             not seen"
        ),
        (None, _) => {
            "ptrace: a seccomp filter stops each watched call at entry, PTRACE_SYSCALL at exit; \
             libaio's I/Os not seen; io_uring's I/Os not seen"
                .to_string()
        }
    }
}

/// The header of a trace of `argv` recorded here from `started_unix_ms`, captured as `method`
/// says.
fn header(argv: &[OsString], started_unix_ms: u64, method: String) -> Header {
    Header {
        format: "iogauge-trace".into(),
        version: VERSION,
        iogauge: env!("CARGO_PKG_VERSION").into(),
        command: argv
            .iter()
            .map(|a| crate::rawpath::text(Path::new(a)))
            .collect(),
        started_unix_ms,
        host: rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned(),
        method,
    }
}

/// perf's tracepoints when the method allows and they are known here (None: ptrace), and why
/// `Auto` fell back.
fn choose(method: Method) -> Result<(Option<perf::Tracepoints>, Option<String>), CaptureError> {
    match method {
        Method::Ptrace => Ok((None, None)),
        Method::Perf => perf::known()
            .map(|ids| (Some(ids), None))
            .map_err(|e| CaptureError::Failed(format!("--method=perf: {e}"))),
        Method::Auto => Ok(match perf::known() {
            Ok(ids) => (Some(ids), None),
            Err(e) => (None, Some(e.to_string())),
        }),
    }
}

/// The program found (PATH searched as a shell would) and its arguments and environment as
/// C strings.
fn prepare(argv: &[OsString]) -> Result<sys::Exec, CaptureError> {
    let Some(program) = argv.first() else {
        return Err(CaptureError::Usage(
            "record: no command given (iogauge record [--output TRACE] -- COMMAND ARGS…)".into(),
        ));
    };
    let path = find_program(program).ok_or_else(|| {
        CaptureError::Usage(format!(
            "record: {}: no such program (not a path to an executable, nor in PATH)",
            Path::new(program).display()
        ))
    })?;
    let c = |b: Vec<u8>| {
        CString::new(b)
            .map_err(|_| CaptureError::Usage("record: an argument holds a NUL byte".into()))
    };
    Ok(sys::Exec {
        path: c(path.into_os_string().into_vec())?,
        argv: argv
            .iter()
            .map(|a| c(a.as_bytes().to_vec()))
            .collect::<Result<_, _>>()?,
        envp: std::env::vars_os()
            .map(|(k, v)| {
                let mut b = k.into_vec();
                b.push(b'=');
                b.extend_from_slice(v.as_bytes());
                c(b)
            })
            .collect::<Result<_, _>>()?,
        stdout: None,
    })
}

fn find_program(program: &std::ffi::OsStr) -> Option<PathBuf> {
    let executable =
        |p: &Path| rustix::fs::access(p, rustix::fs::Access::EXEC_OK).is_ok() && p.is_file();
    if program.as_bytes().contains(&b'/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| executable(p))
}

/// One traced run's raw results.
struct Run {
    decoded: decode::Decoded,
    status: Option<i32>,
    lost: u64,
    t0: u64,
    end: u64,
    /// Watched calls seen (storage or not) and calls that stopped for their path.
    calls: u64,
    path_calls: u64,
    /// Records left out past the memory cap: the calls after it are not in the trace.
    capped: u64,
    /// Every system call the program made (perf's counter; None under ptrace alone).
    syscalls: Option<u64>,
    /// Tasks the capture could not follow.
    untracked: u64,
    /// Processes that ran a 32-bit program, whose calls are left out.
    processes_32bit: u64,
    /// The capture saw the program's major page faults.
    faults_seen: bool,
}

/// How the paths of a traced run are read.
enum Paths {
    /// By the eBPF probes.
    Kernel(bpf::PathProbes),
    /// At ptrace stops, and why not in the kernel.
    Stops(String),
}

/// The eBPF path probes where perf is used and they load; else why not.
fn paths(ids: Option<perf::Tracepoints>) -> Paths {
    if ids.is_none() {
        return Paths::Stops("no perf".into());
    }
    match perf::online_cpus() {
        Err(e) => Paths::Stops(format!("the online CPUs: {e}")),
        Ok(cpus) => match bpf::PathProbes::open(&cpus) {
            Ok(p) => Paths::Kernel(p),
            Err(why) => Paths::Stops(why.0),
        },
    }
}

/// Starts the program under the tracer (and perf, when `ids`), follows it to its end, and
/// decodes what was seen.
fn run_traced(
    exec: &sys::Exec,
    ids: Option<perf::Tracepoints>,
    paths: &Paths,
    stop: Option<Arc<AtomicBool>>,
) -> Result<Run, CaptureError> {
    let fallback = ids.is_none();
    let probes = match paths {
        Paths::Kernel(p) => Some(p),
        Paths::Stops(_) => None,
    };
    let stops = probes.is_none();
    // madvise serves the page faults, which ptrace does not see: it never stops there.
    let filter =
        ptrace::filter(|c| (fallback && c != calls::Call::Madvise) || (stops && c.has_path()));
    let failed =
        |what: &str, e: std::io::Error| CaptureError::Failed(format!("record: {what}: {e}"));
    let (pid, exec_errors) = sys::spawn_traced(exec, &filter).map_err(|e| failed("fork", e))?;
    let kill = || {
        sys::kill(pid, libc::SIGKILL);
        while let Ok(Some(_)) = sys::wait_any() {}
    };
    if let Err(e) = ptrace::attach(pid) {
        kill();
        return Err(failed("ptrace", e));
    }
    let inherited = inherited(pid);
    // From its first instruction, a `kill 0` of the program's reaches iogauge too (it runs in
    // iogauge's process group): not a request to stop. Its tasks are forgotten at the end.
    crate::platform::signals::program_task(pid);
    let _forget = Forget;
    let done = Arc::new(AtomicBool::new(false));
    let reader = match ids.map(|ids| perf::Session::open(pid, ids, probes)) {
        Some(Ok(s)) => Some(s.read_until(Arc::clone(&done))),
        Some(Err(e)) => {
            kill();
            return Err(failed("perf_event_open", e));
        }
        None => None,
    };
    let t_start = sys::monotonic_ns();
    let finish_reader = |reader: Option<std::thread::JoinHandle<perf::Drained>>| {
        done.store(true, Ordering::Release);
        reader.map(|r| r.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    };
    if let Err(e) = ptrace::resume(pid) {
        kill();
        finish_reader(reader);
        return Err(failed("ptrace", e));
    }
    let live = Arc::new(ptrace::Live::default());
    let watcher =
        stop.map(|stop| forward_stop(stop, Arc::clone(&done), pid, Some(Arc::clone(&live))));
    let traced = ptrace::trace(pid, fallback, &live);
    let traced = traced.map_err(|e| failed("ptrace", e));
    let end = sys::monotonic_ns();
    let finished = finish_reader(reader);
    if let Some(w) = watcher {
        let _ = w.join();
    }
    let traced = traced?;
    // The child's exec error, if any: the pipe is closed by now (exec or exit).
    let mut errno = [0u8; 4];
    if matches!(std::fs::File::from(exec_errors).read(&mut errno), Ok(4)) {
        let e = std::io::Error::from_raw_os_error(i32::from_ne_bytes(errno));
        return Err(CaptureError::Usage(format!(
            "record: cannot run {}: {e}",
            String::from_utf8_lossy(exec.path.as_bytes())
        )));
    }
    let t0 = traced.exec_t.unwrap_or(t_start);
    Ok(decoded(
        traced,
        finished,
        probes.is_some(),
        pid,
        &inherited,
        (t0, end),
    ))
}

/// Forgets the program's tasks as a traced run ends, however it ends: their ids may be
/// anyone's after.
struct Forget;

impl Drop for Forget {
    fn drop(&mut self) {
        crate::platform::signals::forget_program_tasks();
    }
}

/// A traced run's records (perf's, when `finished`; else the tracer's) decoded, the path
/// notes from the kernel's probes (`kernel`) or the tracer's stops.
fn decoded(
    mut traced: ptrace::Traced,
    finished: Option<perf::Drained>,
    kernel: bool,
    pid: i32,
    inherited: &[decode::Inherited],
    (t0, end): (u64, u64),
) -> Run {
    let fallback = finished.is_none();
    let stops_capped = traced.capped;
    let runs32 = std::mem::take(&mut traced.runs32);
    let perf::Drained {
        mut raw,
        seen,
        lost,
        capped,
        syscalls,
        switches,
        switched,
        wakes,
        woken,
        untracked,
        unfinished,
        faults: faults_seen,
    } = finished.unwrap_or(perf::Drained {
        raw: traced.raw,
        capped: traced.capped,
        unfinished: traced.unfinished,
        ..Default::default()
    });
    // With perf, what the tracer left out past the cap is path notes.
    let capped = if fallback {
        capped
    } else {
        capped + stops_capped
    };
    let calls = raw.iter().filter(|r| r.entry().is_some()).count() as u64;
    let (aio, seen): (Vec<_>, Vec<_>) = seen
        .into_iter()
        .partition(|s| matches!(s, bpf::Seen::Aio(_)));
    let aio = aio
        .into_iter()
        .filter_map(|s| match s {
            bpf::Seen::Aio(a) => Some(a),
            _ => None,
        })
        .collect();
    // The room the records' list grew into is given back before the trace's events take
    // theirs; the records are sorted once, here, for the path notes and the decoding both.
    raw.shrink_to_fit();
    raw.sort_by_key(perf::Raw::time);
    // A 32-bit program's calls mean other calls: left out, their processes counted.
    narrow::drop_calls(&mut raw, &runs32);
    let notes = if kernel {
        bpf::notes(&raw, seen)
    } else {
        traced.notes
    };
    let path_calls = notes.len() as u64;
    let cwd = std::env::current_dir()
        .map(|d| d.into_os_string().into_vec())
        .unwrap_or_default();
    let mut decoded = decode::decode(
        raw,
        (notes, aio),
        pid as u32,
        inherited,
        (t0, cwd),
        switches.then_some(sched::Records {
            switches: switched,
            wakings: wakes.then_some(woken),
        }),
    );
    decoded.unmatched += unfinished;
    Run {
        decoded,
        status: traced.status,
        lost,
        t0,
        end,
        calls,
        path_calls,
        capped,
        syscalls,
        untracked,
        processes_32bit: runs32.len() as u64,
        faults_seen,
    }
}

/// A thread that sends the program SIGTERM once `stop` turns true (iogauge was asked to
/// stop), until `done`: its first process, and every task of it that `live` holds — a
/// program whose first process has ended can leave children running that the recording
/// follows (`sh -c 'server &'`), and a recording asked to stop must not wait on them. Those
/// still running [`STOP_GRACE`](crate::trace::capture::STOP_GRACE) later are sent SIGKILL.
fn forward_stop(
    stop: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    pid: i32,
    live: Option<Arc<ptrace::Live>>,
) -> std::thread::JoinHandle<()> {
    let tick = std::time::Duration::from_millis(20);
    std::thread::spawn(move || {
        // SIGKILL, 10 s on, goes only to the tasks the tracer knows alive where it follows
        // them: the first process may have ended and been waited for, and its pid be
        // another's by then. (Without a tracer the caller waits for the first process only
        // after `done`.)
        let send = |sig: i32| {
            let mut tasks: Vec<i32> = live.iter().flat_map(|l| l.tasks()).collect();
            if (sig == libc::SIGTERM || live.is_none()) && !tasks.contains(&pid) {
                tasks.push(pid);
            }
            for task in tasks {
                sys::kill(task, sig);
            }
        };
        while !stop.load(Ordering::Acquire) {
            if done.load(Ordering::Acquire) {
                return;
            }
            std::thread::sleep(tick);
        }
        send(libc::SIGTERM);
        let asked = std::time::Instant::now();
        while !done.load(Ordering::Acquire) {
            if asked.elapsed() >= crate::trace::capture::STOP_GRACE {
                send(libc::SIGKILL);
                return;
            }
            std::thread::sleep(tick);
        }
    })
}

/// The stopped child's descriptors (inherited from iogauge): path, kind, size, flags and
/// position.
fn inherited(pid: i32) -> Vec<decode::Inherited> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(target) = std::fs::read_link(entry.path()) else {
            continue;
        };
        let path = target.into_os_string().into_vec();
        let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).unwrap_or_default();
        let field = |name: &str, radix: u32| {
            info.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| u64::from_str_radix(v.trim(), radix).ok())
                .unwrap_or(0)
        };
        let found = if path.first() == Some(&b'/') {
            ptrace::existing(&path)
        } else {
            None
        };
        out.push(decode::Inherited {
            fd,
            kind: found.map_or(FileKind::Other, |f| f.kind),
            size: found.map_or(0, |f| f.size),
            path,
            flags: field("flags:", 8),
            pos: field("pos:", 10),
        });
    }
    out
}

/// The files, each marked where the file system holding it (its directory's, asked after the
/// program ended) keeps its files in memory: tmpfs, ramfs.
fn in_memory(
    mut files: Vec<crate::trace::recording::FileInfo>,
) -> Vec<crate::trace::recording::FileInfo> {
    const TMPFS: i64 = 0x0102_1994;
    const RAMFS: i64 = 0x8584_58f6;
    for f in &mut files {
        let path = crate::rawpath::path(&f.path);
        let dir = path.parent().unwrap_or(Path::new("/"));
        if let Ok(st) = rustix::fs::statfs(dir) {
            // f_type is an i32 on 32-bit targets.
            #[allow(clippy::unnecessary_cast)]
            let magic = st.f_type as i64;
            f.in_memory = matches!(magic, TMPFS | RAMFS);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_is_the_users_error() {
        let e = prepare(&[OsString::from("no-such-program-iogauge")])
            .err()
            .unwrap();
        assert!(
            matches!(e, CaptureError::Usage(ref m) if m.contains("no such program")),
            "{e}"
        );
        assert!(prepare(&[]).is_err());
        assert_eq!(
            find_program("sh".as_ref()).is_some(),
            Path::new("/bin/sh").exists() || Path::new("/usr/bin/sh").exists()
        );
    }

    #[test]
    fn kind_of_file_is_not_storage_for_pseudo_files() {
        assert_eq!(
            ptrace::existing(b"/proc/self/status").unwrap().kind,
            FileKind::Other
        );
        assert_eq!(
            ptrace::existing(b"/dev/null").unwrap().kind,
            FileKind::Other
        );
        assert_eq!(ptrace::existing(b"/").unwrap().kind, FileKind::Directory);
    }
}
