//! The recorded program's major page faults (`Footer::faults`: the I/O it did through
//! mappings, which no call shows), replayed: each fault's page read in through a read-only
//! mapping of the replay's copy of its file (`platform::pages`: the kernel's fault path, its
//! read-around of the pages near it included), by the thread that faulted, at the fault's
//! place between its calls. The time its thread slept in the fault when recorded is taken
//! out of the think time around it (`think::due`), and the time the page took here put in.
//! So is the CPU time the fault took: the trace holds the fault's end and its sleep, not its
//! start, so the kernel's work before and after the sleep (finding the page missing, asking
//! the device, mapping the page) lies in the recorded computation around it; the CPU time
//! the same fault takes here (the replay thread's CPU clock across it) stands for it there.
//! On this project's VM a 4 KiB fault on the disk slept about 55 µs and took 30 µs of CPU: with
//! its sleep alone taken out, a replay of 2,000 of them on the same disk took 1.26 times the
//! recorded span.
//!
//! A fault's place: the recorded time from its thread's previous call's completion to the
//! fault's start (its report less the sleep), after that call's completion here, the faults
//! before it in the same gap moved by what they took here against what they slept; not
//! before the completion here of another thread's call that the next call starts from
//! (`trace::anchor`) and that completed before the fault when recorded. Open mode: at the
//! recorded time; afap: at once.
//!
//! The program's advice on a file's mapping (`Footer::advice`: madvise's normal, random and
//! sequential, which decide how much the kernel reads around a fault) is given to the replay's
//! mapping of the file before each fault that came after it, so that a fault reads here what
//! it read there: without it, a program that turned read-around off (MADV_RANDOM: one page a
//! fault) would read this system's whole read-ahead window at each. Willneed, which starts
//! reading the range ahead at once (the program's touches of it then find their pages in
//! memory: minor faults, not in the trace), is given by the thread that gave it, at its place
//! between its calls, as a fault is replayed: without it the replay would not read those
//! pages at all. Other advice (populate, whose read the recorded think time holds, and the
//! rest) is counted, not followed.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::issue::{Shared, completed_at, wait_for};
use super::{Mode, think};
use crate::platform::fd::AsFd;
use crate::platform::pages::Mapped;
use crate::platform::sys::fs::{AtFlags, OFlags};
use crate::trace::recording::{Advice, Fault, NO_FILE, Recording};
use crate::trace::replayed::FaultFigures;

/// madvise's advice that decides how the kernel reads around a fault: normal, random,
/// sequential.
const READ_AROUND: [u32; 3] = [0, 1, 2];
/// madvise's willneed: read the range ahead, at once.
const WILLNEED: u32 = 3;

/// The trace's faults, by the thread that made them.
pub struct Faults {
    by_tid: HashMap<u32, Vec<Fault>>,
    /// Per file of the trace, how much of it a mapping here covers: as far as the trace
    /// reaches into it (its faults' pages included).
    lens: Vec<u64>,
    /// Per file, the program's advice on its mappings that a replay follows, in time order.
    advice: HashMap<u32, Vec<Advice>>,
    /// Per thread, its willneed advice, in time order.
    ahead: HashMap<u32, Vec<Advice>>,
    /// The program's madvise calls on the files' mappings: followed here, and not.
    advice_counts: (u64, u64),
    /// Faults in the trace, and their recorded sleep, ns.
    recorded: (u64, u64),
    /// Why none is replayed here (the system cannot); None: they are.
    cannot: Option<&'static str>,
}

impl Faults {
    /// The faults of `r` on its files, by thread (None: the trace holds no faults).
    pub fn of(r: &Recording) -> Option<Faults> {
        let all = r.footer.faults.as_ref()?;
        let mut by_tid: HashMap<u32, Vec<Fault>> = HashMap::new();
        for f in all.iter().filter(|f| f.file != NO_FILE) {
            by_tid.entry(f.tid).or_default().push(*f);
        }
        for list in by_tid.values_mut() {
            list.sort_by_key(|f| f.t);
        }
        let asleep = all.iter().fold(0u64, |s, f| s.saturating_add(f.asleep_ns));
        let given = r.footer.advice.as_deref().unwrap_or_default();
        let mut advice: HashMap<u32, Vec<Advice>> = HashMap::new();
        for a in given.iter().filter(|a| READ_AROUND.contains(&a.advice)) {
            advice.entry(a.file).or_default().push(*a);
        }
        let mut ahead: HashMap<u32, Vec<Advice>> = HashMap::new();
        for a in given.iter().filter(|a| a.advice == WILLNEED) {
            ahead.entry(a.tid).or_default().push(*a);
        }
        for list in advice.values_mut().chain(ahead.values_mut()) {
            list.sort_by_key(|a| a.t);
        }
        let n = advice
            .values()
            .chain(ahead.values())
            .map(Vec::len)
            .sum::<usize>() as u64;
        Some(Faults {
            by_tid,
            advice,
            ahead,
            advice_counts: (n, given.len() as u64 - n),
            lens: r.footer.files.iter().map(|f| f.extent).collect(),
            recorded: (all.len() as u64, asleep),
            cannot: crate::platform::pages::NO_PAGE_FAULTS,
        })
    }

    /// Thread `tid`'s share.
    pub fn thread(&self, tid: u32) -> Thread<'_> {
        let (left, ahead) = match self.cannot {
            Some(_) => (&[][..], &[][..]),
            None => (
                self.by_tid.get(&tid).map_or(&[][..], Vec::as_slice),
                self.ahead.get(&tid).map_or(&[][..], Vec::as_slice),
            ),
        };
        Thread {
            left,
            ahead,
            lens: &self.lens,
            advice: &self.advice,
            maps: HashMap::new(),
            done: Vec::new(),
            acc: Acc::default(),
            majors: crate::platform::cpu::COUNTS_THREAD_FAULTS
                .then(|| crate::platform::cpu::thread().major_faults),
        }
    }

    /// What the replay made of the faults, from its threads' accounts.
    pub fn figures(&self, threads: &[&Acc]) -> FaultFigures {
        let (recorded, asleep) = self.recorded;
        let replayed = threads.iter().map(|a| a.replayed).sum::<u64>();
        let replaced = threads.iter().map(|a| a.replaced_asleep_ns).sum::<u64>();
        let unsupported = threads.iter().any(|a| a.unsupported);
        let not_replayed = match (self.cannot, unsupported) {
            (Some(why), _) => Some(why.to_string()),
            (None, true) => Some(
                "this kernel cannot read a page in as a fault does (no MADV_POPULATE_READ, \
                 before Linux 5.14)"
                    .to_string(),
            ),
            (None, false) => None,
        };
        FaultFigures {
            recorded,
            replayed,
            major_here: threads
                .iter()
                .try_fold(0u64, |s, a| Some(s + a.major_here?)),
            replayed_ns: threads.iter().map(|a| a.took_ns).sum(),
            replayed_cpu_ns: threads.iter().map(|a| a.cpu_ns).sum(),
            replaced_asleep_ns: replaced,
            kept: recorded - replayed,
            kept_asleep_ns: asleep.saturating_sub(replaced),
            failed: threads.iter().map(|a| a.failed).sum(),
            advice_followed: self.advice_counts.0,
            advice_not_followed: self.advice_counts.1,
            willneed_given: threads.iter().map(|a| a.willneed).sum(),
            not_replayed,
        }
    }
}

/// What one replay thread made of its faults.
#[derive(Debug, Default, Clone)]
pub struct Acc {
    replayed: u64,
    /// Of those read in, the ones it waited for storage for: its major faults here (None: not
    /// counted on this platform).
    major_here: Option<u64>,
    took_ns: u64,
    cpu_ns: u64,
    replaced_asleep_ns: u64,
    /// Not read in: the file was not there, or the page lay past its end here.
    failed: u64,
    /// The kernel cannot read a page in so.
    unsupported: bool,
    /// Willneed advice given.
    willneed: u64,
}

/// One replay thread's faults: those left, the mappings it made, and what it did.
pub struct Thread<'a> {
    left: &'a [Fault],
    /// Its willneed advice left.
    ahead: &'a [Advice],
    lens: &'a [u64],
    advice: &'a HashMap<u32, Vec<Advice>>,
    /// Per file, its mapping here, the file it maps (device, inode: a file replaced since,
    /// unlinked and made again or renamed over, is mapped anew), and how many of the file's
    /// advice it was given.
    maps: HashMap<u32, (Mapped, (u64, u64), usize)>,
    /// The faults replayed since the thread's previous call: recorded time, recorded sleep
    /// (ns), CPU time here (ns), and the time here.
    done: Vec<(u64, u64, u64, Duration)>,
    acc: Acc,
    /// The thread's major faults at its start.
    majors: Option<u64>,
}

impl Thread<'_> {
    /// Replays the thread's faults recorded before call `upto` ends (every one left where
    /// None), each at its place after its previous call (`prev`: its index and completion
    /// here). Forgets those replayed before.
    pub fn before(
        &mut self,
        s: &Shared<'_>,
        start: Instant,
        (upto, prev): (Option<usize>, Option<(usize, Instant)>),
    ) {
        self.done.clear();
        let end = upto.map_or(u64::MAX, |i| s.events[i].done_ns());
        let n = self.left.partition_point(|f| f.t <= end);
        let (now, later) = self.left.split_at(n);
        self.left = later;
        let n = self.ahead.partition_point(|a| a.t <= end);
        let (mut ahead, later) = self.ahead.split_at(n);
        self.ahead = later;
        // The faults before this one in the gap: what they took here, and what they took when
        // recorded (their sleep, and their CPU time as here).
        let mut moved = (Duration::ZERO, Duration::ZERO);
        for f in now {
            let from = f.t.saturating_sub(f.asleep_ns);
            // The willneed advice given before the fault began, in its place.
            while let Some((a, rest)) = ahead.split_first().filter(|(a, _)| a.t <= from) {
                self.advise_ahead(s, start, (upto, prev), a, moved);
                ahead = rest;
            }
            if s.stop.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            if let Some(at) = place(s, start, (upto, prev), from) {
                let at = (at + moved.0).checked_sub(moved.1).unwrap_or(at);
                think::wait_until(at, s.stop);
            }
            let Some((t, cpu)) = self.touch(s, f) else {
                continue;
            };
            self.done.push((f.t, f.asleep_ns, cpu, t));
            self.acc.replayed += 1;
            self.acc.took_ns += t.as_nanos() as u64;
            self.acc.cpu_ns += cpu;
            self.acc.replaced_asleep_ns += f.asleep_ns;
            moved.0 += t;
            moved.1 += s.scaled(f.asleep_ns + cpu);
        }
        for a in ahead {
            self.advise_ahead(s, start, (upto, prev), a, moved);
        }
    }

    /// Gives willneed advice `a` to the mapping of its file here, at its place between the
    /// thread's calls (`moved`: what the faults before it in the gap took here, and when
    /// recorded).
    fn advise_ahead(
        &mut self,
        s: &Shared<'_>,
        start: Instant,
        (upto, prev): (Option<usize>, Option<(usize, Instant)>),
        a: &Advice,
        moved: (Duration, Duration),
    ) {
        if s.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        if let Some(at) = place(s, start, (upto, prev), a.t) {
            let at = (at + moved.0).checked_sub(moved.1).unwrap_or(at);
            think::wait_until(at, s.stop);
        }
        if let Some((map, _, _)) = self.mapping(s, a.file) {
            self.acc.willneed += u64::from(map.advise((a.offset, a.len), a.advice).is_ok());
        }
    }

    /// Of the faults replayed before the next call, those recorded after `from_ns`: their
    /// recorded sleep and their CPU time here (standing for theirs when recorded), ns, and
    /// their time here.
    pub fn since(&self, from_ns: u64) -> (u64, u64, Duration) {
        self.done
            .iter()
            .filter(|d| d.0 >= from_ns)
            .fold((0, 0, Duration::ZERO), |(a, c, t), d| {
                (a + d.1, c + d.2, t + d.3)
            })
    }

    /// Replays the faults after the thread's last call (`prev`; none where it stopped):
    /// what it did.
    pub fn rest(mut self, s: &Shared<'_>, start: Instant, prev: Option<(usize, Instant)>) -> Acc {
        self.before(s, start, (None, prev));
        self.account()
    }

    /// What it did (its major faults here counted to now).
    fn account(&self) -> Acc {
        let majors = crate::platform::cpu::COUNTS_THREAD_FAULTS
            .then(|| crate::platform::cpu::thread().major_faults);
        Acc {
            major_here: self.majors.zip(majors).map(|(a, b)| b.saturating_sub(a)),
            ..self.acc.clone()
        }
    }

    /// Reads fault `f`'s page in through a mapping of its file here: the time and the CPU
    /// time (ns) that took, or None where it could not.
    fn touch(&mut self, s: &Shared<'_>, f: &Fault) -> Option<(Duration, u64)> {
        if self.acc.unsupported {
            return None;
        }
        let advice = self.advice.get(&f.file).map_or(&[][..], Vec::as_slice);
        let Some((map, _, given)) = self.mapping(s, f.file) else {
            self.acc.failed += 1;
            return None;
        };
        // The advice the program gave before the fault.
        let due = advice.partition_point(|a| a.t <= f.t);
        for a in advice.get(*given..due).into_iter().flatten() {
            let _ = map.advise((a.offset, a.len), a.advice);
        }
        *given = due.max(*given);
        let cpu = crate::platform::cpu::thread_cpu_ns;
        let (c0, t0) = (cpu(), Instant::now());
        match map.fault_in(f.offset) {
            Ok(()) => Some((t0.elapsed(), cpu().zip(c0).map_or(0, |(b, a)| b - a))),
            Err(e) => {
                let einval = e.raw_os_error() == Some(crate::platform::abi::errno::EINVAL);
                self.acc.unsupported |= einval;
                self.acc.failed += u64::from(!einval);
                None
            }
        }
    }

    /// File `file`'s mapping here, made where there is none of the file its name holds now
    /// (None: no file there).
    fn mapping(&mut self, s: &Shared<'_>, file: u32) -> Option<&mut (Mapped, (u64, u64), usize)> {
        let i = file as usize;
        let id = |st: crate::platform::sys::fs::Stat| (st.st_dev, st.st_ino);
        let now = crate::platform::sys::fs::statat(
            &s.layout.dir,
            s.layout.name(i),
            AtFlags::SYMLINK_NOFOLLOW,
        )
        .ok()
        .map(id)?;
        if self.maps.get(&file).is_none_or(|m| m.1 != now) {
            let fd = s.layout.open(i, OFlags::RDONLY, false).ok()?;
            let was = crate::platform::sys::fs::fstat(&fd).ok().map(id)?;
            let len = self.lens.get(i).copied().unwrap_or(0);
            let map = Mapped::new(fd.as_fd(), len).ok()?;
            self.maps.insert(file, (map, was, 0));
        }
        self.maps.get_mut(&file)
    }
}

/// When a fault recorded to start at `from_ns`, before call `upto` (its thread's previous
/// call `prev`), is due here (None: now).
fn place(
    s: &Shared<'_>,
    start: Instant,
    (upto, prev): (Option<usize>, Option<(usize, Instant)>),
    from_ns: u64,
) -> Option<Instant> {
    match s.mode {
        Mode::Afap => None,
        Mode::Open => Some(start + s.scaled(from_ns)),
        Mode::Closed => {
            let own = match prev {
                Some((p, done)) => done + s.scaled(from_ns.saturating_sub(s.events[p].done_ns())),
                None => start + s.scaled(from_ns),
            };
            // Another thread's call the next one starts from, done before the fault began.
            let anchored = upto
                .and_then(|i| s.anchors.get(&i))
                .into_iter()
                .flatten()
                .filter(|a| !a.soft && s.events[a.event].done_ns() <= from_ns)
                .map(|a| {
                    wait_for(s, a.event);
                    let since = from_ns - s.events[a.event].done_ns();
                    completed_at(s, start, a.event) + s.scaled(since)
                })
                .max();
            Some(anchored.map_or(own, |a| a.max(own)))
        }
    }
}
