//! fio's `e4defrag` engine: each write is an EXT4_IOC_MOVE_EXT ioctl that swaps the blocks
//! under its range of the file with those of a donor file (`donorname`), what e4defrag(8)
//! does to defragment a file in place: the file's data stays the same, its layout on the
//! device changes. With `inplace`, the donor's blocks are allocated before each move and
//! freed after it (fallocate, then ftruncate to 0), as fio's; without, the donor was
//! allocated once, over the job's whole region, before the job started. Only writes exist
//! (a read is EINVAL, as fio's). The bytes counted are those the kernel says it moved.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use crate::engine::{Dir, Engine, FlushCall, IoUnit, Queued, flush_fd};

pub const CALLS: &str = "ioctl(EXT4_IOC_MOVE_EXT) swapping each write's blocks with the donor \
                         file's (donorname), no data moved through user space";

/// The kernel's `struct move_extent` (linux/ext4.h).
#[repr(C)]
#[derive(Default)]
struct MoveExtent {
    reserved: u32,
    donor_fd: u32,
    orig_start: u64,
    donor_start: u64,
    len: u64,
    moved_len: u64,
}

/// _IOWR('f', 15, struct move_extent).
const EXT4_IOC_MOVE_EXT: libc::c_ulong = (3 << 30)
    | ((std::mem::size_of::<MoveExtent>() as libc::c_ulong) << 16)
    | ((b'f' as libc::c_ulong) << 8)
    | 15;

/// Calls of one move that may meet EBUSY before it fails (see `move_ext`).
const EBUSY_TRIES: u32 = 4;

/// ext4's `f_type` in statfs(2).
pub use crate::platform::abi::EXT4_SUPER_MAGIC;

pub struct Defrag {
    files: Vec<OwnedFd>,
    donor: OwnedFd,
    /// The donor's block size (st_blksize): the unit MOVE_EXT counts in.
    block: u64,
    inplace: bool,
}

impl Defrag {
    pub fn new(files: Vec<OwnedFd>, donor: OwnedFd, inplace: bool) -> io::Result<Self> {
        let st = rustix::fs::fstat(&donor)?;
        Ok(Defrag {
            files,
            donor,
            block: (st.st_blksize as u64).max(512),
            inplace,
        })
    }

    fn call(&self, u: &IoUnit) -> io::Result<usize> {
        if u.dir != Dir::Write {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let (offset, len) = (u.next_offset(), (u.len() - u.done) as u64);
        if self.inplace {
            rustix::fs::fallocate(
                &self.donor,
                rustix::fs::FallocateFlags::empty(),
                offset,
                len,
            )?;
        }
        let moved = self.move_ext(u.file, offset, len);
        if self.inplace {
            let freed = rustix::fs::ftruncate(&self.donor, 0);
            if moved.is_ok() {
                freed?;
            }
        }
        match moved? {
            // Nothing moved: the range is beyond the file's end (fio's EINVAL too).
            0 => Err(io::Error::from_raw_os_error(libc::EINVAL)),
            n => Ok(n.min(len) as usize),
        }
    }

    /// Moves the blocks under `offset..offset+len` of file `file` to the donor's same blocks;
    /// the bytes moved.
    fn move_ext(&self, file: usize, offset: u64, len: u64) -> io::Result<u64> {
        let start = offset / self.block;
        let mut me = MoveExtent {
            donor_fd: self.donor.as_raw_fd() as u32,
            orig_start: start,
            donor_start: start,
            len: (offset + len).div_ceil(self.block) - start,
            ..Default::default()
        };
        let mut tries = 0;
        loop {
            // SAFETY: `me` is the kernel's struct move_extent, alive and exclusively borrowed
            // for the call; both descriptors are open for as long as `self` is.
            let r = unsafe {
                libc::ioctl(
                    self.files[file].as_raw_fd(),
                    EXT4_IOC_MOVE_EXT as _,
                    &mut me as *mut MoveExtent,
                )
            };
            if r == 0 {
                return Ok(me.moved_len * self.block);
            }
            let e = io::Error::last_os_error();
            // EBUSY before anything moved: a page of the range cannot be let go, because its
            // buffers still wait in the journal (blocks this run moved or wrote moments ago:
            // a second pass of a time_based job over a small file meets it at once, and
            // fio's run fails there). Both files are made durable, which commits them, and
            // the move is tried again, all within the I/O's time; the last EBUSY fails it.
            tries += 1;
            if e.raw_os_error() != Some(libc::EBUSY) || me.moved_len > 0 || tries >= EBUSY_TRIES {
                return Err(e);
            }
            rustix::fs::fsync(&self.files[file])?;
            rustix::fs::fsync(&self.donor)?;
        }
    }
}

impl Engine for Defrag {
    #[inline]
    fn queue(&mut self, _: u32, u: &mut IoUnit) -> Queued {
        Queued::Done(self.call(u))
    }

    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()> {
        flush_fd(self.files[file].as_fd(), call)
    }
}

/// Whether the kernel moves extents on the ext4 holding directory `dir`: one trial move of a
/// block between two unnamed files made there (O_TMPFILE: nothing appears in the directory,
/// and both go when closed). Linux 6.18 refuses EXT4_IOC_MOVE_EXT (EPERM) on an ext4 mounted
/// without a journal. The trial's error, if it failed; Ok where no unnamed file can be made
/// there (nothing to judge by: the job's first write then says).
pub fn trial_move(dir: &std::path::Path) -> io::Result<()> {
    use rustix::fs::{Mode, OFlags, open};
    let unnamed = || open(dir, OFlags::TMPFILE | OFlags::RDWR, Mode::RUSR | Mode::WUSR);
    let (Ok(orig), Ok(donor)) = (unnamed(), unnamed()) else {
        return Ok(());
    };
    let st = rustix::fs::fstat(&donor)?;
    let block = (st.st_blksize as u64).max(512);
    // Written out and dropped from the cache: a move refuses pages still dirty or tied up.
    rustix::io::pwrite(&orig, &vec![0x5a; block as usize], 0)?;
    rustix::fs::fsync(&orig)?;
    rustix::fs::fadvise(&orig, 0, None, rustix::fs::Advice::DontNeed)?;
    rustix::fs::fallocate(&donor, rustix::fs::FallocateFlags::empty(), 0, block)?;
    let d = Defrag::new(vec![orig], donor, false)?;
    d.move_ext(0, 0, block).map(drop)
}

/// Whether the file system holding `fd` is ext4: the only one with EXT4_IOC_MOVE_EXT.
pub fn on_ext4(fd: impl AsFd) -> io::Result<bool> {
    let s = rustix::fs::fstatfs(fd)?;
    Ok(s.f_type as i64 == EXT4_SUPER_MAGIC)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, Write};
    use std::os::unix::fs::MetadataExt as _;

    /// A write swaps the file's blocks with the donor's: the file reads the same, its blocks
    /// moved (FIEMAP would show new extents; the donor now holds the old ones, so its
    /// allocation is unchanged and the file's data is intact); inplace frees the donor
    /// after each move; a read is EINVAL.
    #[test]
    fn a_write_moves_extents_and_keeps_the_data() {
        // Under the target directory: /tmp may be tmpfs, the build tree is on the disk.
        let d = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let p = d.path().join("orig");
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&p)
            .unwrap();
        if !on_ext4(&f).unwrap() {
            eprintln!("skipped: {} is not on ext4", d.path().display());
            return;
        }
        if let Err(e) = trial_move(d.path()) {
            // tests/cli/defrag.rs runs the engine on a journaled ext4 of its own then.
            eprintln!("skipped: the kernel refuses EXT4_IOC_MOVE_EXT here: {e}");
            return;
        }
        let data: Vec<u8> = (0..131072u32).map(|i| (i * 7 % 251) as u8).collect();
        f.write_all(&data).unwrap();
        // Written back and out of the cache: a page still tied to the journal is EBUSY.
        f.sync_all().unwrap();
        rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed).unwrap();
        let orig = OwnedFd::from(f.try_clone().unwrap());
        let donor_path = d.path().join("donor");
        let donor = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&donor_path)
            .unwrap();
        rustix::fs::fallocate(&donor, rustix::fs::FallocateFlags::empty(), 0, 131072).unwrap();
        let mut e = Defrag::new(vec![orig], OwnedFd::from(donor), false).unwrap();
        assert_eq!(
            e.queue(0, &mut IoUnit::one(Dir::Write, 0, 65536))
                .result()
                .unwrap(),
            65536
        );
        assert_eq!(
            e.queue(0, &mut IoUnit::one(Dir::Write, 65536, 65536))
                .result()
                .unwrap(),
            65536
        );
        let mut back = Vec::new();
        f.seek(std::io::SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut back).unwrap();
        assert!(back == data, "moving extents changed the file's data");
        let err = e
            .queue(0, &mut IoUnit::one(Dir::Read, 0, 4096))
            .result()
            .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
        // Beyond the file's end nothing moves: EINVAL, as fio's.
        let err = e
            .queue(0, &mut IoUnit::one(Dir::Write, 1 << 20, 4096))
            .result()
            .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));

        // inplace: the donor is allocated for each move and emptied after it. The moves
        // above went through the page cache: written back and dropped first.
        f.sync_all().unwrap();
        rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed).unwrap();
        let donor = std::fs::OpenOptions::new()
            .write(true)
            .open(&donor_path)
            .unwrap();
        rustix::fs::ftruncate(&donor, 0).unwrap();
        let orig = OwnedFd::from(f.try_clone().unwrap());
        let mut e = Defrag::new(vec![orig], OwnedFd::from(donor), true).unwrap();
        assert_eq!(
            e.queue(0, &mut IoUnit::one(Dir::Write, 4096, 4096))
                .result()
                .unwrap(),
            4096
        );
        let m = std::fs::metadata(&donor_path).unwrap();
        assert_eq!((m.len(), m.blocks()), (0, 0), "inplace frees the donor");
        let mut back = Vec::new();
        f.seek(std::io::SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut back).unwrap();
        assert!(back == data);
    }
}
