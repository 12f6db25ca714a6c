//! I/O engines: each knows one way of issuing syscalls, nothing about workloads. fio's shape:
//! [`Engine::queue`] either completes an I/O at once (synchronous engines) or queues it
//! (io_uring), and queued engines add [`Engine::commit`] and [`Engine::reap`]. The worker loop
//! is generic over the engine type, so the hot path has no dynamic dispatch, and a synchronous
//! engine's queue/commit/reap collapse to one inlined call.

pub mod buf;
pub mod null;
pub mod psync;
pub mod sync;
pub mod unit;
pub mod uring;
pub mod vectored;

use std::io;
use std::os::fd::OwnedFd;

pub use buf::AlignedBuf;
pub use unit::IoUnit;

use crate::spec::{EngineKind, JobSpec};

/// What [`Engine::queue`] did with an I/O.
#[derive(Debug)]
pub enum Queued {
    /// Completed inside the call: bytes moved (possibly fewer than asked), or the error.
    Done(io::Result<usize>),
    /// Queued: it reaches the kernel at the next [`Engine::commit`], and its result comes from
    /// [`Engine::reap`].
    Queued,
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

    /// Starts the untransferred remainder of `unit` (slab slot `slot`).
    fn queue(&mut self, slot: u32, unit: &mut IoUnit) -> Queued;

    /// Hands queued I/O to the kernel.
    fn commit(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Appends between `min` and `max` completions to `out`, waiting for `min` of them.
    fn reap(&mut self, _min: usize, _max: usize, _out: &mut Vec<Completion>) -> io::Result<()> {
        Ok(())
    }

    /// Called once with the whole slab before the first I/O (registered buffers).
    fn register(&mut self, _units: &mut [IoUnit]) -> io::Result<()> {
        Ok(())
    }

    /// Flushes file `file` to stable storage (fsync). Called with no I/O in flight.
    fn fsync(&mut self, file: usize) -> io::Result<()>;
}

/// Builds the engine `job` asks for over `files` (opened by `target`) and hands it to `f`.
pub fn with_engine<R>(job: &JobSpec, files: Vec<OwnedFd>, f: impl EngineUser<R>) -> R {
    match job.engine {
        EngineKind::Psync => f.run(psync::Psync::new(files)),
        EngineKind::Sync => f.run(sync::Sync::new(files)),
        EngineKind::Pvsync => f.run(vectored::Pvsync::new(files)),
        EngineKind::Pvsync2 => f.run(vectored::Pvsync2::new(files, job)),
        EngineKind::IoUring => match uring::Uring::new(files, job) {
            Ok(e) => f.run(e),
            Err(e) => f.setup_failed(e),
        },
        EngineKind::Null => f.run(null::Null::new(files)),
    }
}

/// Something generic over the engine type (the worker loop), monomorphised per engine.
pub trait EngineUser<R> {
    fn run<E: Engine>(self, engine: E) -> R;
    /// The engine could not be set up (kernel support, resource limits).
    fn setup_failed(self, error: io::Error) -> R;
}

/// Converts a syscall's result into bytes moved.
#[inline]
pub(crate) fn done(r: rustix::io::Result<usize>) -> Queued {
    Queued::Done(r.map_err(io::Error::from))
}
