//! Linux's own engines: io_uring, libaio, posixaio, mmap (with its SIGBUS handling), splice
//! and e4defrag.

pub mod defrag;
pub mod libaio;
pub mod mmap;
pub mod posixaio;
mod sigbus;
pub mod splice;
pub mod uring;

use std::io;
use std::os::fd::OwnedFd;

use crate::engine::{Config, EngineUser, Kind, OptionError};

/// Whether this build has the engine `kind`: on Linux, all of them.
pub fn has(_kind: Kind) -> bool {
    true
}

/// Builds the engine `cfg` names — one of [`super::PLATFORM_KINDS`] — over `files` (and
/// e4defrag's `donor`) and hands it to `f`.
pub fn with_engine<R>(
    cfg: &Config,
    files: Vec<OwnedFd>,
    donor: Option<OwnedFd>,
    f: impl EngineUser<R>,
) -> R {
    match cfg.kind {
        Kind::IoUring => match uring::Uring::new(files, cfg) {
            Ok(e) => f.run(e),
            Err(e) => f.setup_failed(e),
        },
        Kind::Libaio => match libaio::Libaio::new(files, cfg) {
            Ok(e) => f.run(e),
            Err(e) => f.setup_failed(e),
        },
        Kind::Posixaio => f.run(posixaio::Posixaio::new(files, cfg.queue.depth)),
        Kind::Mmap => f.run(mmap::Mmap::new(files, cfg.flags.thp)),
        Kind::Splice => match splice::Splice::new(files) {
            Ok(e) => f.run(e),
            Err(e) => f.setup_failed(e),
        },
        Kind::E4defrag => match donor.map(|d| defrag::Defrag::new(files, d, cfg.flags.inplace)) {
            Some(Ok(e)) => f.run(e),
            Some(Err(e)) => f.setup_failed(e),
            None => f.setup_failed(io::Error::other("ioengine=e4defrag: no donor file")),
        },
        other => f.setup_failed(io::Error::other(format!(
            "ioengine={}: not one of the platform's own engines",
            other.as_str()
        ))),
    }
}

/// What the engine `cfg` names does per I/O, for those whose calls are described by their own
/// module (posixaio, mmap, splice, e4defrag); `None` for the others.
pub fn calls(cfg: &Config) -> Option<&'static str> {
    Some(match cfg.kind {
        Kind::Posixaio => posixaio::CALLS,
        Kind::Mmap if cfg.flags.thp => mmap::CALLS_THP,
        Kind::Mmap => mmap::CALLS,
        Kind::Splice => splice::CALLS,
        Kind::E4defrag => defrag::CALLS,
        _ => return None,
    })
}

/// Whether the kernel can run the queued engine `cfg` names with its options (io_uring's
/// features, libaio's context); the other engines need no probe.
pub fn probe(cfg: &Config) -> Result<(), OptionError> {
    match cfg.kind {
        Kind::IoUring => uring::probe(cfg),
        Kind::Libaio => libaio::probe(cfg),
        _ => Ok(()),
    }
}
