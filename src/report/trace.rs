//! A trace as text: `iogauge trace show` (one recorded call per line) and `trace stats` (the
//! figures of `trace::stats`). Pure functions returning text.

use std::fmt::Write;

use crate::trace::recording::{Event, NO_FILE, Op, Recording, SYNC_ALL, flag, missing};
use crate::trace::stats::{Direction, Stats};
use crate::units::human_bytes;

/// The header line of `show`.
pub const SHOW_HEADER: &str =
    "# time_ms tid call file offset length result duration_us flags  (file: index; names below)";

/// One recorded call as a line: issue time (ms), thread, call, file index, offset, length,
/// result, duration (µs) and flags.
pub fn show_line(e: &Event) -> String {
    let file = if e.file == NO_FILE {
        "-".to_string()
    } else {
        e.file.to_string()
    };
    let offset = if e.flags & flag::OFFSET_UNKNOWN != 0 {
        "?".to_string()
    } else {
        e.offset.to_string()
    };
    let (len, arg) = match e.op {
        Op::Open => ("-".to_string(), format!(" oflags={:#o}", e.arg)),
        // Onto the name of another file of the trace, which it replaced.
        Op::Rename if e.arg > 0 => (e.len.to_string(), format!(" over={}", e.arg - 1)),
        // sync(2): every file system's, not a descriptor's.
        Op::Syncfs if e.arg == SYNC_ALL => (e.len.to_string(), " all".to_string()),
        _ => (e.len.to_string(), String::new()),
    };
    format!(
        "{:.6} {} {} {file} {offset} {len} {} {:.3} {}{arg}",
        e.t as f64 / 1e6,
        e.tid,
        e.op.word(),
        e.result,
        e.dur as f64 / 1e3,
        flag_words(e.flags)
    )
}

/// The files of a trace, one per line after the events: index and path.
pub fn show_files(r: &Recording) -> String {
    let mut s = String::new();
    for (i, f) in r.footer.files.iter().enumerate() {
        let _ = writeln!(
            s,
            "# file {i}: {} ({})",
            crate::rawpath::shown(&f.path),
            f.kind
        );
    }
    s
}

fn flag_words(f: u16) -> String {
    let names = [
        (flag::DIRECT, "direct"),
        (flag::DSYNC, "dsync"),
        (flag::SYNC, "sync"),
        (flag::APPEND, "append"),
        (flag::VECTORED, "vectored"),
        (flag::POSITIONAL, "positional"),
        (flag::OFFSET_UNKNOWN, "offset-unknown"),
        (flag::CREATED, "created"),
        (flag::DIR, "directory"),
        (flag::SLEPT, "slept"),
        (flag::ASYNC, "async"),
        (flag::SQPOLL, "sqpoll"),
    ];
    let words: Vec<&str> = names
        .iter()
        .filter(|(b, _)| f & b != 0)
        .map(|(_, n)| *n)
        .collect();
    if words.is_empty() {
        "-".into()
    } else {
        words.join(",")
    }
}

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

fn direction(name: &str, d: &Direction) -> String {
    if d.calls == 0 {
        return format!("    {name}: none\n");
    }
    let sizes: Vec<String> = d
        .sizes
        .iter()
        .map(|(s, n)| format!("{} ×{n}", human_bytes(*s)))
        .collect();
    format!(
        "    {name}: {} calls, {} ({} B), {:.1}% sequential, {} in calls; sizes: {}\n",
        d.calls,
        human_bytes(d.bytes),
        d.bytes,
        d.sequential_pct,
        ms(d.busy_ns),
        sizes.join(", ")
    )
}

/// `trace stats`' files: the ones with the most I/O, the rest summed up.
fn files_text(s: &Stats) -> String {
    let mut o = String::new();
    // The files with the most I/O first; a program that made thousands (a journal per
    // transaction) is summed up past the first SHOWN.
    const SHOWN: usize = 25;
    let (absent, mut order): (Vec<usize>, Vec<usize>) =
        (0..s.files.len()).partition(|&i| s.files[i].only_looked_for());
    if !absent.is_empty() {
        const NAMED: usize = 5;
        let names: Vec<String> = absent
            .iter()
            .take(NAMED)
            .map(|&i| crate::rawpath::shown(&s.files[i].path).into_owned())
            .collect();
        let looks: u64 = absent.iter().map(|&i| s.files[i].not_found).sum();
        let _ = writeln!(
            o,
            "{} paths looked for and never found ({looks} opens that failed ENOENT): {}{}",
            absent.len(),
            names.join(", "),
            if absent.len() > NAMED { ", …" } else { "" }
        );
    }
    // A page a major fault read weighs as a 4 KiB read (read-ahead can bring more).
    const PAGE: u64 = 4096;
    let weight = |f: &crate::trace::stats::FileStats| {
        (
            f.reads.bytes + f.writes.bytes + f.major_faults * PAGE,
            f.reads.calls + f.writes.calls + f.syncs + f.major_faults,
        )
    };
    order.sort_by_key(|&i| std::cmp::Reverse(weight(&s.files[i])));
    if order.len() > SHOWN {
        let rest = &order[SHOWN..];
        let bytes: u64 = rest.iter().map(|&i| weight(&s.files[i]).0).sum();
        let calls: u64 = rest.iter().map(|&i| weight(&s.files[i]).1).sum();
        let _ = writeln!(
            o,
            "{} files; the {SHOWN} with the most I/O below, the other {} together: {calls} reads, writes, syncs and major page faults, {} (--json lists every file)",
            order.len(),
            rest.len(),
            human_bytes(bytes)
        );
        order.truncate(SHOWN);
    }
    for i in order {
        let f = &s.files[i];
        let size = match f.size_at_open {
            Some(b) => format!("{} at first open", human_bytes(b)),
            None => "created by the program".into(),
        };
        let _ = writeln!(
            o,
            "file {i}: {} ({}, {size}, reach {}{})",
            crate::rawpath::shown(&f.path),
            f.kind,
            human_bytes(f.extent),
            if f.removed {
                ", removed by the program"
            } else {
                ""
            }
        );
        o += &direction("reads", &f.reads);
        o += &direction("writes", &f.writes);
        if f.major_faults > 0 {
            let _ = writeln!(
                o,
                "    read through mappings: {} major page faults, {} asleep in them{}",
                f.major_faults,
                ms(f.fault_asleep_ns),
                match f.advice.is_empty() {
                    true => String::new(),
                    false => format!("; madvise: {}", f.advice.join(", ")),
                }
            );
        }
        let _ = writeln!(
            o,
            "    opens {}{}, syncs {} ({} in them), O_DIRECT {:.0}% of I/O, write-through {:.0}% of writes, errors {}",
            f.opens,
            if f.not_found > 0 {
                format!(" ({} found nothing)", f.not_found)
            } else {
                String::new()
            },
            f.syncs,
            ms(f.sync_ns),
            f.direct_pct,
            f.sync_write_pct,
            f.errors
        );
    }
    o
}

/// `trace stats` as text.
pub fn stats_text(s: &Stats) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "command: {}",
        crate::rawpath::shown(&s.command.join(" "))
    );
    let exit = match (s.exit_code, s.exit_signal) {
        (Some(c), _) => format!("exit code {c}"),
        (_, Some(sig)) => format!("killed by signal {sig}"),
        _ => "exit unknown".into(),
    };
    let _ = writeln!(
        o,
        "recorded: {} ({exit}); capture: {}",
        ms(s.duration_ns),
        s.method
    );
    if let Some(line) = overhead_line(s) {
        let _ = writeln!(o, "{line}");
    }
    let calls: Vec<String> = s.calls.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(
        o,
        "calls: {}",
        if calls.is_empty() {
            "none".into()
        } else {
            calls.join(", ")
        }
    );
    if let Some(missing) = missing(
        s.lost,
        s.capped,
        s.unmatched,
        s.untracked_tasks,
        s.processes_32bit,
    ) {
        let _ = writeln!(o, "INCOMPLETE: the trace misses {missing}");
    }
    let _ = writeln!(
        o,
        "not storage: {} calls on pipes, sockets, terminals, directories or pseudo files; {} on descriptors of unknown origin",
        s.other_calls, s.unknown_fd_calls
    );
    if s.async_ios > 0 {
        let _ = writeln!(
            o,
            "{} asynchronous I/Os (libaio, io_uring), each from its submission to its completion (the io_getevents that reaped it; io_uring's completion of the request)",
            s.async_ios
        );
    }
    if s.syncs_on_no_file > 0 {
        let _ = writeln!(
            o,
            "syncs of directories and whole file systems (fsync of a directory, syncfs, sync): {} ({:.3} ms in them)",
            s.syncs_on_no_file,
            s.syncs_on_no_file_ns as f64 / 1e6
        );
    }
    if s.async_calls + s.async_unseen > 0 {
        let _ = writeln!(
            o,
            "{} io_uring_enter/io_submit calls and {} submitted asynchronous I/Os: the I/O they carry is not in this trace",
            s.async_calls, s.async_unseen
        );
    }
    let (groups, late) = (
        s.signals_to_groups.unwrap_or(0),
        s.signals_late.unwrap_or(0),
    );
    let unfollowed = s.signals_unfollowed.unwrap_or(0);
    if groups + late + unfollowed > 0 {
        let _ = writeln!(
            o,
            "signals: {groups} to a process group (a tell to each of its processes alive then), {late} to a task that had ended and been waited for (kill's ESRCH), {unfollowed} through a pidfd the trace cannot follow to its process (clone's CLONE_PIDFD)"
        );
    }
    if let Some(f) = s.faults.filter(|f| f.faults > 0) {
        let _ = writeln!(
            o,
            "major page faults (I/O through mappings, not replayed): {}, {} asleep in them; {} outside every mapping of a file the trace saw (the program's own executable, memory swapped back in)",
            f.faults,
            ms(f.asleep_ns),
            f.outside_files
        );
    }
    o += &files_text(s);
    for t in &s.threads {
        o += &thread_text(t);
    }
    o
}

/// The capture's measured cost, where the trace holds it: per call, and the part of it
/// between the calls that a closed replay takes out.
fn overhead_line(s: &Stats) -> Option<String> {
    let p = s.overhead_pct?;
    let per = s
        .overhead_per_call_ns
        .map_or(String::new(), |n| format!("{} a call, ", per_call_us(n)));
    let between = s.overhead_between_calls_ns.map_or(String::new(), |n| {
        format!(
            "; {} a call lies between the recorded calls, which a closed replay takes out of the think times",
            per_call_us(n)
        )
    });
    Some(format!(
        "capture overhead: {p:.1}% of the run time ({per}measured at record time; {} calls it does not watch counted in){between}",
        s.unwatched_calls
    ))
}

/// One thread's lines of `trace stats`.
fn thread_text(t: &crate::trace::stats::ThreadStats) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "thread {} (process {}): {} calls, busy {}, think {}",
        t.tid,
        t.pid,
        t.calls,
        ms(t.busy_ns),
        ms(t.think_ns)
    );
    if let Some(c) = t.off_cpu {
        let _ = writeln!(
            o,
            "    off the CPU: {} calls slept; outside calls asleep {} ({} times), waiting \
             for a CPU {}",
            c.calls_slept,
            ms(c.think_asleep_ns),
            c.think_sleeps,
            ms(c.think_preempted_ns)
        );
    }
    if let Some(w) = t.woken.filter(|w| w.sleeps > 0) {
        let _ = writeln!(
            o,
            "    woken by the program's own tasks: {} sleeps, {} asleep in them (thread {} \
             the most)",
            w.sleeps,
            ms(w.asleep_ns),
            w.most_by.map_or("-".into(), |b| b.to_string())
        );
    }
    if let Some(n) = t.signalled.filter(|&n| n > 0) {
        let _ = writeln!(o, "    signalled by the program's own tasks: {n}");
    }
    if let Some(n) = t.signalled_late.filter(|&n| n > 0) {
        let _ = writeln!(
            o,
            "    signalled after it had ended and been waited for: {n}"
        );
    }
    o
}

/// The threads' waits for a CPU, replayed and recorded, in words.
pub fn cpu_wait_line(c: crate::trace::replayed::CpuWait) -> String {
    let recorded = c.recorded_ns.map_or("not in the trace".to_string(), |n| {
        format!("{} (between calls)", ms(n))
    });
    format!(
        "waits for a CPU, all threads: replayed {}, recorded {recorded}",
        ms(c.replayed_ns)
    )
}

fn us(ns: u64) -> String {
    format!("{:.1} µs", ns as f64 / 1e3)
}

/// The capture's cost per call (a fraction of a microsecond), one way in `trace stats` and
/// `replay` alike.
fn per_call_us(ns: f64) -> String {
    format!("{:.2} µs", ns / 1e3)
}

/// `replay`'s lines per call type.
fn replay_ops(r: &crate::trace::replayed::ReplayReport) -> String {
    let mut o = String::new();
    for f in &r.ops {
        let bw = if f.bytes > 0 {
            format!(", {} ({:.2} MiB/s)", human_bytes(f.bytes), f.mib_per_s)
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "  {:<16} {:>8} calls{bw}, latency mean {} (recorded {}), p50 {}, p99 {}, max {}{}",
            f.op,
            f.calls,
            us(f.lat_mean_ns as u64),
            us(f.recorded_lat_mean_ns as u64),
            us(f.lat_p50_ns),
            us(f.lat_p99_ns),
            us(f.lat_max_ns),
            if f.errors > 0 {
                format!(", {} errors", f.errors)
            } else {
                String::new()
            }
        );
    }
    o
}

/// The line that says which call the storage failed, where the recorded one succeeded.
pub fn storage_failed_text(f: &crate::trace::replayed::StorageFailure) -> String {
    let what = match (f.len, &f.file) {
        (0, None) => f.op.clone(),
        (0, Some(p)) => format!("{} of {}", f.op, crate::rawpath::shown(p)),
        (n, p) => format!(
            "{} of {} at offset {}{}",
            f.op,
            human_bytes(n),
            f.offset,
            p.as_ref().map_or(String::new(), |p| format!(
                " of {}",
                crate::rawpath::shown(p)
            ))
        ),
    };
    let here = f.here.as_ref().map_or(String::new(), |h| {
        format!(", here {}", crate::rawpath::shown(h))
    });
    format!(
        "FAILED: the storage failed a call whose recording succeeded ({what}{here}, {:.3} s \
         into the recording): {}; the replay stopped there, and its figures cover the calls \
         before it",
        f.at_ns as f64 / 1e9,
        f.error
    )
}

/// The line that says what became of a directory an earlier replay made and left (it was
/// killed before its end), found by this one.
pub fn leftover_text(path: &std::path::Path, a: &crate::files::ownership::Abandoned) -> String {
    let shown = crate::rawpath::display(path);
    let files = match a.removed {
        1 => format!("1 file of {}", human_bytes(a.bytes)),
        n => format!("{n} files of {}", human_bytes(a.bytes)),
    };
    match &a.left {
        None => format!(
            "removed {shown} ({files}), left by a replay that did not finish (killed before it \
             could remove it)"
        ),
        Some(why) => format!(
            "found {shown}, left by a replay that did not finish (killed before it could remove \
             it): removed its {files}, NOT the rest ({why}); remove it by hand"
        ),
    }
}

/// The line that says the replay's directory is still there, and why.
pub fn not_removed_text(directory: &str, why: &str) -> String {
    format!(
        "NOT REMOVED: the replay's directory {} is still there ({why}); its files are marked \
         as iogauge's, remove it by hand",
        crate::rawpath::shown(directory)
    )
}

/// The replay report's first lines: what was replayed, how and where, and whether it was
/// cut short or its trace misses calls.
fn replay_head(o: &mut String, r: &crate::trace::replayed::ReplayReport) {
    let mode = match r.mode {
        crate::trace::replayed::Mode::Closed => {
            "closed (each call after the previous one's completion plus the recorded think time)"
        }
        crate::trace::replayed::Mode::Open => "open (at the recorded times)",
        crate::trace::replayed::Mode::Afap => "afap (no think time)",
    };
    let _ = writeln!(
        o,
        "replay of {} ({})",
        crate::rawpath::shown(&r.trace),
        crate::rawpath::shown(&r.command.join(" "))
    );
    let _ = writeln!(
        o,
        "mode: {mode}, speed ×{}; files in {} ({} laid out, removed at the end)",
        r.speed,
        r.directory,
        human_bytes(r.laid_out_bytes)
    );
    if r.stopped {
        let _ = writeln!(
            o,
            "STOPPED before the end: the figures cover what was replayed"
        );
    }
    if let Some(f) = &r.storage_failed {
        let _ = writeln!(o, "{}", storage_failed_text(f));
    }
    if let Some(why) = &r.not_removed {
        let _ = writeln!(o, "{}", not_removed_text(&r.directory, why));
    }
    if let Some(missing) = &r.incomplete {
        let _ = writeln!(
            o,
            "INCOMPLETE trace: it misses {missing}; the replay did only the calls it holds"
        );
    }
}

/// `replay`'s report as text.
pub fn replay_text(r: &crate::trace::replayed::ReplayReport) -> String {
    let mut o = String::new();
    replay_head(&mut o, r);
    let ratio = |a: u64, b: u64| {
        if b == 0 {
            "-".to_string()
        } else {
            format!("{:.3}", a as f64 / b as f64)
        }
    };
    let untraced = match r.recorded_span_untraced_ns {
        Some(u) => format!(
            ", {} without the capture's measured cost (×{})",
            ms(u),
            ratio(r.replayed_span_ns, u)
        ),
        None => String::new(),
    };
    let _ = writeln!(
        o,
        "span: replayed {} against recorded {} (×{}){untraced}",
        ms(r.replayed_span_ns),
        ms(r.recorded_span_ns),
        ratio(r.replayed_span_ns, r.recorded_span_ns)
    );
    let _ = writeln!(
        o,
        "time in calls: replayed {} against recorded {} (×{}; recorded calls carry the capture's cost)",
        ms(r.replayed_io_ns),
        ms(r.recorded_io_ns),
        ratio(r.replayed_io_ns, r.recorded_io_ns)
    );
    if let Some(c) = r.capture_taken {
        let _ = writeln!(
            o,
            "the capture's cost taken out of the think times: {} ({} before each replayed call, {} for each call between two that the replay does not make; measured at record time)",
            ms(c.taken_ns),
            per_call_us(c.between_calls_ns as f64),
            per_call_us(c.per_skipped_call_ns as f64)
        );
    }
    let _ = writeln!(
        o,
        "issue-time error against the schedule: p50 {}, p99 {}, max {}",
        us(r.issue_error_p50_ns),
        us(r.issue_error_p99_ns),
        us(r.issue_error_max_ns)
    );
    let recorded = r
        .recorded_calls_slept
        .map_or("not in the trace".to_string(), |n| n.to_string());
    let _ = writeln!(
        o,
        "calls that slept (gave up the CPU to wait): replayed {}, recorded {recorded}",
        r.replayed_calls_slept
    );
    if let Some(c) = r.cpu_wait {
        let _ = writeln!(o, "{}", cpu_wait_line(c));
    }
    if let Some(f) = &r.faults {
        let _ = writeln!(o, "{}", faults_line(f));
    }
    o += &replay_ops(r);
    for t in &r.threads {
        let _ = writeln!(
            o,
            "  thread {}: {} calls, busy {} (recorded {}), issue error p50 {}, p99 {}",
            t.tid,
            t.calls,
            ms(t.busy_ns),
            ms(t.recorded_busy_ns),
            us(t.issue_error_p50_ns),
            us(t.issue_error_p99_ns)
        );
    }
    o += &replay_notes(r);
    o
}

/// What a replay made of the program's major page faults.
fn faults_line(f: &crate::trace::replayed::FaultFigures) -> String {
    let ms = |ns: u64| format!("{:.3} ms", ns as f64 / 1e6);
    let head = format!(
        "major page faults (I/O through mappings): recorded {}",
        f.recorded
    );
    if let Some(why) = &f.not_replayed {
        return format!(
            "{head}, not replayed ({why}): their {} asleep kept as computation",
            ms(f.kept_asleep_ns)
        );
    }
    let ahead = match f.willneed_given {
        0 => String::new(),
        1 => "; the program's willneed advice given here once (its range read ahead)".into(),
        n => {
            format!("; the program's willneed advice given here {n} times (its ranges read ahead)")
        }
    };
    if f.replayed == 0 {
        return format!(
            "{head}, none replayed: {} kept as recorded, as computation ({} asleep; outside \
             the trace's files, or {} whose file or page was not there here){ahead}",
            f.kept,
            ms(f.kept_asleep_ns),
            f.failed
        );
    }
    let here = f
        .major_here
        .map_or(String::new(), |m| format!(", {m} read from storage here"));
    format!(
        "{head}; replayed {} as page reads through mappings{here}, taking {} ({} of CPU, taken \
         out of the recorded computation) against {} asleep in them when recorded; {} kept as \
         recorded, as computation ({} asleep; outside the trace's files, or {} whose file or \
         page was not there here){ahead}",
        f.replayed,
        ms(f.replayed_ns),
        ms(f.replayed_cpu_ns),
        ms(f.replaced_asleep_ns),
        f.kept,
        ms(f.kept_asleep_ns),
        f.failed
    )
}

/// What a replay did not replay, and how it replayed asynchronous I/O where not as recorded.
fn replay_notes(r: &crate::trace::replayed::ReplayReport) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "not replayed: {} calls (mmap, seek, renames that failed, io_uring/libaio without their I/Os, looks of a poll that ended sooner); results unlike the recording's: {}",
        r.skipped, r.results_differ
    );
    let p = &r.polls;
    if p.found > 0 {
        let _ = writeln!(
            o,
            "polls (a thread looking for a file on a timer until another changed it): {}; ended at an earlier look here {}, waited here for the change {}",
            p.found, p.ended_sooner, p.ended_later
        );
    }
    if let Some(why) = &r.async_one_by_one {
        let _ = writeln!(
            o,
            "asynchronous I/Os done one by one inside their io_submit: {why}"
        );
    }
    if let Some(why) = &r.uring_as_aio {
        let _ = writeln!(
            o,
            "io_uring's I/Os replayed through native AIO (io_submit): {why}"
        );
    }
    o
}
