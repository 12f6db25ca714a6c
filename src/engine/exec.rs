//! fio's `exec` engine: no I/O; the job runs a program (a monitor such as iostat or
//! turbostat, a load of its own) for the job's time, beside the group's other jobs. The first
//! cycle starts it, each cycle after sleeps 50 ms (fio's), and when the job ends the program
//! is sent SIGTERM, given `grace_time` to exit, then SIGKILL, and reaped: it never outlives
//! the run. Its output goes to `NAME.stdout` and `NAME.stderr` (`std_redirect`, fio's
//! default), files it creates new, or it shares iogauge's own.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{Engine, FlushCall, IoUnit, Queued};

/// What each cycle is, for the report's engine line.
pub const CALLS: &str = "no I/O: runs the job's program, checked on every 50 ms; at the job's \
                        end SIGTERM, then SIGKILL after grace_time";

/// The program a job runs: its arguments split on spaces with `%r` (the runtime in seconds)
/// and `%n` (the job's name) already put in, how long it has after SIGTERM, and where its
/// output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub program: String,
    pub args: Vec<String>,
    pub grace: Duration,
    /// Its stdout and stderr files (`std_redirect`), or None: iogauge's own.
    pub redirect: Option<(PathBuf, PathBuf)>,
}

impl Program {
    /// Its output files are free to create: an error naming one that is there (iogauge
    /// writes over no file it did not create).
    pub fn check_outputs(&self) -> io::Result<()> {
        let Some((out, err)) = &self.redirect else {
            return Ok(());
        };
        outputs_free(&[("std_redirect", out.clone()), ("std_redirect", err.clone())])
            .map_err(|(_, e)| e)
    }

    /// The report's data line of a job that ran it.
    pub fn data_line(&self) -> String {
        let output = match &self.redirect {
            Some((out, err)) => format!("its output in {} and {}", out.display(), err.display()),
            None => "its output on iogauge's own".to_string(),
        };
        format!(
            "none: ioengine=exec does no I/O; it ran {} {} ({output}); each I/O is one 50 ms \
             check on it",
            self.program,
            self.args.join(" ")
        )
    }
}

/// fio's pause between the checks on the program.
const CYCLE: Duration = Duration::from_millis(50);

pub struct Exec {
    program: Program,
    child: Option<Child>,
}

impl Exec {
    pub fn new(program: Program) -> Exec {
        Exec {
            program,
            child: None,
        }
    }

    fn start(&mut self) -> io::Result<()> {
        let p = &self.program;
        p.check_outputs()?;
        let mut c = Command::new(&p.program);
        // A process group of its own: its end reaches what it started too.
        c.args(&p.args).stdin(Stdio::null());
        crate::platform::process::own_group(&mut c);
        if let Some((out, err)) = &p.redirect {
            c.stdout(create_new(out)?);
            match create_new(err) {
                Ok(f) => c.stderr(f),
                Err(e) => {
                    let _ = std::fs::remove_file(out);
                    return Err(e);
                }
            };
        }
        let child = c.spawn().map_err(|e| {
            // Nothing ran: the output files it made go.
            if let Some((out, err)) = &p.redirect {
                let _ = std::fs::remove_file(out);
                let _ = std::fs::remove_file(err);
            }
            io::Error::new(e.kind(), format!("cannot run {}: {e}", p.program))
        })?;
        self.child = Some(child);
        Ok(())
    }
}

/// The output files a job would write (`(option, path)`: exec's std_redirect, exec_prerun's,
/// exec_postrun's) are free to create; else the option and why (iogauge writes over no file
/// it did not create).
pub fn outputs_free(outputs: &[(&'static str, PathBuf)]) -> Result<(), (&'static str, io::Error)> {
    for (option, p) in outputs {
        if p.symlink_metadata().is_ok() {
            let why = format!(
                "{}: exists: iogauge writes a command's output only to files it creates \
                                    (remove it{})",
                p.display(),
                if *option == "std_redirect" {
                    ", or set std_redirect=0"
                } else {
                    ""
                }
            );
            return Err((option, io::Error::new(io::ErrorKind::AlreadyExists, why)));
        }
    }
    Ok(())
}

/// A new file for a command's output (never one that is there).
pub fn create_new(p: &Path) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(p)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))
}

impl Engine for Exec {
    fn queue(&mut self, _: u32, u: &mut IoUnit) -> Queued {
        if self.child.is_none() {
            if let Err(e) = self.start() {
                return Queued::Done(Err(e));
            }
        } else {
            std::thread::sleep(CYCLE);
        }
        Queued::Done(Ok(u.len() - u.done))
    }

    fn flush(&mut self, _: usize, _: FlushCall) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Exec {
    /// The program's end: on Linux SIGTERM to its process group, `grace` for the program to
    /// exit, then SIGKILL to what is left of the group; the program reaped either way.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            crate::platform::process::end_group(&mut child, self.program.grace);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Dir;
    use std::time::Instant;

    fn cycle(e: &mut Exec) {
        let mut u = IoUnit::new(4096, 1);
        (u.dir, u.file, u.offset, u.done) = (Dir::Read, 0, 0, 0);
        u.set_len(4096);
        match e.queue(0, &mut u) {
            Queued::Done(Ok(4096)) => {}
            other => panic!("{other:?}"),
        }
    }

    /// Whether a POSIX shell runs here (these tests drive one, and read /proc): the Windows
    /// build's tests skip without.
    fn no_shell() -> bool {
        let ran = std::process::Command::new("sh")
            .args(["-c", "exit 0"])
            .status();
        let none = ran.is_err() || !std::path::Path::new("/proc/self").exists();
        if none {
            eprintln!("skipped: no POSIX shell and /proc here");
        }
        none
    }

    fn alive(pid: u32) -> bool {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ")
    }

    #[test]
    fn the_program_runs_with_its_output_in_new_files_and_ends_with_the_job() {
        if no_shell() {
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let (out, err) = (d.path().join("j.stdout"), d.path().join("j.stderr"));
        let mut e = Exec::new(Program {
            program: "sh".into(),
            args: vec!["-c".into(), "echo out; echo err >&2; exec sleep 30".into()],
            grace: Duration::from_millis(200),
            redirect: Some((out.clone(), err.clone())),
        });
        cycle(&mut e);
        let pid = e.child.as_ref().unwrap().id();
        cycle(&mut e);
        assert!(alive(pid));
        let t = Instant::now();
        drop(e);
        // sleep dies of SIGTERM at once, well within its grace.
        assert!(
            t.elapsed() < Duration::from_millis(200),
            "{:?}",
            t.elapsed()
        );
        assert!(!alive(pid), "the program ended with the job");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "out\n");
        assert_eq!(std::fs::read_to_string(&err).unwrap(), "err\n");
    }

    #[test]
    fn a_program_ignoring_sigterm_is_killed_after_its_grace() {
        if no_shell() {
            return;
        }
        let mut e = Exec::new(Program {
            program: "sh".into(),
            args: vec![
                "-c".into(),
                "trap '' TERM; while :; do sleep 0.01; done".into(),
            ],
            grace: Duration::from_millis(300),
            redirect: None,
        });
        cycle(&mut e);
        std::thread::sleep(Duration::from_millis(100));
        let pid = e.child.as_ref().unwrap().id();
        let t = Instant::now();
        drop(e);
        let took = t.elapsed();
        assert!(took >= Duration::from_millis(300), "{took:?}");
        assert!(!alive(pid));
    }

    #[test]
    fn a_taken_output_file_or_a_missing_program_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("j.stdout");
        std::fs::write(&out, "mine").unwrap();
        let p = Program {
            program: "true".into(),
            args: Vec::new(),
            grace: Duration::ZERO,
            redirect: Some((out.clone(), d.path().join("j.stderr"))),
        };
        let e = p.check_outputs().unwrap_err();
        assert!(e.to_string().contains("j.stdout: exists"), "{e}");
        let mut u = IoUnit::new(4096, 1);
        u.set_len(4096);
        match Exec::new(p).queue(0, &mut u) {
            Queued::Done(Err(e)) => assert_eq!(e.kind(), io::ErrorKind::AlreadyExists),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "mine", "untouched");
        let mut e = Exec::new(Program {
            program: "/nonexistent/program".into(),
            args: Vec::new(),
            grace: Duration::ZERO,
            redirect: None,
        });
        match e.queue(0, &mut u) {
            Queued::Done(Err(e)) => {
                assert!(
                    e.to_string().contains("cannot run /nonexistent/program"),
                    "{e}"
                )
            }
            other => panic!("{other:?}"),
        }
    }
}
