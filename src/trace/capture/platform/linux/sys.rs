//! The recorder's one unsafe boundary: perf_event_open and its ring buffers, a child started
//! under ptrace with a seccomp filter, and the tracee's registers and memory. Everything above
//! this file is safe code over these few calls.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// `struct perf_event_attr` up to `sample_max_stack` (PERF_ATTR_SIZE_VER5, 112 bytes): all
/// the fields the recorder sets, at the kernel's offsets.
#[repr(C)]
#[derive(Default)]
pub struct PerfAttr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    pub flags: u64,
    /// `wakeup_watermark` when the watermark flag is set.
    pub wakeup: u32,
    pub bp_type: u32,
    pub config1: u64,
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub reserved: u16,
}

const _: () = assert!(std::mem::size_of::<PerfAttr>() == 112);

/// perf_event_open(2) for one task (and its descendants, with `inherit`) on one CPU.
pub fn perf_event_open(attr: &PerfAttr, pid: i32, cpu: i32) -> io::Result<OwnedFd> {
    // SAFETY: attr points to a live, correctly sized perf_event_attr; no group, no flags
    // except close-on-exec.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const PerfAttr,
            pid,
            cpu,
            -1,
            libc::c_ulong::from(PERF_FLAG_FD_CLOEXEC),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor to us and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

const PERF_FLAG_FD_CLOEXEC: u32 = 8;
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;
const PERF_EVENT_IOC_SET_OUTPUT: libc::c_ulong = 0x2405;
const PERF_EVENT_IOC_SET_FILTER: libc::c_ulong = 0x4008_2406;

/// An ioctl on a perf event whose argument is a number (a descriptor, or unused).
fn perf_ioctl(event: &OwnedFd, req: libc::c_ulong, arg: libc::c_int) -> io::Result<()> {
    // SAFETY: a perf event descriptor we own; the requests used take an integer argument.
    let r = unsafe { libc::ioctl(event.as_raw_fd(), req as _, arg) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Sends `event`'s records into `target`'s ring buffer.
pub fn set_output(event: &OwnedFd, target: &OwnedFd) -> io::Result<()> {
    perf_ioctl(event, PERF_EVENT_IOC_SET_OUTPUT, target.as_raw_fd())
}

/// A tracepoint filter (`id == 0 || id == 17`), evaluated in the kernel.
pub fn set_filter(event: &OwnedFd, filter: &str) -> io::Result<()> {
    let c = CString::new(filter).map_err(io::Error::other)?;
    // SAFETY: the string is NUL-terminated and outlives the call.
    let r = unsafe {
        libc::ioctl(
            event.as_raw_fd(),
            PERF_EVENT_IOC_SET_FILTER as _,
            c.as_ptr(),
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Starts or stops counting on an event.
pub fn enable(event: &OwnedFd, on: bool) -> io::Result<()> {
    let req = if on {
        PERF_EVENT_IOC_ENABLE
    } else {
        PERF_EVENT_IOC_DISABLE
    };
    perf_ioctl(event, req, 0)
}

/// bpf(2) with a `union bpf_attr` prefix of the command's (`A` is one of the `Bpf*` structs
/// below); returns the call's non-negative result.
fn bpf<A>(cmd: libc::c_long, attr: &A) -> io::Result<libc::c_long> {
    // SAFETY: attr is a live repr(C) prefix of union bpf_attr for this command, sized by
    // size_of; the kernel reads at most that many bytes and writes nothing back into it.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr as *const A,
            std::mem::size_of::<A>() as libc::c_uint,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// bpf(2) for a command that returns a new descriptor.
fn bpf_fd<A>(cmd: libc::c_long, attr: &A) -> io::Result<OwnedFd> {
    let fd = bpf(cmd, attr)?;
    // SAFETY: the kernel just returned this descriptor to us and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// BPF_MAP_CREATE's attributes.
#[repr(C)]
struct BpfMapCreate {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
}

/// BPF_MAP_UPDATE_ELEM's attributes.
#[repr(C)]
struct BpfMapUpdate {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

/// BPF_PROG_LOAD's attributes, up to `prog_flags`.
#[repr(C)]
struct BpfProgLoad {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
}

/// A new eBPF map with 4-byte keys.
pub fn bpf_map(map_type: u32, value_size: u32, max_entries: u32) -> io::Result<OwnedFd> {
    bpf_map_shaped(map_type, 4, value_size, max_entries, 0)
}

/// A new eBPF map of any shape (`key_size` 0 and `value_size` 0 for a ring buffer, whose
/// `max_entries` is its size in bytes).
pub fn bpf_map_shaped(
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
) -> io::Result<OwnedFd> {
    bpf_fd(
        0,
        &BpfMapCreate {
            map_type,
            key_size,
            value_size,
            max_entries,
            map_flags,
        },
    )
}

/// Removes a 4-byte key from a hash map (absent: not an error here).
pub fn bpf_map_remove(map: &OwnedFd, key: u32) {
    let _ = bpf(
        3,
        &BpfMapUpdate {
            map_fd: map.as_raw_fd() as u32,
            _pad: 0,
            key: &key as *const u32 as u64,
            value: 0,
            flags: 0,
        },
    );
}

/// The values of a per-CPU array's 4-byte key whose values are u64, one per possible CPU.
pub fn bpf_map_per_cpu(map: &OwnedFd, key: u32, cpus: usize) -> io::Result<Vec<u64>> {
    let mut values = vec![0u64; cpus.max(1)];
    bpf(
        1,
        &BpfMapUpdate {
            map_fd: map.as_raw_fd() as u32,
            _pad: 0,
            key: &key as *const u32 as u64,
            value: values.as_mut_ptr() as u64,
            flags: 0,
        },
    )?;
    Ok(values)
}

/// Sets the 4-byte value at a 4-byte key of a map.
pub fn bpf_map_set(map: &OwnedFd, key: u32, value: u32) -> io::Result<()> {
    bpf_map_set_bytes(map, key, &value.to_ne_bytes())
}

/// Sets a 4-byte key's value in an eBPF map whose values are exactly `value.len()` bytes
/// (the kernel reads the map's value size from `value`).
pub fn bpf_map_set_bytes(map: &OwnedFd, key: u32, value: &[u8]) -> io::Result<()> {
    if value.is_empty() {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    bpf(
        2,
        &BpfMapUpdate {
            map_fd: map.as_raw_fd() as u32,
            _pad: 0,
            key: &key as *const u32 as u64,
            value: value.as_ptr() as u64,
            flags: 0,
        },
    )
    .map(drop)
}

/// BPF_RAW_TRACEPOINT_OPEN's attributes.
#[repr(C)]
struct BpfRawTracepoint {
    name: u64,
    prog_fd: u32,
    _pad: u32,
}

/// Runs the eBPF program `prog` (of the raw tracepoint type) at each hit of the kernel's
/// tracepoint `name`, until the returned descriptor is closed. Closing it takes the program
/// off at once: no perf event stands between them, so no grace period is waited for.
pub fn bpf_raw_tracepoint_open(name: &std::ffi::CStr, prog: &OwnedFd) -> io::Result<OwnedFd> {
    bpf_fd(
        17,
        &BpfRawTracepoint {
            name: name.as_ptr() as u64,
            prog_fd: prog.as_raw_fd() as u32,
            _pad: 0,
        },
    )
}

/// One eBPF instruction, as the kernel reads it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BpfInsn {
    pub code: u8,
    /// dst in the low nibble, src in the high.
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

/// Loads an eBPF program of `prog_type` under the GPL (the helpers that read memory need
/// it); a refusal comes back with the verifier's last lines.
pub fn bpf_load(prog_type: u32, insns: &[BpfInsn]) -> io::Result<OwnedFd> {
    let license = c"GPL";
    let mut log = vec![0u8; 64 * 1024];
    let attr = |level: u32, log: &mut [u8]| BpfProgLoad {
        prog_type,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level: level,
        log_size: if level > 0 { log.len() as u32 } else { 0 },
        log_buf: if level > 0 {
            log.as_mut_ptr() as u64
        } else {
            0
        },
        kern_version: 0,
        prog_flags: 0,
    };
    match bpf_fd(5, &attr(0, &mut log)) {
        Ok(fd) => Ok(fd),
        Err(e)
            if e.raw_os_error() == Some(libc::EACCES) || e.raw_os_error() == Some(libc::EINVAL) =>
        {
            // Again with the verifier's log, to say why.
            let _ = bpf_fd(5, &attr(1, &mut log));
            let text =
                String::from_utf8_lossy(&log[..log.iter().position(|&b| b == 0).unwrap_or(0)])
                    .trim()
                    .lines()
                    .rev()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" / ");
            Err(io::Error::new(e.kind(), format!("{e}: {text}")))
        }
        Err(e) => Err(e),
    }
}

/// A perf ring buffer: the metadata page and 2^n data pages, mapped read-write so the reader
/// can advance `data_tail`.
pub struct Ring {
    base: *mut u8,
    len: usize,
    data_len: usize,
    page: usize,
}

// SAFETY: the mapping is owned by this value alone; the kernel is the only other writer and
// synchronises through data_head/data_tail with the orderings used below.
unsafe impl Send for Ring {}

impl Ring {
    /// Maps `data_pages` (a power of two) data pages of `event`'s buffer.
    pub fn map(event: &OwnedFd, data_pages: usize) -> io::Result<Ring> {
        let page = rustix::param::page_size();
        let len = page * (1 + data_pages);
        // SAFETY: a fresh shared mapping of a perf event descriptor, length as the ABI asks.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                event.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Ring {
            base: base.cast(),
            len,
            data_len: page * data_pages,
            page,
        })
    }

    fn head(&self) -> &AtomicU64 {
        // SAFETY: data_head is at offset 1024 of the metadata page, 8-aligned, alive as long
        // as the mapping.
        unsafe { &*(self.base.add(1024) as *const AtomicU64) }
    }

    fn tail(&self) -> &AtomicU64 {
        // SAFETY: data_tail is at offset 1032 of the metadata page, as above.
        unsafe { &*(self.base.add(1032) as *const AtomicU64) }
    }

    /// Copies out every complete record the kernel has written, appending to `out`, and
    /// gives the space back. Returns the bytes taken.
    pub fn drain(&mut self, out: &mut Vec<u8>) -> usize {
        let head = self.head().load(Ordering::Acquire);
        let tail = self.tail().load(Ordering::Relaxed);
        let n = (head - tail) as usize;
        if n == 0 {
            return 0;
        }
        let start = (tail as usize) % self.data_len;
        // SAFETY: the data area follows the metadata page; [tail, head) is written and ours
        // to read until data_tail moves past it.
        let data = unsafe { std::slice::from_raw_parts(self.base.add(self.page), self.data_len) };
        let first = n.min(self.data_len - start);
        out.extend_from_slice(&data[start..start + first]);
        out.extend_from_slice(&data[..n - first]);
        self.tail().store(head, Ordering::Release);
        n
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// A BPF ring buffer's record header's flags.
const RB_BUSY: u32 = 1 << 31;
const RB_DISCARD: u32 = 1 << 30;

/// A BPF ring buffer mapped for reading: its consumer page (written here), and its producer
/// page followed by the data, mapped twice in a row so a record that wraps reads straight.
pub struct BpfRing {
    consumer: *mut u8,
    producer: *mut u8,
    page: usize,
    bytes: usize,
}

// SAFETY: the mappings are owned by this value alone; the kernel writes the producer side and
// reads the consumer position with the orderings used below.
unsafe impl Send for BpfRing {}

impl BpfRing {
    pub fn map(fd: &OwnedFd, bytes: usize) -> io::Result<BpfRing> {
        let page = rustix::param::page_size();
        let map = |len: usize, prot: libc::c_int, offset: usize| {
            // SAFETY: a fresh shared mapping of a ring buffer map, at the offsets and lengths
            // its ABI gives (consumer page at 0, producer page and data twice at one page).
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    prot,
                    libc::MAP_SHARED,
                    fd.as_raw_fd(),
                    offset as libc::off_t,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            // Not into the children iogauge starts: the kernel maps the ring page by page
            // (VM_MIXEDMAP), and a fork would copy all of its entries (64 MiB twice over,
            // 32,768 of them) only for the child's exec to drop them — a few milliseconds
            // a child, the calibration's ten and the program's own. The advice cannot fail
            // on a mapping just made; were it refused, the fork would only cost that again.
            // SAFETY: advice on the mapping just made, of its own length.
            unsafe { libc::madvise(p, len, libc::MADV_DONTFORK) };
            Ok(p.cast::<u8>())
        };
        let consumer = map(page, libc::PROT_READ | libc::PROT_WRITE, 0)?;
        let producer = match map(page + 2 * bytes, libc::PROT_READ, page) {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: the mapping just made, unmapped once.
                unsafe { libc::munmap(consumer.cast(), page) };
                return Err(e);
            }
        };
        Ok(BpfRing {
            consumer,
            producer,
            page,
            bytes,
        })
    }

    fn consumer_pos(&self) -> &AtomicU64 {
        // SAFETY: the consumer position is the first word of its page, alive with the mapping.
        unsafe { &*(self.consumer as *const AtomicU64) }
    }

    fn producer_pos(&self) -> &AtomicU64 {
        // SAFETY: the producer position is the first word of its page, as above.
        unsafe { &*(self.producer as *const AtomicU64) }
    }

    /// Gives back everything written so far, unread.
    pub fn skip(&mut self) {
        let end = self.producer_pos().load(Ordering::Acquire);
        self.consumer_pos().store(end, Ordering::Release);
    }

    /// Hands each committed record to `each`, in the ring's order, and gives the space back;
    /// stops at a record still being written. Returns the bytes taken.
    pub fn drain(&mut self, mut each: impl FnMut(&[u8])) -> usize {
        let start = self.consumer_pos().load(Ordering::Relaxed);
        let end = self.producer_pos().load(Ordering::Acquire);
        let mask = (self.bytes - 1) as u64;
        let mut at = start;
        while at < end {
            let off = (at & mask) as usize;
            // SAFETY: the data follows the producer page and is mapped twice: a header (8
            // bytes, 8-aligned) at `off` and its record of up to the ring's size after it
            // lie inside the mapping.
            let header = unsafe { &*(self.producer.add(self.page + off) as *const AtomicU32) };
            let len = header.load(Ordering::Acquire);
            if len & RB_BUSY != 0 {
                break;
            }
            let size = (len & !(RB_BUSY | RB_DISCARD)) as usize;
            if len & RB_DISCARD == 0 {
                // SAFETY: as above; the record is committed and ours until the position moves.
                each(unsafe {
                    std::slice::from_raw_parts(self.producer.add(self.page + off + 8), size)
                });
            }
            at += ((size + 8 + 7) & !7) as u64;
        }
        self.consumer_pos().store(at, Ordering::Release);
        (at - start) as usize
    }
}

impl Drop for BpfRing {
    fn drop(&mut self) {
        // SAFETY: the mappings made in `map`, unmapped once.
        unsafe {
            libc::munmap(self.consumer.cast(), self.page);
            libc::munmap(self.producer.cast(), self.page + 2 * self.bytes);
        }
    }
}

/// One classic-BPF instruction of a seccomp filter.
#[derive(Clone, Copy)]
pub struct Insn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

/// A child ready to be started: the program's path resolved, argv and environment as C
/// strings, built before fork so the child allocates nothing.
#[derive(Clone)]
pub struct Exec {
    pub path: CString,
    pub argv: Vec<CString>,
    pub envp: Vec<CString>,
    /// A descriptor to make the child's standard output (close-on-exec in the parent).
    pub stdout: Option<RawFd>,
}

/// Forks a child that asks to be traced, stops itself, installs `filter` (its seccomp
/// program: SECCOMP_RET_TRACE for the calls the tracer wants to see) and executes the
/// program. Returns its pid and the read end of a pipe that holds the errno of a failed exec
/// (empty at exec's success).
pub fn spawn_traced(exec: &Exec, filter: &[Insn]) -> io::Result<(i32, OwnedFd)> {
    let argv: Vec<*const libc::c_char> = exec
        .argv
        .iter()
        .map(|a| a.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let envp: Vec<*const libc::c_char> = exec
        .envp
        .iter()
        .map(|a| a.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let prog: Vec<libc::sock_filter> = filter
        .iter()
        .map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        })
        .collect();
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    // SAFETY: fork in a threaded process; the child below calls only async-signal-safe
    // system calls on memory prepared before the fork, then execs or _exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: the child: raw system calls only, then execve or _exit.
        unsafe {
            let w = w.as_raw_fd();
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // The program starts with the signal state a shell would give it, not iogauge's:
            // Rust's runtime ignores SIGPIPE, and an ignored signal stays ignored through
            // exec (a recorded `yes | head` would end in EPIPE and exit 1, not die of
            // SIGPIPE as it does unrecorded), and the forking thread's signal mask would be
            // inherited too. std's Command resets both the same way.
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            // Before the filter: from then on the tracer may be stopping these calls.
            if let Some(fd) = exec.stdout {
                if libc::dup2(fd, 1) < 0 {
                    child_fail(w);
                }
            }
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) != 0 {
                child_fail(w);
            }
            libc::raise(libc::SIGSTOP);
            let fp = &fprog as *const libc::sock_fprog;
            if !prog.is_empty()
                && libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, fp) != 0
            {
                // Without CAP_SYS_ADMIN a filter needs no_new_privs.
                libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
                if libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, fp) != 0 {
                    child_fail(w);
                }
            }
            libc::execve(exec.path.as_ptr(), argv.as_ptr(), envp.as_ptr());
            child_fail(w);
        }
    }
    drop(w);
    Ok((pid, r))
}

/// The child's way out: its errno into the pipe, exit 127.
///
/// # Safety
/// Only in the forked child.
// SAFETY: callers are the forked child only (see above).
unsafe fn child_fail(w: RawFd) -> ! {
    // SAFETY: errno location and write(2) are async-signal-safe.
    unsafe {
        let e = *libc::__errno_location();
        let b = e.to_ne_bytes();
        libc::write(w, b.as_ptr().cast(), b.len());
        libc::_exit(127)
    }
}

/// waitpid(-1, __WALL): the next tracee's stop or end; None when no child is left.
pub fn wait_any() -> io::Result<Option<(i32, i32)>> {
    let mut status = 0;
    loop {
        // SAFETY: status is a valid out pointer.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL) };
        if pid >= 0 {
            return Ok(Some((pid, status)));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::ECHILD) => return Ok(None),
            _ => return Err(e),
        }
    }
}

/// A ptrace request without data (PTRACE_CONT, PTRACE_SYSCALL, PTRACE_SETOPTIONS, …).
pub fn ptrace(req: libc::c_uint, pid: i32, data: usize) -> io::Result<()> {
    // SAFETY: requests used here take an integer in data and no address.
    let r = unsafe { libc::ptrace(req, pid, 0usize, data) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// PTRACE_GETEVENTMSG: the new task's id at a fork/clone event.
pub fn event_msg(pid: i32) -> io::Result<u64> {
    let mut msg: libc::c_ulong = 0;
    // SAFETY: msg is a valid out pointer of the size the kernel writes.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_GETEVENTMSG,
            pid,
            0usize,
            &mut msg as *mut libc::c_ulong,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(msg as u64)
}

/// A stopped tracee's system call: its number, six arguments and (at syscall exit) result.
#[derive(Debug, Clone, Copy, Default)]
pub struct Regs {
    pub nr: i64,
    pub args: [u64; 6],
    pub ret: i64,
}

/// The tracee's registers, as its architecture's syscall ABI names them.
pub fn regs(pid: i32) -> io::Result<Regs> {
    // SAFETY: user_regs_struct is plain data; GETREGSET fills at most iov_len bytes.
    unsafe {
        let mut r: libc::user_regs_struct = std::mem::zeroed();
        let mut iov = libc::iovec {
            iov_base: (&mut r as *mut libc::user_regs_struct).cast(),
            iov_len: std::mem::size_of::<libc::user_regs_struct>(),
        };
        if libc::ptrace(libc::PTRACE_GETREGSET, pid, 1usize, &mut iov) < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(regs_of(&r))
    }
}

#[cfg(target_arch = "x86_64")]
fn regs_of(r: &libc::user_regs_struct) -> Regs {
    Regs {
        nr: r.orig_rax as i64,
        args: [r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9],
        ret: r.rax as i64,
    }
}

#[cfg(target_arch = "aarch64")]
fn regs_of(r: &libc::user_regs_struct) -> Regs {
    Regs {
        nr: r.regs[8] as i64,
        args: [
            r.regs[0], r.regs[1], r.regs[2], r.regs[3], r.regs[4], r.regs[5],
        ],
        ret: r.regs[0] as i64,
    }
}

/// Reads up to `buf.len()` bytes of the tracee's memory at `addr`; the count read.
pub fn read_mem(pid: i32, addr: u64, buf: &mut [u8]) -> io::Result<usize> {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: the local iovec covers `buf`; the remote one is only read by the kernel.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// Sends a signal to one process.
pub fn kill(pid: i32, sig: i32) {
    // SAFETY: kill(2) with plain integers.
    unsafe { libc::kill(pid, sig) };
}

/// Whether a stopped tracee is in a group-stop (PTRACE_GETSIGINFO fails with EINVAL) rather
/// than a signal-delivery-stop.
pub fn in_group_stop(pid: i32) -> bool {
    // SAFETY: siginfo_t is plain data, filled by the kernel.
    unsafe {
        let mut si: libc::siginfo_t = std::mem::zeroed();
        libc::ptrace(libc::PTRACE_GETSIGINFO, pid, 0usize, &mut si) < 0
            && *libc::__errno_location() == libc::EINVAL
    }
}

/// CLOCK_MONOTONIC in nanoseconds: the clock perf's records are stamped with.
pub fn monotonic_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: t is a valid out pointer; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}
