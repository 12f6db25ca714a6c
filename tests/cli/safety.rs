//! The safety promise, tried as a hostile user would: files swapped for links or other files
//! while a run goes on, marks that no longer match their file, report files over foreign ones,
//! interrupts during lay-out, and a killed run's leftovers. Each case names what it guards.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::{bin, counts, iogauge, job, ok_in, run_in, run_json, stderr, tmp};

/// Whether the file system under `dir` keeps user xattrs (iogauge's mark); prints SKIP if not.
pub(super) fn has_user_xattrs(dir: &Path) -> bool {
    let f = dir.join(".xattr-probe");
    std::fs::write(&f, b"").unwrap();
    let ok = rustix::fs::setxattr(&f, "user.probe", b"1", rustix::fs::XattrFlags::empty()).is_ok();
    std::fs::remove_file(&f).unwrap();
    if !ok {
        skip!("{} has no user xattrs (iogauge's mark)", dir.display());
    }
    ok
}

/// A job file: group 1 reads `slow` for `secs` seconds, then group 2 writes `k`.
fn two_groups(dir: &Path, secs: u32) -> std::path::PathBuf {
    let job = dir.join("two.fio");
    std::fs::write(
        &job,
        format!(
            "[slow]\nfilename={d}/slow\nrw=read\nsize=1m\ntime_based\nruntime={secs}\n\n\
             [k]\nstonewall\nfilename={d}/k\nrw=write\nbs=4k\nsize=64k\n",
            d = dir.display()
        ),
    )
    .unwrap();
    job
}

/// Writes and keeps `k` as `two_groups` writes it.
const KEEP_K: [&str; 6] = [
    "run",
    "--filename=k",
    "--rw=write",
    "--bs=4k",
    "--size=64k",
    "--keep",
];

fn spawn_in(dir: &Path, args: &[&str]) -> Child {
    bin()
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Keeps `k` from an earlier run, writes a foreign file `foreign`, then runs `two_groups`
/// and calls `swap` while group 1 runs, before group 2 writes `k`.
fn swap_k_mid_run(p: &Path, swap: impl FnOnce()) -> std::process::Output {
    let job = two_groups(p, 2);
    // An earlier run keeps k: iogauge's to write again.
    ok_in(p, &KEEP_K);
    std::fs::write(p.join("foreign"), b"someone else's data").unwrap();
    let child = spawn_in(p, &["job", job.to_str().unwrap()]);
    wait_for("group 1 to start", || p.join("slow").exists());
    std::thread::sleep(Duration::from_millis(300));
    swap();
    child.wait_with_output().unwrap()
}

/// Starts a read job whose 4 GiB file must be laid out first (many seconds on this disk) and
/// returns once 64 MiB of it are written.
fn lay_out_big(p: &Path) -> (Child, std::path::PathBuf) {
    let child = spawn_in(
        p,
        &[
            "run",
            "--filename=big",
            "--rw=read",
            "--size=4g",
            "--runtime=1",
        ],
    );
    let f = p.join("big");
    wait_for("lay-out to begin", || {
        std::fs::metadata(&f).is_ok_and(|m| m.len() >= 64 << 20)
    });
    (child, f)
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_kept_file_swapped_for_a_link_mid_run_is_not_written_through() {
    let d = tmp();
    let p = d.path();
    if !has_user_xattrs(p) {
        return;
    }
    let foreign = p.join("foreign");
    let o = swap_k_mid_run(p, || {
        std::fs::remove_file(p.join("k")).unwrap();
        std::os::unix::fs::symlink(&foreign, p.join("k")).unwrap();
    });
    assert_eq!(
        std::fs::read(&foreign).unwrap(),
        b"someone else's data",
        "written through the link"
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(p.join("k")).unwrap().is_symlink(),
        "the link is not iogauge's to remove"
    );
}

#[test]
fn a_kept_file_replaced_by_another_mid_run_is_not_written() {
    let d = tmp();
    let p = d.path();
    if !has_user_xattrs(p) {
        return;
    }
    // rename(2) over k: the path now names another inode, marked or not.
    let o = swap_k_mid_run(p, || {
        std::fs::rename(p.join("foreign"), p.join("k")).unwrap()
    });
    assert_eq!(std::fs::read(p.join("k")).unwrap(), b"someone else's data");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no longer the file iogauge checked"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_link_planted_where_a_new_file_goes_loses_the_create_race_with_exit_2() {
    let d = tmp();
    let p = d.path();
    let job = two_groups(p, 2);
    let foreign = p.join("foreign");
    std::fs::write(&foreign, b"someone else's data").unwrap();
    let child = spawn_in(p, &["job", job.to_str().unwrap()]);
    wait_for("group 1 to start", || p.join("slow").exists());
    std::os::unix::fs::symlink(&foreign, p.join("k")).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(std::fs::read(&foreign).unwrap(), b"someone else's data");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("appeared after the check"),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::symlink_metadata(p.join("k")).is_ok());
    assert!(!p.join("slow").exists(), "what the run created is removed");
}

#[test]
fn cleanup_leaves_a_file_that_replaced_ours() {
    let d = tmp();
    let p = d.path();
    let f = p.join("f");
    let child = spawn_in(
        p,
        &[
            "run",
            "--filename=f",
            "--rw=write",
            "--size=1m",
            "--time_based",
            "--runtime=2",
        ],
    );
    wait_for("f to be created", || f.exists());
    std::fs::remove_file(&f).unwrap();
    std::fs::write(&f, b"a new file of someone else's").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(std::fs::read(&f).unwrap(), b"a new file of someone else's");
    // Replaced after the job opened it: the run ends and leaves the new file; replaced
    // between its creation and the job's open (a loaded machine): the open refuses it.
    match o.status.code() {
        Some(0) => assert!(stderr(&o).contains("left in place"), "{}", stderr(&o)),
        Some(1) => assert!(
            stderr(&o).contains("refusing to touch what is there now"),
            "{}",
            stderr(&o)
        ),
        other => panic!("exit {other:?}: {}", stderr(&o)),
    }
}

#[test]
fn a_kept_file_changed_or_copied_since_is_no_longer_iogauges() {
    let d = tmp();
    let p = d.path();
    if !has_user_xattrs(p) {
        return;
    }
    let write = &KEEP_K[..5];
    ok_in(p, &KEEP_K);
    // Unchanged: iogauge may write it again, and it stays iogauge's after.
    ok_in(p, &KEEP_K);
    ok_in(p, &KEEP_K);

    // A copy with every attribute preserved is another inode.
    let cp = std::process::Command::new("cp")
        .args(["--preserve=all", "k", "copy"])
        .current_dir(p)
        .status()
        .unwrap();
    assert!(cp.success());
    let o = run_in(
        p,
        &[
            "run",
            "--filename=copy",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a copy or a replacement"),
        "{}",
        stderr(&o)
    );

    // `cat data > k`: the same inode, new contents.
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(p.join("k"), vec![7u8; 65536]).unwrap();
    let o = run_in(p, write);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("changed since iogauge wrote it"),
        "{}",
        stderr(&o)
    );
    // A read job with unlink=1 reads it but does not remove it.
    let o = run_in(
        p,
        &["run", "--filename=k", "--rw=read", "--bs=4k", "--unlink=1"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning: k: not removed (unlink)"),
        "a warning, as the exit code says: {}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("error:"), "{}", stderr(&o));
    assert_eq!(std::fs::read(p.join("k")).unwrap(), vec![7u8; 65536]);
    assert_eq!(std::fs::read(p.join("copy")).unwrap().len(), 65536);

    // An unchanged kept file is iogauge's to unlink.
    ok_in(
        p,
        &["run", "--filename=u", "--rw=write", "--size=64k", "--keep"],
    );
    ok_in(p, &["run", "--filename=u", "--rw=read", "--unlink=1"]);
    assert!(!p.join("u").exists());
}

#[test]
fn report_outputs_never_clobber_or_follow_links() {
    let d = tmp();
    let p = d.path();
    if !has_user_xattrs(p) {
        return;
    }
    let run = ["run", "--ioengine=null", "--size=64k"];
    fn with<'a>(run: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        [run, extra].concat()
    }
    std::fs::write(p.join("precious.json"), "mine").unwrap();
    std::fs::write(p.join("r.html"), "mine").unwrap();
    std::os::unix::fs::symlink(p.join("precious.json"), p.join("link.json")).unwrap();
    let refused: &[(&[&str], &str)] = &[
        (
            &["--output-format=json", "--output=precious.json"],
            "--overwrite-output",
        ),
        (
            &["--output-format=text,json,html", "--output=r"],
            "r.html: exists",
        ),
        (
            &[
                "--output-format=json",
                "--output=link.json",
                "--overwrite-output",
            ],
            "symbolic link",
        ),
        (&["--output-format=json", "--output=/"], "is a directory"),
        (
            &["--output-format=json", "--output=no/such/dir/r.json"],
            "does not exist",
        ),
    ];
    for (extra, says) in refused {
        let t0 = Instant::now();
        let o = run_in(p, &with(&run, extra));
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(says) && stderr(&o).lines().count() == 1,
            "{extra:?}: {}",
            stderr(&o)
        );
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "refused before the run"
        );
    }
    assert!(!p.join("r.json").exists(), "nothing written");
    assert_eq!(
        std::fs::read_to_string(p.join("precious.json")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_to_string(p.join("r.html")).unwrap(), "mine");

    // Its own files are replaced, a foreign one only when asked.
    ok_in(
        p,
        &with(&run, &["--output-format=json", "--output=own.json"]),
    );
    ok_in(
        p,
        &with(&run, &["--output-format=json", "--output=own.json"]),
    );
    ok_in(
        p,
        &with(
            &run,
            &[
                "--output-format=json",
                "--output=precious.json",
                "--overwrite-output",
            ],
        ),
    );
    assert!(
        std::fs::read_to_string(p.join("precious.json"))
            .unwrap()
            .starts_with('{')
    );

    // `iogauge report`: the same rule.
    let o = run_in(p, &["report", "own.json", "-o", "r.html"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(p.join("r.html")).unwrap(), "mine");
    let o = run_in(
        p,
        &[
            "report",
            "own.json",
            "-o",
            "link.json",
            "--overwrite-output",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    ok_in(p, &["report", "own.json", "-o", "new.html"]);
    ok_in(p, &["report", "own.json", "-o", "new.html"]);
    ok_in(
        p,
        &["report", "own.json", "-o", "r.html", "--overwrite-output"],
    );
    assert!(
        std::fs::read_to_string(p.join("r.html"))
            .unwrap()
            .contains("<html")
    );
}

#[test]
fn ctrl_c_during_lay_out_stops_within_a_second_and_removes_the_partial_file() {
    let d = tmp();
    let p = d.path();
    let (mut child, f) = lay_out_big(p);
    let sent = Instant::now();
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let took = sent.elapsed();
    if status.code() == Some(0) {
        skip!("the lay-out finished before the interrupt arrived");
        return;
    }
    assert_eq!(status.code(), Some(130));
    assert!(took < Duration::from_millis(1500), "stopped in {took:?}");
    assert!(!f.exists(), "the partial file is removed");
}

#[test]
fn a_killed_runs_leftover_is_recognised_and_removed_by_the_next_run() {
    let d = tmp();
    let p = d.path();
    if !has_user_xattrs(p) {
        return;
    }
    let f = p.join("left");
    let mut child = spawn_in(
        p,
        &[
            "run",
            "--filename=left",
            "--rw=write",
            "--bs=4k",
            "--size=1m",
            "--time_based",
            "--runtime=30",
        ],
    );
    wait_for("the file to be written", || {
        std::fs::metadata(&f).is_ok_and(|m| m.len() >= 4096)
    });
    // While it runs, the file is another run's: a reader may share it, nobody removes it.
    let o = run_in(p, &["run", "--filename=left", "--rw=read", "--size=4k"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(f.exists());
    let o = run_in(p, &["run", "--filename=left", "--rw=write", "--size=4k"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("another process is writing"),
        "{}",
        stderr(&o)
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(f.exists(), "SIGKILL leaves the file");
    let o = run_in(p, &["run", "--filename=left", "--rw=read", "--size=4k"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("left by an iogauge run that did not finish"),
        "{}",
        stderr(&o)
    );
    assert!(!f.exists(), "the leftover is removed at the end");
}

#[test]
fn paths_that_are_not_utf8_name_exactly_their_bytes() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let d = tmp();
    let p = d.path();
    let named = |bytes: &[u8]| p.join(OsStr::from_bytes(bytes));
    // From the command line, into a JSON report that stays valid JSON.
    let o = bin()
        .current_dir(p)
        .args([
            "run",
            "--rw=write",
            "--size=64k",
            "--keep",
            "--output-format=json",
        ])
        .arg(OsStr::from_bytes(b"--filename=t\xff"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(named(b"t\xff")).unwrap().len(), 65536);
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        r["targets"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("t\\xff"),
        "{}",
        r["targets"][0]["path"]
    );
    // A personality's file, and a job file in Latin-1.
    let o = bin()
        .current_dir(p)
        .arg("sasiotest")
        .arg(OsStr::from_bytes(b"s\xe9"))
        .args(["-w", "-pagesize", "4k", "-filesize", "64k"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(named(b"s\xe9").exists());
    // sqlio reads it, named relative to a -d directory.
    let o = bin()
        .current_dir(p)
        .args(["sqlio", "-kR", "-s1", "-b4"])
        .arg(format!("-d{}", p.display()))
        .arg(OsStr::from_bytes(b"s\xe9"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::write(
        p.join("latin1.fio"),
        b"[j]\nrw=write\nsize=64k\nfilename=j\xe9\n",
    )
    .unwrap();
    let o = run_in(p, &["job", "latin1.fio", "--keep"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(named(b"j\xe9").exists());
    // A ':' in a personality's path is part of the name, not a list of files.
    let o = run_in(
        p,
        &[
            "sasiotest",
            "c:d",
            "-w",
            "-pagesize",
            "4k",
            "-filesize",
            "64k",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(p.join("c:d").exists() && !p.join("c").exists() && !p.join("d").exists());
    // Never another file made of a lossy name.
    for e in super::entries(p) {
        let name = e.file_name().unwrap().as_bytes().to_vec();
        assert!(
            !String::from_utf8_lossy(&name).contains('\u{fffd}')
                || std::str::from_utf8(&name).is_err(),
            "{e:?}"
        );
    }
    // Messages show the bytes as \xNN; a bare byte is an unknown command, not a panic.
    let o = bin()
        .current_dir(p)
        .arg(OsStr::from_bytes(b"\xff"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("\\xff") && stderr(&o).lines().count() == 1,
        "{}",
        stderr(&o)
    );
    // The character iogauge carries bytes in is refused, not mistaken for a byte.
    let o = run_in(p, &["run", "--filename=x\u{10FFE9}", "--size=64k"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("reserved"), "{}", stderr(&o));
}

#[test]
fn job_files_that_are_not_text_files_are_refused_at_once() {
    let d = tmp();
    let p = d.path();
    let fifo = p.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let big = p.join("big.fio");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(iogauge::jobfile::MAX_FILE_BYTES + 1)
        .unwrap();
    std::fs::write(p.join("inc-zero.fio"), "[global]\ninclude /dev/zero\n").unwrap();
    std::fs::write(p.join("inc-fifo.fio"), "[global]\ninclude fifo\n").unwrap();
    let mut cases = vec![
        (vec!["job", "/dev/zero"], "not a regular file"),
        (
            vec!["job", "inc-zero.fio"],
            "inc-zero.fio:2: include /dev/zero: not a regular",
        ),
        (vec!["job", "big.fio"], "larger than 16 MiB"),
    ];
    if made {
        cases.push((vec!["job", "inc-fifo.fio"], "include"));
        cases.push((vec!["job", "fifo"], "not a regular file"));
    } else {
        skip!("the FIFO cases (mkfifo failed)");
    }
    for (args, says) in cases {
        let t0 = Instant::now();
        let o = run_in(p, &args);
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "{args:?} took {:?}",
            t0.elapsed()
        );
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    assert!(
        !p.join("t\u{fffd}").exists(),
        "no other file made of a lossy name"
    );
}

#[test]
fn job_file_text_quirks_and_hostile_echoes() {
    let d = tmp();
    let p = d.path();
    let job = |name: &str, text: &[u8]| {
        std::fs::write(p.join(name), text).unwrap();
        run_in(p, &["job", name, "--parse-only"])
    };
    // A byte-order mark, CR LF and CR-only line ends, fio's power operator.
    for (name, text) in [
        (
            "bom.fio",
            &b"\xef\xbb\xbf[j]\r\nrw=read\r\nsize=(2^20)\r\nfilename=x\r\n"[..],
        ),
        ("cr.fio", &b"[j]\rrw=read\rsize=1m\rfilename=x\r"[..]),
    ] {
        let o = job(name, text);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        assert!(
            super::stdout(&o).contains("j:"),
            "{name}: {}",
            super::stdout(&o)
        );
    }
    // Control bytes from the file are shown escaped, never sent to the terminal.
    let o = job("esc.fio", b"[j]\n\x1b[2J\x1b]0;owned\x07=1\n");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        !o.stderr.iter().any(|b| *b == 0x1b || *b == 0x07),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("\\u{1b}"), "{}", stderr(&o));
    // A 1 MB key is cut in the message.
    let mut big = b"[j]\n".to_vec();
    big.extend(std::iter::repeat_n(b'k', 1 << 20));
    big.extend(b"=1\n");
    let o = job("key.fio", &big);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stderr.len() < 1000, "{} bytes echoed", o.stderr.len());
    assert!(stderr(&o).contains("more bytes]"), "{}", stderr(&o));
}

#[test]
fn a_mounted_device_is_never_written_and_sqlio_sizes_a_device() {
    let Some(fs) = super::LoopFs::new(16) else {
        return;
    };
    let dev = fs.dev.0.clone();
    let fname = format!("--filename={dev}");
    let o = super::iogauge(&[
        "run",
        &fname,
        "--rw=write",
        "--size=1m",
        "--allow-overwrite",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("in use"), "{}", stderr(&o));
    // sqlio reads a device at its real size (not 0 bytes).
    let o = super::iogauge(&["sqlio", "-kR", "-s1", "-b64", "--json", &dev]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(super::counts(super::job(&r)).1 > 0, "read something");
    assert_eq!(r["targets"][0]["kind"], "block device");
}

#[test]
fn permission_problems_found_before_io_are_usage_errors() {
    use std::os::unix::fs::PermissionsExt;
    let root = rustix::process::geteuid().is_root();
    let setpriv = std::process::Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !root || !setpriv {
        skip!("needs root and setpriv to run iogauge as nobody");
        return;
    }
    let d = tmp();
    let p = d.path();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(p.join("secret"), b"root only").unwrap();
    std::fs::set_permissions(p.join("secret"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let as_nobody = |args: &[&str]| {
        std::process::Command::new("setpriv")
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(assert_cmd::cargo::cargo_bin!("iogauge"))
            .args(args)
            .current_dir(p)
            .output()
            .unwrap()
    };
    let read = format!("--filename={}", p.join("secret").display());
    let create = format!("--filename={}", p.join("new").display());
    for (args, says) in [
        (vec!["run", read.as_str(), "--rw=read"], "Permission denied"),
        (
            vec!["run", create.as_str(), "--rw=write", "--size=64k"],
            "cannot create files",
        ),
    ] {
        let o = as_nobody(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(super::entries(p), vec![p.join("secret")], "nothing created");
}

#[test]
fn a_file_with_an_old_mark_is_written_only_when_allowed_and_then_marked_anew() {
    let d = tmp();
    let p = d.path();
    if !has_user_xattrs(p) {
        return;
    }
    let f = p.join("old");
    std::fs::write(&f, vec![1u8; 65536]).unwrap();
    rustix::fs::setxattr(
        &f,
        "user.iogauge.created",
        b"1",
        rustix::fs::XattrFlags::empty(),
    )
    .unwrap();
    let write = [
        "run",
        "--filename=old",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
    ];
    let o = run_in(p, &write);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("marks it anew"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&f).unwrap(), vec![1u8; 65536], "untouched");
    ok_in(p, &[&write[..], &["--allow-overwrite"]].concat());
    ok_in(p, &write);
}

#[test]
fn two_ctrl_c_in_a_row_leave_nothing_behind() {
    // Whichever honours them (the run's own clean-up after the first, or the second's removal
    // of what the run created before it exits at once), the partial file goes. On this
    // machine the first one's clean-up is usually done within the gap; the second's path is
    // tested directly in ownership::tests::the_emergency_list_removes_only_what_is_still_ours.
    let d = tmp();
    let p = d.path();
    let (mut child, f) = lay_out_big(p);
    let sent = Instant::now();
    // SAFETY: signalling the child this test started, twice in a row, as an impatient user
    // does.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(30));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    if status.code() == Some(0) {
        skip!("the lay-out finished before the interrupt arrived");
        return;
    }
    assert_eq!(status.code(), Some(130));
    assert!(
        sent.elapsed() < Duration::from_millis(1500),
        "{:?}",
        sent.elapsed()
    );
    assert!(!f.exists(), "nothing left behind");
}

#[test]
fn errors_found_after_resolution_name_the_option_as_the_user_wrote_it() {
    let d = tmp();
    let p = d.path();
    std::fs::write(p.join("small"), vec![0u8; 4096]).unwrap();
    std::fs::write(p.join("j.fio"), "[j]\nfilename=small\nrw=read\nsize=1m\n").unwrap();
    std::fs::write(p.join("w.fio"), "[j]\nrw=write\nfilename=small\nsize=4k\n").unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "--filename=small", "--rw=read", "--size=1m"],
            "iogauge: --size: small is 4096 bytes",
        ),
        (
            &["job", "j.fio"],
            "iogauge: j.fio:4: size: small is 4096 bytes",
        ),
        (
            &["run", "--filename=small", "--rw=write", "--size=4k"],
            "iogauge: --filename=small: exists and iogauge did not create it",
        ),
        (
            &["job", "w.fio"],
            "iogauge: w.fio:3: filename=small: exists and iogauge did not create it",
        ),
        (
            &[
                "sasiotest",
                "small",
                "-w",
                "-pagesize",
                "4k",
                "-filesize",
                "4k",
            ],
            "iogauge: sasiotest small: exists and iogauge did not create it",
        ),
        (
            &["sqlio", "-kW", "-s1", "-b4", "small"],
            "iogauge: sqlio small: exists and iogauge did not create it",
        ),
    ];
    for (args, says) in cases {
        let o = run_in(p, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).starts_with(says), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read(p.join("small")).unwrap(), vec![0u8; 4096]);
}

/// A directory renamed while the run goes on: the run's file is removed where it went (the
/// directory is held from the file's creation), and one moved out of it is reported with
/// where it was, never left silently.
#[test]
fn clean_up_follows_a_renamed_directory() {
    let d = super::tmp();
    let dir = d.path().join("a");
    std::fs::create_dir(&dir).unwrap();
    let f = dir.join("data");
    let run = |f: &std::path::Path| {
        super::bin()
            .args([
                "run",
                &format!("--filename={}", f.display()),
                "--size=1m",
                "--rw=randread",
                "--time_based",
                "--runtime=2",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let wait_for = |p: &std::path::Path| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !p.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    let child = run(&f);
    wait_for(&f);
    std::fs::rename(&dir, d.path().join("b")).unwrap();
    // Something new in the old place is not the run's.
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(&f, b"theirs").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", super::stderr(&o));
    assert!(
        !d.path().join("b/data").exists(),
        "removed where the directory went"
    );
    assert_eq!(std::fs::read(&f).unwrap(), b"theirs");

    // The file itself moved out of its directory: left, and said so.
    std::fs::remove_file(&f).unwrap();
    let child = run(&f);
    wait_for(&f);
    let moved = d.path().join("moved");
    std::fs::rename(&f, &moved).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = super::stderr(&o);
    assert!(err.contains("moved away"), "{err}");
    assert!(moved.exists());
}

/// Runs iogauge in `dir` with stdout and/or stderr closed by their reader before it writes:
/// the exit status and what it printed on the stream left open.
fn closed_pipe(
    dir: &std::path::Path,
    args: &[&str],
    close_out: bool,
    close_err: bool,
) -> (Option<i32>, String) {
    use std::io::Read;
    let mut child = super::bin()
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (mut out, mut err) = (child.stdout.take(), child.stderr.take());
    if close_out {
        drop(out.take());
    }
    if close_err {
        drop(err.take());
    }
    let mut left = String::new();
    if let Some(mut o) = out {
        o.read_to_string(&mut left).unwrap();
    }
    if let Some(mut e) = err {
        e.read_to_string(&mut left).unwrap();
    }
    let status = child.wait().unwrap();
    assert!(!left.contains("panicked"), "{args:?}: {left}");
    (status.code(), left)
}

/// A reader that goes away ends iogauge cleanly on every output path: exit 141 (what a shell
/// expects when the pipe closed), never a panic; the files asked for still written, the
/// test files removed, a sweep's index saying which points ran.
#[test]
fn a_closed_pipe_ends_every_command_cleanly() {
    let d = super::tmp();
    let p = d.path();
    let f = format!("--filename={}", p.join("data").display());
    let run = ["run", f.as_str(), "--size=1m", "--rw=read"];
    // Text, JSON and CSV to a closed stdout.
    for fmt in ["text", "json", "csv"] {
        let fmt = format!("--output-format={fmt}");
        let mut a = run.to_vec();
        a.push(&fmt);
        let (code, _) = closed_pipe(p, &a, true, false);
        assert_eq!(code, Some(141), "{fmt}");
        assert!(!p.join("data").exists(), "{fmt}: the test file is removed");
    }
    // Text to the closed stdout, JSON to its file: the file is whole.
    let mut a = run.to_vec();
    a.extend(["--output-format=text,json", "--output=both"]);
    let (code, _) = closed_pipe(p, &a, true, false);
    assert_eq!(code, Some(141));
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p.join("both.json")).unwrap()).unwrap();
    assert!(
        saved["jobs"].is_array() || saved["groups"].is_array(),
        "{saved}"
    );
    // report and compare to a closed stdout.
    let json = p.join("both.json");
    let json = json.to_str().unwrap();
    for a in [
        vec!["report", json],
        vec!["report", "--output-format=text", json],
        vec!["compare", json, json],
    ] {
        let (code, _) = closed_pipe(p, &a, true, false);
        assert_eq!(code, Some(141), "{a:?}");
    }
    // Usage errors to a stderr that cannot be written: still exit 2.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = super::bin().arg("--badflag").stderr(full).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    // A sweep whose stderr (its progress) closes: the point running stops, the index says so,
    // nothing is left, and no panic.
    let sw = p.join("sweep");
    let sw_arg = format!("--dir={}", sw.display());
    let a = [
        "sweep",
        f.as_str(),
        "--size=1m",
        "--rw=read",
        "--sweep=bs=4k,8k,16k",
        sw_arg.as_str(),
    ];
    let (code, _) = closed_pipe(p, &a, false, true);
    assert_eq!(code, Some(141));
    let idx: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sw.join("index.json")).unwrap()).unwrap();
    let st: Vec<&str> = idx["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["status"].as_str().unwrap())
        .collect();
    assert!(!st.contains(&"ok") || st.len() == 3, "{st:?}");
    assert!(
        st.iter()
            .all(|s| ["ok", "interrupted", "pending"].contains(s)),
        "{st:?}"
    );
    assert!(
        st.contains(&"interrupted"),
        "the point that was running says so: {st:?}"
    );
    assert!(!p.join("data").exists());
}

/// SIGHUP (a dropped ssh session), SIGTERM and SIGQUIT stop a run as Ctrl-C does: the report
/// so far, the test file removed, exit 128+n. SIGUSR1 prints the figures so far and the run
/// goes on (fio's SIGUSR1).
#[test]
fn hangup_term_quit_stop_cleanly_and_usr1_reports_so_far() {
    let d = super::tmp();
    let f = d.path().join("f");
    let start = || {
        super::bin()
            .args([
                "run",
                &format!("--filename={}", f.display()),
                "--size=2m",
                "--rw=randread",
                "--time_based",
                "--runtime=3",
                "--output-format=json",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let wait_for_file = || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !f.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(700));
    };
    for (sig, code) in [
        (libc::SIGHUP, 129),
        (libc::SIGTERM, 143),
        (libc::SIGQUIT, 131),
    ] {
        let child = start();
        wait_for_file();
        unsafe { libc::kill(child.id() as i32, sig) };
        let o = child.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(code),
            "signal {sig}: {}",
            super::stderr(&o)
        );
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["interrupted"], true);
        assert!(!f.exists(), "signal {sig}: the file is removed");
    }
    let child = start();
    wait_for_file();
    unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", super::stderr(&o));
    let err = super::stderr(&o);
    assert!(
        err.contains("iogauge: status: group 1/1:") && err.contains("IOPS"),
        "{err}"
    );
    assert!(!f.exists());
}

/// iogauge under resource limits set for it alone (`ulimit -v`, `ulimit -n`).
fn limited(
    args: &[&str],
    res: libc::__rlimit_resource_t,
    soft: u64,
    hard: u64,
) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut c = super::bin();
    c.args(args);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let l = libc::rlimit {
                rlim_cur: soft,
                rlim_max: hard,
            };
            if libc::setrlimit(res, &l) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.output().unwrap()
}

/// Memory and open files are reckoned before anything is created: a plan that cannot fit is
/// one line, exit 2, nothing created, at once (not an abort under `ulimit -v` or a failure
/// after creating hundreds of files); the open-file limit is raised where the hard limit
/// allows.
#[test]
fn memory_and_open_files_are_checked_before_anything_is_created() {
    let d = super::tmp();
    let dir = format!("--directory={}", d.path().display());
    let refused = |o: std::process::Output, want: &str| {
        let err = super::stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "want {want:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(super::entries(d.path()).is_empty(), "nothing is created");
    };
    let deep = [
        "run",
        dir.as_str(),
        "--size=1m",
        "--bs=1m",
        "--iodepth=4096",
        "--ioengine=io_uring",
    ];
    let mut a = deep.to_vec();
    a.push("--max-memory=64m");
    refused(super::iogauge(&a), "4.00 GiB of memory");
    refused(super::iogauge(&a), "--max-memory");
    refused(
        limited(&deep, libc::RLIMIT_AS, 1 << 30, 1 << 30),
        "ulimit -v",
    );
    let o = super::iogauge(&["run", &dir, "--size=1m", "--max-memory=0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        super::stderr(&o).contains("--max-memory=0: expected"),
        "{}",
        super::stderr(&o)
    );

    let many = [
        "run",
        dir.as_str(),
        "--nrfiles=300",
        "--size=2m",
        "--bs=4k",
        "--rw=read",
    ];
    let t = std::time::Instant::now();
    refused(limited(&many, libc::RLIMIT_NOFILE, 100, 100), "nrfiles");
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
    // A soft limit below what is needed is raised to it, within the hard limit.
    let o = limited(&many, libc::RLIMIT_NOFILE, 100, 4096);
    assert_eq!(o.status.code(), Some(0), "{}", super::stderr(&o));
    assert!(
        super::entries(d.path()).is_empty(),
        "the 300 files are removed"
    );
}

/// A link planted where a run writes a log or a verify dump — before the run (refused at
/// once, exit 2) or while it runs (refused when written, the run's other outputs whole) — is
/// never followed: its target keeps every byte, the link stays a link.
#[test]
fn links_planted_where_logs_and_dumps_go_are_never_followed() {
    let d = tmp();
    let p = d.path();
    let victim = p.join("victim");
    std::fs::write(&victim, b"root's file").unwrap();
    let logs = [
        "--write_bw_log=bw",
        "--write_lat_log=lat",
        "--write_iops_log=io",
    ];
    let names = [
        "bw_bw.1.log",
        "io_iops.1.log",
        "lat_clat.1.log",
        "lat_lat.1.log",
        "lat_slat.1.log",
    ];
    let intact = |what: &str| {
        assert_eq!(std::fs::read(&victim).unwrap(), b"root's file", "{what}");
    };
    // Before the run: refused, nothing created.
    for name in names {
        std::os::unix::fs::symlink(&victim, p.join(name)).unwrap();
        let mut a = vec!["run", "--ioengine=null", "--size=64k"];
        a.extend(logs);
        let o = run_in(p, &a);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("symbolic link"),
            "{name}: {}",
            stderr(&o)
        );
        intact(name);
        std::fs::remove_file(p.join(name)).unwrap();
    }
    assert_eq!(
        super::entries(p).len(),
        1,
        "only the victim: {:?}",
        super::entries(p)
    );
    // While the run goes on: the log is refused when written, the others are written.
    let mut a = vec![
        "run",
        "--ioengine=null",
        "--size=64k",
        "--time_based",
        "--runtime=2",
        "--output-format=json",
        "--output=r.json",
    ];
    a.extend(logs);
    let child = spawn_in(p, &a);
    std::thread::sleep(Duration::from_millis(700));
    std::os::unix::fs::symlink(&victim, p.join("bw_bw.1.log")).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot write log bw_bw.1.log"),
        "{}",
        stderr(&o)
    );
    intact("a link planted mid-run");
    assert!(
        std::fs::symlink_metadata(p.join("bw_bw.1.log"))
            .unwrap()
            .is_symlink()
    );
    assert!(p.join("lat_lat.1.log").is_file() && p.join("r.json").is_file());
}

/// allow_file_create=0 (fio's): every file must exist; a missing one is refused before
/// anything is created, and the existing ones are used as they are.
#[test]
fn allow_file_create_0_uses_only_files_that_exist() {
    let d = tmp();
    let have = d.path().join("have");
    std::fs::write(&have, vec![7u8; 1 << 20]).unwrap();
    let missing = d.path().join("missing");
    let names = format!("--filename={}:{}", have.display(), missing.display());
    let o = iogauge(&["run", &names, "--size=2m", "--allow_file_create=0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("forbids creating it"), "{}", stderr(&o));
    assert!(!missing.exists());
    let one = format!("--filename={}", have.display());
    let r = run_json(&[&one, "--allow_file_create=0"], 0);
    assert_eq!(counts(job(&r)), (256, 1 << 20, 0, 0));
    let o = iogauge(&[
        "run",
        &format!("--directory={}", d.path().display()),
        "--ioengine=filecreate",
        "--allow_file_create=0",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("filecreate creates its files"),
        "{}",
        stderr(&o)
    );
}
