//! fio's exec engine: a job that runs a program beside the group's I/O jobs for its runtime,
//! its output in new files NAME.stdout and NAME.stderr, ended (SIGTERM, then SIGKILL after
//! grace_time) when the job ends; its cycles are not the group's I/O; a taken output file
//! and options that cannot apply are refused before anything runs.

use super::*;

/// A job file: `mon` runs `sh -c SCRIPT` (fio splits the arguments on spaces only, so the
/// script's own spaces are tabs), beside a 4 KiB random read job on `data`.
fn job_file(d: &Path, script: &str, extra: &str) -> PathBuf {
    let f = d.join("j.fio");
    let text = format!(
        "[global]\ntime_based\nruntime=1\n\n[mon]\nioengine=exec\nprogram=sh\n\
         arguments=-c {}\n{extra}\n[load]\nrw=randread\nsize=1m\nfilename={}\n",
        script.replace(' ', "\t"),
        d.join("data").display()
    );
    std::fs::write(&f, text).unwrap();
    f
}

#[test]
fn the_program_runs_for_the_jobs_time_and_is_ended_with_it() {
    let d = tmp();
    // Prints its name and runtime (%n, %r) and its pid, then would sleep a minute.
    // (fio ends a job file's line at `;` or `#`: the script chains with &&.)
    let f = job_file(
        d.path(),
        "echo %n %r $$ && echo err >&2 && exec sleep 60",
        "",
    );
    let t = std::time::Instant::now();
    let o = run_in(
        d.path(),
        &["job", f.to_str().unwrap(), "--output-format=json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        t.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        t.elapsed()
    );
    let out = std::fs::read_to_string(d.path().join("mon.stdout")).unwrap();
    let words: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(&words[..2], ["mon", "1"], "{out}");
    let pid = words[2];
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the program (pid {pid}) ended with the job"
    );
    assert_eq!(
        std::fs::read_to_string(d.path().join("mon.stderr")).unwrap(),
        "err\n"
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let g = &r["groups"][0];
    let jobs = g["jobs"].as_array().unwrap();
    let mon = &jobs[0];
    assert!(
        mon["data"]
            .as_str()
            .unwrap()
            .contains("ioengine=exec does no I/O; it ran sh -c"),
        "{}",
        mon["data"]
    );
    // Its cycles (50 ms each) are its own row's, not the group's I/O.
    let ios = |j: &Value| j["read"]["ios"].as_u64().unwrap();
    assert!((10..=30).contains(&ios(mon)), "{}", ios(mon));
    assert_eq!(ios(&g["total"]), ios(&jobs[1]));
    // The I/O job's data file is removed; the program's output stays (it is the run's).
    assert_eq!(
        entries(d.path())
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect::<Vec<_>>(),
        ["j.fio", "mon.stderr", "mon.stdout"]
    );
}

#[test]
fn a_program_ignoring_sigterm_gets_its_grace_time_then_sigkill() {
    let d = tmp();
    // The shell ignores SIGTERM, and so does the sleep it starts.
    let f = job_file(
        d.path(),
        "trap '' TERM && echo $$ && sleep 60 && echo done",
        "grace_time=2\n",
    );
    let t = std::time::Instant::now();
    let o = run_in(d.path(), &["job", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let took = t.elapsed();
    // The group's total is the I/O job's, and the text says so.
    assert!(
        stdout(&o).contains("the group's I/O job (1 cpuio/exec job does no I/O):"),
        "{}",
        stdout(&o)
    );
    assert!(
        took >= std::time::Duration::from_secs(3) && took < std::time::Duration::from_secs(20),
        "runtime and grace, not the program's minute: {took:?}"
    );
    let pid = std::fs::read_to_string(d.path().join("mon.stdout")).unwrap();
    let pid = pid.trim();
    assert!(!Path::new(&format!("/proc/{pid}")).exists());
    // Its sleep, in its process group, was killed with it (dead: at most a zombie that init
    // has yet to reap).
    let in_group: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("stat")).ok())
        .filter(|s| {
            let after: Vec<&str> = s
                .rsplit_once(") ")
                .map_or("", |(_, a)| a)
                .split(' ')
                .collect();
            after.get(2) == Some(&pid) && after.first() != Some(&"Z")
        })
        .collect();
    assert!(in_group.is_empty(), "left in its group: {in_group:?}");
}

#[test]
fn a_taken_output_file_is_refused_before_anything_runs() {
    let d = tmp();
    let f = job_file(d.path(), "echo hi", "");
    std::fs::write(d.path().join("mon.stdout"), "mine").unwrap();
    let o = run_in(d.path(), &["job", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("std_redirect") && e.contains("mon.stdout: exists"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(d.path().join("mon.stdout")).unwrap(),
        "mine"
    );
    assert!(!d.path().join("mon.stderr").exists());
    assert!(!d.path().join("data").exists(), "nothing ran");
    // std_redirect=0: its output is iogauge's own, and the file stays untouched.
    let f = job_file(d.path(), "echo from-the-program", "std_redirect=0\n");
    let o = run_in(d.path(), &["job", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("from-the-program"));
    assert_eq!(
        std::fs::read_to_string(d.path().join("mon.stdout")).unwrap(),
        "mine"
    );
}

#[test]
fn exec_options_are_refused_where_they_cannot_apply() {
    let d = tmp();
    for (args, want) in [
        (
            &["--ioengine=exec", "--time_based", "--runtime=1"][..],
            "ioengine=exec needs program",
        ),
        (
            &["--ioengine=exec", "--program=true"][..],
            "give time_based and runtime",
        ),
        (
            &["--ioengine=psync", "--program=true", "--size=1m"][..],
            "applies only to ioengine=exec",
        ),
        (
            &[
                "--ioengine=exec",
                "--program=true",
                "--time_based",
                "--runtime=1",
                "--numjobs=2",
            ][..],
            "one program per job",
        ),
    ] {
        let mut a = vec!["run"];
        a.extend_from_slice(args);
        let o = run_in(d.path(), &a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert!(entries(d.path()).is_empty());
    }
    // A program that is not there: the job fails, saying so, and leaves nothing.
    let o = run_in(
        d.path(),
        &[
            "run",
            "--name=m",
            "--ioengine=exec",
            "--program=/nonexistent/monitor",
            "--time_based",
            "--runtime=1",
        ],
    );
    assert_ne!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("cannot run /nonexistent/monitor"),
        "{}",
        stderr(&o)
    );
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

/// fio's exec_prerun and exec_postrun: a shell command before the job's I/O (its files laid
/// out by then) and after its group (its file still there), their output in NAME.prerun.txt
/// and NAME.postrun.txt; a failing prerun stops the job before its I/O, a failing postrun is
/// a warning; an output file that exists is refused before anything runs.
#[test]
fn exec_prerun_and_postrun_run_around_the_job() {
    let d = tmp();
    let p = d.path();
    let write = |pre: &str, post: &str| {
        let text = format!(
            "[j]\nrw=write\nsize=1m\nfilename=data\nexec_prerun={pre}\nexec_postrun={post}\n"
        );
        std::fs::write(p.join("j.fio"), text).unwrap();
        run_in(p, &["job", "j.fio", "--output-format=json"])
    };
    let o = write("test -f data && echo laid-out", "ls data && echo after");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let read = |f: &str| std::fs::read_to_string(p.join(f)).unwrap();
    assert_eq!(read("j.prerun.txt"), "laid-out\n");
    assert_eq!(read("j.postrun.txt"), "data\nafter\n");
    assert!(
        !p.join("data").exists(),
        "the data file is removed at the end"
    );
    // An output file that exists: refused, nothing run or made.
    let o = write("echo again", "true");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("exec_prerun") && stderr(&o).contains("j.prerun.txt: exists"));
    assert_eq!(read("j.prerun.txt"), "laid-out\n", "untouched");
    for f in ["j.prerun.txt", "j.postrun.txt"] {
        std::fs::remove_file(p.join(f)).unwrap();
    }
    // A failing prerun: the job's I/O does not start; the run says why and fails.
    let o = write("echo no-go && exit 3", "true");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        r["errors"]
            .to_string()
            .contains("exec_prerun `echo no-go && exit 3` exited with status 3"),
        "{}",
        r["errors"]
    );
    assert_eq!(read("j.prerun.txt"), "no-go\n");
    assert!(!p.join("data").exists());
    std::fs::remove_file(p.join("j.prerun.txt")).unwrap();
    // A failing postrun: the measurement stands, with a warning.
    let o = write("true", "false");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        r["warnings"]
            .to_string()
            .contains("exec_postrun `false` exited with status 1")
    );
    assert_eq!(job(&r)["write"]["bytes"], 1 << 20);
}
