//! `iogauge fio ARGS…` (or iogauge run as `fio`): fio's command line run with fio's defaults
//! (files kept, nothing said on stderr that fio would not say) and fio's outputs.

use std::process::ExitCode;

use iogauge::cli::FioRequest;
use iogauge::plan::{self, Section};
use iogauge::{errln, out};

use super::job::read_job_files;
use crate::session::{Failure, Reporting, WARNINGS_ONLY_IN_REPORT, execute, usage_exit};

/// The command line's jobs, then the job files' (each file's jobs with the command line's
/// defaults under them).
fn sections(r: &FioRequest) -> Result<(Vec<Section>, Vec<String>), Failure> {
    let mut jobs = r.jobs.clone();
    let mut notes = Vec::new();
    if !r.files.is_empty() {
        let (from_files, n) =
            read_job_files(&r.files, &r.globals, &Section::new("set"), &r.sections)?;
        jobs.extend(from_files);
        notes = n;
    }
    Ok((jobs, notes))
}

/// What fio refuses before running: more jobs than `--max-jobs`, a writing job under
/// `--readonly`, a warning under `--warnings-fatal`.
fn refusals(r: &FioRequest, plan: &plan::Plan, notes: &[String]) -> Result<(), Failure> {
    let jobs: Vec<&plan::JobSpec> = plan.groups.iter().flat_map(|g| &g.jobs).collect();
    if let Some(max) = r.max_jobs.filter(|&m| jobs.len() > m) {
        return Err(Failure::Usage(format!(
            "--max-jobs={max}: the jobs (numjobs clones counted) number {}",
            jobs.len()
        )));
    }
    if r.readonly {
        if let Some(j) = jobs.iter().find(|j| j.rw.modifies()) {
            return Err(Failure::Usage(format!(
                "--readonly: job {} writes or trims (rw={}); in read-only mode no job may",
                j.name,
                j.rw.as_str()
            )));
        }
    }
    if r.warnings_fatal {
        let warnings: Vec<&String> = notes.iter().chain(&plan.warnings).collect();
        if let Some(w) = warnings.first() {
            return Err(Failure::Usage(format!("--warnings-fatal: {w}")));
        }
    }
    Ok(())
}

/// `--showcmd`: each job as fio's command-line options.
fn showcmd(jobs: &[Section]) -> String {
    let mut o = String::new();
    for j in jobs {
        o += &format!("fio --name={}", j.name);
        for e in &j.entries {
            match &e.value {
                Some(v) => o += &format!(" --{}={v}", e.key),
                None => o += &format!(" --{}", e.key),
            }
        }
        o.push('\n');
    }
    o
}

/// `--debug=parse`: each command-line option as fio's parser reports it (`parse PID
/// key=value`), with the lines fio's own callbacks add (the steady state's threshold).
fn debug_parse(r: &FioRequest) -> String {
    let pid = std::process::id();
    let mut o = String::new();
    for e in &r.given {
        let v = e.value.as_deref().unwrap_or("");
        o += &format!("parse    {pid:<5} {}={v}\n", e.key);
        if matches!(e.key.as_str(), "ss" | "steadystate") {
            if let Some(line) = steady_threshold(v) {
                o += &format!("parse    {pid:<5} {line}\n");
            }
        }
    }
    o
}

/// fio's parse-debug line for a steady-state criterion `ss=CRITERION:LIMIT[%]`.
fn steady_threshold(v: &str) -> Option<String> {
    let (criterion, limit) = v.split_once(':')?;
    let limit = limit.trim();
    if let Some(pct) = limit.strip_suffix('%') {
        let x: f64 = pct.trim().parse().ok()?;
        return Some(format!("set steady state threshold to {x:.6}%"));
    }
    if criterion.starts_with("iops") {
        let x: f64 = limit.parse().ok()?;
        return Some(format!("set steady state IOPS threshold to {x:.6}"));
    }
    let bytes = iogauge::plan::value::parse_size(limit).ok()?.bytes;
    Some(format!("set steady state BW threshold to {bytes}"))
}

/// `--inflate-log=FILE`: a compressed log's text on stdout. fio's `.fz` files hold one or
/// more zlib streams one after another (a chunk of binary samples each); iogauge writes one.
fn inflate_log(path: &std::path::Path) -> ExitCode {
    use std::io::{BufRead, Read};
    let shown = iogauge::rawpath::display(path);
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            errln!("iogauge: --inflate-log={shown}: {e}");
            return ExitCode::from(1);
        }
    };
    let mut reader = std::io::BufReader::new(file);
    loop {
        match reader.fill_buf() {
            Ok([]) => return ExitCode::SUCCESS,
            Ok(_) => {}
            Err(e) => {
                errln!("iogauge: --inflate-log={shown}: {e}");
                return ExitCode::from(1);
            }
        }
        let mut z = flate2::bufread::ZlibDecoder::new(reader);
        // A stream's samples a few MiB at a time: a day's log inflates to gigabytes.
        let mut chunk = Vec::new();
        loop {
            let mut piece = Vec::new();
            match (&mut z).take(4 << 20).read_to_end(&mut piece) {
                Ok(0) if chunk.is_empty() => break,
                Ok(n) => chunk.extend_from_slice(&piece[..n]),
                Err(e) => {
                    errln!("iogauge: --inflate-log={shown}: not a zlib-compressed log: {e}");
                    return ExitCode::from(1);
                }
            }
            let done = piece.is_empty();
            let whole = iogauge::report::log::whole_samples(&chunk);
            let text = iogauge::report::log::samples_text(&chunk[..whole]);
            if iogauge::out::stdout_bytes(text.as_bytes()).is_err() {
                return ExitCode::from(1);
            }
            chunk.drain(..whole);
            if done {
                break;
            }
        }
        reader = z.into_inner();
    }
}

pub(crate) fn fio(args: &[String], r: FioRequest) -> ExitCode {
    if let Some(path) = &r.inflate_log {
        return inflate_log(path);
    }
    if r.debug_parse {
        out!("{}", debug_parse(&r));
    }
    let (jobs, notes) = match sections(&r) {
        Ok(s) => s,
        Err(e) => return ExitCode::from(e.reported()),
    };
    if r.showcmd {
        out!("{}", showcmd(&jobs));
        return ExitCode::SUCCESS;
    }
    // fio's --parse-only checks the options of a job whose engine needs hardware, not the
    // hardware: so does iogauge's, and says nothing (as fio) of the jobs it set aside.
    let jobs = match r.parse_only {
        true => plan::absent::set_aside(&jobs).0,
        false => jobs,
    };
    let plan = match plan::resolve(&jobs, false) {
        Ok(p) => p,
        Err(e) => return usage_exit(&e.to_string()),
    };
    if let Err(why) = refusals(&r, &plan, &notes) {
        return ExitCode::from(why.reported());
    }
    if r.parse_only {
        // fio parses, says nothing, and exits.
        return ExitCode::SUCCESS;
    }
    if jobs.is_empty() {
        errln!("iogauge: no jobs to run");
        return ExitCode::from(2);
    }
    WARNINGS_ONLY_IN_REPORT.store(true, std::sync::atomic::Ordering::Relaxed);
    execute(
        args,
        jobs,
        false,
        r.tool.clone(),
        Reporting::Fio(&r.outputs),
        notes,
        None,
    )
}
