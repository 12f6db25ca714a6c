//! `iogauge trace show|stats TRACE`: a recorded trace read back, as lines or figures.

use std::path::Path;
use std::process::ExitCode;

use iogauge::cli::TraceRequest;
use iogauge::report::trace as text;
use iogauge::trace::recording::{BadTrace, Recording};
use iogauge::trace::stats;
use iogauge::{out, outln, rawpath};

use crate::session::{usage_exit, write_when_read};

pub(crate) fn trace(req: TraceRequest) -> ExitCode {
    let path = match &req {
        TraceRequest::Show { trace, .. }
        | TraceRequest::Stats { trace, .. }
        | TraceRequest::Export { trace, .. } => trace.clone(),
        TraceRequest::Import {
            source,
            blktrace,
            output,
            overwrite_output,
        } => return import(source, *blktrace, output, *overwrite_output),
    };
    let r = match read(&path) {
        Ok(r) => r,
        Err(m) => return usage_exit(&format!("{}: {m}", rawpath::display(&path))),
    };
    match req {
        TraceRequest::Show { limit, .. } => {
            outln!("{}", text::SHOW_HEADER);
            let n = if limit == 0 {
                r.events.len()
            } else {
                limit.min(r.events.len())
            };
            let mut chunk = String::with_capacity(1 << 16);
            for e in &r.events[..n] {
                chunk += &text::show_line(e);
                chunk.push('\n');
                if chunk.len() > 60_000 {
                    out!("{chunk}");
                    chunk.clear();
                    if iogauge::out::pipe_closed() {
                        return ExitCode::SUCCESS;
                    }
                }
            }
            out!("{chunk}");
            out!("{}", text::show_files(&r));
        }
        TraceRequest::Import { .. } => unreachable!("handled above"),
        TraceRequest::Export {
            iolog,
            thread,
            overwrite_output,
            ..
        } => {
            let x = iogauge::trace::export::iolog(&r, thread);
            if x.entries.is_empty() {
                return usage_exit(&format!(
                    "{}: no reads, writes or syncs of files to export{}",
                    rawpath::display(&path),
                    thread.map_or(String::new(), |t| format!(" for thread {t}"))
                ));
            }
            let text = iogauge::report::log::iolog(&x.files, &x.entries, x.end_us);
            if let Err(e) = write_when_read(&iolog, text.as_bytes(), overwrite_output) {
                iogauge::errln!("iogauge: cannot write {}: {e}", rawpath::display(&iolog));
                return ExitCode::from(1);
            }
            iogauge::errln!(
                "iogauge: {} I/Os on {} files written to {}{}",
                x.entries.len(),
                x.files.len(),
                rawpath::display(&iolog),
                if x.left_out > 0 {
                    format!(
                        "; {} calls left out (failed, moved nothing, at an unknown offset, or a sync of a directory or file system)",
                        x.left_out
                    )
                } else {
                    String::new()
                }
            );
        }
        TraceRequest::Stats {
            json,
            html,
            overwrite_output,
            ..
        } => {
            let s = stats::stats(&r);
            let figures = text::stats_text(&s);
            if let Some(page) = html {
                let body = iogauge::report::trace_html::render(&r, &s, &figures);
                if let Err(e) = write_when_read(&page, body.as_bytes(), overwrite_output) {
                    iogauge::errln!("iogauge: cannot write {}: {e}", rawpath::display(&page));
                    return ExitCode::from(1);
                }
            }
            if json {
                outln!("{}", serde_json::to_string_pretty(&s).expect("plain data"));
            } else {
                out!("{figures}");
            }
        }
    }
    ExitCode::SUCCESS
}

/// A trace file: a regular file, opened once and read whole.
pub(crate) fn read(path: &Path) -> Result<Recording, BadTrace> {
    let f = std::fs::File::open(path).map_err(|e| BadTrace(e.to_string()))?;
    let meta = f.metadata().map_err(|e| BadTrace(e.to_string()))?;
    if !meta.is_file() {
        return Err(BadTrace("not a regular file".into()));
    }
    Recording::decode(std::io::BufReader::new(f))
}

/// `trace import`: another tool's log read, made a trace, written through the one output
/// writer.
fn import(source: &Path, blktrace: bool, output: &Path, overwrite: bool) -> ExitCode {
    let shown = rawpath::display(source);
    let bytes = match std::fs::read(source) {
        Ok(b) => b,
        Err(e) => return usage_exit(&format!("{shown}: {e}")),
    };
    let name = rawpath::text(source);
    let made = if blktrace {
        iogauge::trace::import::from_blktrace(&bytes, &name)
    } else {
        iogauge::trace::import::from_iolog(&bytes, &name)
    };
    let r = match made {
        Ok(r) => r,
        Err(e) => return usage_exit(&format!("{shown}: {e}")),
    };
    let encoded = match r.encode() {
        Ok(b) => b,
        Err(e) => {
            iogauge::errln!("iogauge: trace import: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = write_when_read(output, &encoded, overwrite) {
        iogauge::errln!("iogauge: cannot write {}: {e}", rawpath::display(output));
        return ExitCode::from(1);
    }
    iogauge::errln!(
        "iogauge: {} calls on {} files imported from {shown} into {}",
        r.events.len(),
        r.footer.files.len(),
        rawpath::display(output)
    );
    ExitCode::SUCCESS
}
