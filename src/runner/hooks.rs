//! fio's `exec_prerun` and `exec_postrun`: a job's shell command (`sh -c`, as fio's system(3))
//! before its I/O starts — after its files are laid out and opened, as fio's — and after its
//! group ends, with stdout and stderr in `NAME.prerun.txt` / `NAME.postrun.txt` in the working
//! directory, files created new (the check refuses one that is there before anything runs).
//! A prerun that fails stops the run before the group starts, as fio's job does not run; a
//! postrun that fails is a warning.

use std::io;
use std::process::{Command, Stdio};

use crate::plan::JobSpec;

/// Runs the job's `exec_prerun` (`post`: `exec_postrun`), if it has one; an error names the
/// command, how it ended and where its output is.
pub(super) fn run(job: &JobSpec, post: bool) -> io::Result<()> {
    let (cmd, mode) = match post {
        false => (&job.exec_hooks[0], "prerun"),
        true => (&job.exec_hooks[1], "postrun"),
    };
    let Some(cmd) = cmd else {
        return Ok(());
    };
    let out = job.hook_output(mode);
    let file = crate::engine::exec::create_new(&out)?;
    let status = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file)
        .status()?;
    if status.success() {
        return Ok(());
    }
    let how = match status.code() {
        Some(c) => format!("exited with status {c}"),
        None => "was killed by a signal".to_string(),
    };
    Err(io::Error::other(format!(
        "job {}: exec_{mode} `{cmd}` {how} (its output is in {})",
        job.name,
        out.display()
    )))
}
