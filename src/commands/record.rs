//! `iogauge record [--output TRACE] -- COMMAND ARGS…`: runs the program under the capture and
//! writes its trace through the one output writer; exits with the program's exit code (128 +
//! n when a signal ended it).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use iogauge::cli::RecordRequest;
use iogauge::files::ownership;
use iogauge::trace::capture::{self, CaptureError};
use iogauge::units::human_bytes;
use iogauge::{errln, rawpath};

use crate::session::outputs::default_stem;
use crate::session::{signals, usage_exit};

pub(crate) fn record(req: RecordRequest) -> ExitCode {
    let output = match req.output {
        Some(p) => p,
        None => {
            let p = PathBuf::from(format!(
                "{}.iogtrace",
                default_stem(iogauge::units::unix_ns() / 1_000_000_000)
            ));
            if let Err(e) = ownership::check_output(&p, req.overwrite_output) {
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
    let captured = match &req.block {
        Some(device) => capture::block::record(&req.command, device, stop),
        None => capture::record(&req.command, req.method, stop),
    };
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
    let bytes = match r.encode() {
        Ok(b) => b,
        Err(e) => {
            errln!("iogauge: record: cannot encode the trace: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = ownership::write_output(&output, &bytes, req.overwrite_output) {
        errln!(
            "iogauge: record: cannot write {}: {e}",
            rawpath::display(&output)
        );
        return ExitCode::from(1);
    }
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
    errln!(
        "iogauge: recorded {} calls{ios} on {} files ({} moved) in {:.3} s; {overhead}; trace: {}",
        r.events.len() - async_ios - sqpoll,
        r.footer.files.len(),
        human_bytes(moved),
        r.footer.duration_ns as f64 / 1e9,
        rawpath::display(&output)
    );
    if s.interrupt.load(Ordering::SeqCst) {
        errln!(
            "iogauge: record: asked to stop: the program's tasks still running were sent \
             SIGTERM; the trace holds what they did until they ended"
        );
    }
    if let Some(missing) = r.footer.missing() {
        errln!("iogauge: record: INCOMPLETE: the trace misses {missing}");
    }
    say_unseen(r);
    match (r.footer.exit_code, r.footer.exit_signal) {
        (Some(c), _) => ExitCode::from(c as u8),
        (_, Some(sig)) => ExitCode::from(128u8.saturating_add(sig as u8)),
        _ => ExitCode::from(1),
    }
}

/// Says how many asynchronous I/Os were submitted that the trace does not hold, and why.
fn say_unseen(r: &iogauge::trace::recording::Recording) {
    if r.footer.aio_unseen > 0 {
        let why: Vec<&str> = r
            .header
            .method
            .split("; ")
            .filter(|m| m.contains("not seen"))
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
