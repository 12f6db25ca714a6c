//! Native AIO is Linux's: here a context cannot be made, and a replay issues a recorded
//! program's asynchronous I/Os one by one (it says so). The same names as Linux's half.

use std::io;

use crate::platform::{AioReaped, AioRequest};

/// Never made on Windows.
pub struct AioContext {
    never: std::convert::Infallible,
}

impl AioContext {
    /// Why there is no native AIO context here.
    pub fn new(_nr: u32, _len: usize, _fill: impl FnOnce(&mut [u8])) -> io::Result<AioContext> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "Linux native AIO (io_submit) has no counterpart on Windows",
        ))
    }

    pub fn submit(&self, _reqs: &[AioRequest<'_>]) -> io::Result<usize> {
        match self.never {}
    }

    pub fn reap(
        &self,
        _min: usize,
        _max: usize,
        _timeout: std::time::Duration,
        _out: &mut Vec<AioReaped>,
    ) -> io::Result<usize> {
        match self.never {}
    }
}

/// io_uring is Linux's: never made on Windows (a replay's rings go to `AioContext`, which
/// does their I/Os one by one here).
pub struct UringContext {
    never: std::convert::Infallible,
}

impl UringContext {
    /// Why there is no io_uring ring here.
    pub fn new(
        _nr: u32,
        _len: usize,
        _fill: impl FnOnce(&mut [u8]),
        _one_task: bool,
    ) -> io::Result<UringContext> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "io_uring has no counterpart on Windows",
        ))
    }

    pub fn submit(&self, _reqs: &[AioRequest<'_>]) -> io::Result<usize> {
        match self.never {}
    }

    pub fn reap(
        &self,
        _min: usize,
        _max: usize,
        _timeout: std::time::Duration,
        _out: &mut Vec<AioReaped>,
    ) -> io::Result<usize> {
        match self.never {}
    }
}
