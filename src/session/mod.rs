//! The one pipeline every command runs through: plan → check files → run → RunReport, with
//! warnings said once, signals turned into a clean stop, repetitions (`--repeat`) and the
//! outputs written (`execute`). It calls no command; commands call it. Progress types and the
//! hooks a scale-out run meets the other ranks through live here.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Instant, SystemTime};

use iogauge::cli::{self, ToolOptions};
use iogauge::files::targets::{self, Safety, TargetError};
use iogauge::plan::{self, Section};
use iogauge::report::{self, Format};
use iogauge::runner::{self, Event};
use iogauge::studies::Report;
use iogauge::studies::rounds::RoundsSpec;
use iogauge::{err, errln, out};
use iogauge::{result, stats::CpuUsage};

pub(crate) mod outputs;
mod panics;
mod rounds;
#[cfg(feature = "mpi")]
pub(crate) mod scale;
mod signals;

pub(crate) use outputs::*;
pub(crate) use panics::end_at_a_panic;
pub(crate) use rounds::*;
pub(crate) use signals::*;

/// See [`AGREE`], [`GROUP_READY`], [`GROUP_LAID_OUT`] and [`RUN_TICK`].
pub(crate) type Agree = Box<dyn FnMut(bool) -> bool>;
pub(crate) type GroupReady = Box<dyn FnMut(usize, bool) -> bool>;
pub(crate) type RunTick = Box<dyn FnMut(Tick) -> Told>;
/// See [`READ_FROM`].
pub(crate) type ReadFromHook = Box<dyn Fn(&mut plan::Plan, bool) -> Result<Vec<String>, Failure>>;

/// A tick of a running group, as a scale-out run sees it.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) struct Tick {
    group: usize,
    /// This rank's jobs are stopping (one failed, or the run was interrupted).
    stopping: bool,
    /// The group's last tick here: every job has ended.
    ended: bool,
}

/// What the other ranks want of this one.
#[derive(PartialEq, Eq)]
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) enum Told {
    Nothing,
    /// Another rank stopped (failed or interrupted): stop the run.
    StopRun,
    /// Stonewalling: another rank finished this group; stop it and go on to the next.
    StopGroup,
}

thread_local! {
    /// Whether every rank of a scale-out run could start (given whether this one could).
    static AGREE: std::cell::RefCell<Option<Agree>> =
        const { std::cell::RefCell::new(None) };
    /// Called when a group's files are ready and its jobs start next, or could not be made
    /// ready: whether every rank's were (a scale-out run meets the other ranks there).
    static GROUP_READY: std::cell::RefCell<Option<GroupReady>> =
        const { std::cell::RefCell::new(None) };
    /// Called when a group's files are laid out, before any is opened: whether every rank's
    /// are (a scale-out run whose jobs read other ranks' files meets the others there).
    static GROUP_LAID_OUT: std::cell::RefCell<Option<GroupReady>> =
        const { std::cell::RefCell::new(None) };
    /// A scale-out run's `--rank-read-shift`: given the resolved plan (and whether groups are
    /// separate), points its read jobs at another rank's files; returns warnings for the
    /// report.
    static READ_FROM: std::cell::RefCell<Option<ReadFromHook>> =
        const { std::cell::RefCell::new(None) };
    /// While a group runs: given whether this rank's jobs are stopping, whether another rank
    /// asked every rank to stop.
    static RUN_TICK: std::cell::RefCell<Option<RunTick>> = const { std::cell::RefCell::new(None) };
}

/// Warnings already printed, while a sweep runs (each is printed once, not once per point).
pub(crate) static SEEN_WARNINGS: std::sync::Mutex<Option<std::collections::HashSet<String>>> =
    std::sync::Mutex::new(None);

/// Warnings are said in the report only, not on stderr as found: a scale-out rank other than
/// 0 (its warnings reach the screen in rank 0's merged report, once, named by rank, not once
/// per rank as found), and fio mode (fio prints nothing on stderr a script would not expect;
/// iogauge's advice is in the report, under its own name).
pub(crate) static WARNINGS_ONLY_IN_REPORT: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// A legacy tool's own words for the fio options warnings suggest (see `speak_as`).
    static OWN_WORDS: std::cell::Cell<iogauge::compat::Words> = const { std::cell::Cell::new(&[]) };
}

/// From now on warnings suggest `words`' flags instead of fio's options (a legacy tool's
/// command line: SASIOTEST's -unbuffered, not direct=1).
pub(crate) fn speak_as(words: iogauge::compat::Words) {
    OWN_WORDS.with(|w| w.set(words));
}

/// `w` in the words `speak_as` chose.
pub(crate) fn in_own_words(w: &str) -> String {
    iogauge::compat::in_own_words(OWN_WORDS.with(std::cell::Cell::get), w)
}

/// Prints a warning to stderr (in a sweep, the first time only).
pub(crate) fn warn(w: &str) {
    if WARNINGS_ONLY_IN_REPORT.load(Ordering::Relaxed) {
        return;
    }
    let w = &in_own_words(w);
    if let Ok(mut seen) = SEEN_WARNINGS.lock() {
        if let Some(seen) = seen.as_mut() {
            if !seen.insert(w.to_string()) {
                return;
            }
        }
    }
    errln!("iogauge: warning: {}", cli::for_terminal(w));
}

pub(crate) fn usage_exit(msg: &str) -> ExitCode {
    errln!("iogauge: {}", cli::for_terminal(msg));
    ExitCode::from(2)
}

/// Why a scale-out rank that could start did not: another could not.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) const OTHER_RANK_FAILED: &str = "another rank could not start: nothing ran";

/// Why a run produced no report, and the exit code that says so.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The options cannot work (exit 2); nothing was created.
    Usage(String),
    /// The system failed before the run started (exit 1).
    System(String),
    /// Ctrl-C before the run started (exit 130).
    Interrupted,
    /// Already said (a scale-out run's rank 0 says every rank's reason at once): the code.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    Said(u8),
}

impl Failure {
    /// A lower layer's refusal of the options, said as it is.
    pub(crate) fn usage(e: impl std::fmt::Display) -> Failure {
        Failure::Usage(e.to_string())
    }

    pub(crate) fn code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            Failure::System(_) => 1,
            Failure::Interrupted => interrupted_code(),
            Failure::Said(code) => *code,
        }
    }

    /// Why, in one line.
    pub(crate) fn message(&self) -> String {
        match self {
            Failure::Usage(m) | Failure::System(m) => m.clone(),
            Failure::Interrupted => {
                "interrupted before the run started; nothing was measured".into()
            }
            Failure::Said(_) => String::new(),
        }
    }

    /// Says why on stderr.
    pub(crate) fn report(&self) {
        match self {
            Failure::Usage(m) | Failure::System(m) => {
                // One write: ranks of a scale-out run share the terminal.
                iogauge::out::stderr(&format!("iogauge: {}\n", cli::for_terminal(m)));
            }
            Failure::Interrupted => errln!("iogauge: {}", self.message()),
            Failure::Said(_) => {}
        }
    }

    /// Says why, and gives the exit code.
    pub(crate) fn reported(self) -> u8 {
        self.report();
        self.code()
    }
}

impl From<plan::SpecError> for Failure {
    fn from(e: plan::SpecError) -> Failure {
        Failure::Usage(e.to_string())
    }
}

impl From<TargetError> for Failure {
    fn from(e: TargetError) -> Failure {
        match e {
            TargetError::Usage(m) => Failure::Usage(m),
            TargetError::Io(m) => Failure::System(m),
            TargetError::Interrupted => Failure::Interrupted,
        }
    }
}

/// A finished run: its report and the exit code it earns.
pub(crate) struct Measured {
    pub(crate) report: Report,
    pub(crate) code: u8,
}

/// How a run ends: whether the files it created stay, what a failed job ends, and whether
/// fio's aggregate bandwidth logs are written (`--bandwidth-log`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ending {
    pub keep: bool,
    pub on_failure: plan::OnFailure,
    pub aggregate_bw_log: bool,
}

impl Ending {
    /// iogauge's own commands: a failed job ends the run.
    pub(crate) fn iogauge(keep: bool) -> Ending {
        Ending {
            keep,
            on_failure: plan::OnFailure::EndRun,
            aggregate_bw_log: false,
        }
    }
}

/// resolve → check → run → report, printing warnings and the live status line to stderr.
/// `Err`: why nothing ran (bad options, the system failing while the targets are checked).
/// `notes`: what the front end noticed (a job file's surprises), printed with the warnings.
pub(crate) fn measure(
    args: &[String],
    sections: &[Section],
    separate_groups: bool,
    safety: Safety,
    ending: Ending,
    notes: &[String],
    rounds: RoundsSpec,
) -> Result<Measured, Failure> {
    let keep = ending.keep;
    // Printed first: a job file's surprise may be why its options do not resolve.
    for n in notes {
        warn(n);
    }
    let mut plan = planned(
        sections,
        separate_groups,
        safety,
        rounds,
        ending.aggregate_bw_log,
    )?;
    plan.set_on_failure(ending.on_failure);
    // From here a signal stops the run instead of ending iogauge: the check takes locks and
    // marks the files it will write.
    let interrupt = interrupt_flag();
    let checked = targets::check(&mut plan, safety);
    // A scale-out run: every rank learns whether all could start, before any creates a file.
    let all_ready = AGREE.with(|h| match h.borrow_mut().as_mut() {
        Some(agree) => agree(checked.is_ok()),
        None => true,
    });
    if !all_ready && checked.is_ok() {
        return Err(Failure::System(OTHER_RANK_FAILED.into()));
    }
    let mut targets = checked?;
    let mut warnings = notes.to_vec();
    warnings.extend(plan.warnings.iter().cloned());
    warnings.extend(plan.ignored_note());
    warnings.extend(targets.warnings.iter().cloned());
    for w in &warnings[notes.len()..] {
        warn(w);
    }

    let live = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    let started = SystemTime::now();
    let (wall0, cpu0) = (Instant::now(), CpuUsage::process());
    let mut on_event = |ev: &Event| on_run_event(ev, &interrupt, live);
    let (outcome, rounds_report) = if rounds.max > 0 || rounds.precondition > 0 {
        let (o, r) = run_rounds(&plan, &mut targets, &interrupt, rounds, &mut on_event)?;
        (o, Some(r))
    } else {
        (
            runner::run(&plan, &mut targets, &interrupt, &mut on_event),
            None,
        )
    };
    if live {
        err!("\r\x1b[2K");
    }
    // Described before clean-up, while created files still exist.
    let described = iogauge::host::describe_all(targets.paths().map(|p| p.as_path()));
    let printed = warnings.len();
    let context = result::Context {
        command_line: args.to_vec(),
        started,
        process_cpu: CpuUsage::process().since(&cpu0),
        wall: wall0.elapsed(),
        targets: described,
        warnings,
        // A scale-out rank shares its host's devices with the others: the merge judges them.
        defer_device_verdicts: AGREE.with(|h| h.borrow().is_some()),
    };
    // An interrupted or failed run removes what it created, even where files are kept.
    let remove = !keep || outcome.interrupted || outcome.failed();
    // Data that failed verification is the evidence: its files are kept whatever was asked.
    let evidence = evidence(&outcome);
    for problem in targets.finish(remove, &evidence) {
        errln!("iogauge: {problem}");
    }
    let mut report = Report::from(result::build(&outcome, context));
    report.rounds = rounds_report;
    let logs = (safety.overwrite_output, ending.aggregate_bw_log);
    let logs_failed = write_io_logs(&outcome, logs, &mut report.warnings);
    // What the run found (the device counters' verdicts) reaches stderr too, whatever the
    // report's format.
    for w in &report.warnings[printed..] {
        warn(w);
    }
    let code = match exit_code(&outcome) {
        0 if logs_failed => 1,
        c => c,
    };
    Ok(Measured { report, code })
}

/// The plan the sections make, with what the run reads from (scale-out's shifted reads), and
/// checked before anything is created: --precondition's job, the log files, memory.
fn planned(
    sections: &[Section],
    separate_groups: bool,
    safety: Safety,
    rounds: RoundsSpec,
    aggregate_bw_log: bool,
) -> Result<plan::Plan, Failure> {
    let mut plan = plan::resolve(sections, separate_groups)?;
    // A replay's log names its files: read before anything else looks at them.
    let replayed = iogauge::files::replay::load(&mut plan)?;
    plan.warnings.extend(replayed);
    let read_from = READ_FROM.with(|h| h.borrow().as_ref().map(|f| f(&mut plan, separate_groups)));
    if let Some(warnings) = read_from {
        plan.warnings.extend(warnings?);
    }
    if rounds.precondition > 0 {
        // Refused before anything is checked or created.
        iogauge::studies::rounds::precondition_plan(&plan, rounds.precondition)
            .map_err(Failure::usage)?;
    }
    check_log_files(&plan, (safety.overwrite_output, aggregate_bw_log))?;
    runner::limits::check(&plan, safety.max_memory).map_err(Failure::usage)?;
    Ok(plan)
}

/// What the session does with each of the runner's events: scale-out's agreements (every rank
/// laid out, ready, still running), the live status line, and SIGUSR1's status.
fn on_run_event(ev: &Event, interrupt: &AtomicBool, live: bool) {
    match ev {
        Event::LaidOut { group } => {
            let all =
                GROUP_LAID_OUT.with(|h| h.borrow_mut().as_mut().is_none_or(|h| h(*group, true)));
            if !all {
                // Another rank could not lay out its files: every rank stops here.
                interrupt.store(true, Ordering::Relaxed);
            }
        }
        Event::Ready { group, ok } => {
            let all = GROUP_READY.with(|h| h.borrow_mut().as_mut().is_none_or(|h| h(*group, *ok)));
            if !all && *ok {
                // Another rank could not prepare this group: every rank stops here. (One
                // that could not itself stops on its own error, not as interrupted.)
                interrupt.store(true, Ordering::Relaxed);
            }
        }
        Event::Tick {
            group,
            stopping,
            ended,
        } => {
            let tick = Tick {
                group: *group,
                stopping: *stopping,
                ended: *ended,
            };
            let told = RUN_TICK.with(|h| h.borrow_mut().as_mut().map(|h| h(tick)));
            match told.unwrap_or(Told::Nothing) {
                // Another rank stopped: this one stops with it, with what it measured.
                Told::StopRun => interrupt.store(true, Ordering::Relaxed),
                Told::StopGroup => runner::stop_group(),
                Told::Nothing => {}
            }
        }
        _ => {}
    }
    if live {
        status_line(ev);
    }
    if let Event::Progress(p) = ev {
        if signals().status.swap(false, Ordering::SeqCst) {
            // SIGUSR1: the figures so far, on a line of their own; the run goes on.
            errln!("iogauge: status: {}", progress_text(p));
        }
    }
}

/// The files of jobs whose data failed verification: the evidence, kept whatever was asked.
fn evidence(outcome: &runner::RunOutcome) -> Vec<std::path::PathBuf> {
    outcome
        .groups
        .iter()
        .flatten()
        .filter(|j| j.stats.verify.as_ref().is_some_and(|v| v.bad > 0))
        .flat_map(|j| j.files.iter().map(|f| f.path.clone()))
        .collect()
}

/// A run's exit code: interrupted (128 + the signal), a target refused (2), a job failed
/// (1), or 0.
fn exit_code(outcome: &runner::RunOutcome) -> u8 {
    if outcome.interrupted {
        interrupted_code()
    } else if let Some(TargetError::Usage(_)) = outcome.setup_error {
        2
    } else if outcome.failed() {
        1
    } else {
        0
    }
}

/// `--rank-stonewall`, `--rank-timeout`, `--rank-mixed`, `--rank-jobs` and
/// `--rank-read-shift` need a launch of several ranks.
fn ranks_allow(tool: &ToolOptions) -> Result<(), ExitCode> {
    let launch =
        iogauge::studies::scaleout::launched(&|k| std::env::var(k).ok()).filter(|l| l.size > 1);
    if tool.rank_stonewall && launch.is_none() {
        return Err(usage_exit(
            "--rank-stonewall: stops every rank when the first finishes a group; it needs a \
             launch of several ranks (mpirun or srun, with iogauge built with --features mpi)",
        ));
    }
    if let Some(t) = tool.rank_timeout.filter(|_| launch.is_none()) {
        return Err(usage_exit(&format!(
            "--rank-timeout={}s: how long a rank waits for the others; it needs a launch of \
             several ranks (mpirun or srun, with iogauge built with --features mpi)",
            t.as_secs_f64()
        )));
    }
    if tool.rank_mixed && launch.is_none() {
        return Err(usage_exit(
            "--rank-mixed: runs ranks given other options than rank 0; it needs a launch of \
             several ranks (mpirun or srun, with iogauge built with --features mpi)",
        ));
    }
    if let Some(jobs) = tool.rank_jobs.filter(|_| launch.is_none()) {
        return Err(usage_exit(&format!(
            "--rank-jobs={jobs}: how the ranks' job rows are merged; it needs a launch of \
             several ranks (mpirun or srun, with iogauge built with --features mpi)"
        )));
    }
    if let Some(shift) = tool.rank_read_shift.filter(|_| launch.is_none()) {
        return Err(usage_exit(&format!(
            "--rank-read-shift={shift}: reads another rank's files; it needs a launch of \
             several ranks (mpirun or srun, with iogauge built with --features mpi)"
        )));
    }
    Ok(())
}

pub(crate) fn execute(
    args: &[String],
    sections: Vec<Section>,
    separate_groups: bool,
    tool: ToolOptions,
    reporting: Reporting<'_>,
    notes: Vec<String>,
    finish: Option<&dyn Fn(&mut Report)>,
) -> ExitCode {
    let safety = Safety {
        allow_overwrite: tool.allow_overwrite,
        skip_space_check: tool.skip_space_check,
        overwrite_output: tool.overwrite_output,
        max_memory: tool.max_memory,
    };
    #[cfg(feature = "mpi")]
    let mut sections = sections;
    if let Err(code) = ranks_allow(&tool) {
        return code;
    }
    #[cfg(feature = "mpi")]
    let ranks = match scale::begin(&mut sections, (&tool).into()) {
        Ok(r) => r,
        Err(code) => return ExitCode::from(code),
    };
    let measured = repeated(tool.repeat as usize, &mut || {
        let one = measure(
            args,
            &sections,
            separate_groups,
            safety,
            Ending {
                keep: tool.keep,
                // fio goes on to the next group after a failed job.
                on_failure: match reporting {
                    Reporting::Fio(_) => plan::OnFailure::EndGroup,
                    _ => plan::OnFailure::EndRun,
                },
                aggregate_bw_log: matches!(reporting, Reporting::Fio(o) if o.bandwidth_log),
            },
            &notes,
            tool.rounds,
        );
        // Under a launch, each repetition is merged across the ranks: the spread is the
        // total's, and all ranks go on or stop together.
        #[cfg(feature = "mpi")]
        let one = scale::each(&ranks, one);
        one
    });
    // `ranks` is kept until the report is out (see `scale::Ranks`).
    #[cfg(feature = "mpi")]
    let measured = match scale::merged(&ranks, measured) {
        Ok(m) => m,
        // Not rank 0: rank 0 reports for everyone, and exits with the worst rank's code.
        Err(code) => return ExitCode::from(code),
    };
    let Measured { mut report, code } = match measured {
        Ok(m) => m,
        Err(e) => {
            let code = e.reported();
            #[cfg(feature = "mpi")]
            scale::end(&ranks, code);
            return ExitCode::from(code);
        }
    };
    if let Some(f) = finish.filter(|_| !report.interrupted && report.errors.is_empty()) {
        f(&mut report);
    }
    #[cfg(feature = "mpi")]
    if ranks.is_some() && (signalled() || scale::gave_up(&ranks)) && tool.output.is_none() {
        write_partial(&report, &tool);
    }
    let failed = match reporting {
        Reporting::Iogauge(labels) => write_outputs(&report, &tool, labels),
        Reporting::Fio(outputs) => write_fio_outputs(&report, &tool, outputs),
    };
    // Errors reach stderr whatever the report's format (text shows them in the report too).
    for e in &report.errors {
        errln!("iogauge: error: {}", cli::for_terminal(e));
    }
    let code = if failed && code == 0 { 1 } else { code };
    #[cfg(feature = "mpi")]
    scale::end(&ranks, code);
    ExitCode::from(code)
}

/// Under mpirun, after Ctrl-C or with ranks given up: the whole partial report in a file of
/// its own, since mpirun, ending the job, forwards only the first few KiB of what rank 0
/// prints (or may be gone with the ranks it lost, and stdout with it).
#[cfg(feature = "mpi")]
fn write_partial(report: &Report, tool: &ToolOptions) {
    let path = std::path::PathBuf::from(format!(
        "{}-partial.json",
        default_stem(report.started_unix_s)
    ));
    let json = report::render(Format::Json, report);
    match write_when_read(&path, json.as_bytes(), tool.overwrite_output) {
        Ok(()) if signalled() => errln!(
            "iogauge: interrupted under mpirun: the whole partial report is in {} \
             (mpirun forwards only part of the output after Ctrl-C)",
            path.display()
        ),
        Ok(()) => errln!(
            "iogauge: ranks did not answer: the partial report is also in {} (mpirun \
             may be gone with them)",
            path.display()
        ),
        Err(e) => errln!("iogauge: cannot write {}: {e}", path.display()),
    }
}

/// How a command's report is written.
#[derive(Clone, Copy)]
pub(crate) enum Reporting<'a> {
    /// iogauge's formats (`--output-format`); with labels, text is the one-line summary of
    /// each job under them (quick, assess).
    Iogauge(Option<&'a [&'a str]>),
    /// fio mode's formats, one after another to fio's `--output` or stdout.
    Fio(&'a cli::FioOutputs),
}

/// fio mode: the report in fio's formats to `--output` (one file for all, as fio writes it)
/// or stdout, and the job's logs; `true` when one could not be written.
fn write_fio_outputs(report: &Report, tool: &ToolOptions, outputs: &cli::FioOutputs) -> bool {
    let mut failed = write_logs(report, tool.overwrite_output);
    let text = report::fio_mode::render(&outputs.formats, outputs.terse_version, report);
    let written = match &outputs.output {
        Some(path) => write_when_read(path, text.as_bytes(), tool.overwrite_output),
        None => iogauge::out::stdout_bytes(text.as_bytes()),
    };
    if let Err(e) = written {
        errln!("iogauge: cannot write the report: {e}");
        failed = true;
    }
    failed
}

/// Writes the report in each format asked for (one: to --output or stdout; several: text to
/// stdout, the others each to a file) and the job's logs; `true` when one could not be written.
fn write_outputs(report: &Report, tool: &ToolOptions, summary_labels: Option<&[&str]>) -> bool {
    // Text on the screen that stderr also writes to: its warnings and errors are printed
    // there (warnings as found, errors at the end), so the screen shows each once.
    let without_notes = stdout_is_stderr().then(|| {
        let mut r = report.clone();
        r.warnings = Vec::new();
        r.errors = Vec::new();
        r
    });
    let screen_report = without_notes.as_ref().unwrap_or(report);
    let render_of = |f: Format, r: &Report| match (f, summary_labels) {
        (Format::Text, Some(labels)) => report::summary::summary(r, labels),
        (f, _) => report::render(f, r),
    };
    let render = |f: Format| render_of(f, report);
    // Only text leaves them out: a machine-readable report stays whole wherever it goes.
    let render_screen = |f: Format| match f {
        Format::Text => render_of(f, screen_report),
        _ => render(f),
    };
    let mut failed = write_logs(report, tool.overwrite_output);
    match tool.formats.as_slice() {
        [f] => {
            let written = match &tool.output {
                Some(path) => write_when_read(path, render(*f).as_bytes(), tool.overwrite_output),
                None => iogauge::out::stdout_bytes(render_screen(*f).as_bytes()),
            };
            if let Err(e) = written {
                errln!("iogauge: cannot write the report: {e}");
                failed = true;
            }
        }
        formats => {
            // Several formats: text to stdout, each other one to its own file, so stdout
            // never mixes formats and every machine-readable file is whole.
            let stem = tool
                .output
                .clone()
                .unwrap_or_else(|| default_stem(report.started_unix_s).into());
            for &f in formats {
                // Text is for the screen; with --output it is kept in a file as well.
                if f == Format::Text {
                    out!("{}", render_screen(f));
                    if tool.output.is_none() {
                        continue;
                    }
                }
                let text = render(f);
                let path = stem.with_extension(f.ext());
                match write_when_read(&path, text.as_bytes(), tool.overwrite_output) {
                    Ok(()) => errln!("iogauge: wrote {}", path.display()),
                    Err(e) => {
                        errln!("iogauge: cannot write {}: {e}", path.display());
                        failed = true;
                    }
                }
            }
        }
    }
    failed
}

/// Runs `one` up to `n` times (stopping at a run that fails or is interrupted): the last run's
/// report, with the spread of every job's figures over the runs when there were several.
/// Each warning is printed once.
pub(crate) fn repeated(
    n: usize,
    one: &mut dyn FnMut() -> Result<Measured, Failure>,
) -> Result<Measured, Failure> {
    if n <= 1 {
        return one();
    }
    if let Ok(mut seen) = SEEN_WARNINGS.lock() {
        seen.get_or_insert_with(Default::default);
    }
    let mut runs = Vec::new();
    let mut code = 0;
    for k in 1..=n {
        if !WARNINGS_ONLY_IN_REPORT.load(Ordering::Relaxed) {
            errln!("iogauge: repeat {k} of {n}");
        }
        let m = match one() {
            Ok(m) => m,
            // Nothing ran this time: the runs so far are the result.
            Err(e) if !runs.is_empty() => {
                e.report();
                code = e.code();
                break;
            }
            Err(e) => return Err(e),
        };
        code = m.code;
        runs.push(m.report);
        if code != 0 && !WARNINGS_ONLY_IN_REPORT.load(Ordering::Relaxed) {
            errln!("iogauge: repeat {k} of {n} did not pass: the spread is over {k} run(s)");
        }
        if code != 0 {
            break;
        }
    }
    let summary = iogauge::studies::repeat::summarize(&runs, n);
    let mut report = runs.pop().expect("one run at least");
    report.repeat = Some(summary);
    Ok(Measured { report, code })
}

/// Whether a launch by mpirun or srun (several ranks) can run `request`: a build without MPI
/// refuses any that runs I/O (N independent copies would each report alone), and sweeps and
/// sqlio's batches do not run across ranks yet.
pub(crate) fn launch_allows(
    request: &Result<cli::Request, cli::UsageError>,
) -> Result<(), Failure> {
    let Some(l) = iogauge::studies::scaleout::launched(&|k| std::env::var(k).ok()) else {
        return Ok(());
    };
    let runs_io = matches!(
        request,
        Ok(cli::Request::Run { .. }
            | cli::Request::Job { .. }
            | cli::Request::Quick { .. }
            | cli::Request::Assess { .. }
            | cli::Request::Sweep(_)
            | cli::Request::Legacy(_))
    );
    if runs_io && l.size > 1 && !cfg!(feature = "mpi") {
        return Err(Failure::Usage(
            iogauge::studies::scaleout::without_mpi_error(l),
        ));
    }
    let batch = matches!(
        request,
        Ok(cli::Request::Legacy(
            iogauge::compat::Invocation::SqlioBatch(..)
        ))
    );
    if l.size > 1 && (batch || matches!(request, Ok(cli::Request::Sweep(_)))) {
        return Err(Failure::Usage(format!(
            "launched as rank {} of {}: scale-out runs `run`, `job`, `quick`, `assess` and \
             the legacy tools' single tests; sweeps and `sqlio --batch` do not run across \
             ranks yet",
            l.rank, l.size
        )));
    }
    Ok(())
}
