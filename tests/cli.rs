//! End-to-end tests of the iogauge binary on real files: exact byte and I/O counts, the flags
//! the kernel reports for opened files, the safety refusals, bad input, ENOSPC, interruption.
//! Capabilities the machine lacks (mounting, loop devices, O_DIRECT) make a test print SKIP
//! with the reason and return.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Says why a test could not check what it is for, in `cargo test`'s normal output: libtest
/// captures a passing test's `print!`/`eprint!`, not what is written to the stderr handle.
macro_rules! skip {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let test = std::thread::current().name().unwrap_or("?").to_string();
        let _ = writeln!(std::io::stderr(), "SKIP {test}: {}", format!($($t)*));
    }};
}

#[path = "cli/assess.rs"]
mod assess;
#[path = "cli/bugs.rs"]
mod bugs;
#[path = "cli/clock.rs"]
mod clock;
#[path = "cli/compat.rs"]
mod compat;
#[path = "cli/cpuio.rs"]
mod cpuio;
#[path = "cli/defrag.rs"]
mod defrag;
#[path = "cli/dirops.rs"]
mod dirops;
#[path = "cli/distributions.rs"]
mod distributions;
#[path = "cli/engines.rs"]
mod engines;
#[path = "cli/errors.rs"]
mod errors;
#[path = "cli/exec.rs"]
mod exec;
#[path = "cli/faultfs.rs"]
mod faultfs;
#[path = "cli/fileops.rs"]
mod fileops;
#[path = "cli/fill.rs"]
mod fill;
#[path = "cli/fio.rs"]
mod fio;
#[path = "cli/fio_verify.rs"]
mod fio_verify;
#[path = "cli/help.rs"]
mod help;
#[path = "cli/jobfiles.rs"]
mod jobfiles;
#[path = "cli/latency.rs"]
mod latency;
#[path = "cli/layout.rs"]
mod layout;
#[path = "cli/loops.rs"]
mod loops;
#[path = "cli/mmap.rs"]
mod mmap;
#[path = "cli/net.rs"]
mod net;
#[path = "cli/outputs.rs"]
mod outputs;
#[path = "cli/predict.rs"]
mod predict;
#[path = "cli/predict_cpu.rs"]
mod predict_cpu;
#[path = "cli/predict_tells.rs"]
mod predict_tells;
#[path = "cli/preread.rs"]
mod preread;
#[path = "cli/prio.rs"]
mod prio;
#[path = "cli/record.rs"]
mod record;
#[path = "cli/record_abi.rs"]
mod record_abi;
#[path = "cli/record_aio.rs"]
mod record_aio;
#[path = "cli/record_faults.rs"]
mod record_faults;
#[path = "cli/record_signals.rs"]
mod record_signals;
#[path = "cli/replay.rs"]
mod replay;
#[path = "cli/rwf.rs"]
mod rwf;
#[path = "cli/safety.rs"]
mod safety;
#[path = "cli/scaleout.rs"]
mod scaleout;
#[cfg(feature = "mpi")]
#[path = "cli/scaleout_hosts.rs"]
mod scaleout_hosts;
#[path = "cli/service.rs"]
mod service;
#[path = "cli/steady.rs"]
mod steady;
#[path = "cli/sweep.rs"]
mod sweep;
#[path = "cli/sync.rs"]
mod sync;
#[path = "cli/trace_replay.rs"]
mod trace_replay;
#[path = "cli/trim.rs"]
mod trim;
#[path = "cli/verify.rs"]
mod verify;

fn bin() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin!("iogauge"))
}

fn iogauge(args: &[&str]) -> Output {
    bin().args(args).output().expect("iogauge runs")
}

/// Ctrl-C, as a terminal sends it: SIGINT to `child`.
fn interrupt(child: &std::process::Child) {
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).expect("a pid"),
        rustix::process::Signal::INT,
    )
    .expect("SIGINT sent");
}

/// Runs iogauge in `dir` (where relative paths, like log names, land).
fn run_in(dir: &Path, args: &[&str]) -> Output {
    run_in_env(dir, args, &[])
}

/// Runs iogauge in `dir` with `env` added to its environment.
fn run_in_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    bin()
        .current_dir(dir)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("iogauge runs")
}

/// Runs iogauge in `dir`, asserts exit 0 and returns stdout.
fn ok_in(dir: &Path, args: &[&str]) -> String {
    let o = run_in(dir, args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{args:?}\nstdout: {}\nstderr: {}",
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

/// `iogauge trace stats --json TRACE` in `dir` (asserting exit 0), parsed.
fn trace_stats(dir: &Path, trace: &str) -> Value {
    serde_json::from_str(&ok_in(dir, &["trace", "stats", "--json", trace])).unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs with JSON output and returns the parsed report, asserting the exit code.
fn run_json(args: &[&str], code: i32) -> Value {
    let mut all = vec!["run", "--output-format=json"];
    all.extend_from_slice(args);
    let o = iogauge(&all);
    assert_eq!(
        o.status.code(),
        Some(code),
        "args {all:?}\nstderr: {}",
        stderr(&o)
    );
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("one JSON document: {e}\n{}", stdout(&o)))
}

fn job(report: &Value) -> &Value {
    &report["groups"][0]["jobs"][0]
}

fn counts(j: &Value) -> (u64, u64, u64, u64) {
    let g = |d: &str, k: &str| j[d][k].as_u64().unwrap();
    (
        g("read", "ios"),
        g("read", "bytes"),
        g("write", "ios"),
        g("write", "bytes"),
    )
}

/// /dev/shm when it is a tmpfs mount (a file system with no block device below it).
fn shm_tmpfs() -> Option<&'static Path> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let shm = mounts.lines().any(|l| l.contains(" /dev/shm tmpfs "));
    shm.then(|| Path::new("/dev/shm"))
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// A temp dir on tmpfs where there is one (fast, no disk drift), else an ordinary one.
fn shm_tmp() -> tempfile::TempDir {
    shm_tmpfs().map_or_else(tmp, |p| {
        tempfile::tempdir_in(p).expect("temp dir in /dev/shm")
    })
}

/// A temp dir, the path of a file `f` in it (not created), and `--filename=` for it: the
/// opening of most tests.
fn tmp_file() -> (tempfile::TempDir, PathBuf, String) {
    let d = tmp();
    let f = d.path().join("f");
    let fname = format!("--filename={}", f.display());
    (d, f, fname)
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

/// A fresh ext4 file system on a loop device, mounted on a temp dir, so that the device's
/// counters in /proc/diskstats see only the test's own I/O (the root disk also carries the
/// other tests running in parallel). Unmounted and detached on drop.
struct LoopFs {
    mnt: tempfile::TempDir,
    // Detached after the unmount (Drop) and the mount point's removal (fields drop in order).
    dev: LoopDev,
    _img: tempfile::TempDir,
}

impl LoopFs {
    /// None (after printing why) when the machine cannot make one.
    fn new(mib: u64) -> Option<LoopFs> {
        LoopFs::made_by(mib, &["mkfs.ext4", "-q", "-F"])
    }

    /// The same with another file system, made by `mkfs` (program and options; the device
    /// is the last argument).
    fn made_by(mib: u64, mkfs: &[&str]) -> Option<LoopFs> {
        let img_dir = tmp();
        let img = img_dir.path().join("fs.img");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(mib << 20))
            .ok()?;
        let dev = LoopDev::attach(&img)?;
        let made = Command::new(mkfs[0]).args(&mkfs[1..]).arg(&dev.0).output();
        if !made.is_ok_and(|o| o.status.success()) {
            skip!(
                "{} failed or is missing (scripts/test-deps.sh installs it)",
                mkfs[0]
            );
            return None;
        }
        let mnt = tmp();
        let mount = Command::new("mount").arg(&dev.0).arg(mnt.path()).output();
        if !mount.is_ok_and(|o| o.status.success()) {
            skip!("cannot mount {}", dev.0);
            return None;
        }
        Some(LoopFs {
            mnt,
            dev,
            _img: img_dir,
        })
    }

    fn path(&self) -> &Path {
        self.mnt.path()
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mnt.path()).status();
    }
}

/// A loop device over an image file, detached on drop.
struct LoopDev(String);

impl LoopDev {
    /// None (after printing why) when the machine cannot attach one.
    fn attach(img: &Path) -> Option<LoopDev> {
        Self::attach_with(img, &[])
    }

    /// With losetup's own options too (`--sector-size 4096`).
    fn attach_with(img: &Path, options: &[&str]) -> Option<LoopDev> {
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .args(options)
            .arg(img)
            .output();
        let dev = out
            .ok()
            .filter(|o| o.status.success())
            .map(|o| stdout(&o).trim().to_string());
        if dev.is_none() {
            skip!("no loop device available (losetup failed)");
        }
        dev.map(LoopDev)
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
fn every_mode_and_engine_moves_exact_bytes() {
    let (_d, f, fname) = tmp_file();
    const SIZE: u64 = 1 << 20;
    const N: u64 = SIZE / 4096;
    for engine in ["psync", "sync", "null"] {
        for (rw, loops) in [
            ("read", 1),
            ("write", 1),
            ("randread", 2),
            ("randwrite", 1),
            ("rw", 1),
            ("readwrite", 1),
            ("randrw", 2),
            ("update", 1),
        ] {
            let r = run_json(
                &[
                    &fname,
                    "--size=1m",
                    "--bs=4k",
                    &format!("--rw={rw}"),
                    &format!("--ioengine={engine}"),
                    &format!("--loops={loops}"),
                ],
                0,
            );
            let (ri, rb, wi, wb) = counts(job(&r));
            let total = N * loops;
            match rw {
                "read" | "randread" => assert_eq!((ri, wi), (total, 0), "{engine} {rw}"),
                "write" | "randwrite" => assert_eq!((ri, wi), (0, total), "{engine} {rw}"),
                "update" => assert_eq!((ri, wi), (total, total), "{engine} {rw}"),
                _ => {
                    assert_eq!(ri + wi, total, "{engine} {rw}");
                    assert!(ri > total / 4 && wi > total / 4, "{engine} {rw}: {ri}/{wi}");
                }
            }
            assert_eq!((rb, wb), (ri * 4096, wi * 4096));
            let lat = &job(&r)[if ri > 0 { "read" } else { "write" }]["lat_ns"];
            assert_eq!(lat["count"].as_u64(), Some(if ri > 0 { ri } else { wi }));
            assert!(
                !f.exists(),
                "{engine} {rw}: the created file must be removed"
            );
        }
    }
}

#[test]
fn written_file_has_exact_size_and_incompressible_unique_data() {
    let d = tmp();
    let f = d.path().join("w");
    run_json(
        &[
            &format!("--filename={}", f.display()),
            "--rw=write",
            "--bs=64k",
            "--size=1m",
            "--keep",
        ],
        0,
    );
    let data = std::fs::read(&f).unwrap();
    assert_eq!(data.len(), 1 << 20);
    let zeros = data.iter().filter(|&&b| b == 0).count();
    assert!(
        zeros < data.len() / 100,
        "random data expected, {zeros} zero bytes"
    );
    assert_ne!(
        data[..65536],
        data[65536..131072],
        "each block must be unique"
    );

    let z = d.path().join("z");
    run_json(
        &[
            &format!("--filename={}", z.display()),
            "--rw=write",
            "--bs=64k",
            "--size=256k",
            "--zero_buffers",
            "--keep",
        ],
        0,
    );
    assert!(std::fs::read(&z).unwrap().iter().all(|&b| b == 0));
}

#[test]
fn report_records_open_flags_and_provenance() {
    let (_d, _, fname) = tmp_file();
    let r = run_json(
        &[
            &fname,
            "--size=1m",
            "--rw=randwrite",
            "--direct=1",
            "--sync=dsync",
        ],
        0,
    );
    let flags = job(&r)["files"][0]["open_flags"].as_array().unwrap();
    let flags: Vec<&str> = flags.iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(flags, ["O_WRONLY", "O_DIRECT", "O_DSYNC"]);
    assert_eq!(r["schema_version"], 1);
    assert!(r["host"]["kernel"].as_str().unwrap().starts_with("Linux"));
    assert!(!r["targets"][0]["fs_type"].as_str().unwrap().is_empty());
    assert_eq!(job(&r)["options"]["direct"], "1");
    let r = run_json(&[&fname, "--size=1m", "--rw=read", "--sync=sync"], 0);
    let flags = job(&r)["files"][0]["open_flags"].as_array().unwrap();
    assert_eq!(
        flags
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect::<Vec<_>>(),
        ["O_RDONLY", "O_SYNC"]
    );
}

/// The kernel's own view, from /proc/PID/fdinfo while a job runs.
#[test]
fn kernel_sees_o_direct_and_o_dsync() {
    let d = tmp();
    let f = d.path().join("f");
    let mut child = bin()
        .args([
            "run",
            &format!("--filename={}", f.display()),
            "--size=4m",
            "--rw=randwrite",
        ])
        .args([
            "--direct=1",
            "--sync=dsync",
            "--time_based",
            "--runtime=20",
            "--output-format=json",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let fdinfo = PathBuf::from(format!("/proc/{}/fdinfo", child.id()));
    let fds = PathBuf::from(format!("/proc/{}/fd", child.id()));
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut flags = None;
    // Until the job's descriptor is there: the last one opened on the file is, while the file
    // is laid out, lay-out's own (O_WRONLY, no job flags).
    let direct = |f: &Option<u32>| f.is_some_and(|f| f & libc::O_DIRECT as u32 != 0);
    while !direct(&flags) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        // The job's descriptor is the last one opened on the file (iogauge also holds the
        // one it created the file with, without the job's flags).
        let mut on_f: Vec<(u64, std::ffi::OsString)> = std::fs::read_dir(&fds)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| std::fs::read_link(e.path()).ok().as_deref() == Some(f.as_path()))
            .map(|e| {
                let n = e.file_name().to_string_lossy().parse().unwrap_or(0);
                (n, e.file_name())
            })
            .collect();
        on_f.sort();
        if let [_, .., (_, job_fd)] = on_f.as_slice() {
            let info = std::fs::read_to_string(fdinfo.join(job_fd)).unwrap_or_default();
            flags = info
                .lines()
                .find_map(|l| l.strip_prefix("flags:"))
                .map(|v| u32::from_str_radix(v.trim(), 8).unwrap());
        }
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    let flags = flags.expect("the job's file appeared in /proc/PID/fd");
    assert_ne!(
        flags & libc::O_DIRECT as u32,
        0,
        "O_DIRECT not set: {flags:o}"
    );
    assert_ne!(
        flags & libc::O_DSYNC as u32,
        0,
        "O_DSYNC not set: {flags:o}"
    );
    assert_ne!(
        flags & libc::O_SYNC as u32,
        libc::O_SYNC as u32,
        "O_SYNC set, not O_DSYNC: {flags:o}"
    );
    assert_eq!(status.code(), Some(143));
    assert!(!f.exists(), "created file removed after SIGTERM");
}

#[test]
fn refuses_to_write_a_file_it_did_not_create() {
    let d = tmp();
    let f = d.path().join("precious");
    std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
    for rw in ["write", "randwrite", "rw", "update"] {
        let o = iogauge(&[
            "run",
            &format!("--filename={}", f.display()),
            &format!("--rw={rw}"),
        ]);
        assert_eq!(o.status.code(), Some(2), "{rw}");
        let e = stderr(&o);
        assert!(
            e.contains("--allow-overwrite") && e.contains("precious") && e.lines().count() == 1,
            "{e}"
        );
    }
    assert!(
        std::fs::read(&f).unwrap().iter().all(|&b| b == 7),
        "data untouched"
    );
    // Reading is free, and the file stays.
    let r = run_json(
        &[
            &format!("--filename={}", f.display()),
            "--rw=read",
            "--bs=64k",
        ],
        0,
    );
    assert_eq!(
        counts(job(&r)).1,
        1 << 20,
        "size defaults to the existing file's"
    );
    assert!(f.exists());
    // Allowed explicitly: writes, and the file is not removed (iogauge did not create it).
    let r = run_json(
        &[
            &format!("--filename={}", f.display()),
            "--rw=write",
            "--allow-overwrite",
        ],
        0,
    );
    assert_eq!(counts(job(&r)).3, 1 << 20);
    assert!(f.exists());
    assert!(std::fs::read(&f).unwrap().iter().any(|&b| b != 7));
}

#[test]
fn bad_input_is_one_line_exit_2_and_creates_nothing() {
    let d = tmp();
    let dir = format!("--directory={}", d.path().display());
    let cases: &[(&[&str], &str)] = &[
        (&["--sizee=4k"], "--sizee: unknown option"),
        (
            &["--size=1m", "--randrepeat", "0"],
            "0: unexpected word (a workload option's value goes after '=', as in --randrepeat=0)",
        ),
        (&["--size=4q"], "--size=4q: expected a whole number"),
        (
            &["--size=1m", "--runtime=ten"],
            "--runtime=ten: expected a whole number",
        ),
        (
            &["--size=4k", "--bs=8k"],
            "--bs=8k: is larger than size=4096",
        ),
        (
            &["--size=1m", "--bs=1000", "--direct=1"],
            "with direct I/O it must be a multiple of the logical block",
        ),
        (
            &["--size=1m", "--rw=sideways"],
            "--rw=sideways: expected one of read",
        ),
        (&["--size=1m", "--ioengine=libfoo"], "--ioengine=libfoo"),
        (
            &["--size=1m", "--offset=18446744073709551000"],
            "reaches past the largest file offset",
        ),
        (
            &[
                "--size=1m",
                "--numjobs=3",
                "--offset_increment=4611686018427387904",
            ],
            "--offset_increment=4611686018427387904: offset 0 + offset_increment",
        ),
        (
            &["--size=1m", "--time_based"],
            "--time_based=1: needs --runtime",
        ),
        (
            &["--size=1m", "--output-format=xml"],
            "--output-format=xml: unknown format",
        ),
        (&["--rw=write"], "--size: required"),
        (
            &["--size=1m", "--directory=/nonexistent/dir"],
            "--directory=/nonexistent/dir: no such directory",
        ),
        (
            &["--size=1m", "--filename=/nonexistent/dir/f"],
            "directory /nonexistent/dir does not exist",
        ),
        (
            &["--size=1m", "--output=/nonexistent/out.json"],
            "--output=/nonexistent/out.json",
        ),
    ];
    for (args, want) in cases {
        let mut all = vec!["run", dir.as_str()];
        all.extend_from_slice(args);
        let o = iogauge(&all);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(
            e.trim_end().lines().count(),
            1,
            "{args:?}: one line expected: {e}"
        );
        assert!(e.contains(want), "{args:?}: want {want:?} in {e:?}");
        assert!(stdout(&o).is_empty(), "{args:?}");
        assert!(
            entries(d.path()).is_empty(),
            "{args:?} created {:?}",
            entries(d.path())
        );
    }
}

/// iogauge given `args` exits 2 with one line on stderr that holds `want`.
fn refused_in_one_line(args: &[&str], want: &str) {
    let o = iogauge(args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
    assert!(e.contains(want), "{args:?}: want {want:?} in {e:?}");
}

/// An unknown option's message points at the help of the command it was given to.
#[test]
fn an_unknown_option_points_at_its_commands_help() {
    for (args, want) in [
        (
            &["quick", "--x"][..],
            "'iogauge options' lists workload options, 'iogauge quick --help' all of them",
        ),
        (
            &["report", "r.json", "--metric"][..],
            "--metric: unknown option; 'iogauge report --help' lists its options",
        ),
        (
            &["compare", "a.json", "b.json", "--x"][..],
            "'iogauge compare --help' lists its options",
        ),
    ] {
        refused_in_one_line(args, want);
    }
}

/// A negative number given as an option's next word is that option's value, refused by what
/// the option accepts — not "-1: unknown option", which names no option — and nothing is
/// created.
#[test]
fn a_negative_number_after_an_option_is_refused_as_its_value() {
    let d = tmp();
    let dir = d.path().display().to_string();
    let trace = d.path().join("t.iogtrace");
    let trace = trace.to_str().unwrap();
    for (args, want) in [
        (
            &["predict", trace, "--directory", &dir, "--repeat", "-1"][..],
            "--repeat=-1: expected a whole number from 1 to 100",
        ),
        (
            &["replay", trace, "--directory", &dir, "--speed", "-2"][..],
            "--speed=-2: expected a number above 0",
        ),
        (
            &["quick", "--directory", &dir, "--seconds", "-3"][..],
            "--seconds=-3: expected a whole number",
        ),
    ] {
        refused_in_one_line(args, want);
    }
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

#[test]
fn directory_mode_makes_one_file_per_job() {
    let d = tmp();
    let r = run_json(
        &[
            &format!("--directory={}", d.path().display()),
            "--name=sas",
            "--numjobs=3",
            "--rw=write",
            "--size=256k",
            "--bs=64k",
            "--keep",
        ],
        0,
    );
    let jobs = r["groups"][0]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3);
    let names: Vec<String> = entries(d.path())
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into())
        .collect();
    assert_eq!(names, ["sas.0.0", "sas.1.0", "sas.2.0"]);
    for p in entries(d.path()) {
        assert_eq!(std::fs::metadata(p).unwrap().len(), 256 << 10);
    }
    let total = &r["groups"][0]["total"];
    assert_eq!(total["write"]["bytes"].as_u64(), Some(3 * (256 << 10)));
    assert_eq!(total["write"]["lat_ns"]["count"].as_u64(), Some(12));
}

#[test]
fn multiple_files_share_the_size() {
    let d = tmp();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    let files = format!("--filename={}:{}", a.display(), b.display());
    let r = run_json(&[&files, "--rw=write", "--size=1m", "--bs=4k", "--keep"], 0);
    assert_eq!(counts(job(&r)).3, 1 << 20);
    assert_eq!(std::fs::metadata(&a).unwrap().len(), 512 << 10);
    assert_eq!(std::fs::metadata(&b).unwrap().len(), 512 << 10);
    // The null engine opens nothing but still rotates over the files.
    let r = run_json(
        &[
            &files,
            "--rw=write",
            "--size=1m",
            "--ioengine=null",
            "--end_fsync=1",
        ],
        0,
    );
    assert_eq!(counts(job(&r)).3, 1 << 20);
}

#[test]
fn time_based_ramp_fsync_and_series() {
    let d = tmp();
    let f = format!("--filename={}", d.path().join("f").display());
    let r = run_json(
        &[
            &f,
            "--size=256k",
            "--rw=randread",
            "--time_based",
            "--runtime=2",
            "--ioengine=null",
        ],
        0,
    );
    let j = job(&r);
    let elapsed = j["elapsed_ns"].as_f64().unwrap() / 1e9;
    assert!((1.95..2.6).contains(&elapsed), "elapsed {elapsed}");
    let ios = j["read"]["ios"].as_u64().unwrap();
    assert!(ios > 64 * 10, "time_based loops over the region: {ios}");
    let series = &j["read"]["series"];
    assert_eq!(series["interval_ms"], 500, "fio's bw_avg_time by default");
    let n = series["iops"].as_array().unwrap().len();
    assert!((4..=5).contains(&n), "{n} samples");

    // Ramp time is not measured: the measured part is exactly the size.
    let r = run_json(
        &[
            &f,
            "--size=1m",
            "--rw=write",
            "--ramp_time=1",
            "--ioengine=null",
        ],
        0,
    );
    assert_eq!(counts(job(&r)).2, 256);

    // fsync every 16 writes, plus the final flush timed inside the job.
    let r = run_json(
        &[&f, "--size=1m", "--rw=write", "--fsync=16", "--end_fsync=1"],
        0,
    );
    assert_eq!(job(&r)["sync"]["count"].as_u64(), Some(256 / 16 + 1));
    let r = run_json(&[&f, "--size=1m", "--rw=write"], 0);
    assert!(job(&r)["sync"].is_null());
}

#[test]
fn json_goes_alone_to_stdout_and_warnings_to_stderr() {
    let d = tmp();
    let sparse = d.path().join("sparse");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let o = iogauge(&[
        "run",
        "--output-format=json",
        &format!("--filename={}", sparse.display()),
        "--bs=1MiB",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).expect("stdout is exactly one JSON document");
    let e = stderr(&o);
    assert!(
        e.contains("sparse") && e.contains("bs=1MiB means 1000000 bytes"),
        "{e}"
    );
    // The two about the options; the device's verdicts may add some (other tests share the
    // root disk).
    let warnings: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .filter(|w| !w.starts_with("group "))
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");

    let out = d.path().join("report.json");
    let o = iogauge(&[
        "run",
        "--output-format=json",
        &format!("--output={}", out.display()),
        "--ioengine=null",
        "--size=1m",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(counts(job(&r)).0, 256);
}

#[test]
fn text_report_labels_units() {
    // 16384 I/Os: enough samples for p99.99 (a percentile needs a sample beyond it).
    let o = iogauge(&["run", "--ioengine=null", "--size=64m"]);
    assert_eq!(o.status.code(), Some(0));
    let t = stdout(&o);
    for want in [
        "IOPS",
        "MiB/s",
        "MB/s",
        "latency (",
        "percentiles (",
        "p99.99=",
        "cpu",
        "usr",
        "iogauge 0.1.0",
    ] {
        assert!(t.contains(want), "missing {want:?} in\n{t}");
    }
    // 256 I/Os: p99.5 is the last percentile with a sample beyond it.
    let o = iogauge(&["run", "--ioengine=null", "--size=1m"]);
    let t = stdout(&o);
    assert!(t.contains("p99.5=") && !t.contains("p99.9="), "{t}");
    // The null engine did no I/O: no device line, no page-cache warning.
    assert!(!t.contains("  device "), "{t}");
    assert!(!stderr(&o).contains("page cache"), "{}", stderr(&o));
}

#[test]
fn sigint_stops_reports_partial_and_cleans_up() {
    let d = tmp();
    let f = d.path().join("f");
    let child = bin()
        .args([
            "run",
            &format!("--filename={}", f.display()),
            "--size=8m",
            "--rw=randrw",
        ])
        .args(["--time_based", "--runtime=60", "--output-format=json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(2),
        "stopped in {:?}",
        sent.elapsed()
    );
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["interrupted"], true);
    let (ri, _, wi, _) = counts(job(&r));
    assert!(ri + wi > 0, "partial results kept");
    assert!(!f.exists());
}

/// A small tmpfs mounted for the test's life (unmounted when dropped), or None (printing
/// why) where mounting is not allowed.
struct SmallFs {
    path: PathBuf,
    /// The temp dir it is mounted on, when it made its own (removed after the unmount).
    _dir: Option<tempfile::TempDir>,
}

impl SmallFs {
    /// On a temp dir of its own.
    fn mount(size: &str) -> Option<SmallFs> {
        let d = tmp();
        let mut fs = SmallFs::mount_at(d.path(), size)?;
        fs._dir = Some(d);
        Some(fs)
    }

    /// On `dir`, an existing directory.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    fn mount_at(dir: &Path, size: &str) -> Option<SmallFs> {
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            skip!("cannot mount a tmpfs here (needs root)");
            return None;
        }
        Some(SmallFs {
            path: dir.to_path_buf(),
            _dir: None,
        })
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).status();
    }
}

#[test]
fn free_space_is_checked_before_anything_is_created() {
    let Some(fs) = SmallFs::mount("4m") else {
        return;
    };
    let o = iogauge(&[
        "run",
        &format!("--directory={}", fs.path().display()),
        "--rw=write",
        "--size=16m",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("free"), "{}", stderr(&o));
    assert!(entries(fs.path()).is_empty());
}

#[test]
fn enospc_mid_run_names_file_and_offset_and_cleans_up() {
    let Some(fs) = SmallFs::mount("4m") else {
        return;
    };
    let f = fs.path().join("big");
    let o = iogauge(&[
        "run",
        "--output-format=json",
        &format!("--filename={}", f.display()),
        "--rw=write",
        "--bs=64k",
        "--size=16m",
        "--skip-space-check",
        // Appending, so the space runs out mid-run (preallocation would fail before it).
        "--fallocate=none",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let err = &job(&r)["error"];
    assert_eq!(err["errno"].as_i64(), Some(libc::ENOSPC as i64));
    assert_eq!(err["file"].as_str(), Some(f.to_str().unwrap()));
    let offset = err["offset"].as_u64().unwrap();
    assert!(
        offset > 0 && offset <= 4 << 20 && offset % 65536 == 0,
        "{offset}"
    );
    assert_eq!(
        counts(job(&r)).3,
        offset,
        "bytes written before the error are reported"
    );
    assert!(stderr(&o).contains("No space left"), "{}", stderr(&o));
    assert!(entries(fs.path()).is_empty(), "created file removed");
}

#[test]
fn read_only_file_system_is_refused_up_front() {
    let Some(fs) = SmallFs::mount("1m") else {
        return;
    };
    let ok = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(fs.path())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skip!("cannot remount read-only");
        return;
    }
    let o = iogauge(&[
        "run",
        &format!("--directory={}", fs.path().display()),
        "--rw=write",
        "--size=64k",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot create files"), "{}", stderr(&o));
}

#[test]
fn block_devices_are_written_only_when_allowed() {
    let d = tmp();
    let img = d.path().join("img");
    std::fs::write(&img, vec![0x5a; 4 << 20]).unwrap();
    let Some(lo) = LoopDev::attach(&img) else {
        return;
    };
    let dev = lo.0.clone();
    let fname = format!("--filename={dev}");
    let o = iogauge(&["run", &fname, "--rw=write"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("block device") && stderr(&o).contains("--allow-overwrite"));
    let r = run_json(&[&fname, "--rw=read", "--bs=64k", "--direct=1"], 0);
    assert_eq!(
        counts(job(&r)).1,
        4 << 20,
        "size defaults to the device size"
    );
    assert_eq!(r["targets"][0]["kind"], "block device");
    let r = run_json(
        &[
            &fname,
            "--rw=write",
            "--bs=64k",
            "--size=1m",
            "--allow-overwrite",
            "--direct=1",
        ],
        0,
    );
    assert_eq!(counts(job(&r)).3, 1 << 20);
    assert!(std::path::Path::new(&dev).exists());
    let data = std::fs::read(&img).unwrap();
    assert!(
        data[..1 << 20].iter().any(|&b| b != 0x5a) && data[1 << 20..].iter().all(|&b| b == 0x5a)
    );
}

/// Many files of one directory are named on one line of the report's header (first and last
/// in natural order), not one line each; a few are still listed.
#[test]
fn many_files_of_one_directory_take_one_header_line() {
    let d = tmp();
    let dir = format!("--directory={}", d.path().display());
    let o = iogauge(&[
        "run",
        &dir,
        "--name=s",
        "--numjobs=12",
        "--size=64k",
        "--rw=read",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = stdout(&o);
    let want = format!(
        "targets {}/ (12 files, s.0.0 … s.11.0): ",
        d.path().display()
    );
    assert_eq!(t.lines().filter(|l| l.starts_with(&want)).count(), 1, "{t}");
    assert!(!t.lines().any(|l| l.starts_with("target ")), "{t}");
    let o = iogauge(&[
        "run",
        &dir,
        "--name=s",
        "--numjobs=2",
        "--size=64k",
        "--rw=read",
    ]);
    let t = stdout(&o);
    assert_eq!(
        t.lines().filter(|l| l.starts_with("target ")).count(),
        2,
        "{t}"
    );
}

/// A loop device over a sparse file reads its holes as zeros without touching a disk: a read
/// of it is flagged, as a read of a sparse file is; one over a file written out is not.
#[test]
fn a_loop_device_over_a_sparse_file_is_flagged() {
    let d = tmp();
    let sparse = d.path().join("sparse.img");
    std::fs::File::create(&sparse)
        .and_then(|f| f.set_len(64 << 20))
        .unwrap();
    let full = d.path().join("full.img");
    std::fs::write(&full, vec![0x5a; 4 << 20]).unwrap();
    let (Some(over_sparse), Some(over_full)) = (LoopDev::attach(&sparse), LoopDev::attach(&full))
    else {
        return;
    };
    let warned = |dev: &str| {
        let r = run_json(&[&format!("--filename={dev}"), "--rw=read", "--size=1m"], 0);
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w.as_str().unwrap().contains("loop device over"))
            .map(|w| w.as_str().unwrap().to_string())
    };
    let w = warned(&over_sparse.0).expect("the sparse one is flagged");
    assert!(w.contains(&sparse.display().to_string()), "{w}");
    assert!(w.contains("of 67108864 bytes allocated"), "{w}");
    assert_eq!(warned(&over_full.0), None, "a written-out one is not");
}

/// Direct I/O keeps to the device's own logical block: on a loop device of 4 KiB sectors a
/// 2 KiB block is refused before any I/O, naming the device's size, and 4 KiB runs.
#[test]
fn direct_io_keeps_to_a_4k_devices_logical_block() {
    let d = tmp();
    let img = d.path().join("4k.img");
    std::fs::write(&img, vec![0x5a; 4 << 20]).unwrap();
    let Some(dev) = LoopDev::attach_with(&img, &["--sector-size", "4096"]) else {
        return;
    };
    let lbs = std::fs::read_to_string(format!(
        "/sys/block/{}/queue/logical_block_size",
        dev.0.trim_start_matches("/dev/")
    ))
    .unwrap_or_default();
    if lbs.trim() != "4096" {
        skip!("losetup --sector-size 4096 gave logical blocks of {lbs:?}");
        return;
    }
    let target = format!("--filename={}", dev.0);
    let o = iogauge(&[
        "run",
        "--name=x",
        &target,
        "--rw=read",
        "--direct=1",
        "--bs=2k",
        "--size=1m",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("--bs=2048: with direct I/O it must be a multiple of the logical block size")
            && stderr(&o).contains("(4096 bytes)"),
        "{}",
        stderr(&o)
    );
    let r = run_json(
        &[&target, "--rw=read", "--direct=1", "--bs=4k", "--size=1m"],
        0,
    );
    assert_eq!(job(&r)["read"]["bytes"], 1 << 20);
}

#[test]
fn quick_check_runs_four_tests_and_cleans_up() {
    let quick = |dir: &Path| {
        let o = iogauge(&[
            "quick",
            &format!("--directory={}", dir.display()),
            "--seconds=1",
            "--size=8m",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        o
    };
    let d = tmp();
    let o = quick(d.path());
    let t = stdout(&o);
    for label in [
        "sequential write 1 MiB",
        "cold sequential read 1 MiB",
        "random read 4 KiB",
        "random write 4 KiB",
        "MiB/s",
        "IOPS",
    ] {
        assert!(t.contains(label), "missing {label:?} in\n{t}");
    }
    // Each row says how its test ran: file size, measured time, queue depth, cache mode.
    let row = |name: &str| t.lines().find(|l| l.starts_with(name)).unwrap().to_string();
    let w = row("sequential write 1 MiB");
    assert!(w.contains("8.00 MiB") && w.contains(" buffered "), "{w}");
    let r = row("random read 4 KiB");
    // After the label: size (2 words), time, I/Os in flight, cache mode.
    let cells: Vec<&str> = r["random read 4 KiB".len()..].split_whitespace().collect();
    assert_eq!(cells[3..5], ["1", "O_DIRECT"], "{r}");
    assert!(cells[2].ends_with('s'), "{r}");
    assert!(entries(d.path()).is_empty());
    // On tmpfs nothing is cold, and the missing device is said once, not per test.
    let Some(shm) = shm_tmpfs() else {
        skip!("/dev/shm is not a tmpfs mount here");
        return;
    };
    let d = tempfile::tempdir_in(shm).unwrap();
    let o = quick(d.path());
    let t = stdout(&o);
    assert!(
        t.contains("\nsequential read 1 MiB") && !t.contains("cold"),
        "{t}"
    );
    assert_eq!(
        stderr(&o).matches("no block device below it").count(),
        1,
        "{}",
        stderr(&o)
    );
    // A warning names the test it is about, not only its group's number.
    assert!(
        stderr(&o).contains("warning: group 1 (seq-write): "),
        "{}",
        stderr(&o)
    );
}

/// Bytes of `path` resident in the page cache, from util-linux's fincore.
fn resident_bytes(path: &Path) -> Option<u64> {
    let o = Command::new("fincore")
        .args(["--bytes", "--noheadings", "--output=RES"])
        .arg(path)
        .output()
        .ok()?;
    stdout(&o).trim().parse().ok()
}

#[test]
fn invalidate_drops_the_files_cached_pages() {
    let (_d, f, fname) = tmp_file();
    run_json(
        &[&fname, "--rw=write", "--bs=1m", "--size=16m", "--keep"],
        0,
    );
    let Some(before) = resident_bytes(&f) else {
        skip!("fincore (util-linux) is not available to inspect the page cache");
        return;
    };
    assert_eq!(before, 16 << 20, "a buffered write leaves the file cached");
    // Without invalidation a buffered read leaves it cached; with it (the default) and direct
    // reads, nothing of the file stays in the cache.
    run_json(&[&fname, "--rw=read", "--bs=1m", "--invalidate=0"], 0);
    assert_eq!(resident_bytes(&f), Some(16 << 20));
    run_json(&[&fname, "--rw=read", "--bs=1m", "--direct=1"], 0);
    assert_eq!(resident_bytes(&f), Some(0));
}

#[test]
fn one_job_failing_stops_the_others_and_everything_is_removed() {
    use iogauge::plan::{Origin, Section};
    use std::sync::atomic::AtomicBool;
    let Some(fs) = SmallFs::mount("4m") else {
        return;
    };
    let d = tmp();
    // One group: a reader that would run 30 s on the disk, and a writer that fills the tmpfs.
    let mut reader = Section::new("reader");
    reader
        .set(
            "filename",
            d.path().join("r").to_str().unwrap(),
            Origin::Cli,
        )
        .set("rw", "randread", Origin::Cli)
        .set("size", "1m", Origin::Cli)
        .set("time_based", "1", Origin::Cli)
        .set("runtime", "30", Origin::Cli);
    let mut writer = Section::new("writer");
    writer
        .set(
            "filename",
            fs.path().join("w").to_str().unwrap(),
            Origin::Cli,
        )
        .set("rw", "write", Origin::Cli)
        .set("bs", "64k", Origin::Cli)
        .set("size", "16m", Origin::Cli)
        .set("fallocate", "none", Origin::Cli);
    let mut plan = iogauge::plan::resolve(&[reader, writer], false).unwrap();
    assert_eq!(plan.groups.len(), 1);
    let safety = iogauge::files::targets::Safety {
        skip_space_check: true,
        ..Default::default()
    };
    let mut targets = iogauge::files::targets::check(&mut plan, safety).unwrap();
    let started = Instant::now();
    let outcome = iogauge::runner::run(&plan, &mut targets, &AtomicBool::new(false), &mut |_| {});
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    let jobs = &outcome.groups[0];
    assert!(
        jobs[0].error.is_none(),
        "the reader was stopped, not failed"
    );
    assert!(
        jobs[0].stats.elapsed < Duration::from_secs(5),
        "reader ran {:?}",
        jobs[0].stats.elapsed
    );
    // The reader may be stopped before its first I/O (the writer fills 4 MiB in about a
    // millisecond), so only its early end is asserted, not a count.
    assert_eq!(jobs[1].error.as_ref().unwrap().errno, Some(libc::ENOSPC));
    assert!(outcome.failed() && !outcome.interrupted);
    assert!(targets.finish(true, &[]).is_empty());
    assert!(
        entries(fs.path()).is_empty() && entries(d.path()).is_empty(),
        "created files removed"
    );
}

/// A job that shares its device with another writer is told so: the device wrote far more
/// than the job did, so the job's figures are what the device had left for it. Alone, the
/// same job gets no such warning.
#[test]
fn a_foreign_writer_on_the_device_is_named() {
    let Some(fs) = LoopFs::new(128) else {
        return;
    };
    let job = |name: &str| {
        let o = iogauge(&[
            "run",
            &format!("--filename={}", fs.path().join(name).display()),
            "--rw=write",
            "--bs=64k",
            "--size=16m",
            &format!("--direct={}", u8::from(name != "buffered")),
            "--rate=8m",
            "--output-format=json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stderr(&o)
    };
    let alone = job("alone");
    assert!(!alone.contains("came from elsewhere"), "{alone}");
    let other = fs.path().join("other");
    // In a process group of its own, so the whole group goes at the end: killing the shell
    // alone left its dd running, the file system busy and the loop device mounted.
    let mut writer = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "while :; do dd if=/dev/zero of={} bs=1M count=48 oflag=direct conv=notrunc \
             status=none || exit; done",
            other.display()
        ))
        .process_group(0)
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let shared = job("shared");
    // Buffered and unflushed: the other writer's traffic hides whether its writes reached
    // the device, and the warning says that too.
    let buffered = job("buffered");
    let group = format!("-{}", writer.id());
    let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
    let _ = writer.wait();
    for said in [&shared, &buffered] {
        assert!(
            said.contains("the jobs wrote 16.00 MiB: the rest came from elsewhere"),
            "{said}"
        );
    }
    assert!(!shared.contains("left unflushed"), "{shared}");
    assert!(
        buffered.contains("the counters cannot show whether those reached"),
        "{buffered}"
    );
}
