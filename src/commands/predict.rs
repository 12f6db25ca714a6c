//! `iogauge predict (TRACE | JOBFILE) [--directory DIR] [--repeat N]`: replays a trace on
//! DIR's storage N times in closed loop and predicts the program's run time there
//! (`studies::predict`). A fio job file is first recorded as `iogauge fio` runs it, in a
//! directory of its own under --record-directory (removed after).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use iogauge::cli::PredictRequest;
use iogauge::runner::replay::{self, Mode, Options, ReplayError, ReplayReport, Timeline};
use iogauge::studies::predict::{self as model, Replayed};
use iogauge::trace::capture::{self, CaptureError};
use iogauge::trace::recording::{MAGIC, Recording};
use iogauge::{errln, out, outln, rawpath};

use crate::session::outputs::default_stem;
use crate::session::{signals, usage_exit};

pub(crate) fn predict(req: PredictRequest) -> ExitCode {
    let s = signals();
    s.idle.store(false, Ordering::SeqCst);
    let shown = rawpath::display(&req.source).to_string();
    let (r, name) = match is_trace(&req.source) {
        Err(e) => return usage_exit(&format!("{shown}: {e}")),
        Ok(true) => match super::trace::read(&req.source) {
            Ok(r) => (r, shown),
            Err(m) => return usage_exit(&format!("{shown}: {m}")),
        },
        Ok(false) => match record_job(&req, Arc::clone(&s.interrupt)) {
            Ok(r) => (r, format!("{shown}, recorded as iogauge fio runs it")),
            Err(code) => return code,
        },
    };
    super::replay::remove_leftovers(&req.directory, "predict");
    let stem = default_stem(iogauge::units::unix_ns() / 1_000_000_000);
    let mut runs: Vec<(ReplayReport, Timeline)> = Vec::new();
    for k in 1..=req.repeat {
        if s.interrupt.load(Ordering::SeqCst) {
            break;
        }
        errln!(
            "iogauge: predict: replay {k} of {} in {}",
            req.repeat,
            rawpath::display(&req.directory)
        );
        let opts = Options {
            mode: Mode::Closed,
            speed: 1.0,
            directory: req.directory.clone(),
            name: format!("{stem}-{k}.replay"),
        };
        match replay::replay_timed(&r, &name, &opts, Arc::clone(&s.interrupt)) {
            Ok((rep, _)) if rep.not_removed.is_some() || rep.storage_failed.is_some() => {
                if let Some(why) = &rep.not_removed {
                    errln!(
                        "iogauge: predict: replay {k}: {}",
                        iogauge::report::trace::not_removed_text(&rep.directory, why)
                    );
                }
                let Some(f) = rep.storage_failed.as_ref() else {
                    return ExitCode::from(1);
                };
                errln!(
                    "iogauge: predict: replay {k}: {}; no prediction is made from storage that \
                     fails the program's calls",
                    iogauge::report::trace::storage_failed_text(f)
                );
                return ExitCode::from(1);
            }
            Ok((rep, _)) if rep.stopped => break,
            Ok(run) => runs.push(run),
            Err(ReplayError::Usage(m)) => return usage_exit(&m),
            // Stopped while its files were laid out (and removed): the replays before count.
            Err(ReplayError::Stopped) => break,
            Err(ReplayError::Failed(m)) => {
                errln!("iogauge: predict: {m}");
                return ExitCode::from(1);
            }
        }
    }
    let stopped = s.interrupt.load(Ordering::SeqCst);
    if runs.is_empty() {
        errln!("iogauge: predict: stopped before a replay completed: nothing to predict from");
        return ExitCode::from(128u8.saturating_add(s.which.load(Ordering::SeqCst) as u8));
    }
    let replayed: Vec<Replayed<'_>> = runs
        .iter()
        .map(|(report, timeline)| Replayed { report, timeline })
        .collect();
    let dir = rawpath::display(&req.directory).to_string();
    let to = model::Target {
        directory: &dir,
        cold: iogauge::stats::cold::measure(),
    };
    let p = model::predict(&r, &name, &to, &replayed);
    if req.json {
        outln!("{}", serde_json::to_string_pretty(&p).expect("plain data"));
    } else {
        out!("{}", iogauge::report::predict::predict_text(&p));
    }
    if stopped {
        errln!(
            "iogauge: predict: stopped after {} of {} replays: the prediction is theirs",
            runs.len(),
            req.repeat
        );
        return ExitCode::from(128u8.saturating_add(s.which.load(Ordering::SeqCst) as u8));
    }
    ExitCode::SUCCESS
}

/// Whether the file is a trace (else it is taken as a job file).
fn is_trace(p: &Path) -> std::io::Result<bool> {
    let f = std::fs::File::open(p)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut head = [0u8; 8];
    let n = f.take(8).read(&mut head)?;
    Ok(n == 8 && &head == MAGIC)
}

/// A directory iogauge made, removed with what is in it when dropped.
struct Made(PathBuf);

impl Drop for Made {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Records the job file as `iogauge fio` runs it, in a new directory under
/// --record-directory; Err: said, with the exit code.
fn record_job(
    req: &PredictRequest,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> Result<Recording, ExitCode> {
    let shown = rawpath::display(&req.source).to_string();
    let me = std::env::current_exe().map_err(|e| {
        errln!("iogauge: predict: cannot find iogauge itself: {e}");
        ExitCode::from(1)
    })?;
    // A job file fio's parser refuses is the user's to fix, before anything is made.
    let check = std::process::Command::new(&me)
        .args(["fio", "--parse-only"])
        .arg(&req.source)
        .output()
        .map_err(|e| usage_exit(&format!("{shown}: {e}")))?;
    if !check.status.success() {
        let why = String::from_utf8_lossy(&check.stderr);
        let why = why
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("iogauge: ");
        return Err(usage_exit(&format!(
            "{shown}: neither a trace (iogauge record's) nor a job file iogauge fio runs: {why}"
        )));
    }
    let dir = req.record_directory.join(format!(
        "{}.predict-record",
        default_stem(iogauge::units::unix_ns() / 1_000_000_000)
    ));
    std::fs::create_dir(&dir).map_err(|e| {
        errln!("iogauge: predict: cannot make {}: {e}", dir.display());
        ExitCode::from(1)
    })?;
    let made = Made(dir);
    let mut directory = std::ffi::OsString::from("--directory=");
    directory.push(made.0.as_os_str());
    let argv = [
        me.into_os_string(),
        "fio".into(),
        directory,
        req.source.clone().into_os_string(),
    ];
    // The job's own report is not this command's output.
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open(iogauge::platform::NULL_DEVICE)
        .map_err(|e| {
            errln!("iogauge: predict: {}: {e}", iogauge::platform::NULL_DEVICE);
            ExitCode::from(1)
        })?;
    errln!(
        "iogauge: predict: recording {shown} as iogauge fio runs it, in {}",
        made.0.display()
    );
    let captured = capture::record_with(&argv, req.method, stop, Some(&null));
    drop(made);
    let r = match captured {
        Ok(c) => c.recording,
        Err(CaptureError::Usage(m)) => return Err(usage_exit(&m)),
        Err(CaptureError::Failed(m)) => {
            errln!("iogauge: predict: {m}");
            return Err(ExitCode::from(1));
        }
    };
    let s = signals();
    if s.interrupt.load(Ordering::SeqCst) {
        errln!("iogauge: predict: stopped while the job was recorded");
        return Err(ExitCode::from(
            128u8.saturating_add(s.which.load(Ordering::SeqCst) as u8),
        ));
    }
    if r.footer.exit_code != Some(0) {
        errln!(
            "iogauge: predict: the job failed when recorded ({}): nothing to predict",
            match (r.footer.exit_code, r.footer.exit_signal) {
                (Some(c), _) => format!("exit code {c}"),
                (_, Some(sig)) => format!("signal {sig}"),
                _ => "no exit status".into(),
            }
        );
        return Err(ExitCode::from(1));
    }
    Ok(r)
}
