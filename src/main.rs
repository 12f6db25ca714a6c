//! iogauge's binary: parse → front end → resolve → check → run → report, and exit codes
//! (0 ok, 1 a job failed, 2 usage or configuration error, 130 interrupted). The only place
//! that prints.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Instant, SystemTime};

use iogauge::cli::{self, Request, ToolOptions};
use iogauge::report::{self, Format, human_bytes};
use iogauge::runner::{self, Event};
use iogauge::spec::{self, Section};
use iogauge::target::{self, Safety, TargetError};
use iogauge::{profiles, result, stats::CpuUsage};

fn usage_exit(msg: &str) -> ExitCode {
    eprintln!("iogauge: {msg}");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    match cli::parse(&args) {
        Err(e) => usage_exit(&e.0),
        Ok(Request::Print(text)) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Ok(Request::Options) => {
            print!("{}", cli::options_help());
            ExitCode::SUCCESS
        }
        Ok(Request::Run { section, tool }) => execute(&args, vec![section], false, tool, None),
        Ok(Request::Quick {
            directory,
            size,
            seconds,
            tool,
        }) => {
            if !directory.is_dir() {
                return usage_exit(&format!(
                    "--directory={}: no such directory",
                    directory.display()
                ));
            }
            let size = match size.as_deref().map(spec::value::parse_size) {
                Some(Ok(s)) => s.bytes,
                Some(Err(accepted)) => return usage_exit(&format!("--size: expected {accepted}")),
                None => profiles::quick_size(&directory),
            };
            if size < 1 << 20 {
                return usage_exit(&format!(
                    "--size={size}: the quick check needs at least 1 MiB (is {} nearly full?)",
                    directory.display()
                ));
            }
            let sections = profiles::quick_check(&directory, size, seconds);
            execute(&args, sections, true, tool, Some(&profiles::QUICK_LABELS))
        }
    }
}

fn execute(
    args: &[String],
    sections: Vec<Section>,
    separate_groups: bool,
    tool: ToolOptions,
    summary_labels: Option<&[&str]>,
) -> ExitCode {
    let mut plan = match spec::resolve(&sections, separate_groups) {
        Ok(p) => p,
        Err(e) => return usage_exit(&e.to_string()),
    };
    let safety = Safety {
        allow_overwrite: tool.allow_overwrite,
        skip_space_check: tool.skip_space_check,
    };
    let mut targets = match target::check(&mut plan, safety) {
        Ok(t) => t,
        Err(e) => return usage_exit(&e.to_string()),
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal while stopping exits at once.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&interrupt));
        let _ = signal_hook::flag::register(sig, Arc::clone(&interrupt));
    }
    let mut warnings = plan.warnings.clone();
    warnings.extend(targets.warnings.iter().cloned());
    for w in &warnings {
        eprintln!("iogauge: warning: {w}");
    }

    let live = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    let started = SystemTime::now();
    let (wall0, cpu0) = (Instant::now(), CpuUsage::process());
    let outcome = runner::run(&plan, &mut targets, &interrupt, &mut |ev| {
        if live {
            status_line(ev);
        }
    });
    if live {
        eprint!("\r\x1b[2K");
    }
    // Described before clean-up, while created files still exist.
    let described = targets
        .paths()
        .map(|p| iogauge::host::describe(p))
        .collect();
    let context = result::Context {
        command_line: args.to_vec(),
        started,
        process_cpu: CpuUsage::process().since(&cpu0),
        wall: wall0.elapsed(),
        targets: described,
        warnings,
    };
    if !tool.keep {
        for (p, e) in targets.remove_created() {
            eprintln!("iogauge: could not remove {}: {e}", p.display());
        }
    }
    let report = result::build(&outcome, context);
    let text = match (tool.format, summary_labels) {
        (Format::Text, Some(labels)) => report::text::summary(&report, labels),
        (f, _) => report::render(f, &report),
    };
    let written = match &tool.output {
        Some(path) => std::fs::write(path, &text),
        None => std::io::stdout().write_all(text.as_bytes()),
    };
    if let Err(e) = written {
        eprintln!("iogauge: cannot write the report: {e}");
        return ExitCode::from(1);
    }
    if tool.format != Format::Text || tool.output.is_some() {
        for e in &report.errors {
            eprintln!("iogauge: error: {e}");
        }
    }
    if outcome.interrupted {
        ExitCode::from(130)
    } else if let Some(TargetError::Usage(_)) = outcome.setup_error {
        ExitCode::from(2)
    } else if outcome.failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn status_line(ev: &Event) {
    let line = match ev {
        Event::Preparing { group } => format!("group {}: preparing files…", group + 1),
        Event::Progress(p) => {
            let secs = p.elapsed.as_secs_f64().max(1e-9);
            format!(
                "group {}/{}: {:>3.0}% done  {:.1} MiB/s  {:.0} IOPS  {} moved  ETA {}",
                p.group + 1,
                p.groups,
                p.done * 100.0,
                p.bytes as f64 / secs / 1048576.0,
                p.ios as f64 / secs,
                human_bytes(p.bytes),
                p.eta
                    .map_or("?".into(), |d| format!("{:.0} s", d.as_secs_f64()))
            )
        }
        Event::GroupDone { .. } => return,
    };
    eprint!("\r\x1b[2K{line}");
    let _ = std::io::stderr().flush();
}
