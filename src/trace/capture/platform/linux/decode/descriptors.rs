//! The program's descriptors as the kernel keeps them: opened (on the file a path named, or
//! on something that is not storage), duplicated onto the same open file description,
//! made close-on-exec, their status flags changed, and closed — one by one or a range at a
//! time. A read or write then finds its file and position through them (`State::storage`).

use super::super::args::io_flags;
use super::super::calls::Call;
use super::{Done, FileKind, Slot, State};
use crate::trace::recording::{Op, flag};

const O_ACCMODE_CREAT: u64 = libc::O_CREAT as u64;
/// The status flags fcntl(F_SETFL) may change.
const SETTABLE: u64 = (libc::O_APPEND | libc::O_DIRECT | libc::O_NONBLOCK | libc::O_NOATIME) as u64;

impl State {
    /// An open, creat or openat: its descriptor, on the file it opened (storage) or on none.
    pub(super) fn open(&mut self, d: &Done) {
        let note = self.note(d);
        let flags = match d.call {
            Call::Open => d.a[1],
            Call::Creat => (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64,
            Call::Openat => d.a[2],
            _ => note.as_ref().and_then(|n| n.flags).unwrap_or(0),
        };
        if d.ret < 0 {
            self.failed_open(d, note, flags);
            return;
        }
        let created =
            note.as_ref().is_some_and(|n| n.before.is_none()) && flags & O_ACCMODE_CREAT != 0;
        // What the open opened where it is known (read in the kernel, or for a create,
        // judged at the stop), else what was there before.
        let kind = note
            .as_ref()
            .and_then(|n| n.opened.or(n.before))
            .map_or(FileKind::Other, |o| o.kind);
        let file = match (&note, kind) {
            // A path neither copy could read names no file: its calls are counted, on none.
            (Some(n), FileKind::Regular | FileKind::Block) if !n.path.is_empty() => {
                let size = (!created).then(|| n.before.map_or(0, |b| b.size));
                let id = self.file(&n.path, kind, size);
                if self.looked_only.remove(&id) {
                    // Looked for before, found now: made by the program or by something else.
                    self.out.files[id as usize].kind = super::kind_word(kind).into();
                    self.out.files[id as usize].size_at_open = size;
                    self.sizes[id as usize] = size.unwrap_or(0);
                }
                if flags & libc::O_TRUNC as u64 != 0 && kind == FileKind::Regular {
                    self.sizes[id as usize] = 0;
                }
                Some(id)
            }
            _ => None,
        };
        let desc = self.desc(file, Some(0), flags);
        if let (FileKind::Directory, Some(n)) = (kind, &note) {
            self.descs[desc].dir = Some(n.path.clone());
        }
        let cloexec = flags & libc::O_CLOEXEC as u64 != 0;
        self.set_fd(d.pid, d.ret as i32, Slot { desc, cloexec });
        match file {
            Some(f) => {
                let fl = if created { flag::CREATED } else { 0 } | io_flags(flags);
                self.emit(d, Op::Open, f, (0, 0), flags as u32, fl);
            }
            None => self.out.other_calls += 1,
        }
    }

    /// A close: the descriptor is gone (unless the call said it was never there).
    pub(super) fn close(&mut self, d: &Done) {
        let fd = d.a[0] as i32;
        if let Some(slot) = self.slot(d.pid, fd) {
            match self.descs[slot.desc].file {
                Some(f) => self.emit(d, Op::Close, f, (0, 0), fd as u32, 0),
                None => self.out.other_calls += 1,
            }
        }
        if d.ret != -(libc::EBADF as i64) {
            if let Some(t) = self.procs.get_mut(&d.pid) {
                t.remove(&fd);
            }
        }
    }

    /// close_range: the descriptors in the range gone, or (CLOSE_RANGE_CLOEXEC) made
    /// close-on-exec.
    pub(super) fn close_range(&mut self, d: &Done) {
        if d.ret < 0 {
            return;
        }
        let (lo, hi) = (d.a[0] as u32 as i64, d.a[1] as u32 as i64);
        let cloexec_only = d.a[2] & 4 != 0;
        if let Some(t) = self.procs.get_mut(&d.pid) {
            if cloexec_only {
                for (fd, slot) in t.iter_mut() {
                    if (lo..=hi).contains(&(*fd as i64)) {
                        slot.cloexec = true;
                    }
                }
            } else {
                t.retain(|fd, _| !(lo..=hi).contains(&(*fd as i64)));
            }
        }
    }

    /// dup, dup2, dup3 and fcntl's F_DUPFD, F_DUPFD_CLOEXEC, F_SETFD and F_SETFL: a new
    /// descriptor on the same open file description, or its flags changed.
    pub(super) fn dup_or_fcntl(&mut self, d: &Done) {
        if d.ret < 0 {
            return;
        }
        let Some(slot) = self.slot(d.pid, d.a[0] as i32) else {
            return;
        };
        let (new, cloexec) = match d.call {
            Call::Dup => (d.ret as i32, false),
            Call::Dup2 => (d.a[1] as i32, false),
            Call::Dup3 => (d.a[1] as i32, d.a[2] & libc::O_CLOEXEC as u64 != 0),
            _ => match d.a[1] as i32 {
                libc::F_DUPFD => (d.ret as i32, false),
                libc::F_DUPFD_CLOEXEC => (d.ret as i32, true),
                libc::F_SETFD => {
                    let c = d.a[2] & libc::FD_CLOEXEC as u64 != 0;
                    if let Some(s) = self
                        .procs
                        .get_mut(&d.pid)
                        .and_then(|t| t.get_mut(&(d.a[0] as i32)))
                    {
                        s.cloexec = c;
                    }
                    return;
                }
                libc::F_SETFL => {
                    let desc = &mut self.descs[slot.desc];
                    desc.flags = (desc.flags & !SETTABLE) | (d.a[2] & SETTABLE);
                    return;
                }
                _ => return,
            },
        };
        self.set_fd(
            d.pid,
            new,
            Slot {
                desc: slot.desc,
                cloexec,
            },
        );
    }
}
