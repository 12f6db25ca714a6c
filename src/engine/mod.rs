//! I/O engines: each knows one way of issuing syscalls, nothing about workloads. fio's shape:
//! [`Engine::queue`] either completes an I/O at once (synchronous engines) or queues it
//! (io_uring), and queued engines add [`Engine::commit`] and [`Engine::reap`]. The worker loop
//! is generic over the engine type, so the hot path has no dynamic dispatch, and a synchronous
//! engine's queue/commit/reap collapse to one inlined call.

pub mod buf;
pub mod cpu;
pub mod exec;
pub mod fileops;
pub mod net;
pub mod null;
pub mod platform;
pub mod psync;
pub mod space;
pub mod sync;
pub mod trim;
pub mod unit;

use crate::platform::fd::{BorrowedFd, OwnedFd};
use std::io;

pub use buf::AlignedBuf;
pub use unit::IoUnit;

/// The engines: each one's name, and what it can do. A new one goes in [`Kind::ALL`] too,
/// which is where `ioengine`'s names come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Psync,
    Sync,
    Vsync,
    Pvsync,
    Pvsync2,
    #[serde(rename = "io_uring")]
    IoUring,
    Libaio,
    Posixaio,
    Mmap,
    Splice,
    Falloc,
    Ftruncate,
    E4defrag,
    Filecreate,
    Filestat,
    Filedelete,
    Dircreate,
    Dirstat,
    Dirdelete,
    Cpuio,
    Exec,
    Net,
    Netsplice,
    Windowsaio,
    Null,
}

impl Kind {
    /// Every engine, in the order `ioengine`'s help and errors list them.
    pub const ALL: [Kind; 25] = [
        Kind::Psync,
        Kind::Sync,
        Kind::Vsync,
        Kind::Pvsync,
        Kind::Pvsync2,
        Kind::IoUring,
        Kind::Libaio,
        Kind::Mmap,
        Kind::Splice,
        Kind::Posixaio,
        Kind::Falloc,
        Kind::Ftruncate,
        Kind::E4defrag,
        Kind::Filecreate,
        Kind::Filestat,
        Kind::Filedelete,
        Kind::Dircreate,
        Kind::Dirstat,
        Kind::Dirdelete,
        Kind::Cpuio,
        Kind::Exec,
        Kind::Net,
        Kind::Netsplice,
        Kind::Windowsaio,
        Kind::Null,
    ];

    /// The engine `ioengine` calls `name`.
    pub fn from_name(name: &str) -> Option<Kind> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::Psync => "psync",
            Kind::Sync => "sync",
            Kind::Vsync => "vsync",
            Kind::Pvsync => "pvsync",
            Kind::Pvsync2 => "pvsync2",
            Kind::IoUring => "io_uring",
            Kind::Libaio => "libaio",
            Kind::Posixaio => "posixaio",
            Kind::Mmap => "mmap",
            Kind::Splice => "splice",
            Kind::Falloc => "falloc",
            Kind::Ftruncate => "ftruncate",
            Kind::E4defrag => "e4defrag",
            Kind::Filecreate => "filecreate",
            Kind::Filestat => "filestat",
            Kind::Filedelete => "filedelete",
            Kind::Dircreate => "dircreate",
            Kind::Dirstat => "dirstat",
            Kind::Dirdelete => "dirdelete",
            Kind::Cpuio => "cpuio",
            Kind::Exec => "exec",
            Kind::Net => "net",
            Kind::Netsplice => "netsplice",
            Kind::Windowsaio => "windowsaio",
            Kind::Null => "null",
        }
    }
    /// Whether each I/O is an operation on a file's name (create, stat, delete), one per file
    /// per pass, rather than a transfer at an offset; the files are directories for the
    /// `dir…` engines ([`Kind::dir_op`]).
    pub fn file_op(self) -> bool {
        matches!(self, Kind::Filecreate | Kind::Filestat | Kind::Filedelete) || self.dir_op()
    }
    /// Whether each I/O is an operation on a directory's name (mkdir, stat, rmdir).
    pub fn dir_op(self) -> bool {
        matches!(self, Kind::Dircreate | Kind::Dirstat | Kind::Dirdelete)
    }
    /// Whether the engine creates its files (or directories) as its measured operation.
    pub fn creates(self) -> bool {
        matches!(self, Kind::Filecreate | Kind::Dircreate)
    }
    /// Whether the engine moves no data (its I/Os are allocation calls or nothing): nothing to
    /// verify, and no buffer contents that matter.
    pub fn moves_no_data(self) -> bool {
        matches!(
            self,
            Kind::Falloc | Kind::Ftruncate | Kind::E4defrag | Kind::Null | Kind::Cpuio | Kind::Exec
        ) || self.file_op()
    }
    /// Whether the engine has no file at all (null, cpuio, exec, net's sockets): nothing is
    /// checked, made or opened.
    pub fn fileless(self) -> bool {
        matches!(self, Kind::Null | Kind::Cpuio | Kind::Exec) || self.network()
    }
    /// Whether the engine's I/O goes over a socket (net, netsplice).
    pub fn network(self) -> bool {
        matches!(self, Kind::Net | Kind::Netsplice)
    }
    /// Whether the engine does no I/O at all (cpuio burns CPU, exec runs a program): its
    /// cycles count as I/Os of its own job, never in a group's total beside I/O jobs.
    pub fn no_io(self) -> bool {
        Kind::NO_IO.contains(&self)
    }
    /// The engines that do no I/O at all.
    pub const NO_IO: [Kind; 2] = [Kind::Cpuio, Kind::Exec];
    /// Whether I/Os are queued, `iodepth` of them in flight (the others do one at a time).
    pub fn queued(self) -> bool {
        matches!(
            self,
            Kind::IoUring | Kind::Libaio | Kind::Posixaio | Kind::Windowsaio
        )
    }
    /// Whether one call can move several page buffers (`numpages`).
    pub fn vectored(self) -> bool {
        matches!(
            self,
            Kind::Vsync
                | Kind::Pvsync
                | Kind::Pvsync2
                | Kind::IoUring
                | Kind::Libaio
                | Kind::Windowsaio
                | Kind::Null
        )
    }
    /// Whether write-through (`sync=dsync|sync`) is applied per call (RWF_DSYNC/RWF_SYNC)
    /// rather than at open (O_DSYNC/O_SYNC).
    pub fn per_call_sync(self) -> bool {
        self == Kind::Pvsync2
    }
}

/// Direction of one I/O (fio's numbering: the `ddir` of its logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read = 0,
    Write = 1,
    /// A discard (block device) or punched hole (file): see [`trim`].
    Trim = 2,
}

impl Dir {
    pub const ALL: [Dir; 3] = [Dir::Read, Dir::Write, Dir::Trim];

    pub fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Trim => "trim",
        }
    }
}

/// Write-through asked per call (pvsync2's RWF_DSYNC/RWF_SYNC); other engines get it from the
/// open flags instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteThrough {
    #[default]
    None,
    Dsync,
    Sync,
}

/// What an engine needs to know: its own options, never the job (rule 3: engines know
/// syscalls, not workloads). Made by `spec::JobSpec::engine_config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    pub kind: Kind,
    /// Page buffers per I/O.
    pub numpages: u32,
    pub queue: Queue,
    pub flags: Flags,
    pub write_through: WriteThrough,
}

/// The queue: depth and io_uring batching, as fio's iodepth, iodepth_batch_submit,
/// iodepth_batch_complete_min/max and iodepth_low (the worker applies the batching; the
/// engine describes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queue {
    /// I/Os in flight (1 for the synchronous engines).
    pub depth: u32,
    /// Queued I/Os per submission (0 resolved to the depth).
    pub batch_submit: u32,
    /// Completions waited for per reap (0: never wait unless the queue is full).
    pub complete_min: u32,
    /// Most completions taken per reap (at least 1).
    pub complete_max: u32,
    /// Once full, reap until at most this many are in flight.
    pub low: u32,
}

impl Queue {
    /// One I/O at a time, as the synchronous engines do.
    pub fn single() -> Queue {
        Queue {
            depth: 1,
            batch_submit: 1,
            complete_min: 1,
            complete_max: 1,
            low: 1,
        }
    }
}

/// The engines' own switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flags {
    /// io_uring: READ/WRITE_FIXED over registered buffers.
    pub fixedbufs: bool,
    /// io_uring: the files registered with the ring.
    pub registerfiles: bool,
    /// io_uring: a kernel thread polls the submission queue (on this CPU, if given).
    pub sqthread_poll: bool,
    pub sqthread_poll_cpu: Option<u32>,
    /// Polled completions (io_uring IOPOLL, pvsync2 RWF_HIPRI).
    pub hipri: bool,
    /// RWF_NOWAIT.
    pub nowait: bool,
    /// RWF_DONTCACHE on buffered reads and writes (`uncached`; io_uring, pvsync2): the pages
    /// leave the page cache once the I/O is done (Linux 6.14+).
    pub uncached: bool,
    /// RWF_ATOMIC on writes (`atomic`; io_uring, libaio, pvsync2): torn-write protection,
    /// direct I/O only (Linux 6.11+).
    pub atomic: bool,
    /// libaio: reap from the completion ring in user space when not waiting.
    pub userspace_reap: bool,
    /// io_uring: every this many submissions asks for async execution (IOSQE_ASYNC; 0: none).
    pub force_async: u32,
    /// filestat: the stat call measured (`stat_type`).
    pub stat_call: fileops::StatCall,
    /// cpuio: the CPU it burns (`cpuload`, `cpuchunks`, `cpumode`).
    pub cpu: cpu::CpuLoad,
    /// e4defrag: the donor's blocks allocated before each move and freed after (`inplace`).
    pub inplace: bool,
    /// mmap: private mappings with transparent huge pages asked for (`thp`; reads only).
    pub thp: bool,
}

impl Flags {
    /// The RWF_* flags of the engines that take them per call (io_uring, libaio, pvsync2):
    /// (reads', writes'). Polling (pvsync2's RWF_HIPRI) and write-through are the engine's.
    pub fn rwf(&self) -> (i32, i32) {
        let mut common = 0;
        if self.nowait {
            common |= crate::platform::abi::RWF_NOWAIT;
        }
        if self.uncached {
            common |= crate::platform::abi::RWF_DONTCACHE;
        }
        let write = if self.atomic {
            crate::platform::abi::RWF_ATOMIC
        } else {
            0
        };
        (common, common | write)
    }
}

/// The RWF_* flags the engine's options ask for, per direction (read, write).
pub fn rw_flags(cfg: &Config) -> (i32, i32) {
    let (mut read, mut write) = cfg.flags.rwf();
    if cfg.flags.hipri {
        (read, write) = (
            read | crate::platform::abi::RWF_HIPRI,
            write | crate::platform::abi::RWF_HIPRI,
        );
    }
    let through = match cfg.write_through {
        WriteThrough::None => 0,
        WriteThrough::Dsync => crate::platform::abi::RWF_DSYNC,
        WriteThrough::Sync => crate::platform::abi::RWF_SYNC,
    };
    (read, write | through)
}

/// Names of the RWF_* flags in `f`, for reports.
pub fn rwf_names(f: i32) -> Vec<&'static str> {
    [
        (crate::platform::abi::RWF_HIPRI, "RWF_HIPRI"),
        (crate::platform::abi::RWF_NOWAIT, "RWF_NOWAIT"),
        (crate::platform::abi::RWF_DSYNC, "RWF_DSYNC"),
        (crate::platform::abi::RWF_SYNC, "RWF_SYNC"),
        (crate::platform::abi::RWF_DONTCACHE, "RWF_DONTCACHE"),
        (crate::platform::abi::RWF_ATOMIC, "RWF_ATOMIC"),
    ]
    .into_iter()
    .filter(|(bit, _)| f & bit != 0)
    .map(|(_, name)| name)
    .collect()
}

/// How an engine issues each I/O, in words, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description {
    pub calls: String,
    pub per_call_flags: Vec<&'static str>,
    pub features: Vec<String>,
}

/// What the engines both systems have do per I/O, in Linux's calls (`buffers`: the vectored
/// engines' buffers, in words).
fn shared_calls(cfg: &Config, buffers: &str) -> String {
    let vectored = cfg.numpages > 1;
    match cfg.kind {
        Kind::Psync => "pread/pwrite".to_string(),
        Kind::Sync => "read/write (lseek when not sequential)".to_string(),
        Kind::Vsync => format!("readv/writev (lseek when not sequential) over {buffers}"),
        Kind::Pvsync => format!("preadv/pwritev over {buffers}"),
        Kind::Pvsync2 => format!("preadv2/pwritev2 over {buffers}"),
        Kind::IoUring if vectored => format!("IORING_OP_READV/WRITEV over {buffers}"),
        Kind::IoUring if cfg.flags.fixedbufs => "IORING_OP_READ_FIXED/WRITE_FIXED".to_string(),
        Kind::IoUring => "IORING_OP_READ/WRITE".to_string(),
        Kind::Libaio if vectored => {
            format!("io_submit/io_getevents (native AIO), IOCB_CMD_PREADV/PWRITEV over {buffers}")
        }
        Kind::Libaio => "io_submit/io_getevents (native AIO), IOCB_CMD_PREAD/PWRITE".to_string(),
        Kind::Windowsaio if vectored => format!("{} over {buffers}", platform::WINDOWSAIO_SG),
        Kind::Windowsaio => platform::WINDOWSAIO.to_string(),
        Kind::Posixaio | Kind::Mmap | Kind::Splice | Kind::E4defrag => {
            "(not in this build)".to_string()
        }
        Kind::Falloc => {
            "fallocate (a read: KEEP_SIZE; a write: extending; a trim: PUNCH_HOLE), no data"
                .to_string()
        }
        Kind::Ftruncate => "ftruncate to each write's offset, no data".to_string(),
        Kind::Filecreate
        | Kind::Filestat
        | Kind::Filedelete
        | Kind::Dircreate
        | Kind::Dirstat
        | Kind::Dirdelete => fileops::calls(cfg.kind, cfg.flags.stat_call),
        Kind::Cpuio => format!(
            "no I/O: each cycle {} then sleeps so the thread is {}% busy",
            match cfg.flags.cpu.mode {
                cpu::CpuMode::Noop => format!("spins {} µs", cfg.flags.cpu.chunk_us),
                cpu::CpuMode::Qsort => "sorts 256 Ki integers four ways".to_string(),
            },
            cfg.flags.cpu.load
        ),
        Kind::Exec => exec::CALLS.to_string(),
        Kind::Net | Kind::Netsplice => net::calls(cfg.kind == Kind::Netsplice).to_string(),
        Kind::Null => "none (null engine)".to_string(),
    }
}

/// What the engine `cfg` names does per I/O.
pub fn describe(cfg: &Config) -> Description {
    let calls_per_io = IoUnit::calls_per_io(cfg.numpages);
    let buffers = match cfg.numpages {
        1 => "one buffer".to_string(),
        n if calls_per_io > 1 => format!(
            "{n} buffers, {calls_per_io} calls per I/O (at most {} iovec entries per call)",
            unit::IOV_MAX
        ),
        n => format!("{n} buffers"),
    };
    // The system's own words where its calls are not the shared description's (Windows'
    // for psync, sync and the file operations; Linux's own engines' modules).
    let calls = match platform::calls(cfg) {
        Some(own) => own.to_string(),
        None => shared_calls(cfg, &buffers),
    };

    let per_call_flags = match cfg.kind {
        Kind::Pvsync2 => {
            let (r, w) = rw_flags(cfg);
            rwf_names(r | w)
        }
        Kind::IoUring | Kind::Libaio => {
            let (r, w) = cfg.flags.rwf();
            rwf_names(r | w)
        }
        _ => Vec::new(),
    };
    let mut features = Vec::new();
    // io_uring's switches (posixaio has none) and the batching both apply.
    if matches!(cfg.kind, Kind::IoUring | Kind::Posixaio) {
        for (on, name) in [
            (cfg.flags.fixedbufs, "fixedbufs"),
            (cfg.flags.registerfiles, "registerfiles"),
            (cfg.flags.sqthread_poll, "sqthread_poll"),
            (cfg.flags.hipri, "hipri (IOPOLL)"),
        ] {
            if on {
                features.push(name.to_string());
            }
        }
        features.push(format!(
            "batch submit {}, complete {}..{}, low {}",
            cfg.queue.batch_submit, cfg.queue.complete_min, cfg.queue.complete_max, cfg.queue.low
        ));
    }
    if cfg.kind == Kind::Libaio {
        if cfg.flags.userspace_reap {
            features.push("userspace_reap".to_string());
        }
        features.push(format!(
            "batch submit {}, complete {}..{}, low {}; events already done when io_submit \
             returns (buffered I/O) reaped at once",
            cfg.queue.batch_submit, cfg.queue.complete_min, cfg.queue.complete_max, cfg.queue.low
        ));
    }
    Description {
        calls,
        per_call_flags,
        features,
    }
}

/// An engine refusing one of its options: the option's name (the front end says it the way
/// the user wrote it: `--iodepth`, `iodepth=` at file:line, sqlio's `-o`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionError {
    pub option: &'static str,
    pub message: String,
}

/// What [`Engine::queue`] did with an I/O.
#[derive(Debug)]
pub enum Queued {
    /// Completed inside the call: bytes moved (possibly fewer than asked), or the error.
    Done(io::Result<usize>),
    /// Queued: it reaches the kernel at the next [`Engine::commit`], and its result comes from
    /// [`Engine::reap`].
    Queued,
    /// Nothing moved within the engine's wait step (a socket with no data or no room yet): the
    /// caller looks at its clock and stop flag, then queues the same unit again.
    Waiting,
    /// The peer ended the stream (end of a connection, a datagram sender's close): nothing
    /// moved, and the job's work is over.
    End,
}

impl Queued {
    /// The result of an I/O done inside `queue` (the engines' tests).
    #[cfg(test)]
    pub fn result(self) -> io::Result<usize> {
        match self {
            Queued::Done(r) => r,
            other => panic!("{other:?}, not done"),
        }
    }
}

/// A finished queued I/O: the slab slot it was queued with and the kernel's result (bytes
/// moved, or a negated errno).
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub slot: u32,
    pub res: i32,
}

/// A way of issuing I/O against a job's open files.
pub trait Engine: Send {
    /// Whether I/O is queued (and completes through `reap`) rather than done inside `queue`.
    const QUEUED: bool = false;
    /// Whether `commit` may itself do the I/O (native AIO on buffered files): its time then
    /// counts at the depth it submits, and [`Engine::ready`] is asked right after it.
    const COMPLETES_IN_SUBMIT: bool = false;

    /// Starts the untransferred remainder of `unit` (slab slot `slot`).
    fn queue(&mut self, slot: u32, unit: &mut IoUnit) -> Queued;

    /// Hands queued I/O to the kernel.
    fn commit(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Appends the completions already there, without a system call or a wait (asked
    /// after each `commit` where [`Engine::COMPLETES_IN_SUBMIT`]).
    fn ready(&mut self, _out: &mut Vec<Completion>) {}

    /// Appends between `min` and `max` completions to `out`, waiting for `min` of them.
    fn reap(&mut self, _min: usize, _max: usize, _out: &mut Vec<Completion>) -> io::Result<()> {
        Ok(())
    }

    /// Work for `unit` that is not its measured operation, done before its clock starts
    /// (fio's `prep`): filedelete checks the name still holds the file the run created.
    #[inline]
    fn prep(&mut self, _unit: &IoUnit) {}

    /// Work after an I/O done inside `queue`, once its clock has stopped: filecreate returns
    /// the file it just created (index, device and inode), for the caller to record.
    #[inline]
    fn settle(&mut self) -> Option<fileops::Made> {
        None
    }

    /// The files the engine created and holds (filecreate), handed over when the job ends.
    fn take_made(&mut self) -> Vec<(usize, OwnedFd)> {
        Vec::new()
    }

    /// Called once after the job's start (its barrier, `startdelay`, `wait_for`) and before
    /// its clock starts: net connects or accepts its peer here. `keep_waiting` says, between
    /// waits of at most a tenth of a second, whether to go on waiting; Ok(false) when it said
    /// no (the job ends without I/O).
    fn start(&mut self, _keep_waiting: &mut dyn FnMut() -> bool) -> io::Result<bool> {
        Ok(true)
    }

    /// I/Os the peer sent that never arrived (net's datagrams, by their sequence numbers),
    /// read when the job ends.
    fn dropped(&self) -> u64 {
        0
    }

    /// Called once with the whole slab before the first I/O (registered buffers).
    fn register(&mut self, _units: &mut [IoUnit]) -> io::Result<()> {
        Ok(())
    }

    /// File `file`'s descriptor, where the engine does all its I/O on the file through that
    /// one number, so that it may be pointed at another file between I/Os (unlink_each_loop
    /// renews a job's files that way: the same number, a new file behind it); None where the
    /// engine holds the file otherwise (mapped, registered with the kernel) or holds none.
    fn descriptor(&self, _file: usize) -> Option<BorrowedFd<'_>> {
        None
    }

    /// Makes writes durable (or starts their write-back) on file `file`, synchronously:
    /// the caller has nothing in flight.
    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()>;
}

/// The flushes fio's sync family issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushCall {
    /// fsync(2): data and metadata.
    Fsync,
    /// fdatasync(2): data, and only the metadata needed to read it back.
    Fdatasync,
    /// sync_file_range(2) over `len` bytes from `offset` with `flags` (SYNC_FILE_RANGE_*).
    Range { offset: u64, len: u64, flags: u32 },
    /// syncfs(2): the whole file system the file is on.
    Syncfs,
}

impl FlushCall {
    /// The system call's name, for errors and the report.
    pub fn name(self) -> &'static str {
        match self {
            FlushCall::Fsync => "fsync",
            FlushCall::Fdatasync => "fdatasync",
            FlushCall::Range { .. } => "sync_file_range",
            FlushCall::Syncfs => "syncfs",
        }
    }
}

/// `call` on `fd`: the one implementation every engine that owns real files uses.
pub fn flush_fd(fd: BorrowedFd<'_>, call: FlushCall) -> io::Result<()> {
    match call {
        FlushCall::Fsync => crate::platform::sys::fs::fsync(fd)?,
        FlushCall::Fdatasync => crate::platform::sys::fs::fdatasync(fd)?,
        FlushCall::Syncfs => crate::platform::sys::fs::syncfs(fd)?,
        FlushCall::Range { len: 0, .. } => {}
        FlushCall::Range { offset, len, flags } => platform::sync_range(fd, offset, len, flags)?,
    }
    Ok(())
}

/// Gives the calling thread I/O priority `ioprio` (class << 13 | level), as fio's
/// `prio`/`prioclass` do: every I/O the thread issues from then on carries it (ioprio_set(2);
/// Linux only).
pub fn set_thread_ioprio(ioprio: u16) -> io::Result<()> {
    platform::set_thread_ioprio(ioprio)
}

/// A NUMA memory policy (set_mempolicy(2)), as fio's `numa_mem_policy` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemPolicy {
    /// MPOL_DEFAULT 0, MPOL_PREFERRED 1, MPOL_BIND 2, MPOL_INTERLEAVE 3, MPOL_LOCAL 4.
    pub mode: i32,
    pub nodes: Vec<usize>,
}

/// Gives the calling thread the memory policy `p`: the pages it touches from then on (the
/// job's buffers) come from its nodes (set_mempolicy(2); Linux only).
pub fn set_thread_mempolicy(p: &MemPolicy) -> io::Result<()> {
    platform::set_thread_mempolicy(p.mode, &p.nodes)
}

/// What a job's engine works on: the files as `files::targets` opened them, a descriptor per
/// file, and for the file-operation engines each file's name in its directory (filecreate's
/// files do not exist yet, so it has names and no descriptors); for exec, the program; for
/// e4defrag, the donor file; for net, the job's socket as made before its group started.
#[derive(Default)]
pub struct Files {
    pub fds: Vec<OwnedFd>,
    pub names: Vec<fileops::Name>,
    pub program: Option<exec::Program>,
    pub donor: Option<OwnedFd>,
    pub net: Option<NetSocket>,
}

/// A net job's socket: its end of the connection, the socket made for it, and what the files
/// layer hands along to be dropped with the engine (a unix listener's socket file, removed
/// then).
pub struct NetSocket {
    pub endpoint: net::Endpoint,
    pub prepared: platform::net::Prepared,
    pub guard: Option<Box<dyn Send>>,
}

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Files")
            .field("fds", &self.fds)
            .field("names", &self.names)
            .field("program", &self.program)
            .field("donor", &self.donor)
            .field("net", &self.net.as_ref().map(|n| &n.prepared))
            .finish()
    }
}

/// Builds the engine `cfg` names over `files` and hands it to `f`.
pub fn with_engine<R>(cfg: &Config, files: Files, f: impl EngineUser<R>) -> R {
    if platform::LINUX_KINDS.contains(&cfg.kind) || platform::WINDOWS_KINDS.contains(&cfg.kind) {
        return platform::with_engine(cfg, files, f);
    }
    let Files {
        fds: files,
        names,
        program,
        ..
    } = files;
    if cfg.kind.file_op() {
        let op = match cfg.kind {
            Kind::Filecreate | Kind::Dircreate => fileops::Op::Create,
            Kind::Filestat | Kind::Dirstat => fileops::Op::Stat(cfg.flags.stat_call),
            _ => fileops::Op::Delete,
        };
        let held = match files.is_empty() {
            true => names.iter().map(|_| None).collect(),
            false => files.into_iter().map(Some).collect(),
        };
        return f.run(fileops::FileOps::new(op, cfg.kind.dir_op(), names, held));
    }
    match cfg.kind {
        Kind::Psync => f.run(psync::Psync::new(files)),
        Kind::Sync => f.run(sync::Sync::<false>::new(files)),
        Kind::Falloc => f.run(space::Space::<false>::new(files)),
        Kind::Ftruncate => f.run(space::Space::<true>::new(files)),
        Kind::Filecreate
        | Kind::Filestat
        | Kind::Filedelete
        | Kind::Dircreate
        | Kind::Dirstat
        | Kind::Dirdelete => unreachable!("file operations are built above"),
        Kind::Cpuio => f.run(cpu::Cpu::new(cfg.flags.cpu)),
        Kind::Exec => match program {
            Some(p) => f.run(exec::Exec::new(p)),
            None => f.setup_failed(io::Error::other("ioengine=exec: no program")),
        },
        Kind::Null => f.run(null::Null::new(files)),
        Kind::Vsync
        | Kind::Pvsync
        | Kind::Pvsync2
        | Kind::IoUring
        | Kind::Libaio
        | Kind::Posixaio
        | Kind::Mmap
        | Kind::Splice
        | Kind::E4defrag
        | Kind::Net
        | Kind::Netsplice
        | Kind::Windowsaio => unreachable!("the platform's engines are built above"),
    }
}

/// Something generic over the engine type (the worker loop), monomorphised per engine.
pub trait EngineUser<R> {
    fn run<E: Engine>(self, engine: E) -> R;
    /// The engine could not be set up (kernel support, resource limits).
    fn setup_failed(self, error: io::Error) -> R;
}

/// `e` with what was being done said first (`connecting to 127.0.0.1:8888: Connection
/// refused`), its errno kept for [`errno`].
pub fn with_context(e: io::Error, what: String) -> io::Error {
    io::Error::new(e.kind(), Context { what, source: e })
}

/// The errno of `e`, or of the error it gives context to, as Linux numbers it on every system
/// (`platform::abi::errno`).
pub fn errno(e: &io::Error) -> Option<i32> {
    let os = e.raw_os_error().map(crate::platform::errno_from_os);
    os.or_else(|| {
        let c = e.get_ref()?.downcast_ref::<Context>()?;
        errno(&c.source)
    })
}

#[derive(Debug)]
struct Context {
    what: String,
    source: io::Error,
}

impl std::fmt::Display for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.what, self.source)
    }
}

impl std::error::Error for Context {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Converts a syscall's result into bytes moved.
#[inline]
pub(crate) fn done(r: crate::platform::sys::io::Result<usize>) -> Queued {
    Queued::Done(r.map_err(io::Error::from))
}

/// A write lifetime hint (fio's `write_hint`: RWH_WRITE_LIFE_NONE 1 to _EXTREME 5) on the inode
/// of the file `fd` opens: its later writes carry it to a device that separates data by
/// expected lifetime (NVMe streams, flexible data placement). fcntl(F_SET_RW_HINT); Linux only.
pub fn set_write_hint(fd: BorrowedFd<'_>, hint: u64) -> io::Result<()> {
    platform::set_write_hint(fd, hint)
}

#[cfg(test)]
mod tests {
    use super::Kind;

    #[test]
    fn every_engine_is_found_by_its_own_name_once() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.as_str()), Some(k));
            assert_eq!(Kind::ALL.iter().filter(|o| **o == k).count(), 1, "{k:?}");
        }
        assert_eq!(crate::plan::options::ENGINES.len(), Kind::ALL.len());
        assert_eq!(Kind::from_name("windowsaio"), Some(Kind::Windowsaio));
        assert_eq!(Kind::from_name("nosuch"), None);
    }
}
