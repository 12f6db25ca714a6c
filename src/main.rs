//! iogauge's binary: parse → front end → resolve → check → run → report, and exit codes
//! (0 ok, 1 a job failed, 2 usage or configuration error, 130 interrupted). The only place
//! that prints.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Instant, SystemTime};

use iogauge::cli::{self, Request, ToolOptions};
use iogauge::report::{self, Format};
use iogauge::rounds::RoundsSpec;
use iogauge::runner::{self, Event};
use iogauge::spec::{self, Section};
use iogauge::target::{self, Safety, TargetError};
use iogauge::units::human_bytes;
use iogauge::{compat, jobfile, ownership, profiles, result, stats::CpuUsage};
use iogauge::{err, errln, out, outln};

/// See [`AGREE`], [`GROUP_READY`], [`GROUP_LAID_OUT`] and [`RUN_TICK`].
type Agree = Box<dyn FnMut(bool) -> bool>;
type GroupReady = Box<dyn FnMut(usize, bool) -> bool>;
type RunTick = Box<dyn FnMut(Tick) -> Told>;
/// See [`READ_FROM`].
type ReadFromHook = Box<dyn Fn(&mut spec::Plan, bool) -> Result<Vec<String>, String>>;

/// A tick of a running group, as a scale-out run sees it.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
struct Tick {
    group: usize,
    /// This rank's jobs are stopping (one failed, or the run was interrupted).
    stopping: bool,
    /// The group's last tick here: every job has ended.
    ended: bool,
}

/// What the other ranks want of this one.
#[derive(PartialEq, Eq)]
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
enum Told {
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
static SEEN_WARNINGS: std::sync::Mutex<Option<std::collections::HashSet<String>>> =
    std::sync::Mutex::new(None);

/// Prints a warning to stderr (in a sweep, the first time only).
/// A scale-out rank other than 0: its warnings reach the screen in rank 0's merged report,
/// once, named by rank, not once per rank as found.
static WARNINGS_IN_MERGE: AtomicBool = AtomicBool::new(false);

fn warn(w: &str) {
    if WARNINGS_IN_MERGE.load(Ordering::Relaxed) {
        return;
    }
    if let Ok(mut seen) = SEEN_WARNINGS.lock() {
        if let Some(seen) = seen.as_mut() {
            if !seen.insert(w.to_string()) {
                return;
            }
        }
    }
    errln!("iogauge: warning: {}", cli::for_terminal(w));
}

fn usage_exit(msg: &str) -> ExitCode {
    errln!("iogauge: {}", cli::for_terminal(msg));
    ExitCode::from(2)
}

/// Why a scale-out rank that could start did not: another could not.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
const OTHER_RANK_FAILED: &str = "another rank could not start: nothing ran";

/// Why a run produced no report, and the exit code that says so.
#[derive(Debug)]
enum Failure {
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
    fn code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            Failure::System(_) => 1,
            Failure::Interrupted => interrupted_code(),
            Failure::Said(code) => *code,
        }
    }

    /// Why, in one line.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    fn message(&self) -> String {
        match self {
            Failure::Usage(m) | Failure::System(m) => m.clone(),
            Failure::Interrupted => {
                "interrupted before the run started; nothing was measured".into()
            }
            Failure::Said(_) => String::new(),
        }
    }

    /// Says why on stderr.
    fn report(&self) {
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
    fn reported(self) -> u8 {
        self.report();
        self.code()
    }
}

impl From<spec::SpecError> for Failure {
    fn from(e: spec::SpecError) -> Failure {
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

fn main() -> ExitCode {
    iogauge::out::stop_on_closed_pipe(Arc::clone(&signals().interrupt));
    let code = dispatch();
    if iogauge::out::pipe_closed() {
        // What a shell expects of a program whose reader went away (128 + SIGPIPE).
        return ExitCode::from(141);
    }
    code
}

fn dispatch() -> ExitCode {
    let args = match cli::text_args(std::env::args_os()) {
        Ok(a) => a,
        Err(e) => return usage_exit(&e.0),
    };
    let request = cli::parse(&args);
    let runs_io = matches!(
        request,
        Ok(Request::Run { .. }
            | Request::Job { .. }
            | Request::Quick { .. }
            | Request::Assess { .. }
            | Request::Sweep(_)
            | Request::Legacy(_))
    );
    if let Some(l) = iogauge::scaleout::launched(&|k| std::env::var(k).ok()) {
        if runs_io && l.size > 1 && !cfg!(feature = "mpi") {
            return usage_exit(&iogauge::scaleout::without_mpi_error(l));
        }
        let batch = matches!(
            request,
            Ok(Request::Legacy(compat::Invocation::SqlioBatch(..)))
        );
        if l.size > 1 && (batch || matches!(request, Ok(Request::Sweep(_)))) {
            return usage_exit(&format!(
                "launched as rank {} of {}: scale-out runs `run`, `job`, `quick`, `assess` and \
                 the legacy tools' single tests; sweeps and `sqlio --batch` do not run across \
                 ranks yet",
                l.rank, l.size
            ));
        }
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
        Ok(Request::Run { sections, tool }) => {
            execute(&args, sections, false, tool, None, Vec::new(), None)
        }
        Ok(Request::Job {
            files,
            defaults,
            overrides,
            sections,
            parse_only,
            tool,
        }) => {
            let (jobs, notes) = match read_job_files(&files, &defaults, &overrides, &sections) {
                Ok(r) => r,
                Err(e) => return usage_exit(&e),
            };
            if parse_only {
                return print_plan(&jobs, &notes);
            }
            execute(&args, jobs, false, tool, None, notes, None)
        }
        Ok(Request::Legacy(inv)) => legacy(&args, inv),
        Ok(Request::Sweep(req)) => sweep(&args, req),
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
            execute(
                &args,
                sections,
                true,
                tool,
                Some(&profiles::QUICK_LABELS),
                Vec::new(),
                None,
            )
        }
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

/// `iogauge assess`: the profile's tests, then the verdicts in the report.
fn assess(
    args: &[String],
    for_: &str,
    directory: &std::path::Path,
    size: Option<String>,
    seconds: Option<u64>,
    streams: Option<usize>,
    tool: ToolOptions,
) -> ExitCode {
    if !directory.is_dir() {
        return usage_exit(&format!(
            "--directory={}: no such directory",
            directory.display()
        ));
    }
    let size = match size.as_deref().map(spec::value::parse_size) {
        Some(Ok(s)) => Some(s.bytes),
        Some(Err(accepted)) => return usage_exit(&format!("--size: expected {accepted}")),
        None => None,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if for_ == "sas" {
        if let Some(n) = seconds {
            return usage_exit(&format!(
                "--seconds={n}: goes with --for=database; the SAS streams move a fixed amount \
                 (iotest.sh's shape): --size sets how much, so how long"
            ));
        }
        let streams = streams.unwrap_or(cores);
        // 2 GiB in all (less where space is short), each stream a whole number of 64 KiB
        // blocks.
        let total = size.unwrap_or_else(|| (profiles::quick_size(directory) * 2).min(2 << 30));
        let per = (total / streams as u64) >> 16 << 16;
        if per == 0 {
            return usage_exit(&format!(
                "--size={total}: too small for {streams} streams of 64 KiB blocks"
            ));
        }
        let sections = profiles::assess_sas(directory, streams, per);
        execute(
            args,
            sections,
            false,
            tool,
            Some(&profiles::SAS_LABELS),
            Vec::new(),
            Some(&move |r: &mut result::RunReport| {
                r.assessment = Some(iogauge::assess::sas(r, cores));
            }),
        )
    } else {
        if streams.is_some() {
            return usage_exit("--streams: goes with --for=sas");
        }
        let data = size.unwrap_or_else(|| profiles::quick_size(directory));
        if data < 1 << 20 {
            return usage_exit(&format!(
                "--size={data}: the data file needs at least 1 MiB"
            ));
        }
        let seconds = seconds.unwrap_or(10);
        let sections = profiles::assess_database(directory, (data >> 13) << 13, seconds);
        execute(
            args,
            sections,
            true,
            tool,
            Some(&profiles::DATABASE_LABELS),
            Vec::new(),
            Some(&|r: &mut result::RunReport| {
                r.assessment = Some(iogauge::assess::database(r));
            }),
        )
    }
}

/// Ctrl-C, SIGTERM, SIGHUP (a dropped ssh session) and SIGQUIT. Until a run begins to prepare
/// its files there is nothing to clean up, and any of them ends iogauge at once with 128+n;
/// from then on the first one sets the interrupt flag (the run stops, reports what it
/// measured and removes what it created, then exits with 128+n) and a second exits at once,
/// removing first the files the run created (`ownership::watch`). SIGUSR1 prints the running
/// group's figures so far to stderr and the run goes on (fio's SIGUSR1).
struct Signals {
    /// Set by the first signal during a run.
    interrupt: Arc<AtomicBool>,
    /// Set by a signal during a run, and by nothing else (`interrupt` is also how a
    /// scale-out run stops a rank for the others).
    signalled: Arc<AtomicBool>,
    /// No run has begun: a signal exits at once.
    idle: Arc<AtomicBool>,
    /// The number of the last stopping signal (0: none).
    which: Arc<std::sync::atomic::AtomicUsize>,
    /// SIGUSR1 came: print the figures so far.
    status: Arc<AtomicBool>,
}

/// The signals that stop a run cleanly.
const STOPPING: [i32; 4] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGQUIT,
];

fn signals() -> &'static Signals {
    static SIGNALS: OnceLock<Signals> = OnceLock::new();
    SIGNALS.get_or_init(|| {
        let s = Signals {
            interrupt: Arc::new(AtomicBool::new(false)),
            signalled: Arc::new(AtomicBool::new(false)),
            idle: Arc::new(AtomicBool::new(true)),
            which: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
            status: Arc::new(AtomicBool::new(false)),
        };
        for sig in STOPPING {
            // Exit at once while idle; otherwise interrupt, in the handler itself.
            let _ = signal_hook::flag::register_conditional_shutdown(
                sig,
                128 + sig,
                Arc::clone(&s.idle),
            );
            let _ = signal_hook::flag::register_usize(sig, Arc::clone(&s.which), sig as usize);
            let _ = signal_hook::flag::register(sig, Arc::clone(&s.interrupt));
            let _ = signal_hook::flag::register(sig, Arc::clone(&s.signalled));
        }
        let _ = signal_hook::flag::register(signal_hook::consts::SIGUSR1, Arc::clone(&s.status));
        // Ctrl-C at mpirun (OpenMPI): each rank gets SIGCONT at once, SIGTERM a second later
        // and SIGKILL a second after that. A rank is in its own process group, so no terminal
        // stops and resumes it, and mpirun forwards no job control unless told to: under a
        // launch, SIGCONT is the first word of that sequence, and stopping there leaves two
        // seconds, not one, to report and remove what the run created.
        #[cfg(feature = "mpi")]
        if iogauge::scaleout::launched(&|k| std::env::var(k).ok()).is_some_and(|l| l.size > 1)
            && std::env::var("OMPI_MCA_orte_forward_job_control").is_err()
        {
            let _ =
                signal_hook::flag::register(signal_hook::consts::SIGCONT, Arc::clone(&s.interrupt));
            let _ =
                signal_hook::flag::register(signal_hook::consts::SIGCONT, Arc::clone(&s.signalled));
        }
        // A second signal during a run: remove what the run created, then exit at once (the
        // run's own clean-up may be what is stuck). Signals that arrive together may count
        // once; then the run's clean-up handles them.
        if let Ok(mut it) = signal_hook::iterator::Signals::new(STOPPING) {
            let idle = Arc::clone(&s.idle);
            let _ = std::thread::Builder::new()
                .name("iogauge-signals".into())
                .spawn(move || {
                    let mut seen = 0;
                    for sig in it.forever() {
                        if idle.load(Ordering::SeqCst) {
                            continue;
                        }
                        seen += 1;
                        if seen >= 2 {
                            ownership::remove_watched();
                            signal_hook::low_level::exit(128 + sig);
                        }
                    }
                });
        }
        s
    })
}

/// The exit code of a run that was stopped: 128 + the signal that stopped it (130 for Ctrl-C,
/// 129 for SIGHUP, 143 for SIGTERM), 141 when its output pipe closed, 130 when another rank
/// of a scale-out run stopped it.
fn interrupted_code() -> u8 {
    if iogauge::out::pipe_closed() {
        return 141;
    }
    match signals().which.load(Ordering::SeqCst) {
        0 => 130,
        n => (128 + n).min(255) as u8,
    }
}

/// The interrupt flag of the run about to begin: signals stop it from now on instead of
/// ending iogauge.
fn interrupt_flag() -> Arc<AtomicBool> {
    let s = signals();
    s.idle.store(false, Ordering::SeqCst);
    Arc::clone(&s.interrupt)
}

/// Whether Ctrl-C or SIGTERM came during a run.
#[cfg(feature = "mpi")]
fn signalled() -> bool {
    signals().signalled.load(Ordering::SeqCst)
}

/// A finished run: its report and the exit code it earns.
struct Measured {
    report: result::RunReport,
    code: u8,
}

/// resolve → check → run → report, printing warnings and the live status line to stderr.
/// `Err`: why nothing ran (bad options, the system failing while the targets are checked).
/// `notes`: what the front end noticed (a job file's surprises), printed with the warnings.
fn measure(
    args: &[String],
    sections: &[Section],
    separate_groups: bool,
    safety: Safety,
    keep: bool,
    notes: &[String],
    rounds: RoundsSpec,
) -> Result<Measured, Failure> {
    // Printed first: a job file's surprise may be why its options do not resolve.
    for n in notes {
        warn(n);
    }
    let mut plan = spec::resolve(sections, separate_groups)?;
    let read_from = READ_FROM.with(|h| h.borrow().as_ref().map(|f| f(&mut plan, separate_groups)));
    if let Some(warnings) = read_from {
        plan.warnings.extend(warnings.map_err(Failure::Usage)?);
    }
    if rounds.precondition > 0 {
        // Refused before anything is checked or created.
        iogauge::rounds::precondition_plan(&plan, rounds.precondition).map_err(Failure::Usage)?;
    }
    check_log_files(&plan, safety.overwrite_output).map_err(Failure::Usage)?;
    runner::limits::check(&plan, safety.max_memory).map_err(Failure::Usage)?;
    // From here a signal stops the run instead of ending iogauge: the check takes locks and
    // marks the files it will write.
    let interrupt = interrupt_flag();
    let checked = target::check(&mut plan, safety);
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
    let mut on_event = |ev: &Event| {
        match ev {
            Event::LaidOut { group } => {
                let all = GROUP_LAID_OUT
                    .with(|h| h.borrow_mut().as_mut().is_none_or(|h| h(*group, true)));
                if !all {
                    // Another rank could not lay out its files: every rank stops here.
                    interrupt.store(true, Ordering::Relaxed);
                }
            }
            Event::Ready { group, ok } => {
                let all =
                    GROUP_READY.with(|h| h.borrow_mut().as_mut().is_none_or(|h| h(*group, *ok)));
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
    };
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
    let described = targets
        .paths()
        .map(|p| iogauge::host::describe(p))
        .collect();
    let printed = warnings.len();
    let context = result::Context {
        command_line: args.to_vec(),
        started,
        process_cpu: CpuUsage::process().since(&cpu0),
        wall: wall0.elapsed(),
        targets: described,
        warnings,
    };
    // An interrupted or failed run removes what it created, even where files are kept.
    let remove = !keep || outcome.interrupted || outcome.failed();
    // Data that failed verification is the evidence: its files are kept whatever was asked.
    let evidence: Vec<std::path::PathBuf> = outcome
        .groups
        .iter()
        .flatten()
        .filter(|j| j.stats.verify.as_ref().is_some_and(|v| v.bad > 0))
        .flat_map(|j| j.files.iter().map(|f| f.path.clone()))
        .collect();
    for problem in targets.finish(remove, &evidence) {
        errln!("iogauge: {problem}");
    }
    let mut report = result::build(&outcome, context);
    report.rounds = rounds_report;
    // What the run found (the device counters' verdicts) reaches stderr too, whatever the
    // report's format.
    for w in &report.warnings[printed..] {
        warn(w);
    }
    let code = if outcome.interrupted {
        interrupted_code()
    } else if let Some(TargetError::Usage(_)) = outcome.setup_error {
        2
    } else if outcome.failed() {
        1
    } else {
        0
    };
    Ok(Measured { report, code })
}

fn execute(
    args: &[String],
    sections: Vec<Section>,
    separate_groups: bool,
    tool: ToolOptions,
    summary_labels: Option<&[&str]>,
    notes: Vec<String>,
    finish: Option<&dyn Fn(&mut result::RunReport)>,
) -> ExitCode {
    let safety = Safety {
        allow_overwrite: tool.allow_overwrite,
        skip_space_check: tool.skip_space_check,
        overwrite_output: tool.overwrite_output,
        max_memory: tool.max_memory,
    };
    #[cfg(feature = "mpi")]
    let mut sections = sections;
    let launch = iogauge::scaleout::launched(&|k| std::env::var(k).ok()).filter(|l| l.size > 1);
    if tool.rank_stonewall && launch.is_none() {
        return usage_exit(
            "--rank-stonewall: stops every rank when the first finishes a group; it needs a \
             launch of several ranks (mpirun or srun, with iogauge built with --features mpi)",
        );
    }
    if let Some(shift) = tool.rank_read_shift.filter(|_| launch.is_none()) {
        return usage_exit(&format!(
            "--rank-read-shift={shift}: reads another rank's files; it needs a launch of \
             several ranks (mpirun or srun, with iogauge built with --features mpi)"
        ));
    }
    #[cfg(feature = "mpi")]
    let ranks = match scale::begin(&mut sections, tool.rank_stonewall, tool.rank_read_shift) {
        Ok(r) => r,
        Err(code) => return ExitCode::from(code),
    };
    let measured = repeated(tool.repeat as usize, &mut || {
        let one = measure(
            args,
            &sections,
            separate_groups,
            safety,
            tool.keep,
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
    // Text on the screen that stderr also writes to: its warnings and errors are printed
    // there (warnings as found, errors at the end), so the screen shows each once.
    let without_notes = stdout_is_stderr().then(|| result::RunReport {
        warnings: Vec::new(),
        errors: Vec::new(),
        ..report.clone()
    });
    let screen_report = without_notes.as_ref().unwrap_or(&report);
    let render_of = |f: Format, r: &result::RunReport| match (f, summary_labels) {
        (Format::Text, Some(labels)) => report::text::summary(r, labels),
        (f, _) => report::render(f, r),
    };
    let render = |f: Format| render_of(f, &report);
    // Only text leaves them out: a machine-readable report stays whole wherever it goes.
    let render_screen = |f: Format| match f {
        Format::Text => render_of(f, screen_report),
        _ => render(f),
    };
    #[cfg(feature = "mpi")]
    if ranks.is_some() && signalled() && tool.output.is_none() {
        // Ctrl-C at mpirun: mpirun, ending the job, forwards only the first few KiB of what
        // rank 0 prints, so the whole partial report goes to a file of its own as well.
        let path = std::path::PathBuf::from(format!(
            "{}-partial.json",
            default_stem(report.started_unix_s)
        ));
        let json = report::render(Format::Json, &report);
        match ownership::write_output(&path, json.as_bytes(), tool.overwrite_output) {
            Ok(()) => errln!(
                "iogauge: interrupted under mpirun: the whole partial report is in {} \
                 (mpirun forwards only part of the output after Ctrl-C)",
                path.display()
            ),
            Err(e) => errln!("iogauge: cannot write {}: {e}", path.display()),
        }
    }
    let mut failed = write_logs(&report, tool.overwrite_output);
    match tool.formats.as_slice() {
        [f] => {
            let written = match &tool.output {
                Some(path) => {
                    ownership::write_output(path, render(*f).as_bytes(), tool.overwrite_output)
                }
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
                match ownership::write_output(&path, text.as_bytes(), tool.overwrite_output) {
                    Ok(()) => errln!("iogauge: wrote {}", path.display()),
                    Err(e) => {
                        errln!("iogauge: cannot write {}: {e}", path.display());
                        failed = true;
                    }
                }
            }
        }
    }
    // Errors reach stderr whatever the report's format (text shows them in the report too).
    for e in &report.errors {
        errln!("iogauge: error: {}", cli::for_terminal(e));
    }
    let code = if failed && code == 0 { 1 } else { code };
    #[cfg(feature = "mpi")]
    scale::end(&ranks, code);
    ExitCode::from(code)
}

/// Runs `one` up to `n` times (stopping at a run that fails or is interrupted): the last run's
/// report, with the spread of every job's figures over the runs when there were several.
/// Each warning is printed once.
fn repeated(
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
        if !WARNINGS_IN_MERGE.load(Ordering::Relaxed) {
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
        if code != 0 && !WARNINGS_IN_MERGE.load(Ordering::Relaxed) {
            errln!("iogauge: repeat {k} of {n} did not pass: the spread is over {k} run(s)");
        }
        if code != 0 {
            break;
        }
    }
    let summary = iogauge::repeat::summarize(&runs, n);
    let mut report = runs.pop().expect("one run at least");
    report.repeat = Some(summary);
    Ok(Measured { report, code })
}

/// Reads fio job files into sections: several files run one after another (fio's rule), each
/// starting from the command line's defaults. Returns the jobs and the files' warnings.
fn read_job_files(
    files: &[std::path::PathBuf],
    defaults: &Section,
    overrides: &Section,
    only: &[String],
) -> Result<(Vec<Section>, Vec<String>), String> {
    let env = jobfile::Env::system();
    let (mut jobs, mut notes, mut names) = (Vec::new(), Vec::new(), Vec::new());
    for (i, f) in files.iter().enumerate() {
        let parsed = jobfile::parse_file(f, &env).map_err(|e| e.to_string())?;
        notes.extend(parsed.warnings.iter().cloned());
        names.extend(
            parsed
                .sections
                .iter()
                .filter(|s| !s.is_global())
                .map(|s| s.name.clone()),
        );
        let mut these = parsed.jobs(&defaults.entries, &overrides.entries, only);
        if i > 0 {
            if let Some(first) = these.first_mut() {
                first.set("stonewall", "1", spec::Origin::Cli);
            }
        }
        jobs.extend(these);
    }
    if let Some(missing) = only.iter().find(|s| !names.contains(s)) {
        return Err(format!(
            "--section={missing}: no such job section; the files have: {}",
            names.join(", ")
        ));
    }
    if jobs.is_empty() {
        return Err(format!(
            "{}: no job sections to run (only [global] ones)",
            files[0].display()
        ));
    }
    Ok((jobs, notes))
}

/// `--parse-only`: the resolved jobs, group by group; nothing is created or run.
fn print_plan(sections: &[Section], notes: &[String]) -> ExitCode {
    for n in notes {
        errln!("iogauge: warning: {}", cli::for_terminal(n));
    }
    let plan = match spec::resolve(sections, false) {
        Ok(p) => p,
        Err(e) => return usage_exit(&e.to_string()),
    };
    for w in plan.warnings.iter().cloned().chain(plan.ignored_note()) {
        errln!("iogauge: warning: {}", cli::for_terminal(&w));
    }
    let mut out = String::new();
    for (gi, g) in plan.groups.iter().enumerate() {
        let after = if gi == 0 {
            String::new()
        } else {
            format!(", after group {gi} ends")
        };
        out += &format!("group {}{after}:\n", gi + 1);
        let mut count: std::collections::HashMap<&str, usize> = Default::default();
        for j in &g.jobs {
            *count.entry(j.name.as_str()).or_default() += 1;
        }
        for j in g.jobs.iter() {
            let clones = count[j.name.as_str()];
            if j.clone > 0 {
                continue;
            }
            let n = if clones > 1 {
                format!(" (x{clones})")
            } else {
                String::new()
            };
            out += &format!("  {}{n}: {}\n", j.name, j.summary());
        }
    }
    out!("{out}");
    ExitCode::SUCCESS
}

/// "iogauge-20261121-121858": the default name of a run's report files.
fn default_stem(unix_s: u64) -> String {
    let (y, m, d) = iogauge::units::civil_from_days((unix_s / 86_400) as i64);
    let s = unix_s % 86_400;
    format!(
        "iogauge-{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

/// Refuses, before anything runs, log files that may not be written: in a missing directory,
/// through a link, or over a file iogauge did not write (without `--overwrite-output`).
fn check_log_files(plan: &spec::Plan, replace: bool) -> Result<(), String> {
    let jobs = plan.groups.iter().flat_map(|g| &g.jobs);
    for (i, job) in jobs.enumerate() {
        for name in job.logs.files(i + 1) {
            ownership::check_output(&iogauge::rawpath::path(&name), replace)
                .map_err(|e| format!("log file {name}: {e}"))?;
        }
    }
    Ok(())
}

/// Writes the fio-format logs the jobs asked for; true when one could not be written.
fn write_logs(report: &result::RunReport, replace: bool) -> bool {
    let mut failed = false;
    for (name, text) in report::log::render(report) {
        if let Err(e) =
            ownership::write_output(&iogauge::rawpath::path(&name), text.as_bytes(), replace)
        {
            errln!("iogauge: cannot write log {name}: {e}");
            failed = true;
        }
    }
    failed
}

/// The largest saved report read back: a day-long run's series is a few MiB.
const MAX_REPORT_BYTES: u64 = 1 << 30;
const REPORT_CAP_WHY: &str = "a report's series is a few MiB even for a day-long run";

/// `iogauge report RUN.json`: the saved report in another format.
fn report_file(
    input: &std::path::Path,
    output: Option<&std::path::Path>,
    f: Format,
    replace: bool,
) -> ExitCode {
    if input.is_dir() {
        return sweep_report(input, output, f, replace);
    }
    let text = match ownership::read_input_text(input, MAX_REPORT_BYTES, REPORT_CAP_WHY) {
        Ok(t) => t,
        Err(e) => return usage_exit(&format!("{}: {e}", input.display())),
    };
    let run = match saved_report(&text) {
        Ok(r) => r,
        Err(e) => return usage_exit(&format!("{}: {e}", input.display())),
    };
    emit(&report::render(f, &run), output, replace)
}

/// Writes a rendered report to `output` (or stdout).
fn emit(out: &str, output: Option<&std::path::Path>, replace: bool) -> ExitCode {
    let written = match output {
        Some(p) => ownership::write_output(p, out.as_bytes(), replace),
        None => iogauge::out::stdout_bytes(out.as_bytes()),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            errln!("iogauge: cannot write the report: {e}");
            ExitCode::from(1)
        }
    }
}

/// A sweep's directory: its index, and the report of its first point that ran (for how it
/// was measured).
fn read_sweep(
    dir: &std::path::Path,
) -> Result<(iogauge::sweep::Index, Option<result::RunReport>), String> {
    let path = dir.join("index.json");
    let text =
        ownership::read_input_text(&path, MAX_REPORT_BYTES, REPORT_CAP_WHY).map_err(|e| {
            format!(
                "{}: {e} (a sweep's directory holds index.json)",
                path.display()
            )
        })?;
    let index: iogauge::sweep::Index = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a sweep's index ({e})", path.display()))?;
    if index.schema != iogauge::sweep::SCHEMA || index.axes.is_empty() {
        return Err(format!("{}: not a sweep's index", path.display()));
    }
    let first = index
        .points
        .iter()
        .filter_map(|p| p.report.as_ref())
        .find_map(|r| {
            let t =
                ownership::read_input_text(&dir.join(r), MAX_REPORT_BYTES, REPORT_CAP_WHY).ok()?;
            saved_report(&t).ok()
        });
    Ok((index, first))
}

/// `iogauge report DIR`: a sweep's page (html), its table and answers (text), or its index
/// (csv, json).
fn sweep_report(
    dir: &std::path::Path,
    output: Option<&std::path::Path>,
    f: Format,
    replace: bool,
) -> ExitCode {
    let (index, first) = match read_sweep(dir) {
        Ok(x) => x,
        Err(e) => return usage_exit(&e),
    };
    let out = match f {
        Format::Html => report::sweep_html::render(&index, first.as_ref()),
        Format::Csv => index.csv(),
        Format::Json => match serde_json::to_string_pretty(&index) {
            Ok(s) => s + "\n",
            Err(e) => return usage_exit(&e.to_string()),
        },
        Format::Text => {
            let (row, col, metric) = index.saved_table();
            let mut t = index.table(&row, &col, metric).unwrap_or_default();
            for a in &index.answers {
                t.push_str(a);
                t.push('\n');
            }
            t
        }
    };
    emit(&out, output, replace)
}

/// A saved report: iogauge's JSON, or fio's (read as far as fio's JSON goes).
fn saved_report(text: &str) -> Result<result::RunReport, String> {
    // iogauge's own, read straight into its type: a large report is never held as a tree.
    if let Ok(r) = serde_json::from_str::<result::RunReport>(text) {
        return Ok(r);
    }
    let doc: serde_json::Value = serde_json::from_str(report::from_fio::json_start(text))
        .map_err(|e| format!("not a JSON report ({e})"))?;
    if report::from_fio::is_fio(&doc) {
        return report::from_fio::run_report(&doc);
    }
    serde_json::from_value(doc).map_err(|e| {
        format!("not an iogauge JSON report ({e}); iogauge reads its own JSON and fio's")
    })
}

/// `iogauge compare BASE NEW`: exit 1 on a regression when asked, 2 on unreadable input.
fn compare_files(
    base: &std::path::Path,
    new: &std::path::Path,
    threshold_pct: f64,
    fail_on_regression: bool,
) -> ExitCode {
    let load = |p: &std::path::Path| -> Result<serde_json::Value, String> {
        let text = ownership::read_input_text(p, MAX_REPORT_BYTES, REPORT_CAP_WHY)
            .map_err(|e| format!("{}: {e}", p.display()))?;
        let v = iogauge::compare::load(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        drop(text);
        iogauge::compare::check(&v, &p.display().to_string())?;
        Ok(v)
    };
    let (b, n) = match (load(base), load(new)) {
        (Ok(b), Ok(n)) => (b, n),
        (Err(e), _) | (_, Err(e)) => return usage_exit(&e),
    };
    let c = iogauge::compare::compare(&b, &n, threshold_pct);
    out!("{}", c.text);
    if fail_on_regression && c.regressions > 0 {
        errln!(
            "iogauge: {} regression(s) beyond {threshold_pct}%",
            c.regressions
        );
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// Runs a legacy tool's command line and prints its output (or, with --json, the report).
fn legacy(args: &[String], inv: compat::Invocation) -> ExitCode {
    use compat::Invocation as I;
    match inv {
        // Run without its arguments, a tool says how to use it: a usage error, as the
        // originals treat it (stderr, exit 2), so a script that lost its arguments fails.
        I::Usage(text) => {
            err!("{text}");
            ExitCode::from(2)
        }
        I::One(p, f) => legacy_one(args, p.as_ref(), &f),
        I::SqlioBatch(batch, f) => sqlio_batch(args, batch, &f),
    }
}

/// One personality's measured step (its sections made this rank's own in a scale-out run):
/// its results file checked before the run.
fn legacy_measure(
    args: &[String],
    step: &compat::Step,
    f: &compat::Flags,
) -> Result<Measured, Failure> {
    let safety = Safety {
        allow_overwrite: f.allow_overwrite,
        skip_space_check: f.skip_space_check,
        overwrite_output: f.overwrite_output,
        max_memory: None,
    };
    measure(
        args,
        &step.sections,
        false,
        safety,
        step.keep,
        &[],
        RoundsSpec::default(),
    )
}

/// Prints a personality's output for `m` (or, with --json, the report) and its errors.
fn legacy_print(m: &Measured, f: &compat::Flags, screen: &str) {
    if f.json {
        out!("{}", report::render(Format::Json, &m.report));
    } else {
        out!("{screen}");
    }
    let _ = std::io::stdout().flush();
    for e in &m.report.errors {
        errln!("iogauge: error: {}", cli::for_terminal(e));
    }
}

fn legacy_one(args: &[String], p: &dyn compat::Personality, f: &compat::Flags) -> ExitCode {
    if let Some(path) = p.results_file() {
        if let Err(e) = ownership::check_output(path, f.overwrite_output) {
            return usage_exit(&format!("{}: {e}", iogauge::rawpath::display(path)));
        }
    }
    #[cfg_attr(not(feature = "mpi"), allow(unused_mut))]
    let mut step = p.step();
    // Across ranks as `run` is: SAS's guidance runs iotest.sh on every grid node at once.
    #[cfg(feature = "mpi")]
    let ranks = match scale::begin(&mut step.sections, false, None) {
        Ok(r) => r,
        Err(code) => return ExitCode::from(code),
    };
    let measured = legacy_measure(args, &step, f);
    #[cfg(feature = "mpi")]
    let measured = scale::each(&ranks, measured);
    #[cfg(feature = "mpi")]
    let measured = match scale::merged(&ranks, measured) {
        Ok(m) => m,
        Err(code) => return ExitCode::from(code),
    };
    let code = match measured {
        Ok(m) => {
            let out = p.render(&m.report);
            legacy_print(&m, f, &out.screen);
            match out.file {
                Some((path, text)) => {
                    let shown = iogauge::rawpath::display(&path);
                    match ownership::write_output(&path, text.as_bytes(), f.overwrite_output) {
                        Err(e) => {
                            errln!("iogauge: cannot write {shown}: {e}");
                            1
                        }
                        Ok(()) => {
                            if !f.json {
                                outln!("\nresults written to {shown}");
                            }
                            m.code
                        }
                    }
                }
                None => m.code,
            }
        }
        Err(e) => e.reported(),
    };
    #[cfg(feature = "mpi")]
    scale::end(&ranks, code);
    ExitCode::from(code)
}

/// `sqlio --batch`: every test in order (compat::sqlio runs the batch); with --json, one array
/// of every test's report, printed when the batch ends.
fn sqlio_batch(args: &[String], batch: compat::sqlio::Batch, f: &compat::Flags) -> ExitCode {
    use compat::sqlio::BatchEnd;
    let interrupt = interrupt_flag();
    let mut reports: Vec<serde_json::Value> = Vec::new();
    let end = batch.run(&interrupt, &mut |line, targs, s| {
        if !f.json {
            outln!("[batch line {line}: sqlio {}]", targs.join(" "));
        }
        let m = match legacy_measure(args, &compat::Personality::step(s), f) {
            Ok(m) => m,
            Err(Failure::Usage(m)) => return Err(m),
            // Reported here; the batch stops at this line with the failure's exit code.
            Err(e) => {
                e.report();
                return Ok(e.code());
            }
        };
        if f.json {
            reports.push(report::json::value(&m.report));
            for e in &m.report.errors {
                errln!("iogauge: error: {}", cli::for_terminal(e));
            }
        } else {
            legacy_print(&m, f, &compat::Personality::render(s, &m.report).screen);
        }
        Ok(m.code)
    });
    let print_json = |reports: &[serde_json::Value]| {
        if f.json {
            let text = serde_json::to_string_pretty(reports).expect("reports serialise");
            outln!("{text}");
        }
    };
    match end {
        BatchEnd::Done => {
            print_json(&reports);
            ExitCode::SUCCESS
        }
        BatchEnd::Interrupted => {
            print_json(&reports);
            ExitCode::from(interrupted_code())
        }
        BatchEnd::Usage { line, message } => {
            print_json(&reports);
            usage_exit(&format!("batch line {line}: {message}"))
        }
        BatchEnd::Failed { line, code } => {
            print_json(&reports);
            errln!("iogauge: sqlio batch stopped at line {line}");
            ExitCode::from(code)
        }
    }
}

/// Whether stdout and stderr are one file (a terminal, or `&>` into one file).
fn stdout_is_stderr() -> bool {
    let (Ok(a), Ok(b)) = (
        rustix::fs::fstat(std::io::stdout()),
        rustix::fs::fstat(std::io::stderr()),
    ) else {
        return false;
    };
    (a.st_dev, a.st_ino, a.st_rdev) == (b.st_dev, b.st_ino, b.st_rdev)
}

/// A running group's figures so far, in one line.
fn progress_text(p: &runner::Progress) -> String {
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

fn status_line(ev: &Event) {
    let line = match ev {
        Event::Preparing { group } => format!("group {}: preparing files…", group + 1),
        Event::Progress(p) => progress_text(p),
        Event::GroupDone { .. }
        | Event::LaidOut { .. }
        | Event::Ready { .. }
        | Event::Tick { .. } => return,
    };
    err!("\r\x1b[2K{line}");
    let _ = std::io::stderr().flush();
}

/// A point's jobs: the sweep's base with the point's values over it.
fn point_sections(
    base: &cli::SweepBase,
    axes: &[iogauge::sweep::Axis],
    values: &[String],
) -> Result<(Vec<Section>, Vec<String>), String> {
    match base {
        cli::SweepBase::Options(sections) => {
            let mut sections = sections.clone();
            for s in &mut sections {
                for (a, v) in axes.iter().zip(values) {
                    s.set(&a.name, v, spec::Origin::Cli);
                }
            }
            Ok((sections, Vec::new()))
        }
        cli::SweepBase::Jobs {
            files,
            defaults,
            overrides,
        } => {
            let mut overrides = overrides.clone();
            for (a, v) in axes.iter().zip(values) {
                overrides.set(&a.name, v, spec::Origin::Cli);
            }
            read_job_files(files, defaults, &overrides, &[])
        }
    }
}

/// The command that runs one point on its own, for its report's command line.
fn point_command(req: &cli::SweepRequest, values: &[String]) -> Vec<String> {
    let jobs = matches!(req.base, cli::SweepBase::Jobs { .. });
    let mut cmd = vec![
        "iogauge".to_string(),
        if jobs { "job" } else { "run" }.to_string(),
    ];
    let mut rest = req.base_args.iter().skip(1).peekable();
    while let Some(a) = rest.next() {
        match a.strip_prefix("--job") {
            Some("") => cmd.extend(rest.next().cloned()),
            Some(v) if v.starts_with('=') => cmd.push(v[1..].to_string()),
            _ => cmd.push(a.clone()),
        }
    }
    for (a, v) in req.axes.iter().zip(values) {
        if jobs {
            cmd.extend(["--set".to_string(), format!("{}={v}", a.name)]);
        } else {
            cmd.push(format!("--{}={v}", a.name));
        }
    }
    cmd
}

/// `iogauge sweep`: checks every point's options first (nothing is created when none can
/// run), then runs the pending points one by one through the same pipeline as `run`, saving
/// each report and the index after each point, and prints the table.
fn sweep(args: &[String], req: cli::SweepRequest) -> ExitCode {
    use iogauge::sweep::dir::{SweepDir, point_file};
    use iogauge::sweep::{Index, Status, figures, point_label};
    let axes = &req.axes;
    let fresh = match Index::new(args.to_vec(), req.base_args.clone(), axes.clone()) {
        Ok(i) => i,
        Err(e) => return usage_exit(&e),
    };
    let (row, col) = match &req.table {
        Some((r, c)) => (r.clone(), c.clone()),
        None => (
            axes[0].name.clone(),
            axes.get(1).unwrap_or(&axes[0]).name.clone(),
        ),
    };
    if let Err(e) = fresh.table(&row, &col, req.metric) {
        return usage_exit(&e);
    }
    let dir = &req.dir;
    let shown = iogauge::rawpath::display(dir).to_string();
    let replace = req.tool.overwrite_output;
    let (mut resumed, mut index) = if req.resume {
        match SweepDir::resume(dir, &shown, fresh, replace) {
            Ok((d, i)) => (Some(d), i),
            Err(e) => return usage_exit(&e),
        }
    } else {
        if let Err(e) = SweepDir::check_new(dir, &shown) {
            return usage_exit(&e);
        }
        (None, fresh)
    };
    // Every pending point's options, checked before anything is created.
    let mut plans = Vec::new();
    let mut refused = 0;
    let mut first_refusal = None;
    for p in &mut index.points {
        if p.status != Status::Pending && p.status != Status::Interrupted {
            plans.push(None);
            continue;
        }
        let values: Vec<String> = axes.iter().map(|a| p.values[&a.name].clone()).collect();
        let checked = point_sections(&req.base, axes, &values).and_then(|(sections, notes)| {
            spec::resolve(&sections, false)
                .map(|_| (sections, notes))
                .map_err(|e| e.to_string())
        });
        match checked {
            Ok(plan) => plans.push(Some((values, plan))),
            Err(e) => {
                refused += 1;
                first_refusal.get_or_insert_with(|| e.clone());
                (p.status, p.exit_code, p.error) = (Status::Refused, Some(2), Some(e));
                plans.push(None);
            }
        }
    }
    if refused > 0 && refused == plans.iter().filter(|p| p.is_some()).count() + refused {
        // No pending point can run: a bad base or a bad axis, not one bad corner of the grid.
        let e = first_refusal.clone().unwrap_or_default();
        return usage_exit(&format!("sweep: no point can run: {e}"));
    }
    let files = match resumed.take() {
        Some(d) => d,
        None => match SweepDir::create(dir, &shown, replace) {
            Ok(d) => d,
            Err(e) => {
                errln!("iogauge: sweep: {e}");
                return ExitCode::from(1);
            }
        },
    };
    if let Err(e) = files.save_index(&index) {
        errln!("iogauge: sweep: {shown}/index.json: {e}");
        return ExitCode::from(1);
    }
    let total = index.points.len();
    let todo = plans.iter().filter(|p| p.is_some()).count();
    if total - todo > refused {
        errln!(
            "iogauge: sweep: {} of {total} points already done in {shown}",
            total - todo - refused
        );
    }
    if refused > 0 {
        errln!(
            "iogauge: sweep: {refused} of {total} points refused by their options (first: {})",
            first_refusal.as_deref().unwrap_or_default()
        );
    }
    let safety = Safety {
        allow_overwrite: req.tool.allow_overwrite,
        skip_space_check: req.tool.skip_space_check,
        overwrite_output: false,
        max_memory: req.tool.max_memory,
    };
    if let Ok(mut seen) = SEEN_WARNINGS.lock() {
        *seen = Some(Default::default());
    }
    let started = Instant::now();
    let mut ran = 0;
    let mut interrupted = false;
    for (k, plan) in plans.into_iter().enumerate() {
        let Some((values, (sections, notes))) = plan else {
            continue;
        };
        let label = point_label(axes, &values);
        errln!(
            "iogauge: sweep: point {}/{total}: {label}",
            index.points[k].point
        );
        let t0 = Instant::now();
        let command = point_command(&req, &values);
        let p = &mut index.points[k];
        let runs = req.tool.repeat as usize;
        match repeated(runs, &mut || {
            measure(
                &command,
                &sections,
                false,
                safety,
                req.tool.keep,
                &notes,
                RoundsSpec::default(),
            )
        }) {
            Ok(Measured { report, code }) => {
                let name = point_file(p.point);
                match serde_json::to_vec_pretty(&report) {
                    Ok(json) => {
                        if let Err(e) = files.write_point(p.point, &json) {
                            errln!("iogauge: sweep: {shown}/{name}: {e}");
                            return ExitCode::from(1);
                        }
                    }
                    Err(e) => {
                        errln!("iogauge: sweep: point {}: {e}", p.point);
                        return ExitCode::from(1);
                    }
                }
                p.status = match code {
                    0 => Status::Ok,
                    c if c > 128 => Status::Interrupted,
                    2 => Status::Refused,
                    _ => Status::Failed,
                };
                p.exit_code = Some(code);
                p.error = report.errors.first().cloned();
                p.report = Some(name);
                p.figures = Some(figures(&report));
            }
            Err(f) => {
                f.report();
                p.status = match f {
                    Failure::Interrupted => Status::Interrupted,
                    Failure::Usage(_) => Status::Refused,
                    Failure::System(_) | Failure::Said(_) => Status::Failed,
                };
                p.exit_code = Some(f.code());
                p.error = Some(match f {
                    Failure::Usage(m) | Failure::System(m) => m,
                    Failure::Interrupted => "interrupted before the point started".into(),
                    Failure::Said(_) => "failed (said above)".into(),
                });
                p.report = None;
                p.figures = None;
            }
        }
        p.elapsed_s = Some(t0.elapsed().as_secs_f64());
        interrupted = p.status == Status::Interrupted;
        let outcome = match (&p.status, &p.figures) {
            (Status::Ok, Some(f)) => format!(
                "{:.1} MB/s ({:.1} MiB/s), {:.0} IOPS",
                f.mb_per_s, f.mib_per_s, f.iops
            ),
            (s, _) => format!(
                "{}{}",
                serde_json::to_value(s)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                p.error
                    .as_ref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            ),
        };
        ran += 1;
        let left = todo - ran;
        let eta = started.elapsed().as_secs_f64() / ran as f64 * left as f64;
        errln!(
            "iogauge: sweep: point {}/{total} ({label}): {outcome} in {:.1} s; {left} left{}",
            p.point,
            p.elapsed_s.unwrap_or(0.0),
            if left > 0 && !interrupted {
                format!(", about {}", duration_text(eta))
            } else {
                String::new()
            }
        );
        if let Err(e) = files.save_index(&index) {
            errln!("iogauge: sweep: {shown}/index.json: {e}");
            return ExitCode::from(1);
        }
        if interrupted {
            break;
        }
    }
    let mut table = index
        .table(&row, &col, req.metric)
        .expect("the table's axes were checked");
    index.answers = index.answers(req.metric, req.max_p99_us, req.knee_pct);
    (index.table, index.metric) = (vec![row.clone(), col.clone()], req.metric.name().into());
    for a in &index.answers {
        table.push_str(a);
        table.push('\n');
    }
    if let Err(e) = files.save_index(&index) {
        errln!("iogauge: sweep: {shown}/index.json: {e}");
        return ExitCode::from(1);
    }
    out!("{table}");
    let mut failed_files = Vec::new();
    if let Err(e) = files.write("table.txt", table.as_bytes()) {
        failed_files.push(format!("{shown}/table.txt: {e}"));
    }
    let first = index
        .points
        .iter()
        .filter_map(|p| p.report.as_ref())
        .find_map(|r| {
            let t =
                ownership::read_input_text(&dir.join(r), MAX_REPORT_BYTES, REPORT_CAP_WHY).ok()?;
            saved_report(&t).ok()
        });
    let html = report::sweep_html::render(&index, first.as_ref());
    if let Err(e) = files.write("index.html", html.as_bytes()) {
        failed_files.push(format!("{shown}/index.html: {e}"));
    }
    for f in &failed_files {
        errln!("iogauge: sweep: cannot write {f}");
    }
    let failed = index
        .points
        .iter()
        .filter(|p| matches!(p.status, Status::Failed | Status::Refused))
        .count();
    errln!(
        "iogauge: sweep: {shown}: index.json, index.csv, index.html, table.txt and {} point \
         report(s){}",
        index.points.iter().filter(|p| p.report.is_some()).count(),
        if failed > 0 {
            format!("; {failed} point(s) failed or were refused (see index.csv)")
        } else {
            String::new()
        }
    );
    if interrupted {
        errln!("iogauge: sweep: interrupted; --resume runs the points left");
        ExitCode::from(interrupted_code())
    } else if failed > 0 || !failed_files.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// 75 s → "1 min 15 s".
fn duration_text(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}

/// `--precondition` and `--until-steady`: the sequential passes, then the workload round after
/// round on the same files (created once, removed at the end) until SNIA's window is steady
/// or the most rounds have run. The outcome is the last round's.
fn run_rounds(
    plan: &spec::Plan,
    targets: &mut target::Targets,
    interrupt: &AtomicBool,
    rounds: RoundsSpec,
    on_event: &mut dyn FnMut(&Event),
) -> Result<(runner::RunOutcome, iogauge::rounds::RoundsReport), Failure> {
    use iogauge::rounds::{PreconditionReport, RoundsReport, figures, window};
    let bandwidth = iogauge::rounds::tracks_bandwidth(plan);
    let mut report = RoundsReport {
        metric: if bandwidth { "mb_per_s" } else { "iops" }.into(),
        values: Vec::new(),
        max_rounds: rounds.max.max(1),
        steady: false,
        range_pct: None,
        excursion_pct: None,
        precondition: None,
    };
    if rounds.precondition > 0 {
        let pre = iogauge::rounds::precondition_plan(plan, rounds.precondition)
            .map_err(Failure::Usage)?;
        errln!(
            "iogauge: preconditioning: writing the files sequentially {} time(s)",
            rounds.precondition
        );
        let t0 = Instant::now();
        let o = runner::run(&pre, targets, interrupt, on_event);
        let secs = t0.elapsed().as_secs_f64();
        let bytes: u64 = o
            .groups
            .iter()
            .flatten()
            .flat_map(|j| &j.stats.dirs)
            .map(|d| d.bytes)
            .sum();
        report.precondition = Some(PreconditionReport {
            passes: rounds.precondition,
            bytes,
            seconds: secs,
            mb_per_s: if secs > 0.0 {
                bytes as f64 / secs / 1e6
            } else {
                0.0
            },
        });
        errln!(
            "iogauge: preconditioned: {} in {secs:.1} s",
            human_bytes(bytes)
        );
        if o.interrupted || o.failed() {
            // The workload never ran: the passes' failure is the result.
            return Ok((o, report));
        }
    }
    let most = rounds.max.max(1);
    let mut k = 0;
    loop {
        k += 1;
        let o = runner::run(plan, targets, interrupt, on_event);
        let (iops, mbs) = figures(&o);
        let value = if bandwidth { mbs } else { iops };
        if o.interrupted || o.failed() {
            return Ok((o, report));
        }
        report.values.push(value);
        let w = window(&report.values);
        if let Some(w) = w {
            (report.range_pct, report.excursion_pct) = (Some(w.range_pct), Some(w.excursion_pct));
            report.steady = w.steady();
        }
        if rounds.max > 0 {
            errln!(
                "iogauge: round {k} of at most {most}: {value:.1} {}{}",
                if bandwidth { "MB/s" } else { "IOPS" },
                match w {
                    Some(w) => format!(
                        "; last 5 rounds: range {:.1}%, slope excursion {:.1}% of their average{}",
                        w.range_pct,
                        w.excursion_pct,
                        if w.steady() { ": steady" } else { "" }
                    ),
                    None => String::new(),
                }
            );
        }
        if report.steady || k >= most {
            return Ok((o, report));
        }
    }
}

/// Scale-out over MPI: every rank runs the plan on its own files, meets the others before
/// each group, and sends its report to rank 0, which merges them and reports for all.
#[cfg(feature = "mpi")]
mod scale {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    use iogauge::scaleout::{RankResult, ReadShift, aggregate, borrow, launched, rank_sections};
    use iogauge::spec::Section;
    use iogauge::units::unix_ns;
    use mpi::traits::*;

    use super::{AGREE, Failure, GROUP_READY, Measured, RUN_TICK, Tick, Told};

    /// The tag of the message a stopping rank sends every other rank: the repetition in the
    /// high 32 bits, the rank in the low.
    const STOP: mpi::Tag = 7;
    /// The tag of the clock round trips.
    const CLOCK: mpi::Tag = 8;
    /// The tag of "this rank finished group N" (stonewalling): the repetition (15 bits) in the
    /// top 16 bits, the group in the next 16, the rank in the low 32.
    const DONE: mpi::Tag = 9;

    /// Rank 0's estimate of each rank's clock offset (its clock minus rank 0's): the best of
    /// 5 round trips each, the reply taken as read halfway (Cristian's method). Empty on the
    /// other ranks.
    fn clock_offsets(world: &mpi::topology::SimpleCommunicator) -> Vec<i64> {
        let (me, n) = (world.rank(), world.size());
        let mut offsets = vec![0i64; n as usize];
        for r in 1..n {
            let mut best: Option<(u64, i64)> = None;
            for _ in 0..5 {
                if me == 0 {
                    let peer = world.process_at_rank(r);
                    let t0 = unix_ns();
                    peer.send_with_tag(&t0, CLOCK);
                    let (theirs, _) = peer.receive_with_tag::<u64>(CLOCK);
                    let t1 = unix_ns();
                    let rtt = t1.saturating_sub(t0);
                    let offset = theirs as i64 - ((t0 / 2 + t1 / 2) as i64);
                    if best.is_none_or(|(b, _)| rtt < b) {
                        best = Some((rtt, offset));
                    }
                } else if me == r {
                    let root = world.process_at_rank(0);
                    let _ = root.receive_with_tag::<u64>(CLOCK);
                    root.send_with_tag(&unix_ns(), CLOCK);
                }
            }
            if let Some((_, o)) = best {
                offsets[r as usize] = o;
            }
        }
        if me == 0 { offsets } else { Vec::new() }
    }

    /// One meeting of every rank: whether all are ready (bit 0), whether all have ended
    /// (bit 1). Every meeting point of a run (the start, each group, the end) is one bitwise-AND
    /// reduction on one communicator, so a rank that ended early keeps meeting the others
    /// wherever they wait, tells them it is not ready (they stop there), and leaves once all
    /// have ended: no count of the meetings a rank missed is needed, and none is left waiting.
    fn meet(phase: &mpi::topology::SimpleCommunicator, ready: bool, ended: bool) -> (bool, bool) {
        let mine = u8::from(ready) | (u8::from(ended) << 1);
        let mut all = 0u8;
        phase.all_reduce_into(
            &mine,
            &mut all,
            mpi::collective::SystemOperation::bitwise_and(),
        );
        (all & 1 == 1, all & 2 == 2)
    }

    pub struct Ranks {
        // Dropped last, after the report is out: MPI_Finalize meets the launcher, which after a
        // Ctrl-C at mpirun is already ending the job.
        world: mpi::topology::SimpleCommunicator,
        phase: Rc<mpi::topology::SimpleCommunicator>,
        rank: usize,
        host: String,
        starts: Rc<RefCell<Vec<u64>>>,
        /// The rank whose failure stopped this one, if one did.
        stopped_by: Rc<RefCell<Option<i32>>>,
        /// The group this rank was ready to start when another rank was not.
        held_at: Rc<RefCell<Option<usize>>>,
        /// Stonewalling on; per group, the rank whose finish stopped this one's.
        stonewall: bool,
        stonewalled: Rc<RefCell<Vec<Option<usize>>>>,
        /// `--rank-read-shift`: read jobs read the files of the rank this many further on.
        read_shift: Option<usize>,
        /// Every rank's host, indexed by rank.
        hosts: Vec<String>,
        /// Rank 0: each rank's clock offset.
        offsets: Vec<i64>,
        _universe: mpi::environment::Universe,
    }

    /// Every rank's host name, indexed by rank (the same on every rank).
    fn all_hosts(world: &mpi::topology::SimpleCommunicator, host: &str) -> Vec<String> {
        const MAX: usize = 256;
        let mut mine = [0u8; MAX];
        let b = host.as_bytes();
        let n = b.len().min(MAX);
        mine[..n].copy_from_slice(&b[..n]);
        let mut all = vec![0u8; MAX * world.size() as usize];
        world.all_gather_into(&mine[..], &mut all[..]);
        all.chunks(MAX)
            .map(|c| {
                let end = c.iter().position(|&x| x == 0).unwrap_or(MAX);
                String::from_utf8_lossy(&c[..end]).into_owned()
            })
            .collect()
    }

    /// Joins the launch when there is one: the rank's files made its own (and, with
    /// `--rank-read-shift`, its read jobs pointed at another rank's), the barrier before each
    /// group set up. `Err(code)`: the launch cannot run as asked (rank 0 said why; every rank
    /// leaves with the code).
    pub fn begin(
        sections: &mut [Section],
        stonewall: bool,
        read_shift: Option<ReadShift>,
    ) -> Result<Option<Ranks>, u8> {
        let Some(launch) = launched(&|k| std::env::var(k).ok()) else {
            return Ok(None);
        };
        let Some(universe) = mpi::initialize() else {
            return Ok(None);
        };
        let world = universe.world();
        let rank = world.rank() as usize;
        debug_assert_eq!(rank, launch.rank);
        let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
        let offsets = clock_offsets(&world);
        let shared = std::env::var("IOGAUGE_MPI_SHARED_FILES").is_ok_and(|v| v == "1");
        let hosts = all_hosts(&world, &host);
        let shift = match read_shift {
            Some(s) if shared => Err(format!(
                "--rank-read-shift={s}: with IOGAUGE_MPI_SHARED_FILES=1 every rank already \
                 reads the same files"
            )),
            Some(s) => s.ranks(&hosts).map(|(n, w)| Some((s, n, w))),
            None => Ok(None),
        };
        let shift = match shift {
            Ok(s) => s,
            Err(why) => {
                // The same on every rank: said once, and no rank leaves before it is said.
                if rank == 0 {
                    let _ = super::usage_exit(&why);
                }
                world.barrier();
                return Err(if rank == 0 { 2 } else { 0 });
            }
        };
        let borrowing = shift.is_some();
        let shift_ranks = shift.as_ref().map(|(_, n, _)| *n);
        if let Some((s, n, warning)) = shift {
            let partner = (rank + n) % hosts.len();
            let mut theirs = sections.to_vec();
            rank_sections(&mut theirs, partner, &hosts[partner], shared);
            let partner_host = hosts[partner].clone();
            // Said once, in rank 0's report.
            let warning = warning.filter(|_| rank == 0);
            super::READ_FROM.with(|h| {
                *h.borrow_mut() = Some(Box::new(move |plan, separate| {
                    let flag = format!("--rank-read-shift={s}");
                    let other =
                        iogauge::spec::resolve(&theirs, separate).map_err(|e| e.to_string())?;
                    borrow(plan, &other, partner, &partner_host, &flag)?;
                    Ok(warning.iter().cloned().collect())
                }))
            });
        }
        rank_sections(sections, rank, &host, shared);
        super::WARNINGS_IN_MERGE.store(rank != 0, std::sync::atomic::Ordering::Relaxed);
        let phase = Rc::new(world.duplicate());
        let starts = Rc::new(RefCell::new(Vec::new()));
        let round = Rc::new(Cell::new(0u64));
        let stopped_by: Rc<RefCell<Option<i32>>> = Rc::new(RefCell::new(None));
        let stonewalled: Rc<RefCell<Vec<Option<usize>>>> = Rc::new(RefCell::new(Vec::new()));
        let held_at: Rc<RefCell<Option<usize>>> = Rc::new(RefCell::new(None));
        let (p, s, n, by, walled, held) = (
            Rc::clone(&phase),
            Rc::clone(&starts),
            Rc::clone(&round),
            Rc::clone(&stopped_by),
            Rc::clone(&stonewalled),
            Rc::clone(&held_at),
        );
        AGREE.with(|h| {
            *h.borrow_mut() = Some(Box::new(move |ok: bool| {
                // A new measurement (a repetition): what it reports starts afresh, and the
                // messages of an earlier one are told apart by its number.
                n.set(n.get() + 1);
                s.borrow_mut().clear();
                by.borrow_mut().take();
                walled.borrow_mut().clear();
                held.borrow_mut().take();
                meet(&p, ok, false).0
            }))
        });
        let (w, by, walled, n) = (
            world.duplicate(),
            Rc::clone(&stopped_by),
            Rc::clone(&stonewalled),
            Rc::clone(&round),
        );
        let mut told_in: Option<u64> = None;
        RUN_TICK.with(|h| {
            *h.borrow_mut() = Some(Box::new(move |t: Tick| {
                let me = w.rank();
                let now = n.get();
                let others = || (0..w.size()).filter(move |&r| r != me);
                if t.stopping && told_in != Some(now) && by.borrow().is_none() {
                    // A job of this rank failed (or it was interrupted): stop every rank.
                    told_in = Some(now);
                    let m = ((now as i64) << 32) | i64::from(me);
                    for r in others() {
                        w.process_at_rank(r).send_with_tag(&m, STOP);
                    }
                }
                let mut stop = false;
                while let Some((msg, _)) = w.any_process().immediate_matched_probe_with_tag(STOP) {
                    let (m, _) = msg.matched_receive::<i64>();
                    // One from an earlier repetition (sent after this rank had finished it)
                    // is old news.
                    if (m >> 32) as u64 != now {
                        continue;
                    }
                    if told_in != Some(now) {
                        by.borrow_mut().get_or_insert((m & 0xffff_ffff) as i32);
                    }
                    stop = true;
                }
                if stop {
                    return Told::StopRun;
                }
                if !stonewall {
                    return Told::Nothing;
                }
                let mut walled = walled.borrow_mut();
                if walled.len() <= t.group {
                    walled.resize(t.group + 1, None);
                }
                let mut told = Told::Nothing;
                // Finishes of this group by other ranks (an older group's or repetition's
                // are left over).
                while let Some((msg, _)) = w.any_process().immediate_matched_probe_with_tag(DONE) {
                    let (m, _) = msg.matched_receive::<i64>();
                    let (r, g, from) = (
                        (m >> 48) as u64,
                        ((m >> 32) & 0xffff) as usize,
                        (m & 0xffff_ffff) as usize,
                    );
                    if r == now & 0x7fff && g == t.group && !t.ended && walled[g].is_none() {
                        walled[g] = Some(from);
                        told = Told::StopGroup;
                    }
                }
                if t.ended && !t.stopping && walled[t.group].is_none() {
                    // This rank finished the group first (as far as it knows): the others stop.
                    let m = (((now & 0x7fff) as i64) << 48)
                        | (((t.group & 0xffff) as i64) << 32)
                        | i64::from(me);
                    for r in others() {
                        w.process_at_rank(r).send_with_tag(&m, DONE);
                    }
                }
                told
            }))
        });
        let (p, s, held) = (Rc::clone(&phase), Rc::clone(&starts), Rc::clone(&held_at));
        GROUP_READY.with(|h| {
            *h.borrow_mut() = Some(Box::new(move |group, ok: bool| {
                // The barrier, and whether every rank got there ready.
                let all = meet(&p, ok, false).0;
                if all {
                    s.borrow_mut().push(unix_ns());
                } else if ok {
                    *held.borrow_mut() = Some(group);
                }
                all
            }))
        });
        if borrowing {
            let (p, held) = (Rc::clone(&phase), Rc::clone(&held_at));
            super::GROUP_LAID_OUT.with(|h| {
                *h.borrow_mut() = Some(Box::new(move |group, ok: bool| {
                    // Every rank's files are there before any rank opens another's.
                    let all = meet(&p, ok, false).0;
                    if !all && ok {
                        *held.borrow_mut() = Some(group);
                    }
                    all
                }))
            });
        }
        Ok(Some(Ranks {
            world,
            phase,
            rank,
            host,
            starts,
            stopped_by,
            held_at,
            stonewall,
            stonewalled,
            read_shift: shift_ranks,
            hosts,
            offsets,
            _universe: universe,
        }))
    }

    /// One measurement's result across the ranks (see `Ranks::merge`); this rank's own
    /// without a launch. Every rank calls it after each measurement (each repetition).
    pub fn each(
        ranks: &Option<Ranks>,
        measured: Result<Measured, Failure>,
    ) -> Result<Measured, Failure> {
        match ranks {
            Some(r) => r.merge(measured),
            None => measured,
        }
    }

    /// Rank 0's merged result (this rank's own without a launch), once the measurements are
    /// done. `Err(code)`: a rank other than 0, which has nothing to print (rank 0 reports for
    /// everyone) and has met the others for the last time.
    pub fn merged(
        ranks: &Option<Ranks>,
        measured: Result<Measured, Failure>,
    ) -> Result<Result<Measured, Failure>, u8> {
        let Some(r) = ranks else {
            return Ok(measured);
        };
        // Nothing is measured any more: the hooks (and the communicators they hold) go before
        // MPI_Finalize.
        GROUP_READY.with(|h| *h.borrow_mut() = None);
        super::GROUP_LAID_OUT.with(|h| *h.borrow_mut() = None);
        super::READ_FROM.with(|h| *h.borrow_mut() = None);
        AGREE.with(|h| *h.borrow_mut() = None);
        RUN_TICK.with(|h| *h.borrow_mut() = None);
        if r.rank != 0 {
            // Rank 0's exit code is everyone's (the worst rank's): a launcher such as mpirun
            // ends the whole job when any rank exits non-zero, which would kill rank 0 before
            // it reports.
            end(ranks, 0);
            return Err(0);
        }
        Ok(measured)
    }

    /// Once the report is out: every rank leaves together (see `Ranks::done`).
    pub fn end(ranks: &Option<Ranks>, code: u8) {
        if let Some(r) = ranks {
            r.done();
            leave_if_ending(code);
        }
    }

    /// After Ctrl-C at mpirun (a signal came during the run), once the report is out: exits
    /// now. mpirun is ending the job; MPI_Finalize would wait on it until it kills this rank,
    /// and leaving closes stdout, so mpirun forwards the whole report before it goes.
    fn leave_if_ending(code: u8) {
        if super::signalled() {
            use std::io::Write as _;
            let _ = std::io::stdout().flush();
            let _ = std::io::stderr().flush();
            std::process::exit(i32::from(code));
        }
    }

    impl Ranks {
        /// The last meeting: rank 0 comes once its report is out, so no rank leaves before
        /// (after Ctrl-C at mpirun, the first rank to exit ends the job for all).
        pub fn done(&self) {
            self.world.barrier();
        }

        /// Once every rank is past its run: the stop messages no one read (a rank that had
        /// finished its group when another stopped) are taken, so none is left at the end.
        fn drain(&self) {
            self.world.barrier();
            while let Some((msg, _)) = self
                .world
                .any_process()
                .immediate_matched_probe_with_tag(STOP)
            {
                let _ = msg.matched_receive::<i64>();
            }
            while let Some((msg, _)) = self
                .world
                .any_process()
                .immediate_matched_probe_with_tag(DONE)
            {
                let _ = msg.matched_receive::<i64>();
            }
        }

        /// After a measurement (each repetition): meets the other ranks until every one has
        /// ended (a rank that ended early tells those still waiting before a group that it is
        /// not ready, and they stop there); then each sends its result to rank 0, which merges
        /// them, and every rank learns the merged exit code, so all go on to the next
        /// repetition or all stop. Rank 0 gets the merge; the other ranks their own result
        /// with the merged code (or `Failure::Said`: rank 0 says why).
        fn merge(&self, measured: Result<Measured, Failure>) -> Result<Measured, Failure> {
            while !meet(&self.phase, false, true).1 {}
            let mut measured = measured;
            if let Ok(m) = measured.as_mut() {
                // Stopped for the others, not by a signal here: not this rank's interruption
                // (the merged report says interrupted only where a rank was).
                let cut = m.report.interrupted && !super::signalled();
                if let Some(from) = self.stopped_by.borrow().filter(|_| cut) {
                    m.report.warnings.push(format!(
                        "stopped early because rank {from} stopped (a job of it failed, or it \
                         was interrupted): this rank's figures are partial"
                    ));
                }
                if let Some(g) = *self.held_at.borrow() {
                    m.report.warnings.push(format!(
                        "group {} did not start: another rank had stopped or could not prepare \
                         it",
                        g + 1
                    ));
                }
                if cut {
                    m.report.interrupted = false;
                    if m.code > 128 {
                        m.code = 0;
                    }
                }
            }
            // A rank with no result (it could not start) sends nothing but still takes part,
            // so rank 0 never waits for it.
            let bytes = match &measured {
                Ok(m) => serde_json::to_vec(&RankResult {
                    rank: self.rank,
                    host: self.host.clone(),
                    exit_code: m.code,
                    group_start_unix_ns: self.starts.borrow().clone(),
                    clock_offset_ns: 0,
                    stonewall: self.stonewall,
                    stonewalled_by: self.stonewalled.borrow().clone(),
                    read_shift: self.read_shift,
                    report: m.report.clone(),
                })
                .expect("a report serialises"),
                // Why, for rank 0 to say (once for all the ranks that give the same reason).
                Err(f) => {
                    let mut v = vec![b'!', f.code()];
                    v.extend_from_slice(f.message().as_bytes());
                    v
                }
            };
            let root = self.world.process_at_rank(0);
            let len = bytes.len() as i32;
            if self.rank != 0 {
                root.gather_into(&len);
                root.gather_varcount_into(&bytes[..]);
                self.drain();
                let mut code = 0u8;
                root.broadcast_into(&mut code);
                return match measured {
                    Ok(m) => Ok(Measured {
                        report: m.report,
                        code,
                    }),
                    Err(_) => Err(Failure::Said(code)),
                };
            }
            let n = self.world.size() as usize;
            let mut lens = vec![0i32; n];
            root.gather_into_root(&len, &mut lens[..]);
            let displs: Vec<i32> = lens
                .iter()
                .scan(0i32, |at, &l| {
                    let d = *at;
                    *at += l;
                    Some(d)
                })
                .collect();
            let mut all = vec![0u8; lens.iter().map(|&l| l as usize).sum()];
            {
                let mut part =
                    mpi::datatype::PartitionMut::new(&mut all[..], &lens[..], &displs[..]);
                root.gather_varcount_into_root(&bytes[..], &mut part);
            }
            let mut parts: Vec<RankResult> = Vec::new();
            let mut failed: Vec<(usize, String)> = Vec::new();
            let mut failed_code = 0u8;
            for (r, (&l, &d)) in lens.iter().zip(&displs).enumerate() {
                let b = &all[d as usize..(d + l) as usize];
                match b {
                    [b'!', code, why @ ..] => {
                        failed.push((r, String::from_utf8_lossy(why).into_owned()));
                        failed_code = failed_code.max(*code);
                    }
                    _ => match serde_json::from_slice(b) {
                        Ok(p) => parts.push(p),
                        Err(e) => failed.push((r, format!("its result cannot be read: {e}"))),
                    },
                }
            }
            self.drain();
            let lines =
                iogauge::scaleout::failure_lines(&failed, &self.hosts, n, super::OTHER_RANK_FAILED);
            if let Err(f) = measured {
                // Every rank's reason, each said once.
                for l in &lines {
                    iogauge::out::stderr(&format!("iogauge: {}\n", super::cli::for_terminal(l)));
                }
                let mut code = f.code().max(failed_code);
                root.broadcast_into(&mut code);
                return Err(Failure::Said(code));
            }
            for p in &mut parts {
                p.clock_offset_ns = self.offsets.get(p.rank).copied().unwrap_or(0);
            }
            let (mut report, mut code) = aggregate(parts);
            for l in lines {
                // Only some ranks ran this repetition.
                report.errors.push(format!("no result: {l}"));
                code = code.max(failed_code.max(1));
            }
            root.broadcast_into(&mut code);
            Ok(Measured { report, code })
        }
    }
}
