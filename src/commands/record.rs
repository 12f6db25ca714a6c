//! `iogauge record [--output TRACE] -- COMMAND ARGS…`: runs the program under the capture and
//! writes its trace through the one output writer; exits with the program's exit code (128 +
//! n when a signal ended it).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use iogauge::cli::RecordRequest;
use iogauge::files::named;
use iogauge::trace::capture::{self, CaptureError};
use iogauge::units::human_bytes;
use iogauge::{errln, rawpath};

use crate::session::outputs::{default_stem, write_when_read};
use crate::session::{signals, usage_exit};

pub(crate) fn record(req: RecordRequest) -> ExitCode {
    let output = match req.output {
        Some(p) => p,
        None => {
            let p = PathBuf::from(format!(
                "{}.iogtrace",
                default_stem(iogauge::units::unix_ns() / 1_000_000_000)
            ));
            if let Err(e) = named::check_output(&p, req.overwrite_output) {
                return usage_exit(&format!("--output={}: {e}", rawpath::display(&p)));
            }
            p
        }
    };
    // The program gets a terminal's Ctrl-C itself; iogauge stays to write what was recorded
    // (a second signal ends iogauge at once, and the program with it).
    let s = signals();
    s.idle.store(false, Ordering::SeqCst);
    let stop = std::sync::Arc::clone(&s.interrupt);
    let ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let told = say_stopping(
        std::sync::Arc::clone(&stop),
        std::sync::Arc::clone(&ended),
        program_name(&req.command),
    );
    let captured = match &req.block {
        Some(device) => capture::block::record(&req.command, device, stop),
        None => capture::record(&req.command, req.method, stop),
    };
    ended.store(true, Ordering::SeqCst);
    let _ = told.join();
    // A stop that comes later, while a FIFO's reader is awaited, only gives up the wait.
    let stopped_while_running = s.interrupt.load(Ordering::SeqCst);
    let captured = match captured {
        Ok(c) => c,
        Err(CaptureError::Usage(m)) => return usage_exit(&m),
        Err(CaptureError::Failed(m)) => {
            errln!("iogauge: {m}");
            return ExitCode::from(1);
        }
    };
    if let Some(why) = &captured.fallback_reason {
        errln!(
            "iogauge: record: perf is not available ({why}); recorded with ptrace, which slows the program more"
        );
    }
    let r = &captured.recording;
    let written = r
        .encode()
        .map_err(|e| format!("cannot encode the trace: {e}"))
        .and_then(|bytes| {
            write_when_read(&output, &bytes, req.overwrite_output)
                .map_err(|e| not_written(&output, bytes.len() as u64, &e))
        });
    let summary = summary(r);
    match &written {
        Ok(()) => errln!("{summary}; trace: {}", rawpath::display(&output)),
        Err(why) => {
            errln!("{summary}");
            errln!("iogauge: record: {why}");
        }
    }
    if stopped_while_running {
        // The trace's signal numbers are Linux's: 9, SIGKILL.
        let killed = match r.footer.exit_signal {
            Some(9) => format!(
                " (those still running {} s later were killed)",
                capture::STOP_GRACE.as_secs()
            ),
            _ => String::new(),
        };
        errln!(
            "iogauge: record: asked to stop: the program's tasks still running were sent \
             SIGTERM{killed}; the trace holds what they did until they ended"
        );
    }
    if let Some(missing) = r.footer.missing() {
        errln!("iogauge: record: INCOMPLETE: the trace misses {missing}");
    }
    say_unseen(r);
    if written.is_err() {
        return match s.interrupt.load(Ordering::SeqCst) && !stopped_while_running {
            true => ExitCode::from(crate::session::interrupted_code()),
            false => ExitCode::from(1),
        };
    }
    match (r.footer.exit_code, r.footer.exit_signal) {
        (Some(c), _) => ExitCode::from(c as u8),
        (_, Some(sig)) => ExitCode::from(128u8.saturating_add(sig as u8)),
        _ => ExitCode::from(1),
    }
}

/// A thread that says, as soon as iogauge is asked to stop while the program runs, what
/// happens next: a program that takes its time to end (or ignores SIGTERM) leaves the user
/// looking at a terminal that seems to ignore Ctrl-C.
fn say_stopping(
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ended: std::sync::Arc<std::sync::atomic::AtomicBool>,
    program: String,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !ended.load(Ordering::SeqCst) {
            if let Some(left) = capture::take_left_running() {
                errln!("{}", left_running_line(&program, &left));
            }
            if stop.load(Ordering::SeqCst) {
                errln!(
                    "iogauge: record: stopping: the program was sent SIGTERM, and what still \
                     runs in {} s is killed; the trace of what it did is written then (a \
                     second Ctrl-C quits at once, without it)",
                    capture::STOP_GRACE.as_secs()
                );
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    })
}

/// The program's name as the command line gave it, its directories left out.
fn program_name(command: &[std::ffi::OsString]) -> String {
    command.first().map_or_else(String::new, |p| {
        let p = std::path::Path::new(p);
        rawpath::display(p.file_name().map_or(p, std::path::Path::new)).to_string()
    })
}

/// What a recording that goes on after its program's first process ended says: which
/// processes it waits for, and how to stop it.
fn left_running_line(program: &str, left: &capture::LeftRunning) -> String {
    let named: Vec<String> = left
        .processes
        .iter()
        .map(|(pid, name)| format!("{pid} {name}"))
        .collect();
    let more = left.count.saturating_sub(named.len());
    let (noun, verb) = match left.count {
        1 => ("process", "ends"),
        _ => ("processes", "end"),
    };
    format!(
        "iogauge: record: {program} (pid {}) ended; the recording goes on until the {} {noun} \
         it left running {verb} ({}{}) — Ctrl-C stops {} and writes the trace",
        left.program,
        left.count,
        named.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        },
        if left.count == 1 { "it" } else { "them" },
    )
}

/// The line that says what was recorded: calls, asynchronous I/Os, files, bytes, time and the
/// capture's cost.
fn summary(r: &iogauge::trace::recording::Recording) -> String {
    let moved: u64 = r.events.iter().map(|e| e.bytes()).sum();
    let overhead = match &r.footer.overhead {
        Some(o) => format!(
            "capture overhead ≈ {:.1}% ({:.1} µs per call, measured)",
            o.added_pct,
            o.per_call_ns / 1e3
        ),
        None => "capture overhead not measured".into(),
    };
    let async_ios = r.events.iter().filter(|e| e.is_async_io()).count();
    let sqpoll = r.events.iter().filter(|e| e.is_sqpoll()).count();
    let ios = match (async_ios, sqpoll) {
        (0, _) => String::new(),
        (n, 0) => format!(" and {n} asynchronous I/Os"),
        (n, b) => format!(
            " and {n} asynchronous I/Os (some submitted by io_uring's SQPOLL thread, in {b} batches)"
        ),
    };
    // Paths the program only looked for (opens that found nothing) are files of the trace,
    // not files it used: counted as `trace stats` counts them.
    let only_looked = iogauge::trace::stats::stats(r)
        .files
        .iter()
        .filter(|f| f.only_looked_for())
        .count();
    let files = r.footer.files.len() - only_looked;
    let looked = match only_looked {
        0 => String::new(),
        1 => ", 1 more path looked for and never found".to_string(),
        n => format!(", {n} more paths looked for and never found"),
    };
    format!(
        "iogauge: recorded {} calls{ios} on {files} files{looked} ({} moved) in {:.3} s; {overhead}",
        r.events.len() - async_ios - sqpoll,
        human_bytes(moved),
        r.footer.duration_ns as f64 / 1e9,
    )
}

/// Why the trace of `bytes` could not be written to `output`, with the room it needed where
/// the file system (or the user's quota) ran out of it; the writer has removed its partial
/// file.
fn not_written(output: &std::path::Path, bytes: u64, e: &std::io::Error) -> String {
    let no_reader = iogauge::platform::sys::io::Errno::from_io_error(e)
        == Some(iogauge::platform::sys::io::Errno::NXIO);
    let mut why = match no_reader {
        true => format!(
            "the trace was NOT written: {}: no program read the FIFO before the stop",
            rawpath::display(output)
        ),
        false => format!(
            "the trace was NOT written: {}: {e}",
            rawpath::display(output)
        ),
    };
    if matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    ) {
        let dir = match output.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => std::path::Path::new("."),
        };
        let free = iogauge::host::space(dir).map_or(String::new(), |s| {
            format!(", {} free there", human_bytes(s.avail_bytes))
        });
        why.push_str(&format!(
            " (the trace needs {}{free}; record again with --output on a file system with room)",
            human_bytes(bytes)
        ));
    }
    why
}

/// Says how many asynchronous I/Os were submitted that the trace does not hold, and why.
fn say_unseen(r: &iogauge::trace::recording::Recording) {
    if r.footer.aio_unseen > 0 {
        let why: Vec<&str> = r
            .header
            .method
            .split("; ")
            // The asynchronous I/Os' parts only (the scheduler's and the faults' can say
            // "not seen" too).
            .filter(|m| m.contains("I/Os not seen"))
            .collect();
        errln!(
            "iogauge: record: {} asynchronous I/Os submitted are not in the trace, only the calls that submitted them ({})",
            r.footer.aio_unseen,
            match why.is_empty() {
                true => "more than 256 in one io_submit, on a registered file slot not seen filled, or not on a file of the trace".to_string(),
                false => why.join("; "),
            }
        );
    }
}
