//! `iogauge trace show|stats TRACE`: a recorded trace read back, as lines or figures.

use std::path::Path;
use std::process::ExitCode;

use iogauge::cli::TraceRequest;
use iogauge::report::trace as text;
use iogauge::trace::recording::{BadTrace, Recording};
use iogauge::trace::stats;
use iogauge::{out, outln, rawpath};

use crate::session::usage_exit;

pub(crate) fn trace(req: TraceRequest) -> ExitCode {
    let path = match &req {
        TraceRequest::Show { trace, .. } | TraceRequest::Stats { trace, .. } => trace.clone(),
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
        TraceRequest::Stats { json, .. } => {
            let s = stats::stats(&r);
            if json {
                outln!("{}", serde_json::to_string_pretty(&s).expect("plain data"));
            } else {
                out!("{}", text::stats_text(&s));
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
