//! `windowsaio`: fio's Windows engine, overlapped ReadFile/WriteFile on an I/O completion
//! port, `iodepth` of them in flight; with `numpages` above 1, ReadFileScatter and
//! WriteFileGather as SAS's SGIO and SASIOTEST's `-sgio` issue them (each page cut into whole
//! system pages, which those calls require, on a file opened without buffering).
//!
//! The job's files, opened for synchronous I/O by the files layer, are opened again with
//! FILE_FLAG_OVERLAPPED (ReOpenFile: the same file, the same caching flags) and tied to the
//! port; each slab slot owns its OVERLAPPED, whose address comes back with the completion.
//! `queue` issues the call at once (fio's does too): a call the system completes at once still
//! posts its completion, which `reap` takes. Dropped with I/O in flight (a job stopped by an
//! error), the engine cancels it and waits for every completion: the buffers are the job's.

use std::io;

use windows_sys::Win32::Foundation::{
    ERROR_HANDLE_EOF, ERROR_IO_PENDING, FALSE, GENERIC_READ, GENERIC_WRITE, GetLastError, HANDLE,
    INVALID_HANDLE_VALUE, WAIT_TIMEOUT,
};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_FLAG_NO_BUFFERING, FILE_FLAG_OVERLAPPED, FILE_FLAG_WRITE_THROUGH, FILE_SEGMENT_ELEMENT,
    FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE, ReOpenFile, ReadFile, ReadFileScatter,
    WriteFile, WriteFileGather,
};
use windows_sys::Win32::System::IO::{
    CancelIoEx, CreateIoCompletionPort, GetOverlappedResult, GetQueuedCompletionStatusEx,
    OVERLAPPED, OVERLAPPED_ENTRY,
};

use crate::engine::trim::Trimmer;
use crate::engine::{Completion, Config, Dir, Engine, FlushCall, IoUnit, Queued, flush_fd};
use crate::platform::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use crate::platform::sys::fs::{OFlags, fcntl_getfl};

/// The system page: each element of a scatter/gather list is one.
const SYSTEM_PAGE: usize = 4096;

/// One slot's request: its OVERLAPPED first, so the address the port gives back is the slot's.
#[repr(C)]
struct Request {
    ov: OVERLAPPED,
    /// The file it is on (for GetOverlappedResult).
    file: usize,
    /// The scatter/gather list, NULL-terminated.
    segments: Vec<FILE_SEGMENT_ELEMENT>,
}

pub struct WindowsAio {
    /// The files, opened again for overlapped I/O.
    files: Vec<OwnedFd>,
    /// The completion port.
    port: OwnedFd,
    /// One request per slot, never moved while in flight.
    requests: Box<[Request]>,
    /// Started, not yet reaped.
    in_flight: usize,
    /// Scatter/gather (`numpages` > 1).
    scatter: bool,
    trims: Trimmer,
    entries: Vec<OVERLAPPED_ENTRY>,
}

// SAFETY: the OVERLAPPEDs and segment lists point into buffers owned by the job's thread,
// which alone uses the engine; the system touches only those of requests in flight, which
// `Drop` cancels and waits for.
unsafe impl Send for WindowsAio {}

fn last_error() -> io::Error {
    // SAFETY: reads this thread's last-error value.
    io::Error::from_raw_os_error(unsafe { GetLastError() } as i32)
}

/// `fd`'s file opened again for overlapped I/O, with the caching `fd` was opened with.
fn reopen(fd: &OwnedFd) -> io::Result<OwnedFd> {
    let was = fcntl_getfl(fd).map_err(io::Error::from)?;
    let mut flags = FILE_FLAG_OVERLAPPED;
    if was.contains(OFlags::DIRECT) {
        flags |= FILE_FLAG_NO_BUFFERING;
    }
    if was.contains(OFlags::DSYNC) {
        flags |= FILE_FLAG_WRITE_THROUGH;
    }
    let share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
    let raw = fd.as_raw_fd() as HANDLE;
    for access in [GENERIC_READ | GENERIC_WRITE, GENERIC_READ] {
        // SAFETY: a handle we hold; the new handle is ours to own.
        let h = unsafe { ReOpenFile(raw, access, share, flags) };
        if h != INVALID_HANDLE_VALUE {
            // SAFETY: a handle ReOpenFile just gave us.
            return Ok(unsafe { OwnedFd::from_raw_fd(h as _) });
        }
    }
    Err(last_error())
}

impl WindowsAio {
    pub fn new(files: Vec<OwnedFd>, cfg: &Config) -> io::Result<WindowsAio> {
        // SAFETY: a new port, tied to no file yet.
        let port =
            unsafe { CreateIoCompletionPort(INVALID_HANDLE_VALUE, std::ptr::null_mut(), 0, 1) };
        if port.is_null() {
            return Err(last_error());
        }
        // SAFETY: the port CreateIoCompletionPort just gave us.
        let port = unsafe { OwnedFd::from_raw_fd(port as _) };
        let mut reopened = Vec::with_capacity(files.len());
        for f in &files {
            let h = reopen(f)?;
            // SAFETY: ties a handle we hold to the port we hold.
            let tied = unsafe {
                CreateIoCompletionPort(h.as_raw_fd() as HANDLE, port.as_raw_fd() as HANDLE, 0, 0)
            };
            if tied.is_null() {
                return Err(last_error());
            }
            reopened.push(h);
        }
        let depth = cfg.queue.depth.max(1) as usize;
        let requests = (0..depth)
            .map(|_| Request {
                // SAFETY: OVERLAPPED is plain data; zero is its initial state.
                ov: unsafe { std::mem::zeroed() },
                file: 0,
                segments: Vec::new(),
            })
            .collect();
        Ok(WindowsAio {
            trims: Trimmer::new(reopened.len()),
            files: reopened,
            port,
            requests,
            in_flight: 0,
            scatter: cfg.numpages > 1,
            entries: vec![OVERLAPPED_ENTRY::default(); depth],
        })
    }

    /// Issues `u` on slot `slot`: whether it is queued (a completion will be posted), or done
    /// with nothing moved (a read at the end of the file).
    fn issue(&mut self, slot: u32, u: &mut IoUnit) -> Result<bool, io::Error> {
        let scatter = self.scatter;
        let h = self.files[u.file].as_raw_fd() as HANDLE;
        let r = &mut self.requests[slot as usize];
        let offset = u.next_offset();
        // SAFETY: OVERLAPPED is plain data; zero then the offset.
        r.ov = unsafe { std::mem::zeroed() };
        r.ov.Anonymous.Anonymous.Offset = offset as u32;
        r.ov.Anonymous.Anonymous.OffsetHigh = (offset >> 32) as u32;
        r.file = u.file;
        let write = u.dir == Dir::Write;
        let ok = if scatter {
            r.segments.clear();
            let mut bytes = 0usize;
            for v in u.iovecs() {
                if v.iov_base as usize % SYSTEM_PAGE != 0 || v.iov_len % SYSTEM_PAGE != 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "ReadFileScatter/WriteFileGather move whole system pages (4 KiB): \
                         bs and each page must be multiples of 4 KiB",
                    ));
                }
                for k in (0..v.iov_len).step_by(SYSTEM_PAGE) {
                    let p = (v.iov_base as usize + k) as *mut std::ffi::c_void;
                    r.segments.push(FILE_SEGMENT_ELEMENT { Buffer: p });
                }
                bytes += v.iov_len;
            }
            r.segments.push(FILE_SEGMENT_ELEMENT { Alignment: 0 });
            let (list, n) = (r.segments.as_ptr(), bytes as u32);
            // SAFETY: the list names whole pages of the unit's buffers, which stay put and
            // are the job's alone until the completion is reaped; the OVERLAPPED lives in
            // `requests`, never moved while in flight.
            unsafe {
                match write {
                    true => WriteFileGather(h, list, n, std::ptr::null(), &mut r.ov),
                    false => ReadFileScatter(h, list, n, std::ptr::null(), &mut r.ov),
                }
            }
        } else {
            let (p, n) = u.rest_raw();
            let n = n.min(u32::MAX as usize) as u32;
            // SAFETY: as above, for the unit's one buffer.
            unsafe {
                match write {
                    true => WriteFile(h, p, n, std::ptr::null_mut(), &mut r.ov),
                    false => ReadFile(h, p, n, std::ptr::null_mut(), &mut r.ov),
                }
            }
        };
        if ok != FALSE {
            return Ok(true);
        }
        // SAFETY: reads this thread's last-error value.
        match unsafe { GetLastError() } {
            ERROR_IO_PENDING => Ok(true),
            // A read at or past the end fails at once, with no completion posted.
            ERROR_HANDLE_EOF => Ok(false),
            _ => Err(last_error()),
        }
    }

    /// The outcome of the request at `ov` that the port says is done: bytes, or -(the error).
    fn outcome(&self, ov: *mut OVERLAPPED, moved: u32) -> i32 {
        // SAFETY: `ov` is the first field of a `Request` in `requests` (repr(C)).
        let r = unsafe { &*(ov as *const Request) };
        let h = self.files[r.file].as_raw_fd() as HANDLE;
        let mut n = 0u32;
        // SAFETY: a finished request's OVERLAPPED on the handle it was issued on.
        if unsafe { GetOverlappedResult(h, &r.ov, &mut n, FALSE) } != FALSE {
            return n.min(i32::MAX as u32) as i32;
        }
        // SAFETY: reads this thread's last-error value.
        match unsafe { GetLastError() } {
            ERROR_HANDLE_EOF => 0,
            0 => moved.min(i32::MAX as u32) as i32,
            e => -(e as i32),
        }
    }

    fn slot_of(&self, ov: *mut OVERLAPPED) -> u32 {
        let base = self.requests.as_ptr() as usize;
        ((ov as usize - base) / std::mem::size_of::<Request>()) as u32
    }

    /// Takes up to `max` completions, waiting up to `wait_ms` for the first.
    fn collect(
        &mut self,
        max: usize,
        wait_ms: u32,
        out: &mut Vec<Completion>,
    ) -> io::Result<usize> {
        let max = max.min(self.entries.len()).max(1);
        let mut got = 0u32;
        // SAFETY: the port we hold and `max` writable entries.
        let ok = unsafe {
            GetQueuedCompletionStatusEx(
                self.port.as_raw_fd() as HANDLE,
                self.entries.as_mut_ptr(),
                max as u32,
                &mut got,
                wait_ms,
                FALSE,
            )
        };
        if ok == FALSE {
            // SAFETY: reads this thread's last-error value.
            return match unsafe { GetLastError() } {
                WAIT_TIMEOUT => Ok(0),
                _ => Err(last_error()),
            };
        }
        for i in 0..got as usize {
            let e = self.entries[i];
            let res = self.outcome(e.lpOverlapped, e.dwNumberOfBytesTransferred);
            out.push(Completion {
                slot: self.slot_of(e.lpOverlapped),
                res,
            });
        }
        self.in_flight -= got as usize;
        Ok(got as usize)
    }
}

impl Engine for WindowsAio {
    const QUEUED: bool = true;

    fn queue(&mut self, slot: u32, u: &mut IoUnit) -> Queued {
        if u.dir == Dir::Trim {
            return self.trims.unit(&self.files, u);
        }
        match self.issue(slot, u) {
            Ok(true) => {
                self.in_flight += 1;
                Queued::Queued
            }
            Ok(false) => Queued::Done(Ok(0)),
            Err(e) => Queued::Done(Err(e)),
        }
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        let mut got = self.collect(max, 0, out)?;
        while got < min && self.in_flight > 0 {
            got += self.collect(max - got, u32::MAX, out)?;
        }
        Ok(())
    }

    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()> {
        flush_fd(self.files[file].as_fd(), call)
    }
}

impl Drop for WindowsAio {
    fn drop(&mut self) {
        if self.in_flight == 0 {
            return;
        }
        for f in &self.files {
            // SAFETY: cancels this process's requests on a handle we hold.
            unsafe { CancelIoEx(f.as_raw_fd() as HANDLE, std::ptr::null()) };
        }
        let mut sink = Vec::new();
        while self.in_flight > 0 {
            sink.clear();
            if self.collect(self.in_flight, u32::MAX, &mut sink).is_err() {
                break;
            }
        }
    }
}
