//! `iogauge predict`'s text: recorded against predicted, the bound and its parts, where the
//! time goes (per thread, file and I/O pattern) and the warnings. Times in seconds throughout.

use std::fmt::Write;

use crate::studies::predict::Prediction;
use crate::units::human_bytes;

fn s(ns: u64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

/// The prediction as text.
pub fn predict_text(p: &Prediction) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "prediction for {} ({})",
        crate::rawpath::shown(&p.command.join(" ")),
        crate::rawpath::shown(&p.trace)
    );
    let _ = writeln!(
        o,
        "storage: {} ({} closed-loop replay{})",
        crate::rawpath::shown(&p.directory),
        p.replays.len(),
        if p.replays.len() == 1 { "" } else { "s" }
    );
    let untraced = p.recorded_untraced_ns.map_or(String::new(), |u| {
        format!(" ({} less the capture's measured cost)", s(u))
    });
    let _ = writeln!(o, "  recorded   {}{untraced}", s(p.recorded_ns));
    let _ = writeln!(
        o,
        "  predicted  {} ± {} ({:.1}%)",
        s(p.predicted_ns),
        s(p.bound_ns),
        p.bound_pct
    );
    let _ = writeln!(
        o,
        "  bound: the replays' spread {} + the capture's uncertain share {} + I/O the trace cannot see {} + waits for a CPU when recorded {} + wake-ups that differ here {} + the method's bias {}",
        s(p.bound.noise_ns),
        s(p.bound.capture_ns),
        s(p.bound.unseen_io_ns),
        s(p.bound.preempted_ns),
        s(p.bound.wake_ns),
        s(p.bound.model_ns)
    );
    let each: Vec<String> = p.replays.iter().map(|r| s(r.predicted_ns)).collect();
    let _ = writeln!(o, "  replays: {}", each.join(", "));
    for (k, r) in p.replays.iter().enumerate() {
        replay_lines(&mut o, k + 1, r);
    }
    if p.bound.wake_ns > 0 {
        let how = match &p.cold.code_unmeasured {
            None => "chasing data and code".to_string(),
            Some(why) => format!("chasing data only: {why}"),
        };
        let _ = writeln!(
            o,
            "  waking up cold costs this machine up to {:.2}x the work's warm time, at most {:.1} µs a wake-up (measured, {how})",
            p.cold.factor,
            p.cold.penalty_ns as f64 / 1e3
        );
    }
    if let Some(t) = p.critical_tid {
        let _ = writeln!(
            o,
            "  thread {t} decides the end; it was in I/O {:.1}% of the run recorded, {:.1}% predicted",
            p.io_share_recorded_pct, p.io_share_predicted_pct
        );
    }
    where_the_time_goes(&mut o, p);
    if p.warnings.is_empty() {
        let _ = writeln!(o, "warnings: none");
    } else {
        let _ = writeln!(o, "warnings (the prediction may be weaker than its bound):");
        for w in &p.warnings {
            let _ = writeln!(o, "  - {w}");
        }
    }
    o
}

/// One replay's lines: its end, and what was taken away from it (`n`: its number).
fn replay_lines(o: &mut String, n: usize, r: &crate::studies::predict::ReplayPrediction) {
    let _ = writeln!(
        o,
        "    {}: the program's end at {} in the replay, less its own delays {} and the capture's cost left {} ({} calls on the chain that decided it{})",
        n,
        s(r.replayed_end_ns),
        s(r.replay_delay_ns),
        s(r.capture_left_ns),
        r.chain_calls,
        match r.capture_taken_ns {
            0 => String::new(),
            t => format!(
                "; the replay took {} of the capture's cost out itself",
                s(t)
            ),
        }
    );
    let w = &r.wakes;
    if r.preempted_left_ns > 0 || w.fewer + w.more > 0 {
        let shift = r.wake_shift_ns;
        // A replay that split the think times left the waits for a CPU out itself (below).
        let half = match r.think {
            Some(_) => String::new(),
            None => format!(
                "less half its recorded waits for a CPU {}; ",
                s(r.preempted_left_ns)
            ),
        };
        let _ = writeln!(
            o,
            "       {half}{} calls on the chain slept when recorded and not here, {} sleep only here: wake-ups {} {}",
            w.fewer,
            w.more,
            if shift < 0 { "take away" } else { "add" },
            s(shift.unsigned_abs())
        );
    }
    if let Some(t) = &r.think {
        let _ = writeln!(
            o,
            "       think times: {} of the program's computation replayed as CPU time, {} of its recorded waits for a CPU left out (its threads waited for one here as they ran)",
            s(t.computed_ns),
            s(t.left_out_ns)
        );
    }
    if let Some(c) = r.cpu_wait {
        let _ = writeln!(o, "       {}", crate::report::trace::cpu_wait_line(c));
    }
    let polls = &r.polls;
    if polls.ended_sooner + polls.ended_later > 0 {
        let _ = writeln!(
            o,
            "       threads polling for a file: {} ended at an earlier look here, {} at a later turn (of {})",
            polls.ended_sooner, polls.ended_later, polls.found
        );
    }
}

/// Threads, files and patterns, recorded next to replayed (the median replay).
fn where_the_time_goes(o: &mut String, p: &Prediction) {
    let _ = writeln!(
        o,
        "where the time goes (the median replay; I/O: time in the calls)"
    );
    let _ = writeln!(
        o,
        "  {:<10} {:>8} {:>13} {:>13} {:>13} {:>13}",
        "thread", "calls", "ended rec.", "ended pred.", "I/O rec.", "I/O replayed"
    );
    for t in p.threads.iter().take(12) {
        let _ = writeln!(
            o,
            "  {:<10} {:>8} {:>13} {:>13} {:>13} {:>13}",
            t.tid,
            t.calls,
            s(t.recorded_end_ns),
            t.predicted_end_ns.map_or("-".to_string(), s),
            s(t.recorded_io_ns),
            s(t.replayed_io_ns)
        );
    }
    if p.threads.len() > 12 {
        let _ = writeln!(
            o,
            "  ({} more threads in the JSON report)",
            p.threads.len() - 12
        );
    }
    let _ = writeln!(
        o,
        "  {:<40} {:>8} {:>12} {:>13} {:>13}",
        "file", "calls", "bytes", "I/O rec.", "I/O replayed"
    );
    for f in &p.files {
        let _ = writeln!(
            o,
            "  {:<40} {:>8} {:>12} {:>13} {:>13}",
            shorten(&path_row(f), 40),
            f.calls,
            human_bytes(f.bytes),
            s(f.recorded_io_ns),
            s(f.replayed_io_ns)
        );
    }
    let _ = writeln!(
        o,
        "  {:<40} {:>8} {:>12} {:>13} {:>13} {:>6}",
        "pattern", "calls", "bytes", "I/O rec.", "I/O replayed", "share"
    );
    for x in &p.patterns {
        let _ = writeln!(
            o,
            "  {:<40} {:>8} {:>12} {:>13} {:>13} {:>5.1}%",
            x.pattern,
            x.calls,
            human_bytes(x.bytes),
            s(x.recorded_io_ns),
            s(x.replayed_io_ns),
            x.share_pct
        );
    }
}

/// The end of a long path, marked.
fn shorten(p: &str, n: usize) -> String {
    let count = p.chars().count();
    if count <= n {
        return p.to_string();
    }
    let tail: String = p.chars().skip(count - (n - 1)).collect();
    format!("…{tail}")
}

/// A file row's name: the path, and how many files of the trace had it where more than one.
fn path_row(f: &crate::studies::predict::FileFigures) -> String {
    let path = crate::rawpath::shown(&f.path);
    match (f.file, f.instances) {
        (Some(_), n) if n > 1 => format!("{path} (×{n})"),
        _ => path.into_owned(),
    }
}
