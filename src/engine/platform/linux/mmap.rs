//! fio's `mmap` engine: each file is mapped whole (mmap(2), MAP_SHARED) on its first I/O, and
//! an I/O is a copy: a read from the mapping into the unit's buffer (its pages fault in from
//! the page cache or the device), a write from the buffer into the mapping (dirtying the
//! pages, written back later or at a flush: msync, then the flush asked). It measures what a
//! program that maps its data files (LMDB, MongoDB's old engine, many analytics tools) gets
//! from the storage: no system call per I/O, a page fault per page not yet mapped. A page that
//! cannot be read raises SIGBUS; [`super::sigbus`] turns it into the I/O's error (EIO) and the
//! mapping is dropped (made again at the next I/O), so the run stops or goes on as for any
//! failed I/O instead of the process dying.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use super::sigbus::{self, Registered};
use crate::engine::{Dir, Engine, FlushCall, IoUnit, Queued, flush_fd};

/// What each I/O is, for the report's engine line.
pub const CALLS: &str = "a copy from or into a shared mapping of the whole file (mmap(2), \
                        MAP_SHARED): pages fault in as they are read, writes dirty them for \
                        write-back (msync at each flush); a page that cannot be read (SIGBUS) is \
                        the I/O's error";

/// With `thp`.
pub const CALLS_THP: &str = "a copy from a private mapping of the whole file (mmap(2), \
                            MAP_PRIVATE) with transparent huge pages asked for (madvise \
                            MADV_HUGEPAGE, fio's thp): pages fault in as they are read; a page \
                            that cannot be read (SIGBUS) is the I/O's error";

/// One file's mapping.
struct Mapping {
    ptr: *mut u8,
    len: usize,
    /// Registered with the SIGBUS handler (dropped before the mapping is unmapped).
    guard: Option<Registered>,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        drop(self.guard.take());
        // SAFETY: ptr/len are a mapping this engine made and nothing else refers to.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

pub struct Mmap {
    files: Vec<OwnedFd>,
    maps: Vec<Option<Mapping>>,
    /// fio's `thp`: private mappings, transparent huge pages asked for (reads only).
    thp: bool,
}

// SAFETY: the mappings are this engine's alone, used from the thread that owns it.
unsafe impl Send for Mmap {}

impl Mmap {
    pub fn new(files: Vec<OwnedFd>, thp: bool) -> Self {
        let maps = files.iter().map(|_| None).collect();
        Mmap { files, maps, thp }
    }

    /// File `i`'s mapping, made when there is none or the I/O ends beyond it (the file grew).
    fn mapping(&mut self, i: usize, end: u64) -> io::Result<&Mapping> {
        if self.maps[i].as_ref().is_some_and(|m| end > m.len as u64) {
            self.maps[i] = None;
        }
        if self.maps[i].is_none() {
            self.maps[i] = Some(map(&self.files[i], self.thp)?);
        }
        let m = self.maps[i].as_ref().expect("just made");
        if end > m.len as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "the I/O ends at byte {end}, beyond the file's end ({} bytes): a mapping \
                                        cannot reach past it",
                    m.len
                ),
            ));
        }
        Ok(m)
    }

    fn copy(&mut self, u: &mut IoUnit) -> io::Result<usize> {
        let offset = u.next_offset();
        let (dir, file) = (u.dir, u.file);
        let buf = u.rest_mut();
        let m = self.mapping(file, offset + buf.len() as u64)?;
        // SAFETY: [offset, offset + len) lies inside the mapping (checked above), and the
        // buffer is the unit's own; a page that cannot be read is patched by the SIGBUS
        // handler, so the copy completes.
        unsafe {
            let at = m.ptr.add(offset as usize);
            match dir {
                Dir::Read => std::ptr::copy_nonoverlapping(at, buf.as_mut_ptr(), buf.len()),
                _ => std::ptr::copy_nonoverlapping(buf.as_ptr(), at, buf.len()),
            }
        }
        if m.guard.as_ref().is_some_and(Registered::take_fault) {
            // The mapping now holds a page of zeros where the file's could not be read.
            self.maps[file] = None;
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        Ok(buf.len())
    }
}

/// The whole of `fd` mapped shared, readable, and writable where the descriptor is; with
/// `thp`, privately with MADV_HUGEPAGE, as fio's thp maps it (advice whose failure fio
/// ignores, as here: a kernel without THP maps normal pages).
fn map(fd: &OwnedFd, thp: bool) -> io::Result<Mapping> {
    let len = rustix::fs::fstat(fd)?.st_size as usize;
    if len == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the file is empty: there is nothing to map",
        ));
    }
    let mode = rustix::fs::fcntl_getfl(fd)? & rustix::fs::OFlags::RWMODE;
    let prot = match mode {
        rustix::fs::OFlags::RDWR => libc::PROT_READ | libc::PROT_WRITE,
        rustix::fs::OFlags::RDONLY => libc::PROT_READ,
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a shared writable mapping needs the file open for reading and writing",
            ));
        }
    };
    // SAFETY: a fresh mapping of a descriptor this engine holds open; its address is
    // the kernel's choice.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            prot,
            if thp {
                libc::MAP_PRIVATE
            } else {
                libc::MAP_SHARED
            },
            fd.as_raw_fd(),
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    if thp {
        // SAFETY: advice on the mapping just made, whole.
        unsafe { libc::madvise(ptr, len, libc::MADV_HUGEPAGE) };
    }
    let mut m = Mapping {
        ptr: ptr.cast(),
        len,
        guard: None,
    };
    m.guard = Some(sigbus::register(ptr as usize, len).ok_or_else(|| {
        io::Error::other("too many files mapped at once to guard them against SIGBUS")
    })?);
    Ok(m)
}

impl Engine for Mmap {
    fn queue(&mut self, _: u32, u: &mut IoUnit) -> Queued {
        if u.dir == Dir::Trim {
            return Queued::Done(Err(io::Error::from_raw_os_error(libc::EINVAL)));
        }
        Queued::Done(self.copy(u))
    }

    /// msync(MS_SYNC) of the file's mapping (its dirty pages written), then the flush asked.
    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()> {
        if let Some(m) = &self.maps[file] {
            // SAFETY: the engine's own live mapping.
            if unsafe { libc::msync(m.ptr.cast(), m.len, libc::MS_SYNC) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        flush_fd(self.files[file].as_fd(), call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, Write};

    fn unit(dir: Dir, offset: u64, len: usize) -> IoUnit {
        IoUnit::one(dir, offset, len)
    }

    fn file(bytes: &[u8]) -> (tempfile::NamedTempFile, OwnedFd) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        let fd = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(f.path())
            .unwrap();
        (f, fd.into())
    }

    #[test]
    fn reads_and_writes_go_through_the_mapping() {
        let data: Vec<u8> = (0..65536u32).map(|i| (i % 251) as u8).collect();
        let (mut f, fd) = file(&data);
        let mut e = Mmap::new(vec![fd], false);
        let mut u = unit(Dir::Read, 8192, 4096);
        assert!(matches!(e.queue(0, &mut u), Queued::Done(Ok(4096))));
        assert_eq!(u.rest_mut(), &data[8192..12288]);
        let mut w = unit(Dir::Write, 4096, 4096);
        w.rest_mut().fill(0xAB);
        assert!(matches!(e.queue(0, &mut w), Queued::Done(Ok(4096))));
        e.flush(0, FlushCall::Fsync).unwrap();
        let mut back = vec![0u8; 4096];
        f.as_file_mut()
            .seek(std::io::SeekFrom::Start(4096))
            .unwrap();
        f.as_file_mut().read_exact(&mut back).unwrap();
        assert!(
            back.iter().all(|&b| b == 0xAB),
            "the write reached the file"
        );
        // Beyond the end: refused, not a fault.
        let mut u = unit(Dir::Read, 65536, 4096);
        match e.queue(0, &mut u) {
            Queued::Done(Err(e)) => assert!(e.to_string().contains("beyond the file's end")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_page_that_cannot_be_read_is_an_error_not_a_crash() {
        let (f, fd) = file(&vec![7u8; 65536]);
        let mut e = Mmap::new(vec![fd], false);
        let mut u = unit(Dir::Read, 0, 4096);
        assert!(matches!(e.queue(0, &mut u), Queued::Done(Ok(4096))));
        // The file cut under the mapping: its pages are gone, a touch raises SIGBUS.
        f.as_file().set_len(0).unwrap();
        let mut u = unit(Dir::Read, 32768, 4096);
        match e.queue(0, &mut u) {
            Queued::Done(Err(e)) => assert_eq!(e.raw_os_error(), Some(libc::EIO)),
            other => panic!("{other:?}"),
        }
        assert!(e.maps[0].is_none(), "the patched mapping is dropped");
        // The next I/O maps the file again, as it is now (empty).
        match e.queue(0, &mut u) {
            Queued::Done(Err(e)) => assert!(e.to_string().contains("empty"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_write_only_descriptor_cannot_be_mapped() {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(4096).unwrap();
        let fd: OwnedFd = std::fs::OpenOptions::new()
            .write(true)
            .open(f.path())
            .unwrap()
            .into();
        let mut e = Mmap::new(vec![fd], false);
        let mut u = unit(Dir::Write, 0, 4096);
        match e.queue(0, &mut u) {
            Queued::Done(Err(e)) => assert!(e.to_string().contains("reading and writing")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn thp_maps_privately_with_huge_pages_asked_for() {
        let data: Vec<u8> = (0..(4u32 << 20)).map(|i| (i % 251) as u8).collect();
        let (_f, fd) = file(&data);
        let mut e = Mmap::new(vec![fd], true);
        let mut u = unit(Dir::Read, 1 << 20, 4096);
        assert!(matches!(e.queue(0, &mut u), Queued::Done(Ok(4096))));
        assert_eq!(u.rest_mut(), &data[1 << 20..(1 << 20) + 4096]);
        // The mapping's flags as the kernel lists them: advised huge (hg), not shared (sh).
        let start = e.maps[0].as_ref().unwrap().ptr as usize;
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut lines = smaps.lines();
        let head = format!("{start:x}-");
        lines
            .find(|l| l.starts_with(&head))
            .expect("the mapping in smaps");
        let flags = lines
            .find(|l| l.starts_with("VmFlags:"))
            .expect("its VmFlags");
        let flags: Vec<&str> = flags.split_whitespace().skip(1).collect();
        assert!(flags.contains(&"hg"), "{flags:?}");
        assert!(!flags.contains(&"sh"), "{flags:?}");
    }
}
