//! A fault-injecting file system for the tests, below the kernel's file interface: FUSE
//! (the `fuser` crate) serving one directory of in-memory files, with direct I/O so every
//! read and write reaches it. A test arms faults by file offset: a write that lands with a
//! bit flipped, is dropped while reporting success, lands at another offset, or lands torn;
//! a write or read that fails with EIO or ENOSPC; a write that stalls. Each fault fires once. Mounting needs
//! /dev/fuse and fusermount3 (scripts/test-deps.sh installs fuse3); without them the tests
//! print SKIP.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use fuser::{
    Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo,
    LockOwner, MountOption, OpenFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory,
    ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, ReplyXattr, Request, TimeOrNow,
    WriteFlags,
};

/// What goes wrong, and where (the byte offset a write or read must cover).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The write lands, then one bit of it flips on the "media".
    FlipBit { at: u64 },
    /// The write is acknowledged and never stored.
    DropWrite { at: u64 },
    /// The write covering `at` lands at `to` instead.
    Misdirect { at: u64, to: u64 },
    /// Only the first `keep` bytes of the write land.
    Tear { at: u64, keep: usize },
    /// The write fails with EIO.
    WriteEio { at: u64 },
    /// The write fails with ENOSPC.
    WriteEnospc { at: u64 },
    /// A read fails with EIO.
    ReadEio { at: u64 },
    /// The write lands two seconds late (a slow disk), the file system busy meanwhile.
    Stall { at: u64 },
    /// Volatile mode: an fsync covering `at` is acknowledged, but `len` bytes there never
    /// reach the stable copy (a device that loses data it said was durable).
    LoseOnFsync { at: u64, len: usize },
}

impl Fault {
    fn at(&self) -> u64 {
        match *self {
            Fault::FlipBit { at }
            | Fault::DropWrite { at }
            | Fault::Misdirect { at, .. }
            | Fault::Tear { at, .. }
            | Fault::WriteEio { at }
            | Fault::WriteEnospc { at }
            | Fault::ReadEio { at }
            | Fault::Stall { at }
            | Fault::LoseOnFsync { at, .. } => at,
        }
    }

    fn on_read(&self) -> bool {
        matches!(self, Fault::ReadEio { .. })
    }

    fn on_fsync(&self) -> bool {
        matches!(self, Fault::LoseOnFsync { .. })
    }
}

/// Faults armed, shared with the test. `after_writes`: a write fault fires only once this many
/// writes starting at its block have landed since it was armed (1: the second).
#[derive(Debug, Default)]
pub struct Faults {
    pub armed: Vec<(Fault, u32)>,
    /// Writes seen per offset (the start of each write).
    seen: HashMap<u64, u32>,
    pub fired: Vec<Fault>,
}

struct Node {
    name: String,
    data: Vec<u8>,
    /// Extended attributes (iogauge's mark on the files it creates).
    xattrs: HashMap<String, Vec<u8>>,
    /// Last change of the data (iogauge's mark records it).
    mtime: SystemTime,
    /// Volatile mode: the data as of the last fsync, what a power cut leaves.
    stable: Vec<u8>,
}

struct Inner {
    nodes: HashMap<u64, Node>,
    next: u64,
    /// Writes stay in a volatile cache until fsync (see [`Mounted::power_cut`]).
    volatile: bool,
}

pub struct FaultFs {
    inner: Arc<Mutex<Inner>>,
    faults: Arc<Mutex<Faults>>,
}

const TTL: Duration = Duration::ZERO;
const ROOT: u64 = 1;

fn attr(ino: u64, size: u64, dir: bool) -> FileAttr {
    attr_at(ino, size, dir, SystemTime::UNIX_EPOCH)
}

fn node_attr(ino: u64, n: &Node) -> FileAttr {
    attr_at(ino, n.data.len() as u64, false, n.mtime)
}

fn attr_at(ino: u64, size: u64, dir: bool, mtime: SystemTime) -> FileAttr {
    FileAttr {
        ino: INodeNo(ino),
        size,
        blocks: size.div_ceil(512),
        atime: mtime,
        mtime,
        ctime: mtime,
        crtime: mtime,
        kind: if dir {
            FileType::Directory
        } else {
            FileType::RegularFile
        },
        perm: if dir { 0o755 } else { 0o644 },
        nlink: if dir { 2 } else { 1 },
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

impl FaultFs {
    fn take(&self, covers: impl Fn(u64) -> bool, read: bool, offset: u64) -> Option<Fault> {
        let mut f = self.faults.lock().unwrap();
        let seen = if read {
            0
        } else {
            *f.seen.get(&offset).unwrap_or(&0)
        };
        let i = f.armed.iter().position(|(x, after)| {
            !x.on_fsync() && x.on_read() == read && covers(x.at()) && *after <= seen
        })?;
        let (fault, _) = f.armed.remove(i);
        f.fired.push(fault);
        Some(fault)
    }
}

impl Filesystem for FaultFs {
    fn lookup(&self, _r: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let g = self.inner.lock().unwrap();
        match g
            .nodes
            .iter()
            .find(|(_, n)| parent.0 == ROOT && OsStr::new(&n.name) == name)
        {
            Some((&ino, n)) => reply.entry(&TTL, &node_attr(ino, n), Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _r: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        if ino.0 == ROOT {
            return reply.attr(&TTL, &attr(ROOT, 0, true));
        }
        let g = self.inner.lock().unwrap();
        match g.nodes.get(&ino.0) {
            Some(n) => reply.attr(&TTL, &node_attr(ino.0, n)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        _r: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        if ino.0 == ROOT {
            return reply.attr(&TTL, &attr(ROOT, 0, true));
        }
        let mut g = self.inner.lock().unwrap();
        match g.nodes.get_mut(&ino.0) {
            Some(n) => {
                if let Some(s) = size {
                    n.data.resize(s as usize, 0);
                    n.mtime = SystemTime::now();
                }
                reply.attr(&TTL, &node_attr(ino.0, n))
            }
            None => reply.error(Errno::ENOENT),
        }
    }

    fn create(
        &self,
        _r: &Request,
        parent: INodeNo,
        name: &OsStr,
        _mode: u32,
        _umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        if parent.0 != ROOT {
            return reply.error(Errno::ENOENT);
        }
        let mut g = self.inner.lock().unwrap();
        let name = name.to_string_lossy().into_owned();
        if g.nodes.values().any(|n| n.name == name) {
            return reply.error(Errno::EEXIST);
        }
        let ino = g.next;
        g.next += 1;
        g.nodes.insert(
            ino,
            Node {
                name,
                data: Vec::new(),
                xattrs: HashMap::new(),
                mtime: SystemTime::now(),
                stable: Vec::new(),
            },
        );
        reply.created(
            &TTL,
            &attr(ino, 0, false),
            Generation(0),
            FileHandle(0),
            FopenFlags::FOPEN_DIRECT_IO,
        );
    }

    fn open(&self, _r: &Request, _ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        // Every read and write comes here, not to the page cache.
        reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
    }

    fn unlink(&self, _r: &Request, _parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let mut g = self.inner.lock().unwrap();
        let ino = g
            .nodes
            .iter()
            .find(|(_, n)| OsStr::new(&n.name) == name)
            .map(|(&i, _)| i);
        match ino {
            Some(i) => {
                g.nodes.remove(&i);
                reply.ok()
            }
            None => reply.error(Errno::ENOENT),
        }
    }

    /// Renames within the one directory (iogauge's outputs: a temporary file renamed into
    /// place), replacing what is there unless told not to.
    fn rename(
        &self,
        _r: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: fuser::RenameFlags,
        reply: ReplyEmpty,
    ) {
        if parent.0 != ROOT || newparent.0 != ROOT {
            return reply.error(Errno::ENOENT);
        }
        if !(flags - fuser::RenameFlags::RENAME_NOREPLACE).is_empty() {
            return reply.error(Errno::EINVAL);
        }
        let mut g = self.inner.lock().unwrap();
        let find = |g: &Inner, n: &OsStr| {
            g.nodes
                .iter()
                .find(|(_, node)| OsStr::new(&node.name) == n)
                .map(|(&i, _)| i)
        };
        let Some(from) = find(&g, name) else {
            return reply.error(Errno::ENOENT);
        };
        if let Some(there) = find(&g, newname) {
            if flags.contains(fuser::RenameFlags::RENAME_NOREPLACE) {
                return reply.error(Errno::EEXIST);
            }
            g.nodes.remove(&there);
        }
        if let Some(n) = g.nodes.get_mut(&from) {
            n.name = newname.to_string_lossy().into_owned();
        }
        reply.ok()
    }

    fn read(
        &self,
        _r: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let end = offset + u64::from(size);
        if self
            .take(|at| at >= offset && at < end, true, offset)
            .is_some()
        {
            return reply.error(Errno::EIO);
        }
        let g = self.inner.lock().unwrap();
        match g.nodes.get(&ino.0) {
            Some(n) => {
                let s = (offset as usize).min(n.data.len());
                let e = (end as usize).min(n.data.len());
                reply.data(&n.data[s..e])
            }
            None => reply.error(Errno::ENOENT),
        }
    }

    fn write(
        &self,
        _r: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _wf: WriteFlags,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let end = offset + data.len() as u64;
        let fault = self.take(|at| at >= offset && at < end, false, offset);
        *self.faults.lock().unwrap().seen.entry(offset).or_insert(0) += 1;
        let mut at = offset;
        let mut bytes = data.to_vec();
        match fault {
            Some(Fault::WriteEio { .. }) => return reply.error(Errno::EIO),
            Some(Fault::WriteEnospc { .. }) => return reply.error(Errno::ENOSPC),
            Some(Fault::DropWrite { .. }) => return reply.written(data.len() as u32),
            Some(Fault::Misdirect { to, .. }) => at = to,
            Some(Fault::Tear { keep, .. }) => bytes.truncate(keep),
            Some(Fault::Stall { .. }) => std::thread::sleep(Duration::from_secs(2)),
            _ => {}
        }
        let mut g = self.inner.lock().unwrap();
        let Some(n) = g.nodes.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let e = at as usize + bytes.len();
        if n.data.len() < e {
            n.data.resize(e, 0);
        }
        n.data[at as usize..e].copy_from_slice(&bytes);
        n.mtime = SystemTime::now();
        // A write to the wrong place still leaves the file as long as the write asked.
        if n.data.len() < end as usize {
            n.data.resize(end as usize, 0);
        }
        if let Some(Fault::FlipBit { at: flip }) = fault {
            n.data[flip as usize] ^= 0x20;
        }
        reply.written(data.len() as u32)
    }

    fn flush(
        &self,
        _r: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _l: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok()
    }

    fn fsync(&self, _r: &Request, ino: INodeNo, _fh: FileHandle, _d: bool, reply: ReplyEmpty) {
        let mut g = self.inner.lock().unwrap();
        if !g.volatile {
            return reply.ok();
        }
        let Some(n) = g.nodes.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let old = std::mem::replace(&mut n.stable, n.data.clone());
        let mut f = self.faults.lock().unwrap();
        let len = n.data.len() as u64;
        // Fires at the first flush after more than `after` writes of its block.
        let seen = |at: u64| f.seen.get(&at).copied().unwrap_or(0);
        if let Some(i) = f
            .armed
            .iter()
            .position(|(x, after)| x.on_fsync() && x.at() < len && seen(x.at()) > *after)
        {
            let (fault, _) = f.armed.remove(i);
            if let Fault::LoseOnFsync { at, len } = fault {
                // What was stable there before stays: the device lost this range (from its
                // cache too, so a later flush does not bring it back).
                for k in at as usize..(at as usize + len).min(n.stable.len()) {
                    let before = old.get(k).copied().unwrap_or(0);
                    n.stable[k] = before;
                    n.data[k] = before;
                }
            }
            f.fired.push(fault);
        }
        reply.ok()
    }

    fn readdir(
        &self,
        _r: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino.0 != ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let g = self.inner.lock().unwrap();
        let mut entries = vec![
            (ROOT, FileType::Directory, ".".to_string()),
            (ROOT, FileType::Directory, "..".to_string()),
        ];
        entries.extend(
            g.nodes
                .iter()
                .map(|(&i, n)| (i, FileType::RegularFile, n.name.clone())),
        );
        for (k, (i, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(i), (k + 1) as u64, kind, name) {
                break;
            }
        }
        reply.ok()
    }

    fn statfs(&self, _r: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        // 64 GiB free in 4 KiB blocks: room for any test.
        reply.statfs(1 << 24, 1 << 24, 1 << 24, 1 << 20, 1 << 20, 4096, 255, 4096)
    }

    fn getxattr(&self, _r: &Request, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        let g = self.inner.lock().unwrap();
        let value = g
            .nodes
            .get(&ino.0)
            .and_then(|n| n.xattrs.get(&*name.to_string_lossy()));
        match value {
            None => reply.error(Errno::ENODATA),
            Some(v) if size == 0 => reply.size(v.len() as u32),
            Some(v) if (size as usize) < v.len() => reply.error(Errno::ERANGE),
            Some(v) => reply.data(v),
        }
    }

    fn setxattr(
        &self,
        _r: &Request,
        ino: INodeNo,
        name: &OsStr,
        value: &[u8],
        _f: i32,
        _p: u32,
        reply: ReplyEmpty,
    ) {
        let mut g = self.inner.lock().unwrap();
        match g.nodes.get_mut(&ino.0) {
            Some(n) => {
                n.xattrs
                    .insert(name.to_string_lossy().into_owned(), value.to_vec());
                reply.ok()
            }
            None => reply.error(Errno::ENOENT),
        }
    }

    fn access(&self, _r: &Request, _ino: INodeNo, _m: fuser::AccessFlags, reply: ReplyEmpty) {
        reply.ok()
    }
}

/// A mounted FaultFs: the faults to arm and the mount, unmounted when dropped.
pub struct Mounted {
    pub faults: Arc<Mutex<Faults>>,
    inner: Arc<Mutex<Inner>>,
    session: Option<fuser::BackgroundSession>,
}

impl Mounted {
    /// From now on, writes are volatile until fsync.
    pub fn set_volatile(&self) {
        let mut g = self.inner.lock().unwrap();
        g.volatile = true;
        for n in g.nodes.values_mut() {
            n.stable = n.data.clone();
        }
    }

    /// A power cut: every file's data goes back to what its last fsync made stable (its
    /// length kept, as if metadata were journaled).
    pub fn power_cut(&self) {
        let mut g = self.inner.lock().unwrap();
        for n in g.nodes.values_mut() {
            let len = n.data.len();
            n.data = n.stable.clone();
            n.data.resize(len, 0);
        }
    }

    /// Arms `fault` to fire after `after_writes` more writes of its block (counted from now).
    pub fn arm(&self, fault: Fault, after_writes: u32) {
        let mut f = self.faults.lock().unwrap();
        f.seen.clear();
        f.armed.push((fault, after_writes));
    }

    pub fn fired(&self) -> Vec<Fault> {
        self.faults.lock().unwrap().fired.clone()
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if let Some(s) = self.session.take() {
            let _ = s.umount_and_join();
        }
    }
}

/// Mounts a FaultFs on `dir`, or says why it cannot; its requests served by `threads`
/// threads (with more than one, a stalled write holds one and the others go on answering).
pub fn mount(dir: &Path, threads: usize) -> Result<Mounted, String> {
    if !Path::new("/dev/fuse").exists() {
        return Err("no /dev/fuse".into());
    }
    let has_fusermount = std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p)
            .any(|d| d.join("fusermount3").exists() || d.join("fusermount").exists())
    });
    if !has_fusermount {
        return Err("no fusermount3 (the fuse3 package; scripts/test-deps.sh installs it)".into());
    }
    let faults = Arc::new(Mutex::new(Faults::default()));
    let inner = Arc::new(Mutex::new(Inner {
        nodes: HashMap::new(),
        next: 2,
        volatile: false,
    }));
    let fs = FaultFs {
        inner: inner.clone(),
        faults: faults.clone(),
    };
    let mut cfg = Config::default();
    cfg.mount_options = vec![
        MountOption::FSName("iogauge-faultfs".into()),
        MountOption::RW,
    ];
    cfg.n_threads = Some(threads);
    let session = fuser::spawn_mount(fs, dir, &cfg).map_err(|e| format!("mount: {e}"))?;
    // The mount is there once the kernel answers for it.
    for _ in 0..200 {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        if mounts.contains(&format!(" {} fuse", dir.display())) {
            return Ok(Mounted {
                faults,
                inner,
                session: Some(session),
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Err("the mount did not appear in /proc/self/mounts".into())
}
