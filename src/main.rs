//! iogauge's door: parse the command line, hand the request to its command (`commands/`,
//! each through the one pipeline in `session/`), and give the exit code (0 ok, 1 a job failed,
//! 2 usage or configuration error, 128 + n stopped by signal n, 141 the output's reader went
//! away). The binary (this door, `commands/`, `session/`) is the only part that prints.

use std::process::ExitCode;
use std::sync::Arc;

use iogauge::cli::{self, Request};
use iogauge::out;

mod commands;
mod session;

use commands::assess::assess;
use commands::fio::fio;
use commands::job::job;
use commands::legacy::legacy;
use commands::predict::predict;
use commands::quick::quick;
use commands::record::record;
use commands::replay::replay;
use commands::report::{compare_files, report_file};
use commands::sweep::sweep;
use commands::trace::trace;
use session::{Reporting, execute, signals, usage_exit};

fn main() -> ExitCode {
    session::end_at_a_panic();
    iogauge::out::stop_on_closed_pipe(Arc::clone(&signals().interrupt));
    let code = dispatch();
    for r in iogauge::files::writer::take_removed() {
        iogauge::errln!(
            "iogauge: removed {} ({}): the temporary file of {}, left there by an iogauge that \
             was killed while it wrote it",
            iogauge::rawpath::display(&r.path),
            iogauge::units::human_bytes(r.bytes),
            iogauge::rawpath::display(std::path::Path::new(&r.output))
        );
    }
    if iogauge::out::pipe_closed() {
        // What a shell expects of a program whose reader went away (128 + SIGPIPE).
        return ExitCode::from(141);
    }
    code
}

fn dispatch() -> ExitCode {
    if std::env::args_os().nth(1).as_deref()
        == Some(iogauge::trace::capture::CALIBRATE_ARG.as_ref())
    {
        return iogauge::trace::capture::calibrate_child();
    }
    let args = match cli::text_args(std::env::args_os()) {
        Ok(a) => a,
        Err(e) => return usage_exit(&e.0),
    };
    let request = cli::parse(&args);
    if let Err(e) = session::launch_allows(&request) {
        return ExitCode::from(e.reported());
    }
    match request {
        Err(e) => usage_exit(&e.0),
        Ok(Request::Print(text)) => {
            out!("{text}");
            ExitCode::SUCCESS
        }
        Ok(Request::Options) => {
            out!("{}", cli::options_help());
            ExitCode::SUCCESS
        }
        Ok(Request::Report {
            input,
            output,
            format,
            overwrite_output,
        }) => report_file(&input, output.as_deref(), format, overwrite_output),
        Ok(Request::Compare {
            base,
            new,
            threshold_pct,
            fail_on_regression,
        }) => compare_files(&base, &new, threshold_pct, fail_on_regression),
        Ok(Request::Run { sections, tool }) => execute(
            &args,
            sections,
            false,
            tool,
            Reporting::Iogauge(None),
            Vec::new(),
            None,
        ),
        Ok(Request::Job {
            files,
            defaults,
            overrides,
            sections,
            parse_only,
            tool,
        }) => job(
            &args,
            (&files, &defaults, &overrides, &sections),
            parse_only,
            tool,
        ),
        Ok(Request::Legacy(inv)) => legacy(&args, inv),
        Ok(Request::Fio(r)) => fio(&args, r),
        Ok(Request::Sweep(req)) => sweep(&args, req),
        Ok(Request::Record(req)) => record(req),
        Ok(Request::Trace(req)) => trace(req),
        Ok(Request::Replay(req)) => replay(req),
        Ok(Request::Predict(req)) => predict(req),
        Ok(Request::Quick {
            directory,
            size,
            seconds,
            tool,
        }) => quick(&args, &directory, size, seconds, tool),
        Ok(Request::Assess {
            for_,
            directory,
            size,
            seconds,
            streams,
            tool,
        }) => assess(&args, &for_, &directory, size, seconds, streams, tool),
    }
}
