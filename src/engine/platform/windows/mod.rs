//! Windows has none of Linux's own engines (io_uring, libaio, posixaio, mmap, splice,
//! e4defrag): a job naming one is refused as its plan is made, with the engines this build
//! has.

use std::io;
use std::os::windows::io::OwnedHandle;

use crate::engine::{Config, EngineUser, Kind, OptionError};

/// Whether this build has the engine `kind`: not Linux's own.
pub fn has(kind: Kind) -> bool {
    !super::PLATFORM_KINDS.contains(&kind)
}

/// Linux's engines cannot be built here; the plan refuses them first, so this answers only a
/// caller that skipped [`has`].
pub fn with_engine<R>(
    cfg: &Config,
    _files: Vec<OwnedHandle>,
    _donor: Option<OwnedHandle>,
    f: impl EngineUser<R>,
) -> R {
    f.setup_failed(io::Error::new(
        io::ErrorKind::Unsupported,
        format!("ioengine={}: Linux only", cfg.kind.as_str()),
    ))
}

/// No engine of this half describes its own calls.
pub fn calls(_cfg: &Config) -> Option<&'static str> {
    None
}

/// No engine of this half needs a probe.
pub fn probe(_cfg: &Config) -> Result<(), OptionError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_engines_are_not_in_the_windows_build() {
        for k in super::super::PLATFORM_KINDS {
            assert!(!has(k), "{k:?}");
        }
        assert!(has(Kind::Psync) && has(Kind::Sync) && has(Kind::Null));
    }
}
