//! Recording on Windows: not built. Linux's recorder stands on perf's syscall tracepoints and
//! ptrace, which Windows does not have; its counterpart there would be Event Tracing for
//! Windows' file I/O events (issue 33 leaves it for later). Every way in refuses with a usage
//! error, so `iogauge record` and `iogauge predict` say so instead of failing later.

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::trace::capture::{CaptureError, Captured, Method};

fn refused(what: &str) -> CaptureError {
    CaptureError::Usage(format!(
        "{what}: recording a program's I/O needs Linux (perf's syscall tracepoints or ptrace); \
         this build for Windows cannot record. Record on Linux and replay or predict here, or \
         import fio's I/O log with `iogauge trace import`"
    ))
}

/// Refuses: see the module's note.
pub fn record(
    _argv: &[OsString],
    _method: Method,
    _stop: Arc<AtomicBool>,
) -> Result<Captured, CaptureError> {
    Err(refused("record"))
}

/// Refuses: see the module's note.
pub fn record_with(
    _argv: &[OsString],
    _method: Method,
    _stop: Arc<AtomicBool>,
    _stdout: Option<&std::fs::File>,
) -> Result<Captured, CaptureError> {
    Err(refused("predict"))
}

/// Recording at the block layer, Linux's blktrace, is refused too.
pub mod block {
    use super::*;

    /// Refuses: see the module's note.
    pub fn record(
        _argv: &[OsString],
        _device: &Path,
        _stop: Arc<AtomicBool>,
    ) -> Result<Captured, CaptureError> {
        Err(refused("record --block"))
    }
}

/// The hidden first argument of the calibration run, which only Linux's recorder makes.
pub const CALIBRATE_ARG: &str = "__iogauge_calibrate";

/// The calibration program: nothing to calibrate here.
pub fn calibrate_child() -> std::process::ExitCode {
    std::process::ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_in_refuses_with_a_usage_error() {
        let stop = Arc::new(AtomicBool::new(false));
        let argv = [OsString::from("cmd.exe")];
        for r in [
            record(&argv, Method::Auto, stop.clone()),
            record_with(&argv, Method::Auto, stop.clone(), None),
            block::record(&argv, Path::new(r"\\.\PhysicalDrive0"), stop),
        ] {
            match r {
                Err(CaptureError::Usage(m)) => assert!(m.contains("needs Linux"), "{m}"),
                _ => panic!("not refused"),
            }
        }
    }
}
