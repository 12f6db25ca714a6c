//! One replay thread: the recorded thread's calls, in its order, each issued when the mode
//! says (closed: the previous call's completion plus the recorded think time; open: the
//! recorded issue time; afap: at once) and after the other thread's call it depends on, as
//! the same system call on the replay's copy of the file, at the recorded offset and length.

use crate::platform::fd::{AsFd, OwnedFd};
use crate::trace::ids::IdMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::platform::sys::fs::OFlags;
use crate::platform::sys::{O_DSYNC, O_SYNC};
use std::sync::Arc;

use super::layout::Layout;
use super::think;
use super::{Mode, ThreadResult};
use crate::engine::buf::AlignedBuf;
use crate::trace::recording::{Event, MAP_POPULATE, NO_FILE, Op, flag};

/// What all replay threads share.
pub struct Shared<'a> {
    pub events: &'a [Event],
    pub deps: &'a crate::trace::order::Dependencies,
    /// Closed and afap modes: the other threads' calls a call starts from (`trace::anchor`).
    pub anchors: &'a crate::trace::anchor::Anchors,
    /// Per event: its replay completion, ns after the start, + 1 (0: not yet).
    pub done: &'a [AtomicU64],
    /// Per event, what the replay measured of it, set before `done`.
    pub timing: &'a [Timing],
    pub layout: &'a Layout,
    pub mode: Mode,
    pub speed: f64,
    /// Set once every thread is ready (buffers made): the replay's time zero.
    pub start: &'a std::sync::OnceLock<Instant>,
    pub ready: &'a std::sync::Barrier,
    /// The descriptors the replayed opens made, by file, until their close (which may come
    /// from another thread). The calls on a file use them, as the program's used its own.
    pub opened: &'a std::sync::Mutex<IdMap<u32, Vec<Held>>>,
    /// Set by a signal's stop (forwarded) or by [`storage_failed`].
    pub stop: &'a AtomicBool,
    /// The first call the storage failed where the recording's succeeded: its event and
    /// result.
    pub failed: &'a std::sync::OnceLock<(usize, i64)>,
    /// The recorded program's native AIO, replayed.
    pub aio: &'a super::aio::Aio,
    /// Where threads wait for each other's calls (`board`).
    pub board: &'a super::board::Board,
    /// Closed mode: the threads that looked for a file on a timer (`polls`).
    pub polls: &'a super::polls::Polls,
    /// Closed mode, where the trace says it (`Footer::gaps`): per event, the time its thread
    /// was asleep and waiting for a CPU outside its calls before it (`think`).
    pub gaps: Option<&'a IdMap<usize, (u64, u64)>>,
    /// The program's major page faults, where the trace holds them (`faults`).
    pub faults: Option<&'a super::faults::Faults>,
    /// Closed mode, where the trace measured it: the capture's cost taken out of the think
    /// times.
    pub capture: Option<think::Capture>,
}

impl Shared<'_> {
    /// `ns` of recorded time as the replay's: divided by the speed.
    pub fn scaled(&self, ns: u64) -> Duration {
        Duration::from_nanos((ns as f64 / self.speed) as u64)
    }
}

/// A descriptor a replayed open made: the recorded descriptor's number, and the flags it was
/// opened with.
pub struct Held {
    fd_no: i64,
    flags: OFlags,
    fd: Arc<OwnedFd>,
}

impl Held {
    /// Whether call `e` can go through it: the access it needs, and the O_DIRECT and
    /// write-through the recorded call's descriptor had (a call whose flags differ — set by
    /// fcntl, or RWF_DSYNC on the call — gets a descriptor of its own).
    fn fits(&self, e: &Event) -> bool {
        let mode = self.flags & OFlags::RWMODE;
        let access = match e.op {
            Op::Read => mode != OFlags::WRONLY,
            Op::Write | Op::Fallocate | Op::Truncate => mode != OFlags::RDONLY,
            _ => true,
        };
        let same = OFlags::DIRECT | O_SYNC | O_DSYNC;
        access && self.flags & same == open_flags(e) & same
    }
}

/// What the replay measured of one call: its time inside the call, and along the chain of
/// calls that decided when it was issued (its own thread's previous call, the calls it
/// depended on or started from, whichever came last, and so back to the start), the replay's
/// own delays (issue later than the call could go), the capture's cost the replay took out of
/// the recorded think times (`think::Capture`) and the recorded calls on it.
#[derive(Default)]
pub struct Timing {
    pub took_ns: AtomicU64,
    pub chain_late_ns: AtomicU64,
    pub chain_capture_ns: AtomicU64,
    pub chain_calls: AtomicU64,
    /// The call slept (its thread gave up the CPU to wait), as the thread's voluntary
    /// context switches tell.
    pub slept: AtomicBool,
    /// The call that decided its issue time, + 1 (0: the recorded start).
    pub after: AtomicU64,
    /// When it was issued, ns after the start + 1 (0: not yet).
    pub issued_ns: AtomicU64,
    /// Not made: a poll's look after the change it waited for was made here (`polls`).
    pub skipped: AtomicBool,
}

/// The shortest call that can have slept: falling asleep and being woken takes longer.
const SHORTEST_SLEEP: Duration = Duration::from_micros(2);
/// Whether the replay's calls sleep, from the thread's count of voluntary context switches
/// (getrusage), read only where it can tell: after a call that took long enough to have
/// slept, and before a call when the replay itself may have slept since the last reading —
/// waiting out a think time (`think::wait_until` sleeps no less than `SHORTEST_NAP`, so a
/// shorter wait leaves the reading good) or another thread's call (`board`: it counts its
/// parks).
#[derive(Default)]
struct Sleeps {
    known: Option<u64>,
    parks: u64,
}

impl Sleeps {
    /// Before a call: `done`, its thread's previous call's completion; `seen`, the clock's
    /// last reading where nothing since may have slept (else the clock is read).
    fn before(&mut self, done: Option<Instant>, seen: Option<Instant>) {
        let waited = done.map_or(Duration::MAX, |d| {
            seen.map_or_else(|| d.elapsed(), |t| t.saturating_duration_since(d))
        });
        let parks = super::board::parks();
        if self.known.is_none() || waited >= think::SHORTEST_NAP || parks != self.parks {
            self.known = Some(crate::platform::cpu::thread_voluntary_switches());
            self.parks = parks;
        }
    }

    fn after(&mut self, took: Duration) -> bool {
        if took < SHORTEST_SLEEP {
            return false;
        }
        let now = crate::platform::cpu::thread_voluntary_switches();
        let slept = self.known.is_some_and(|k| now > k);
        self.known = Some(now);
        slept
    }
}

/// Whether a call is one its thread replays (the rest are counted: mappings, seeks, renames
/// that failed — `mv` tries one that must not replace first —, and the io_uring and libaio
/// calls whose I/O the trace does not hold; the asynchronous I/Os of an io_submit it holds are
/// issued by that call).
pub fn replayed(e: &Event) -> bool {
    match e.op {
        Op::AioSubmit | Op::AioGetevents | Op::UringEnter => e.flags & flag::ASYNC != 0,
        Op::Seek => false,
        // A mapping that read its pages in (MAP_POPULATE): that read, where this system
        // replays a mapping's reads at all.
        Op::Mmap => populated(e) && crate::platform::pages::NO_PAGE_FAULTS.is_none(),
        Op::Rename => e.result == 0,
        _ => !super::aio::is_async_io(e),
    }
}

/// An mmap of a file of the trace, made, that read its pages in (MAP_POPULATE).
fn populated(e: &Event) -> bool {
    e.op == Op::Mmap && e.file != NO_FILE && e.result >= 0 && e.arg & MAP_POPULATE != 0
}

/// The flags a descriptor for this call needs (the recorded descriptor's, as far as they
/// change the I/O).
fn open_flags(e: &Event) -> OFlags {
    let f = OFlags::RDWR | write_through(e);
    if e.flags & flag::DIRECT != 0 {
        f | OFlags::DIRECT
    } else {
        f
    }
}

/// O_SYNC or O_DSYNC as the event's flags say (the platform's: rustix's `OFlags::DSYNC` is
/// O_SYNC on Linux).
fn write_through(e: &Event) -> OFlags {
    if e.flags & flag::SYNC != 0 {
        O_SYNC
    } else if e.flags & flag::DSYNC != 0 {
        O_DSYNC
    } else {
        OFlags::empty()
    }
}

/// Replays the calls `mine` (indices into the events, in order).
pub fn run_thread(s: &Shared<'_>, mine: &[usize]) -> ThreadResult {
    let mut r = ThreadResult::default();
    let (mut buf, start) = ready(s, mine);
    crate::runner::fault::panic_if_asked("replay");
    let waited = crate::platform::cpu::thread_run_delay_ns();
    super::woken::count(s.board.threads());
    super::woken::call_done();
    let mut fds = Own::default();
    let mut prev: Option<(usize, Instant)> = None;
    let mut skipped_since = 0u64;
    let mut sleeps = Sleeps::default();
    // A poll cut short: the wait of the look its last look replaces.
    let mut landing: Option<think::Waited> = None;
    // Off the CPU outside calls since the previous replayed call: asleep, waiting for a CPU.
    let mut off = (0u64, 0u64);
    let mut faulted = s
        .faults
        .zip(mine.first())
        .map(|(f, &i)| f.thread(s.events[i].tid));
    let mut k = 0;
    while k < mine.len() {
        let i = mine[k];
        let e = &s.events[i];
        if s.stop.load(Ordering::Relaxed) {
            break;
        }
        k += 1;
        off = think::off(s, i, off);
        if super::aio::is_async_io(e) {
            // Issued by its io_submit; complete when a replayed io_getevents reaps it.
            continue;
        }
        if !replayed(e) {
            r.skipped += 1;
            skipped_since += 1;
            mark(s, start, i);
            continue;
        }
        if let Some(f) = faulted.as_mut() {
            f.before(s, start, (Some(i), prev));
        }
        let landed = landing.take();
        let held = landed.is_none();
        let waited = landed.unwrap_or_else(|| {
            let before = (i, prev, off, skipped_since);
            think::wait_due(s, start, before, faulted.as_ref(), &mut r.think)
        });
        let (due, binding) = (waited.due, waited.binding);
        if s.stop.load(Ordering::Relaxed) {
            break;
        }
        let n = super::polls::cut(s, start, &mine[k - 1..]);
        if n > 0 {
            r.skipped += n as u64;
            r.polls_cut += 1;
            skipped_since += n as u64;
            landing = Some(waited.again());
            k += n - 1;
            continue;
        }
        let (ready, binding) = ready_at(s, start, (i, due, binding), held, &mut r);
        // The descriptor before the clock: a first use's open is not the call's time (were
        // it to sleep, or the thread to wait for another's call, `sleeps` reads again).
        let own = fds.len();
        let fd = needs_descriptor(e).then(|| descriptor(s, e, &mut fds));
        let seen = waited.seen.filter(|_| ready == due && fds.len() == own);
        sleeps.before(prev.map(|p| p.1), seen);
        let (result, issued, late) = make(
            s,
            start,
            (i, ready, &mine[k..]),
            fd,
            (&mut fds, &mut buf),
            &mut r,
        );
        let completed = ended(s);
        let took = completed - issued;
        let slept = sleeps.after(took);
        let taken = waited.taken;
        r.capture_taken_ns += taken.as_nanos() as u64;
        timed(s, i, binding, (took, late, slept, taken), skipped_since);
        skipped_since = 0;
        mark_at(s, start, i, completed);
        r.record(e, result, took, issued.saturating_duration_since(due));
        storage_failed(s, i, result);
        prev = Some((i, completed));
        off = (0, 0);
    }
    super::aio::drain(s, start, mine, &mut r);
    r.faults = faulted.map_or_else(Default::default, |f| f.rest(s, start, prev));
    r.cpu_wait_ns = waited
        .zip(crate::platform::cpu::thread_run_delay_ns())
        .map(|(a, b)| b.saturating_sub(a));
    r
}

/// Stops the replay at call `i` where the storage failed it — no room, over quota, an I/O
/// error, a file system turned read-only (ext4's `errors=remount-ro` after one) — and the
/// recording's succeeded: what would follow is another program's I/O (reads of what was
/// never written, a file system filling up), and its figures no measure of the recorded
/// one's.
pub(super) fn storage_failed(s: &Shared<'_>, i: usize, result: i64) {
    use crate::platform::abi::errno::{EDQUOT, EIO, ENOSPC, EROFS};
    let failures = [ENOSPC, EDQUOT, EIO, EROFS].map(|e| -i64::from(e));
    if failures.contains(&result) && s.events[i].result >= 0 {
        let _ = s.failed.set((i, result));
        s.stop.store(true, Ordering::Relaxed);
    }
}

/// Makes call `i` (`rest`: its thread's calls after it), ready at `ready`, through `fd` where
/// it needs one: its result, when it was issued, and how late the replay issued it (its
/// waits for a CPU since `ready` left out: they stand for the program's, `woken`; read
/// before the call's clock starts).
fn make(
    s: &Shared<'_>,
    start: Instant,
    (i, ready, rest): (usize, Instant, &[usize]),
    fd: Option<Result<Arc<OwnedFd>, i64>>,
    (fds, buf): (&mut Own, &mut AlignedBuf),
    r: &mut ThreadResult,
) -> (i64, Instant, Duration) {
    let e = &s.events[i];
    let cpu_waited = super::woken::waited_since(ready);
    let issued = Instant::now();
    let late = issued
        .saturating_duration_since(ready)
        .saturating_sub(cpu_waited);
    s.timing[i]
        .issued_ns
        .store((issued - start).as_nanos() as u64 + 1, Ordering::Release);
    let result = match (e.op, fd) {
        (Op::AioSubmit | Op::UringEnter, _) => submit(s, start, (i, rest), (fds, buf), r),
        (Op::AioGetevents, _) => super::aio::wait(s, start, i, r),
        (_, Some(Err(errno))) => errno,
        (_, fd) => issue(s, e, buf, fd.and_then(Result::ok), fds),
    };
    (result, issued, late)
}

/// The thread's buffer, as large as its largest read or write, made before the start; and
/// the start, once every thread has made its own.
fn ready(s: &Shared<'_>, mine: &[usize]) -> (AlignedBuf, Instant) {
    let biggest = mine
        .iter()
        .map(|&i| &s.events[i])
        .filter(|e| matches!(e.op, Op::Read | Op::Write))
        .map(|e| e.len)
        .max()
        .unwrap_or(0);
    let mut buf = AlignedBuf::zeroed(biggest.min(1 << 30) as usize);
    fill(&mut buf);
    think::ready_sleeps();
    // Twice: once all are ready, and once the start is set.
    s.ready.wait();
    s.ready.wait();
    (buf, *s.start.get().expect("set between the barriers"))
}

/// When call `i`, due at `due` (decided by `binding`), is ready: once the other threads'
/// calls it depends on have completed, and where it is a poll's last look, at the thread's
/// turn after the change it saw (`held`: not for a look that replaced an earlier one). The
/// call that decided it.
fn ready_at(
    s: &Shared<'_>,
    start: Instant,
    (i, due, mut binding): (usize, Instant, Option<usize>),
    held: bool,
    r: &mut ThreadResult,
) -> (Instant, Option<usize>) {
    let mut ready = due;
    for &d in s.deps.of(i) {
        wait_for(s, d);
        let dep_done = completed_at(s, start, d);
        if dep_done > ready {
            (ready, binding) = (dep_done, Some(d));
        }
    }
    if let Some((turn, change)) = held
        .then(|| super::polls::held(s, start, i))
        .flatten()
        .filter(|&(turn, _)| turn > ready)
    {
        think::wait_until(turn, s.stop);
        (ready, binding) = (turn, Some(change));
        r.polls_held += 1;
    }
    (ready, binding)
}

/// What the replay measured of call `i`, stored for the calls after it and the prediction:
/// its time, whether it slept, and along the chain of calls that decided its issue
/// (`binding`, and the `skipped` calls not replayed since its thread's previous call) the
/// replay's own delays and the recorded calls.
fn timed(
    s: &Shared<'_>,
    i: usize,
    binding: Option<usize>,
    (took, late, slept, taken): (Duration, Duration, bool, Duration),
    skipped: u64,
) {
    let t = &s.timing[i];
    t.took_ns.store(took.as_nanos() as u64, Ordering::Relaxed);
    t.slept.store(slept, Ordering::Relaxed);
    let (chain_late, chain_capture, chain_calls) = binding.map_or((0, 0, 0), |b| {
        let bt = &s.timing[b];
        (
            bt.chain_late_ns.load(Ordering::Relaxed),
            bt.chain_capture_ns.load(Ordering::Relaxed),
            bt.chain_calls.load(Ordering::Relaxed),
        )
    });
    t.chain_late_ns
        .store(chain_late + late.as_nanos() as u64, Ordering::Relaxed);
    t.chain_capture_ns
        .store(chain_capture + taken.as_nanos() as u64, Ordering::Relaxed);
    t.chain_calls
        .store(chain_calls + 1 + skipped, Ordering::Relaxed);
    t.after
        .store(binding.map_or(0, |b| b as u64 + 1), Ordering::Relaxed);
}

/// Replays io_submit or io_uring_enter `i`: its I/Os (the count it holds, first of `rest`,
/// the calls after it in its thread) submitted, and for io_uring_enter a wait for what
/// completed while it ran when recorded; the count submitted, or a negated errno.
fn submit(
    s: &Shared<'_>,
    start: Instant,
    (i, rest): (usize, &[usize]),
    (fds, buf): (&mut Own, &mut AlignedBuf),
    r: &mut ThreadResult,
) -> i64 {
    let e = &s.events[i];
    let n = rest
        .iter()
        .take_while(|&&j| super::aio::is_async_io(&s.events[j]))
        .take(e.len as usize)
        .count();
    let ios = &rest[..n];
    let submitted = match descriptors(s, ios, fds) {
        Ok(_) if ios.is_empty() => e.result,
        Ok(held) => super::aio::submit(s, start, (e, ios), &held, buf, r),
        Err(errno) => super::aio::fail(s, start, ios, errno, r),
    };
    if e.op == Op::UringEnter {
        // And what completed while it ran, when recorded.
        super::aio::wait(s, start, i, r);
    }
    submitted
}

/// For a call that starts from other threads' calls (`trace::anchor`), once they completed:
/// when it is due after them (each one's completion plus its recorded delay, `scaled`), and
/// the one that decides it. A soft one counts only where it was issued by the time the others
/// made this call due.
pub(super) fn started_from(
    s: &Shared<'_>,
    start: Instant,
    i: usize,
    scaled: impl Fn(u64) -> Duration,
) -> Option<(Instant, usize)> {
    let list = s.anchors.get(&i)?;
    let at = |a: &crate::trace::anchor::Anchor| {
        wait_for(s, a.event);
        (
            completed_at(s, start, a.event) + scaled(a.after_ns),
            a.event,
        )
    };
    let hard = list.iter().filter(|a| !a.soft).map(at).max_by_key(|x| x.0);
    let soft = list
        .iter()
        .filter(|a| a.soft && hard.is_none_or(|h| issued_by(s, start, a.event, h.0)))
        .map(at);
    hard.into_iter().chain(soft).max_by_key(|x| x.0)
}

/// Whether call `j` is issued by `by` (waits until then at most, asleep: the caller waits
/// until then anyway). Woken as `j`'s thread completes a call: learning of `j`'s issue only at
/// its completion loses nothing, as what starts from it waits for that completion next.
fn issued_by(s: &Shared<'_>, start: Instant, j: usize, by: Instant) -> bool {
    let issued = || s.timing[j].issued_ns.load(Ordering::Acquire);
    let known = || issued() != 0 || s.done[j].load(Ordering::Acquire) != 0;
    s.board.wait_by(
        s.events[j].tid,
        || known() || s.stop.load(Ordering::Relaxed),
        Some(by),
    );
    let ns = issued();
    ns != 0 && start + Duration::from_nanos(ns - 1) <= by
}

/// When another call completed in the replay (it has).
pub(super) fn completed_at(s: &Shared<'_>, start: Instant, j: usize) -> Instant {
    start + Duration::from_nanos(s.done[j].load(Ordering::Acquire).saturating_sub(1))
}

pub(super) fn mark(s: &Shared<'_>, start: Instant, i: usize) {
    mark_at(s, start, i, Instant::now());
}

/// Marks call `i` done at `at` (a replayed call: its completion, already read).
fn mark_at(s: &Shared<'_>, start: Instant, i: usize, at: Instant) {
    let ns = at.saturating_duration_since(start).as_nanos() as u64;
    s.done[i].store(ns + 1, Ordering::Release);
    s.board.wake(s.events[i].tid);
}

/// Waits for another thread's call to complete (or the replay to stop), asleep (`board`).
pub(super) fn wait_for(s: &Shared<'_>, j: usize) {
    s.board.wait(s.events[j].tid, || {
        s.done[j].load(Ordering::Acquire) != 0 || s.stop.load(Ordering::Relaxed)
    });
}

/// Non-zero data for writes (no file system or device may shortcut zeroes).
pub(super) fn fill(buf: &mut [u8]) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for c in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x.to_le_bytes();
        c.copy_from_slice(&b[..c.len()]);
    }
}

/// An error as the recording holds one: the negated errno (EIO when it has none).
fn neg_errno(e: &std::io::Error) -> i64 {
    -i64::from(crate::engine::errno(e).unwrap_or(crate::platform::abi::errno::EIO))
}

/// Whether call `e` goes through a descriptor on its file (`descriptor`), which `issue` is
/// then given.
fn needs_descriptor(e: &Event) -> bool {
    e.file != NO_FILE && !matches!(e.op, Op::Open | Op::Close | Op::Unlink | Op::Rename)
}

/// Issues one call (`fd`: its descriptor, where `needs_descriptor`); its result as the
/// recording holds one (bytes, 0, or -errno).
fn issue(
    s: &Shared<'_>,
    e: &Event,
    buf: &mut AlignedBuf,
    fd: Option<Arc<OwnedFd>>,
    fds: &mut Own,
) -> i64 {
    let file = e.file as usize;
    let errno = |r: crate::platform::sys::io::Errno| -(r.raw_os_error() as i64);
    if e.file == NO_FILE {
        // A directory's sync: the replay's own directory (its files' entries live there). A
        // file system's (a directory's syncfs, or sync's of them all): the one the replay's
        // files are on.
        return match (e.op, e.flags & flag::DIR != 0) {
            (Op::Fsync, true) => {
                crate::platform::sys::fs::fsync(&s.layout.dir).map_or_else(errno, |_| 0)
            }
            (Op::Fdatasync, true) => {
                crate::platform::sys::fs::fdatasync(&s.layout.dir).map_or_else(errno, |_| 0)
            }
            (Op::Syncfs, _) => super::calls::syncfs(s.layout.dir.as_fd()).map_or_else(errno, |_| 0),
            _ => 0,
        };
    }
    match e.op {
        Op::Open => open(s, e),
        Op::Close => {
            close(s, e);
            0
        }
        Op::Unlink => {
            fds.retain(|(f, _), _| *f != e.file);
            match s.layout.unlink(file) {
                Ok(()) => 0,
                Err(err) => neg_errno(&err),
            }
        }
        Op::Rename => {
            // `arg`: the file of the trace whose name it took, plus one (0: none). The
            // descriptors open on either stay open, as the program's did.
            let over = e.arg.checked_sub(1).map(|g| g as usize);
            match s.layout.rename(file, over) {
                Ok(()) => 0,
                Err(err) => neg_errno(&err),
            }
        }
        _ => {
            // Never None: run_thread gives each call that needs one its descriptor.
            let Some(fd) = fd else {
                return -i64::from(crate::platform::abi::errno::EBADF);
            };
            super::calls::on_descriptor(e, fd.as_fd(), buf).unwrap_or_else(errno)
        }
    }
}

/// A replayed open: the descriptor kept in the shared table, by file, until its close. A
/// look that found nothing when recorded looks the same way (never creating what it looks
/// for); where it finds the file here, the descriptor closes at once.
fn open(s: &Shared<'_>, e: &Event) -> i64 {
    let file = e.file as usize;
    let f = OFlags::from_bits_retain(e.arg) & (OFlags::RWMODE | OFlags::TRUNC | OFlags::DIRECT)
        | write_through(e);
    if e.result < 0 {
        let found = s.layout.open(file, f - OFlags::TRUNC, false);
        return found.map_or_else(|err| neg_errno(&err), |_| 0);
    }
    let create = e.flags & flag::CREATED != 0;
    // A file this open may make is on the emergency list before the stretch ends (in
    // `marked_made`, once the clock has stopped): `crate::ending`.
    let making = match create {
        true => match crate::ending::Making::begin_or_refuse() {
            Ok(m) => Some(m),
            Err(err) => return neg_errno(&err),
        },
        false => None,
    };
    match s.layout.open(file, f, create) {
        Ok(fd) => {
            s.layout.watch(file, &fd);
            let held = Held {
                fd_no: e.result,
                flags: f,
                fd: Arc::new(fd),
            };
            if let Some(making) = making {
                CREATED.with_borrow_mut(|c| c.push((file, Arc::clone(&held.fd), making)));
            }
            opened(s).entry(e.file).or_default().push(held);
            e.result
        }
        Err(err) => neg_errno(&err),
    }
}

thread_local! {
    /// The files this thread's replayed opens may have created, marked as iogauge's once the
    /// call's clock has stopped ([`marked_made`]): a mark is a metadata write, no part of the
    /// program's open.
    static CREATED: std::cell::RefCell<Vec<(usize, Arc<OwnedFd>, crate::ending::Making)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// A call's end: its completion time, taken first, then what waits for the clock to stop
/// (the thread's wake-ups counted, the files the call made marked).
fn ended(s: &Shared<'_>) -> Instant {
    let completed = Instant::now();
    super::woken::call_done();
    marked_made(s);
    completed
}

/// Marks the files this thread's last call created (see [`CREATED`]).
fn marked_made(s: &Shared<'_>) {
    CREATED.with_borrow_mut(|c| {
        for (i, fd, making) in c.drain(..) {
            s.layout.made(i, &fd);
            drop(making);
        }
    });
}

/// A replayed close. Another thread's open may be the one closed: the table is shared. The
/// descriptor closes here, or when a call still using it (another thread's) returns.
fn close(s: &Shared<'_>, e: &Event) {
    let mut opened = opened(s);
    if let Some(list) = opened.get_mut(&e.file) {
        if let Some(k) = list.iter().rposition(|h| h.fd_no == i64::from(e.arg)) {
            drop(list.remove(k));
        }
        if list.is_empty() {
            opened.remove(&e.file);
        }
    }
}

/// The table of the descriptors the replayed opens made.
fn opened<'s>(s: &'s Shared<'_>) -> std::sync::MutexGuard<'s, IdMap<u32, Vec<Held>>> {
    s.opened.lock().unwrap_or_else(|p| p.into_inner())
}

/// The replay's descriptor for a call on a file: the latest a replayed open made that is
/// still open and fits the call (the program's calls went through its opens' descriptors),
/// else one of the thread's own with the flags the recorded descriptor had (opened at its
/// first use: a file the program had open before it started, or whose descriptor's flags
/// changed).
fn descriptor(s: &Shared<'_>, e: &Event, fds: &mut Own) -> Result<Arc<OwnedFd>, i64> {
    if let Some(h) = opened(s)
        .get(&e.file)
        .and_then(|list| list.iter().rev().find(|h| h.fits(e)))
    {
        return Ok(Arc::clone(&h.fd));
    }
    own_descriptor(s, e, fds).map(Arc::clone)
}

/// The thread's own descriptor on the call's file with the flags the recorded one had,
/// opened at its first use.
fn own_descriptor<'f>(
    s: &Shared<'_>,
    e: &Event,
    fds: &'f mut Own,
) -> Result<&'f Arc<OwnedFd>, i64> {
    let key = (e.file, open_flags(e).bits());
    if let std::collections::hash_map::Entry::Vacant(slot) = fds.entry(key) {
        let fd = s
            .layout
            .open(e.file as usize, open_flags(e), true)
            .map_err(|err| neg_errno(&err))?;
        // Watched, and marked where this open made the file.
        s.layout.made(e.file as usize, &fd);
        slot.insert(Arc::new(fd));
    }
    Ok(&fds[&key])
}

/// A replay thread's own descriptors, by (file, open flags).
type Own = IdMap<(u32, u32), Arc<OwnedFd>>;

/// The descriptors of calls `ios` (opened where they are not yet).
fn descriptors<'f>(
    s: &Shared<'_>,
    ios: &[usize],
    fds: &'f mut Own,
) -> Result<Vec<crate::platform::fd::BorrowedFd<'f>>, i64> {
    for &j in ios {
        own_descriptor(s, &s.events[j], fds)?;
    }
    let fds: &'f Own = fds;
    Ok(ios
        .iter()
        .map(|&j| {
            let e = &s.events[j];
            fds[&(e.file, open_flags(e).bits())].as_fd()
        })
        .collect())
}
