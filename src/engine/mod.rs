//! I/O engines: each knows one way of issuing syscalls, nothing about workloads. The worker
//! loop is generic over [`Engine`], so the hot path has no dynamic dispatch. Today's engines
//! complete every I/O inside `submit` (synchronous); queued engines (io_uring) extend this
//! trait with commit/reap in their own issue.

pub mod buf;
pub mod null;
pub mod psync;
pub mod sync;

use std::io;
use std::os::fd::OwnedFd;

pub use buf::AlignedBuf;

use crate::spec::EngineKind;
use crate::spec::workload::Dir;

/// A way of issuing I/O against a job's open files.
pub trait Engine: Send {
    /// Transfers `buf` at `offset` of file `file` in direction `dir`; returns the bytes moved
    /// (possibly fewer than asked: the caller handles short transfers).
    fn submit(&mut self, dir: Dir, file: usize, offset: u64, buf: &mut [u8]) -> io::Result<usize>;

    /// Flushes file `file` to stable storage (fsync).
    fn fsync(&mut self, file: usize) -> io::Result<()>;
}

/// Builds the engine of `kind` over `files` (opened by `target`).
pub fn with_engine<R>(kind: EngineKind, files: Vec<OwnedFd>, f: impl EngineUser<R>) -> R {
    match kind {
        EngineKind::Psync => f.run(psync::Psync::new(files)),
        EngineKind::Sync => f.run(sync::Sync::new(files)),
        EngineKind::Null => f.run(null::Null::new(files)),
    }
}

/// Something generic over the engine type (the worker loop), monomorphised per engine.
pub trait EngineUser<R> {
    fn run<E: Engine>(self, engine: E) -> R;
}
