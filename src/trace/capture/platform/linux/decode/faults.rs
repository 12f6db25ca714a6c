//! Major page faults, each tied to the page of the file it touched (and that page to the file's
//! reach): the mappings each process
//! made (its mmap calls, anonymous ones too), followed through fork and cleared at exec, the
//! latest that covers the fault's address deciding. munmap and mremap are not watched: a range
//! unmapped keeps its file until another mapping covers it, and a mapping moved by mremap is
//! not found at its new address (its faults are counted outside every mapping). The advice the
//! program gave on a file's mapping (madvise: random, sequential…) is tied to the file's range
//! the same way.

use std::collections::HashMap;

use super::State;
use crate::trace::recording::{Advice, Fault, NO_FILE};

/// A process's mapping: `[addr, addr + len)` shows `file` from `offset` (NO_FILE: anonymous
/// memory, or a file that is not storage).
#[derive(Debug, Clone, Copy)]
struct Mapping {
    addr: u64,
    len: u64,
    file: u32,
    offset: u64,
}

/// Each process's mappings, in the order made.
#[derive(Debug, Default)]
pub(super) struct Maps(HashMap<u32, Vec<Mapping>>);

impl Maps {
    /// Process `pid` mapped `len` bytes at `addr`: `file` from `offset`.
    pub(super) fn mapped(&mut self, pid: u32, (addr, len): (u64, u64), file: u32, offset: u64) {
        let v = self.0.entry(pid).or_default();
        // The mappings the new one covers whole are gone: the list stays as long as what the
        // process has mapped, however often it maps the same range again.
        v.retain(|m| !(m.addr >= addr && m.addr.saturating_add(m.len) <= addr.saturating_add(len)));
        v.push(Mapping {
            addr,
            len,
            file,
            offset,
        });
    }

    /// A new process: its creator's mappings are its own.
    pub(super) fn forked(&mut self, parent: u32, child: u32) {
        if let Some(v) = self.0.get(&parent).cloned() {
            self.0.insert(child, v);
        }
    }

    /// A new program: the process's mappings are gone.
    pub(super) fn exec(&mut self, pid: u32) {
        self.0.remove(&pid);
    }

    /// The file and the offset of its page that `addr` shows in process `pid`.
    fn find(&self, pid: u32, addr: u64) -> Option<(u32, u64)> {
        self.range(pid, addr).map(|(file, offset, _)| {
            let page = rustix::param::page_size() as u64;
            (file, offset & !(page - 1))
        })
    }

    /// The file, the offset in it that `addr` shows in process `pid`, and the bytes the
    /// mapping shows from there.
    fn range(&self, pid: u32, addr: u64) -> Option<(u32, u64, u64)> {
        let m = self
            .0
            .get(&pid)?
            .iter()
            .rev()
            .find(|m| addr >= m.addr && addr - m.addr < m.len)?;
        let into = addr - m.addr;
        (m.file != NO_FILE).then(|| (m.file, m.offset + into, m.len - into))
    }
}

impl State {
    /// An madvise call: where it succeeded on a mapping of a file of the trace, the part of
    /// its range that mapping shows, with the advice (how the kernel reads around the faults
    /// there, which a replay follows).
    pub(super) fn madvise(&mut self, d: &super::Done) {
        let (addr, len, advice) = (d.a[0], d.a[1], d.a[2] as u32);
        if d.ret != 0 {
            return;
        }
        if let Some((file, offset, shown)) = self.maps.range(d.pid, addr) {
            // Pages read ahead at once (willneed) or read in by the call (populate): the
            // program reaches that far into the file, and a replay's layout writes it.
            if matches!(advice, 3 | 22 | 23) {
                let end = offset.saturating_add(len.min(shown));
                self.reach(file, end.min(self.sizes[file as usize]), false);
            }
            self.out.advice.push(Advice {
                t: d.t.saturating_sub(self.t0),
                tid: d.tid,
                file,
                offset,
                len: len.min(shown),
                advice,
            });
        }
    }

    /// A major page fault of thread `tid` of process `pid` at `addr`, at `t` as it ended,
    /// `asleep_ns` asleep in it.
    pub(super) fn fault(&mut self, (t, pid, tid): (u64, u32, u32), addr: u64, asleep_ns: u64) {
        let (file, offset) = self.maps.find(pid, addr).unwrap_or((NO_FILE, 0));
        if file != NO_FILE {
            // The page is where the program reached into the file (up to its end): a replay's
            // layout writes the file's data that far.
            let page = rustix::param::page_size() as u64;
            let size = self.sizes[file as usize];
            let end = offset + page;
            self.reach(file, if size > offset { end.min(size) } else { end }, false);
        }
        self.out.faults.push(Fault {
            t: t.saturating_sub(self.t0),
            tid,
            file,
            offset,
            asleep_ns,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::perf::{Raw, Switch, Waking};
    use super::super::super::sched::Records;
    use super::super::decode;
    use super::super::fixture::{PID, data_file, syscall};
    use crate::trace::recording::{Advice, Fault, NO_FILE, Op};

    const MAP: u64 = 0x7f00_0000_0000;

    /// /data/f (descriptor 5) mapped shared at MAP from its third page, 16 pages, at 1 µs.
    fn data_mapped() -> [Raw; 2] {
        let page = rustix::param::page_size() as u64;
        syscall(
            libc::SYS_mmap,
            1_000,
            50,
            [0, 16 * page, 1, libc::MAP_SHARED as u64, 5, 2 * page],
            MAP as i64,
        )
    }

    fn fault(t: u64, pid: u32, addr: u64) -> Raw {
        Raw::Fault {
            t,
            pid,
            tid: pid,
            addr,
        }
    }

    /// Each fault tied to the file page its process's latest mapping there shows: through an
    /// anonymous mapping laid over part of the file's, outside every mapping, in a child that
    /// inherited the mappings, and after the child's exec (gone); each with the sleep that
    /// ended just before it, none where a call came between, the sleep ended long before or
    /// another thread of the program ended it.
    #[test]
    fn faults_are_tied_to_the_page_their_mapping_shows_and_to_the_sleep_just_before() {
        let page = rustix::param::page_size() as u64;
        let anon = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;
        // /data/f mapped; one page of anonymous memory laid over its fifth.
        let mut raw = Vec::from(data_mapped());
        raw.extend(syscall(
            libc::SYS_mmap,
            1_100,
            50,
            [
                MAP + 4 * page,
                page,
                3,
                anon | libc::MAP_FIXED as u64,
                u64::MAX,
                0,
            ],
            (MAP + 4 * page) as i64,
        ));
        raw.push(fault(2_000, PID, MAP + page + 0x234));
        raw.push(fault(2_100, PID, MAP + 4 * page + 0x10));
        raw.push(fault(2_200, PID, MAP + 64 * page));
        raw.push(Raw::Fork {
            t: 2_300,
            pid: PID + 100,
            ppid: PID,
            tid: PID + 100,
            ptid: PID,
        });
        raw.push(fault(2_400, PID + 100, MAP + 0x10));
        raw.push(Raw::Exec {
            t: 2_500,
            pid: PID + 100,
        });
        raw.push(fault(2_600, PID + 100, MAP + 0x10));
        // A sleep ended 2 ms before this fault: not its.
        raw.push(fault(2_000_000, PID, MAP + 3 * page));
        // A sleep, then a call, then a fault: the sleep was before the call.
        raw.extend(syscall(
            libc::SYS_pread64,
            3_000_300,
            50,
            [5, 0x9000, 4096, 0, 0, 0],
            4096,
        ));
        raw.push(fault(3_000_400, PID, MAP + 7 * page + 1));
        // A sleep another thread of the program ended (a lock it released), then a fault: the
        // sleep waited for that thread, not for the page.
        raw.push(fault(4_000_600, PID, MAP + 8 * page));
        let sleep = |from, to| {
            [
                Switch {
                    t: from,
                    tid: PID,
                    out: true,
                    preempted: false,
                },
                Switch {
                    t: to,
                    tid: PID,
                    out: false,
                    preempted: false,
                },
            ]
        };
        let mut switches = Vec::new();
        for (from, to) in [
            (1_500, 1_990),
            (2_900, 3_000),
            (3_000_100, 3_000_200),
            (4_000_000, 4_000_500),
        ] {
            switches.extend(sleep(from, to));
        }
        let inherited = data_file(libc::O_RDWR);
        let d = decode(
            raw,
            (Vec::new(), Vec::new()),
            PID,
            &inherited,
            (0, b"/".to_vec()),
            Some(Records {
                switches,
                wakings: Some(vec![Waking {
                    t: 4_000_400,
                    by: PID + 1,
                    tid: PID,
                }]),
            }),
        );
        // The file's mapping is in the trace (where, how long, from which offset); the
        // anonymous one is not.
        let maps: Vec<_> = d.events.iter().filter(|e| e.op == Op::Mmap).collect();
        assert_eq!(maps.len(), 1);
        assert_eq!(
            (maps[0].offset, maps[0].len, maps[0].result),
            (2 * page, 16 * page, MAP as i64)
        );
        let f = maps[0].file;
        // The furthest page a fault touched is how far the program reached into the file.
        assert_eq!(d.files[f as usize].extent, 11 * page);
        let at = |t, tid, file, offset, asleep_ns| Fault {
            t,
            tid,
            file,
            offset,
            asleep_ns,
        };
        assert_eq!(
            d.faults,
            vec![
                at(2_000, PID, f, 3 * page, 490),
                at(2_100, PID, NO_FILE, 0, 0),
                at(2_200, PID, NO_FILE, 0, 0),
                at(2_400, PID + 100, f, 2 * page, 0),
                at(2_600, PID + 100, NO_FILE, 0, 0),
                at(2_000_000, PID, f, 5 * page, 0),
                at(3_000_400, PID, f, 9 * page, 0),
                at(4_000_600, PID, f, 10 * page, 0),
            ]
        );
    }

    /// madvise on a file's mapping is tied to the file's range the mapping shows (a range
    /// running past the mapping cut at its end); on anonymous memory, failed, or outside
    /// every mapping, it is left out.
    #[test]
    fn advice_on_a_mapping_is_tied_to_the_file_range_it_shows() {
        let page = rustix::param::page_size() as u64;
        let anon = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;
        const ANON: u64 = 0x7e00_0000_0000;
        // /data/f mapped; 4 pages of anonymous memory elsewhere.
        let mut raw = Vec::from(data_mapped());
        raw.extend(syscall(
            libc::SYS_mmap,
            1_100,
            50,
            [0, 4 * page, 3, anon, u64::MAX, 0],
            ANON as i64,
        ));
        let madvise = |t, (addr, len, advice): (u64, u64, u64), ret| {
            syscall(libc::SYS_madvise, t, 20, [addr, len, advice, 0, 0, 0], ret)
        };
        // Random from the mapping's fourth page, asked for 64 pages: the 12 it shows.
        raw.extend(madvise(2_000, (MAP + 4 * page, 64 * page, 1), 0));
        // Sequential on its first 2 pages.
        raw.extend(madvise(2_100, (MAP, 2 * page, 2), 0));
        // Left out: anonymous memory, a failure, no mapping.
        raw.extend(madvise(2_200, (ANON, page, 4), 0));
        raw.extend(madvise(2_300, (MAP, page, 99), -(libc::EINVAL as i64)));
        raw.extend(madvise(2_400, (MAP + 64 * page, page, 1), 0));
        let inherited = data_file(libc::O_RDWR);
        let d = decode(
            raw,
            (Vec::new(), Vec::new()),
            PID,
            &inherited,
            (0, b"/".to_vec()),
            None,
        );
        let f = d.events.iter().find(|e| e.op == Op::Mmap).unwrap().file;
        let given = |t, offset, len, advice| Advice {
            t,
            tid: PID,
            file: f,
            offset,
            len,
            advice,
        };
        assert_eq!(
            d.advice,
            vec![
                given(2_000, 6 * page, 12 * page, 1),
                given(2_100, 2 * page, 2 * page, 2),
            ]
        );
        // Not a call of the trace, and not counted as a call on something else.
        assert!(d.events.iter().all(|e| e.op == Op::Mmap));
    }
}
