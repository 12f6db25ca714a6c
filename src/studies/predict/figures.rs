//! Where a predicted run's time goes — per thread, per file, per I/O pattern, recorded next to
//! replayed — and what makes a prediction weaker than its bound says.

use std::collections::HashMap;

use serde::Serialize;

use super::{Prediction, ProgramEnd};
use crate::trace::recording::{NO_FILE, Op, Recording};
use crate::trace::replayed::{FaultFigures, Timeline};
use crate::units::exact_bytes;

/// One thread: its calls, when it ended as recorded and as predicted, and its time in
/// replayed calls both ways.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadFigures {
    pub tid: u32,
    pub pid: u32,
    pub calls: u64,
    pub recorded_end_ns: u64,
    /// None for a thread that made no replayed call (its end follows the others').
    pub predicted_end_ns: Option<u64>,
    pub recorded_io_ns: u64,
    pub replayed_io_ns: u64,
}

/// One path (or, last, the paths not listed together: `file` None).
#[derive(Debug, Clone, Serialize)]
pub struct FileFigures {
    /// The path's first file in the trace.
    pub file: Option<u32>,
    pub path: String,
    /// How many files of the trace had that path (one made and removed again and again is a
    /// file of the trace each time).
    pub instances: u64,
    pub calls: u64,
    pub bytes: u64,
    pub recorded_io_ns: u64,
    pub replayed_io_ns: u64,
}

/// One I/O pattern: a call type, its size and whether it began where the file's previous
/// call of that type ended (reads and writes), or a sync call.
#[derive(Debug, Clone, Serialize)]
pub struct PatternFigures {
    pub pattern: String,
    pub calls: u64,
    pub bytes: u64,
    pub recorded_io_ns: u64,
    pub replayed_io_ns: u64,
    /// Share of all replayed I/O time, percent.
    pub share_pct: f64,
}

/// Files listed one by one; the rest are summed.
const FILES_SHOWN: usize = 10;
/// Patterns listed.
const PATTERNS_SHOWN: usize = 8;

pub struct Figures {
    pub threads: Vec<ThreadFigures>,
    pub files: Vec<FileFigures>,
    pub patterns: Vec<PatternFigures>,
}

#[derive(Default, Clone)]
struct Acc {
    calls: u64,
    bytes: u64,
    recorded: u64,
    replayed: u64,
}

impl Acc {
    fn merge(&mut self, o: &Acc) {
        self.calls = self.calls.saturating_add(o.calls);
        self.bytes = self.bytes.saturating_add(o.bytes);
        self.recorded = self.recorded.saturating_add(o.recorded);
        self.replayed = self.replayed.saturating_add(o.replayed);
    }

    fn add(&mut self, bytes: u64, recorded: u64, replayed: u64) {
        self.calls += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        self.recorded = self.recorded.saturating_add(recorded);
        self.replayed = self.replayed.saturating_add(replayed);
    }
}

/// The figures of one replay.
pub fn figures(r: &Recording, tl: &Timeline, pe: &ProgramEnd) -> Figures {
    let mut threads: HashMap<u32, Acc> = HashMap::new();
    let mut files: HashMap<u32, Acc> = HashMap::new();
    let mut patterns: HashMap<(Op, u64, bool), Acc> = HashMap::new();
    let mut next: HashMap<(u32, Op), u64> = HashMap::new();
    for (i, e) in r.events.iter().enumerate() {
        // A thread's calls, and the asynchronous I/Os (in flight, not their thread's time)
        // that were reaped.
        let call = tl.done_ns.get(i).copied().flatten().is_some();
        let (took, bytes) = (tl.took_ns.get(i).copied().unwrap_or(0), e.bytes());
        let reaped = e.is_async_io() && took > 0;
        if !call && !reaped {
            continue;
        }
        if call {
            threads.entry(e.tid).or_default().add(bytes, e.dur, took);
        }
        if e.file != NO_FILE {
            files.entry(e.file).or_default().add(bytes, e.dur, took);
        }
        let key = match e.op {
            Op::Read | Op::Write => {
                let end = e.offset.saturating_add(e.len);
                let seq = next.insert((e.file, e.op), end) == Some(e.offset);
                (e.op, e.len, seq)
            }
            op if op.is_sync() => (op, 0, false),
            _ => continue,
        };
        patterns.entry(key).or_default().add(bytes, e.dur, took);
    }
    let io_total = patterns
        .values()
        .fold(0, |s: u64, a| s.saturating_add(a.replayed));
    let mut t: Vec<ThreadFigures> = r
        .footer
        .threads
        .iter()
        .map(|th| {
            let a = threads.remove(&th.tid).unwrap_or_default();
            ThreadFigures {
                tid: th.tid,
                pid: th.pid,
                calls: a.calls,
                recorded_end_ns: th.ended_ns.unwrap_or(th.last_ns),
                predicted_end_ns: pe.threads.get(&th.tid).map(|e| e.ns),
                recorded_io_ns: a.recorded,
                replayed_io_ns: a.replayed,
            }
        })
        .collect();
    t.sort_by_key(|x| std::cmp::Reverse(x.predicted_end_ns));
    let mut p: Vec<PatternFigures> = patterns
        .into_iter()
        .map(|((op, len, seq), a)| PatternFigures {
            pattern: match op {
                Op::Read | Op::Write => format!(
                    "{} {}s, {}",
                    exact_bytes(len),
                    op.word(),
                    if seq { "sequential" } else { "not sequential" }
                ),
                // syncfs is also sync(2)'s word here: the syncs of whole file systems.
                Op::Syncfs => "file-system syncs (syncfs, sync)".to_string(),
                _ => format!("{}s", op.word()),
            },
            calls: a.calls,
            bytes: a.bytes,
            recorded_io_ns: a.recorded,
            replayed_io_ns: a.replayed,
            share_pct: 100.0 * a.replayed as f64 / io_total.max(1) as f64,
        })
        .collect();
    p.sort_by(|a, b| {
        b.replayed_io_ns
            .cmp(&a.replayed_io_ns)
            .then(a.pattern.cmp(&b.pattern))
    });
    p.truncate(PATTERNS_SHOWN);
    Figures {
        threads: t,
        files: file_figures(r, files),
        patterns: p,
    }
}

/// The files by replayed time, one row per path (a journal made and removed at each
/// transaction is one file of the trace per transaction, one row here), the first
/// FILES_SHOWN one by one and the rest summed.
fn file_figures(r: &Recording, files: HashMap<u32, Acc>) -> Vec<FileFigures> {
    let mut by_path: HashMap<&str, (u32, u64, Acc)> = HashMap::new();
    for (i, a) in files {
        let row = by_path
            .entry(r.footer.files[i as usize].path.as_str())
            .or_insert((i, 0, Acc::default()));
        row.0 = row.0.min(i);
        row.1 += 1;
        row.2.merge(&a);
    }
    let mut f: Vec<(&str, (u32, u64, Acc))> = by_path.into_iter().collect();
    f.sort_unstable_by_key(|(_, (i, _, a))| (std::cmp::Reverse(a.replayed), *i));
    let rest = f.split_off(f.len().min(FILES_SHOWN));
    let mut out: Vec<FileFigures> = f
        .into_iter()
        .map(|(path, (i, n, a))| FileFigures {
            file: Some(i),
            path: path.to_string(),
            instances: n,
            calls: a.calls,
            bytes: a.bytes,
            recorded_io_ns: a.recorded,
            replayed_io_ns: a.replayed,
        })
        .collect();
    if !rest.is_empty() {
        let mut sum = Acc::default();
        for (_, (_, _, a)) in &rest {
            sum.merge(a);
        }
        out.push(FileFigures {
            file: None,
            path: format!("{} other paths", rest.len()),
            instances: rest.iter().map(|(_, (_, n, _))| n).sum(),
            calls: sum.calls,
            bytes: sum.bytes,
            recorded_io_ns: sum.recorded,
            replayed_io_ns: sum.replayed,
        });
    }
    out
}

/// What makes this prediction weaker than its bound says, in words.
pub fn warnings(r: &Recording, p: &Prediction) -> Vec<String> {
    let mut w = Vec::new();
    let f = &r.footer;
    if let Some(missing) = f.missing() {
        w.push(format!(
            "the trace is incomplete ({missing}): the calls it lacks are not in the prediction"
        ));
    }
    let unseen = r.events.iter().filter(|e| e.io_unseen()).count();
    if unseen > 0 {
        w.push(format!(
            "{unseen} io_uring/libaio calls: the I/O they carry is not in the trace; their \
             recorded time ({:.1} ms) is kept as it was and is in the bound",
            p.bound.unseen_io_ns as f64 / 1e6
        ));
    }
    let sqpoll = r.events.iter().filter(|e| e.is_sqpoll()).count() as u64;
    let paced = sqpoll.saturating_add(f.aio_unreaped);
    if paced > 0 {
        w.push(format!(
            "{paced} asynchronous I/Os or SQPOLL batches no call of the program waited for \
             (it read its completion ring in its own memory): what it waited for is not in the \
             trace, so they keep the pace they were recorded at and the prediction does not \
             follow the storage there"
        ));
    }
    let unfollowed = f.kills.as_ref().map_or(0, |k| k.unfollowed);
    if unfollowed > 0 {
        w.push(format!(
            "{unfollowed} signals sent through a pidfd the trace cannot follow to its process \
             (clone's CLONE_PIDFD: Go's os/exec since 1.23): a task they ended ends here at its \
             recorded time after its last call, not when it was told"
        ));
    }
    w.extend(mapped_io(
        r,
        p.replays.iter().find_map(|x| x.faults.as_ref()),
        p.predicted_ns,
    ));
    if let Some(c) = cached_reads(r) {
        w.push(c);
    }
    if !r.footer.knows_sleeps() {
        w.push(
            "the trace does not say which calls slept (recorded under ptrace, or by an older \
             iogauge): wake-ups on cold caches that differ on this storage are not in the bound"
                .into(),
        );
    }
    let wk = p
        .replays
        .iter()
        .map(|x| x.wakes)
        .max_by_key(|x| x.half_ns());
    if let Some(x) = wk.filter(|x| x.half_ns() * 10 > p.predicted_ns) {
        w.push(format!(
            "{} calls on the deciding chain slept when recorded and not here ({} the reverse): \
             the work after each ran on cold caches; how much faster it runs warm depends on \
             the program's working set, which a trace does not show (the prediction takes the \
             middle of what it can be, ±{:.1} ms)",
            x.fewer,
            x.more,
            x.half_ns() as f64 / 1e6
        ));
    }
    if let Some(x) = dense_capture(r, p) {
        w.push(x);
    }
    if p.replays.len() == 1 {
        w.push(
            "one replay: the bound lacks the target's spread from run to run (--repeat 3 or \
             more measures it)"
                .to_string(),
        );
    }
    let differ: u64 = p
        .replays
        .iter()
        .map(|x| x.results_differ)
        .max()
        .unwrap_or(0);
    if differ > 0 {
        w.push(format!(
            "{differ} replayed calls did not do what the program's did (an error, or another \
             byte count): the replay's I/O is not the program's there"
        ));
    }
    w
}

const PROT_EXEC: u32 = 4;

/// What the warnings say of the I/O done through mappings: the major page faults where the
/// trace holds them (`replayed`: what a replay made of them; where it replayed none, only
/// when the time kept is 1% of `predicted_ns` or more), else the mappings of data files that
/// may have faulted unseen.
fn mapped_io(r: &Recording, replayed: Option<&FaultFigures>, predicted_ns: u64) -> Option<String> {
    let maps = data_mappings(r);
    let Some(faults) = &r.footer.faults else {
        return (maps > 0).then(|| {
            format!(
                "mappings of data files ({maps}): I/O through them (page faults) is not in \
                 the trace and counts as computation at its recorded time"
            )
        });
    };
    if faults.is_empty() {
        return (maps > 0).then(|| {
            format!(
                "mappings of data files ({maps}): no major page fault when recorded (their \
                 pages were in memory); where they are not, the reads their faults make are \
                 not in the prediction"
            )
        });
    }
    let f = replayed?;
    let ms = |ns: u64| ns as f64 / 1e6;
    if let Some(why) = &f.not_replayed {
        return Some(format!(
            "{} major page faults when recorded (I/O through mappings), {:.1} ms asleep in \
             them: not replayed ({why}); kept as recorded, as computation; that time is in \
             the bound",
            f.recorded,
            ms(f.kept_asleep_ns)
        ));
    }
    let why_kept = format!(
        "{} outside the trace's files (the program's code and libraries, memory swapped back \
         in), {} whose file or page was not there here",
        faults.iter().filter(|x| x.file == NO_FILE).count(),
        f.failed,
    );
    if f.replayed == 0 {
        // Only faults kept as they were: said where their time is a part of the prediction
        // worth a word (a program's first touches of its libraries are not).
        return (f.kept_asleep_ns.saturating_mul(100) >= predicted_ns).then(|| {
            format!(
                "{} major page faults when recorded (I/O through mappings), none replayed \
                 ({why_kept}): kept as recorded, as computation, {:.1} ms asleep in them, in \
                 the bound",
                f.recorded,
                ms(f.kept_asleep_ns)
            )
        });
    }
    let here = f.major_here.map_or(String::new(), |m| {
        format!(", {m} of them read from storage here")
    });
    let kept = match f.kept {
        0 => String::new(),
        n => format!(
            "; {n} kept as recorded, as computation (of them {why_kept}), {:.1} ms asleep in \
             them, in the bound",
            ms(f.kept_asleep_ns)
        ),
    };
    // Said even where every fault was replayed: how much the kernel reads around each is the
    // target's read-ahead, and the faults' CPU time when recorded is not in the trace.
    Some(format!(
        "{} major page faults when recorded (I/O through mappings): {} replayed as page reads \
         through mappings of the replay's files{here}, taking {:.1} ms against {:.1} ms \
         asleep in them when recorded; their CPU time here ({:.1} ms) stands for theirs when \
         recorded, and the pages read around each are this system's read-ahead's (after the \
         program's madvise advice: {} followed, {} not){kept}",
        f.recorded,
        f.replayed,
        ms(f.replayed_ns),
        ms(f.replaced_asleep_ns),
        ms(f.replayed_cpu_ns),
        f.advice_followed,
        f.advice_not_followed
    ))
}

/// The mappings of files the program works on: not of code (a file ever mapped PROT_EXEC is a
/// library, all of whose mappings are the loader's), outside the system's directories
/// (locales, caches and their like are mapped by every program, shared or not, from memory),
/// and not POSIX shared memory objects (`shm_open`'s names, directly in /dev/shm: memory
/// shared between processes — PostgreSQL's dynamic shared memory — whose page faults reach
/// no storage).
fn data_mappings(r: &Recording) -> usize {
    const SYSTEM: [&str; 5] = ["/usr/", "/lib/", "/lib64/", "/lib32/", "/etc/"];
    let maps = || r.events.iter().filter(|e| e.op == Op::Mmap);
    let code: std::collections::HashSet<u32> = maps()
        .filter(|e| e.arg & 0xff & PROT_EXEC != 0)
        .map(|e| e.file)
        .collect();
    maps()
        .filter(|e| !code.contains(&e.file))
        .filter(|e| {
            r.footer
                .files
                .get(e.file as usize)
                .is_some_and(|f| !SYSTEM.iter().any(|d| f.path.starts_with(d)) && !shm_object(f))
        })
        .count()
}

/// Whether `f` is a POSIX shared memory object: a file directly in /dev/shm (`shm_open`'s
/// names hold no further slash).
fn shm_object(f: &crate::trace::recording::FileInfo) -> bool {
    f.path
        .strip_prefix("/dev/shm/")
        .is_some_and(|name| !name.is_empty() && !name.contains('/'))
}

/// Files the program read from memory (the replays keep them cached, as they were): the
/// prediction assumes the target has them cached too.
fn cached_reads(r: &Recording) -> Option<String> {
    let warm = crate::trace::stats::read_from_memory(r);
    let files = warm.iter().filter(|w| **w).count();
    // One pass over the calls, not one per file (sqlite makes a file per transaction).
    let bytes: u64 = r
        .events
        .iter()
        .filter(|e| e.op == Op::Read && warm.get(e.file as usize) == Some(&true))
        .fold(0, |s: u64, e| s.saturating_add(e.bytes()));
    let big = bytes >= 1 << 20;
    (files > 0 && big).then(|| {
        format!(
            "files that existed and were read from memory when recorded: {files} ({} read); the \
             replays keep them cached as they were; where the target has them out of memory \
             (a first run, a smaller page cache) the program reads them from its storage and \
             runs longer than predicted",
            crate::units::human_bytes(bytes)
        )
    })
}

/// Where the capture's measured cost is a large share of the time between the deciding
/// chain's calls: a program that does much work between dense system calls loses more of its
/// caches to the capture than the calibration's small work does, so the think times hold an
/// uncertain part of it, and it is much of the bound.
fn dense_capture(r: &Recording, p: &Prediction) -> Option<String> {
    let o = r.footer.overhead.as_ref()?;
    let chain = p.replays.first()?.chain_calls as f64;
    let cost = o.per_call_ns * chain;
    // The cost is the recording's: against the recorded time between calls (the predicted
    // one, on faster storage, can be a small part of it).
    let think = p.recorded_ns as f64 * (1.0 - p.io_share_recorded_pct / 100.0);
    (think > 0.0 && cost > 0.2 * think).then(|| {
        format!(
            "the capture's measured cost ({:.1} ms over {} calls) is {:.0}% of the recorded \
             time between the deciding calls: how much of it the recorded think times hold \
             depends on how much of the program's caches the capture took, up to 3x what its \
             calibration measures (sqlite3's, docs/trace.md); the prediction takes away the \
             middle and its bound holds the rest",
            cost / 1e6,
            chain as u64,
            100.0 * cost / think
        )
    })
}
