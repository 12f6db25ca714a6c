//! Opens that found nothing: looks for a file, kept as events (`trace::poll` reads them).

use super::super::ptrace::PathNote;
use super::{Done, FileKind, Op, State, io_flags};

impl State {
    /// An open that failed. One that found nothing at its path (ENOENT) is a look for a file
    /// — a lock, a pid file, a journal that may be there — and is kept: the file the path
    /// names (made known here, not there) and the error; a replay looks the same way, and a
    /// program that polls for a file shows its looks. Other failures (permissions, a path
    /// through a file), and a look whose path the probe could not read, say nothing a replay
    /// can redo: counted, not kept.
    pub(super) fn failed_open(&mut self, d: &Done, note: Option<PathNote>, flags: u64) {
        match note {
            Some(n) if d.ret == -i64::from(libc::ENOENT) && !n.path.is_empty() => {
                let known = self.out.files.len();
                let file = self.file(&n.path, FileKind::Regular, None);
                if file as usize == known {
                    self.looked_only.insert(file);
                }
                self.emit(d, Op::Open, file, (0, 0), flags as u32, io_flags(flags));
            }
            _ => self.out.other_calls += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::ptrace::{Existing, PathNote};
    use super::super::fixture::{PID, syscall};
    use super::super::{Call, FileKind, decode};
    use crate::trace::recording::{Op, flag};

    /// An openat of `path` at `t` with `flags`, its result `ret`, and its note: what the
    /// probe read (`path`, empty where it could not) and what was there before.
    fn openat(
        t: u64,
        path: &str,
        flags: i32,
        ret: i64,
        before: Option<u64>,
    ) -> ([super::super::super::perf::Raw; 2], PathNote) {
        let raw = syscall(
            libc::SYS_openat,
            t,
            100,
            [libc::AT_FDCWD as u64, 0, flags as u64, 0o644, 0, 0],
            ret,
        );
        let existing = |size| Existing {
            kind: FileKind::Regular,
            size,
        };
        let note = PathNote {
            t,
            tid: PID,
            call: Call::Openat,
            path: path.as_bytes().to_vec(),
            path2: None,
            at: Some(libc::AT_FDCWD),
            at2: None,
            flags: None,
            before: before.map(existing),
            opened: (ret >= 0).then(|| existing(before.unwrap_or(0))),
        };
        (raw, note)
    }

    #[test]
    fn a_look_that_found_nothing_is_an_event_and_the_open_that_finds_the_file_says_who_made_it() {
        let creat = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
        let calls = [
            openat(1_000, "/data/ready", libc::O_RDONLY, -2, None),
            // The path's page not in memory at the call's entry: read empty.
            openat(2_000, "", libc::O_RDONLY, -2, None),
            openat(3_000, "/data/ready", creat, 6, None),
            openat(4_000, "/data/other", libc::O_RDONLY, -2, None),
            // Made meanwhile by a process outside the program: found, 100 bytes.
            openat(5_000, "/data/other", libc::O_RDONLY, 7, Some(100)),
            openat(6_000, "/data/denied", libc::O_RDONLY, -13, None),
            // Opened, its path read neither at the entry nor at the exit: no file to name.
            openat(7_000, "", libc::O_RDONLY, 8, Some(50)),
        ];
        let raw = calls.iter().flat_map(|(r, _)| *r).collect();
        let notes = calls.iter().map(|(_, n)| n.clone()).collect();
        let d = decode(raw, (notes, Vec::new()), PID, &[], (0, b"/".to_vec()), None);
        let file = |p: &str| d.files.iter().position(|f| f.path == p).unwrap() as u32;
        let opens: Vec<(u32, i64, bool)> = d
            .events
            .iter()
            .filter(|e| e.op == Op::Open)
            .map(|e| (e.file, e.result, e.flags & flag::CREATED != 0))
            .collect();
        let (ready, other) = (file("/data/ready"), file("/data/other"));
        assert_eq!(
            opens,
            [
                (ready, -2, false),
                (ready, 6, true),
                (other, -2, false),
                (other, 7, false)
            ]
        );
        // Made by the program: nothing to lay out. Found made: laid out at what was found.
        assert_eq!(d.files[ready as usize].size_at_open, None);
        assert_eq!(d.files[other as usize].size_at_open, Some(100));
        // The unread look, the refused open and the unread open: counted, on no file (not
        // on the working directory, "/", which an empty relative path would be made into).
        assert_eq!(d.other_calls, 3);
        assert!(
            d.files
                .iter()
                .all(|f| f.path != "/" && f.path != "/data/denied")
        );
    }
}
