//! fio job files: the SAS workload from seed 001, fio's own examples (Debian's fio-examples,
//! installed by scripts/test-deps.sh) as a compatibility corpus, and the job-file options that
//! shape a run (sizes, files, pacing, ordering), each checked by what actually happened.

use super::*;

const EXAMPLES: &str = "/usr/share/doc/fio/examples";

/// Examples not run here, though they parse: fio's own warning, "it can trigger kernel
/// panic" (online defragmentation racing direct and buffered AIO on one file, which corrupts
/// data in fio's run too). tests/cli/defrag.rs runs e4defrag alone.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "e4defrag.fio",
        "e4defrag racing direct AIO on one file (fio's run fails with EBUSY)",
    ),
    (
        "e4defrag2.fio",
        "fio's e4defrag fuzzer, which its header says can trigger a kernel panic",
    ),
];

/// Bytes a report's groups read and wrote, all together.
fn bytes_moved(r: &Value) -> u64 {
    r["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            g["total"]["read"]["bytes"].as_u64().unwrap()
                + g["total"]["write"]["bytes"].as_u64().unwrap()
        })
        .sum()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Runs a job file with JSON output; asserts the exit code; returns the report and stderr.
fn run_job(dir: &Path, args: &[&str], code: i32) -> (Value, String) {
    let mut all = vec!["job", "--output-format=json"];
    all.extend_from_slice(args);
    let o = run_in(dir, &all);
    assert_eq!(
        o.status.code(),
        Some(code),
        "{all:?}\nstdout: {}\nstderr: {}",
        stdout(&o),
        stderr(&o)
    );
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("one JSON document: {e}\n{}", stdout(&o)));
    (v, stderr(&o))
}

fn wall_s(report: &Value) -> f64 {
    report["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["jobs"].as_array().unwrap())
        .map(|j| j["elapsed_ns"].as_f64().unwrap() / 1e9)
        .fold(0.0, f64::max)
}

#[test]
fn the_sas_interleave_job_from_seed_001_runs_scaled_down() {
    // The job file exactly as the paper gives it (its directory and size overridden).
    let d = tmp();
    let f = write(
        d.path(),
        "sgf_demo2.fio",
        "[interleave]\ndirectory=/sasdata1\ndirect=0\ninvalidate=1\nblocksize=128k\n\
         rw=readwrite\nsize=3335m\n",
    );
    let dir = format!("directory={}", d.path().display());
    let (r, _) = run_job(
        d.path(),
        &[f.to_str().unwrap(), "--set", &dir, "--set", "size=64m"],
        0,
    );
    let j = job(&r);
    let (ri, rb, wi, wb) = counts(j);
    assert_eq!(
        rb + wb,
        64 << 20,
        "size is what both directions move together"
    );
    assert_eq!((rb % (128 << 10), wb % (128 << 10)), (0, 0));
    assert_eq!(ri + wi, 512);
    // rw=readwrite is 50/50, drawn per I/O.
    assert!((200..312).contains(&ri), "{ri} reads of 512");
    // fio's own rows: one job with both directions.
    let fj = &r["jobs"][0];
    assert_eq!(fj["jobname"], "interleave");
    assert_eq!(fj["read"]["io_bytes"].as_u64().unwrap(), rb);
    assert_eq!(fj["write"]["io_bytes"].as_u64().unwrap(), wb);
    assert_eq!(fj["job options"]["bs"], "131072");
    // Nothing left behind.
    assert_eq!(entries(d.path()), vec![f]);
}

/// What happened to one example.
struct Row {
    file: String,
    outcome: String,
}

#[test]
fn fios_examples_parse_or_are_refused_with_a_reason_and_plain_file_ones_run() {
    let Ok(list) = std::fs::read_dir(EXAMPLES) else {
        skip!("{EXAMPLES} is missing (scripts/test-deps.sh installs fio-examples)");
        return;
    };
    let mut files: Vec<PathBuf> = list
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .collect();
    files.sort();
    assert!(
        files.len() > 50,
        "the corpus is incomplete: {}",
        files.len()
    );
    let (mut parsed, mut ran, mut refused) = (0, 0, 0);
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let work = tmp();
        let o = bin()
            .current_dir(work.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .args(["job", f.to_str().unwrap(), "--parse-only"])
            .output()
            .unwrap();
        let err = stderr(&o);
        match o.status.code() {
            Some(2) => {
                // Refused: one line, naming the file and line (or the variable) and why.
                let line = err.lines().last().unwrap_or("").to_string();
                let precise = line.contains(&format!("{}:", f.display()))
                    && (line.contains("not supported")
                        || line.contains("no such engine")
                        || line.contains("is not set")
                        || line.contains("but this machine has")
                        || line.contains("unknown option")
                        || line.contains("expected"));
                if !precise || err.lines().filter(|l| !l.contains("warning")).count() != 1 {
                    failures.push(format!("{name}: refusal is not one precise line: {err}"));
                }
                refused += 1;
                let why = line.split(": ").skip(1).collect::<Vec<_>>().join(": ");
                rows.push(Row {
                    file: name,
                    outcome: format!("refused: {}", why.chars().take(110).collect::<String>()),
                });
                continue;
            }
            Some(0) => parsed += 1,
            other => {
                failures.push(format!("{name}: exit {other:?}: {err}"));
                continue;
            }
        }
        let plan = stdout(&o);
        // fio's hardware engines and zoned mode: options checked, as fio's --parse-only does.
        if let Some(l) = plan
            .lines()
            .find(|l| l.ends_with("iogauge does not run it"))
        {
            let needs = l
                .split("(fio's; needs ")
                .nth(1)
                .and_then(|n| n.rsplit_once("): its options"))
                .map(|n| n.0);
            rows.push(Row {
                file: name,
                outcome: format!("parsed; not run: needs {}", needs.unwrap_or("?")),
            });
            continue;
        }
        if plan.contains("files=/dev/") {
            rows.push(Row {
                file: name,
                outcome: "parsed; not run: it targets a device".into(),
            });
            continue;
        }
        // An exec job's program that this machine lacks (exec.fio's turbostat).
        let text = std::fs::read_to_string(f).unwrap();
        let absent = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("program="))
            .find(|p| p.starts_with('/') && !Path::new(p).exists());
        if let Some(p) = absent {
            rows.push(Row {
                file: name,
                outcome: format!("parsed; not run: its program {p} is not installed here"),
            });
            continue;
        }
        if let Some((_, why)) = NOT_RUN.iter().find(|(f, _)| *f == name) {
            rows.push(Row {
                file: name,
                outcome: format!("parsed; not run here: {why}"),
            });
            continue;
        }
        // Scaled down, in a temp dir: absolute file names move there too.
        let dir = format!("directory={}", work.path().display());
        let mut args = vec![
            "job".to_string(),
            f.display().to_string(),
            "--output-format=json".into(),
        ];
        for set in [
            dir.as_str(),
            "size=4m",
            "runtime=1",
            "ramp_time=0",
            "startdelay=0",
            "loops=1",
        ] {
            args.extend(["--set".into(), set.into()]);
        }
        // Absolute file names move into the temp dir as one file; relative ones follow the
        // directory there, each job keeping its own.
        if text
            .lines()
            .any(|l| l.trim_start().starts_with("filename=/"))
        {
            args.extend(["--set".into(), "filename=data".into()]);
        }
        if plan.contains("filesize") || text.contains("filesize") {
            args.extend(["--set".into(), "filesize=1m".into()]);
        }
        // Thousands of files per job (filecreate's 31,250) scaled down like the sizes.
        if text.contains("nrfiles") {
            args.extend(["--set".into(), "nrfiles=64".into()]);
        }
        let o = run_in(
            work.path(),
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        let report: Option<Value> = serde_json::from_slice(&o.stdout).ok();
        let errors = report
            .as_ref()
            .map_or(0, |r| r["errors"].as_array().map_or(0, Vec::len));
        // Multicast needs a route for its group (a default route does): a machine without
        // one cannot run netio_multicast.fio, which says so.
        let unroutable = ["Network is unreachable", "No such device"]
            .iter()
            .any(|m| stderr(&o).contains(m) || stdout(&o).contains(m));
        if name.starts_with("netio") && unroutable {
            skip!("{name}: no route for its multicast group here");
            continue;
        }
        if o.status.code() != Some(0) || errors > 0 {
            failures.push(format!(
                "{name}: the scaled run failed (exit {:?}): {}",
                o.status.code(),
                stderr(&o)
            ));
            continue;
        }
        let r = report.unwrap();
        let bytes = bytes_moved(&r);
        if bytes == 0 {
            failures.push(format!("{name}: ran but moved nothing"));
        }
        ran += 1;
        rows.push(Row {
            file: name.clone(),
            outcome: format!("parsed; ran scaled down: {} moved", bytes),
        });
        let left: Vec<_> = entries(work.path());
        if !left.is_empty() {
            failures.push(format!("{name}: left files behind: {left:?}"));
        }
    }
    println!("\n{:<34} outcome", "fio example");
    for r in &rows {
        println!("{:<34} {}", r.file, r.outcome);
    }
    println!(
        "\n{} examples: {parsed} parsed ({ran} ran scaled down), {refused} refused with a reason",
        files.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(parsed + refused, files.len());
    assert!(ran >= 10, "only {ran} examples ran");
    // What parses only grows (fio 3.33 parses 67; iogauge refuses an unset ${VAR} that fio
    // would make empty, and a NUMA node the machine lacks).
    assert!(parsed >= 73, "only {parsed} examples parse");
}

#[test]
fn job_file_syntax_errors_and_refusals_name_file_and_line_and_create_nothing() {
    let d = tmp();
    let cases = [
        (
            "[a]\nrw=read\nsize=1m\nbogus=1\n",
            "4: bogus=1: unknown option",
        ),
        (
            "[a]\nsize=1m\nrw=write\nverify=crc32c\ntrim_percentage=10\n",
            "5: trim_percentage=10: not supported: verify's trims",
        ),
        (
            "[a]\nsize=1m\nioengine=libpmem\n",
            "3: ioengine=libpmem: not supported: fio's libpmem engine needs persistent memory",
        ),
        (
            "[a]\nrw = randread\n",
            "2: rw= randread: fio fails to parse",
        ),
        ("size=1m\n[a]\n", "1: size: an option before any [section]"),
        (
            "[a]\nsize=1m\n[b]\nwait_for=c\n",
            "4: wait_for=c: no earlier job is named \"c\"",
        ),
        (
            "[a]\nsize=1m\nbssplit=4k/50:8k/40\n",
            "3: bssplit=4k/50:8k/40: expected",
        ),
        (
            "[a]\nrw=randread\nsize=1m\nrandom_distribution=zipf:1\n",
            "zipf:THETA with THETA > 0, not 1",
        ),
    ];
    for (text, want) in cases {
        let f = write(d.path(), "bad.fio", text);
        let o = run_in(d.path(), &["job", f.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{text:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("{}:", f.display())) && err.contains(want),
            "{text:?}\n{err}"
        );
        assert_eq!(entries(d.path()), vec![f.clone()], "nothing created");
    }
    // `iogauge FILE.fio` is `iogauge job FILE.fio`; --section picks jobs; an unknown one fails.
    let f = write(
        d.path(),
        "ok.fio",
        "[a]\nioengine=null\nsize=1m\n[b]\nioengine=null\nsize=2m\n",
    );
    let out = ok_in(
        d.path(),
        &[f.to_str().unwrap(), "--parse-only", "--section=b"],
    );
    assert!(out.contains("  b: ") && !out.contains("  a: "), "{out}");
    let o = run_in(d.path(), &["job", f.to_str().unwrap(), "--section=zz"]);
    assert!(stderr(&o).contains("--section=zz: no such job section; the files have: a, b"));
}

#[test]
fn command_line_options_are_defaults_and_set_overrides_win() {
    let d = tmp();
    let f = write(
        d.path(),
        "j.fio",
        "[global]\nioengine=null\nsize=1m\n[a]\nbs=8k\n[global]\nbs=16k\n[b]\n",
    );
    let p = f.to_str().unwrap();
    // fio's rule: --bs on the command line is a default the file's bs overrides.
    let out = ok_in(
        d.path(),
        &["job", p, "--parse-only", "--bs=64k", "--iodepth=2"],
    );
    assert!(out.contains("  a: rw=read bs=8192 size=1048576"), "{out}");
    assert!(out.contains("  b: rw=read bs=16384 size=1048576"), "{out}");
    let out = ok_in(d.path(), &["job", p, "--parse-only", "--set", "bs=4k"]);
    assert!(
        out.contains("  a: rw=read bs=4096") && out.contains("  b: rw=read bs=4096"),
        "{out}"
    );
    // Two files run one after another.
    let g = write(d.path(), "k.fio", "[c]\nioengine=null\nsize=1m\n");
    let out = ok_in(d.path(), &["job", p, g.to_str().unwrap(), "--parse-only"]);
    assert!(out.contains("group 2, after group 1 ends:\n  c: "), "{out}");
    // bs = 8k is read as fio reads it (8 bytes), with a warning that says so.
    let h = write(d.path(), "q.fio", "[q]\nioengine=null\nsize=1m\nbs = 8k\n");
    let o = run_in(d.path(), &["job", h.to_str().unwrap(), "--parse-only"]);
    let err = stderr(&o);
    assert!(
        err.contains(
            "q.fio:4: bs = 8k: fio reads a number after '= ' without its unit, so this is 8, not 8k"
        ),
        "{err}"
    );
    // …and runs it, as fio does: 1 MiB in 8-byte I/Os.
    assert!(
        stdout(&o).contains("  q: rw=read bs=8 size=1048576"),
        "{}",
        stdout(&o)
    );
    let o = run_in(
        d.path(),
        &["job", h.to_str().unwrap(), "--output-format=json"],
    );
    let r: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(counts(job(&r)), (131072, 1 << 20, 0, 0));
    // Options fio uses only internally are named once, not refused.
    let i = write(
        d.path(),
        "i.fio",
        "[global]\nthread\ngtod_reduce=1\n[x]\nioengine=null\nsize=1m\nthread=1\n[y]\nioengine=null\nsize=1m\n",
    );
    let o = run_in(d.path(), &["job", i.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(err.matches("ignored fio options").count(), 1, "{err}");
    assert!(
        err.contains("thread (iogauge always runs jobs as threads)") && err.contains("gtod_reduce"),
        "{err}"
    );
    let help = ok_in(d.path(), &["help", "options"]);
    for row in [
        "bssplit",
        "random_distribution",
        "thinktime",
        "wait_for",
        "gtod_reduce",
        "verify",
    ] {
        assert!(
            help.contains(&format!("  {row}")),
            "{row} missing from help options"
        );
    }
}

#[test]
fn block_size_mixes_files_and_percent_sizes_move_exact_bytes() {
    let d = tmp();
    let dir = format!("directory={}", d.path().display());
    // Three files of 256 KiB each, written with a bssplit: every byte once.
    let f = write(
        d.path(),
        "w.fio",
        &format!("[w]\n{dir}\nrw=write\nnrfiles=3\nfilesize=256k\nbssplit=4k/50:16k/30:64k/20\n"),
    );
    let (r, _) = run_job(d.path(), &[f.to_str().unwrap(), "--keep"], 0);
    let (_, _, wi, wb) = counts(job(&r));
    assert_eq!(wb, 3 * (256 << 10));
    assert!(wi > 3 * 4 && wi < 3 * 64, "{wi} I/Os of mixed sizes");
    for i in 0..3 {
        let p = d.path().join(format!("w.0.{i}"));
        assert_eq!(
            std::fs::metadata(&p).unwrap().len(),
            256 << 10,
            "{}",
            p.display()
        );
    }
    // size=50% of those files, read back with a bsrange: half of each.
    let g = write(
        d.path(),
        "r.fio",
        &format!("[w]\n{dir}\nrw=randread\nnrfiles=3\nsize=50%\nbsrange=4k-32k\n"),
    );
    let (r, _) = run_job(d.path(), &[g.to_str().unwrap(), "--keep"], 0);
    let (_, rb, _, _) = counts(job(&r));
    assert_eq!(rb, 3 * (128 << 10));
    // Per-direction sizes: 4k reads, 64k writes; io_size ends the job once reached, its
    // last I/O whole (fio 3.33 moves 57,344 + 1,048,576 bytes here, and so does iogauge).
    let h = write(
        d.path(),
        "m.fio",
        &format!("[w]\n{dir}\nrw=randrw\nnrfiles=3\nbs=4k,64k\nio_size=1m\nunlink=1\n"),
    );
    let (r, _) = run_job(d.path(), &[h.to_str().unwrap(), "--keep"], 0);
    let (ri, rb, wi, wb) = counts(job(&r));
    assert!(
        (1 << 20..(1 << 20) + 65536).contains(&(rb + wb)),
        "{rb} + {wb}"
    );
    assert_eq!((rb, wb), (ri * 4096, wi * 65536));
    // unlink=1 removed the files even with --keep.
    let left: Vec<_> = entries(d.path())
        .into_iter()
        .filter(|p| p.extension().is_none_or(|e| e != "fio"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn pacing_and_ordering_options_shape_the_run() {
    let d = tmp();
    // rate_iops: 200 I/Os per second for 2 s, give or take the clock.
    let f = write(
        d.path(),
        "rate.fio",
        "[r]\nioengine=null\nsize=1g\nrw=randread\ntime_based\nruntime=2\nrate_iops=200\n",
    );
    let (r, _) = run_job(d.path(), &[f.to_str().unwrap()], 0);
    let iops = job(&r)["read"]["iops"].as_f64().unwrap();
    assert!(
        (180.0..=215.0).contains(&iops),
        "rate_iops=200 gave {iops:.0} IOPS"
    );
    // rate (bytes per second) per direction: writes capped, reads not.
    let f = write(
        d.path(),
        "rate2.fio",
        "[r]\nioengine=null\nsize=1g\nrw=randrw\nbs=64k\ntime_based\nruntime=1\nrate=,6400k\n",
    );
    let (r, _) = run_job(d.path(), &[f.to_str().unwrap()], 0);
    let j = job(&r);
    let w = j["write"]["bytes"].as_f64().unwrap() / (j["elapsed_ns"].as_f64().unwrap() / 1e9);
    assert!(
        (5.8e6..=7.2e6).contains(&w),
        "writes at {w:.0} B/s, cap 6553600"
    );
    // thinktime: 30 I/Os with 20 ms after each of the first 29.
    let f = write(
        d.path(),
        "think.fio",
        "[t]\nioengine=null\nsize=120k\nthinktime=20000\n",
    );
    let (r, _) = run_job(d.path(), &[f.to_str().unwrap()], 0);
    let t = wall_s(&r);
    assert!(
        (0.55..2.0).contains(&t),
        "30 I/Os with 20 ms thinktime took {t:.2} s"
    );
    // wait_for: b starts when a is done (after ~0.4 s); startdelay holds c back 1.5 s;
    // c's exitall then ends d, which would otherwise run a minute.
    let f = write(
        d.path(),
        "order.fio",
        "[global]\nioengine=null\nsize=1g\n\
         [a]\nnumber_ios=20\nthinktime=20ms\n\
         [b]\nwait_for=a\nnumber_ios=1\n\
         [c]\nstartdelay=1500ms\nnumber_ios=1\nexitall\n\
         [d]\ntime_based\nruntime=60\nrate_iops=1000\n",
    );
    let t0 = Instant::now();
    let (r, _) = run_job(d.path(), &[f.to_str().unwrap()], 0);
    let took = t0.elapsed();
    assert!(
        took < Duration::from_secs(20),
        "exitall did not end d: {took:?}"
    );
    let jobs = r["groups"][0]["jobs"].as_array().unwrap();
    let ios = |i: usize| jobs[i]["read"]["ios"].as_u64().unwrap();
    assert_eq!((ios(0), ios(1), ios(2)), (20, 1, 1));
    assert!(ios(3) > 100, "d ran until c ended: {}", ios(3));
    assert!(jobs[3]["elapsed_ns"].as_f64().unwrap() < 5e9);
}

/// fio's exit_what, as exitwhat.fio uses it: a job with exitall stops its reporting group
/// (new_group starts one; the default), every job running (stonewall), or those and the rest
/// of the run (all).
#[test]
fn exit_what_says_which_jobs_an_exitall_job_stops() {
    let d = tmp();
    let run = |what: &str| {
        let text = format!(
            "[global]\nioengine=null\nsize=1g\n\
             [short]\nnew_group=1\nnumber_ios=1\nstartdelay=300ms\nexitall=1\nexit_what={what}\n\
             [long]\nnew_group=1\ntime_based\nruntime=3\nrate_iops=1000\n\
             [later]\nstonewall\nnumber_ios=5\n"
        );
        let f = write(d.path(), "exit.fio", &text);
        let (r, _) = run_job(d.path(), &[f.to_str().unwrap()], 0);
        let secs = r["groups"][0]["jobs"][1]["elapsed_ns"].as_f64().unwrap() / 1e9;
        (secs, r["groups"].as_array().unwrap().len())
    };
    // group: long is in another reporting group, so it runs its 3 s; the next group runs.
    let (secs, groups) = run("group");
    assert!(secs > 2.5, "long ran {secs:.2} s");
    assert_eq!(groups, 2);
    // stonewall: every job running stops when short ends (~0.3 s); the next group runs.
    let (secs, groups) = run("stonewall");
    assert!(secs < 1.5, "long ran {secs:.2} s");
    assert_eq!(groups, 2);
    // all: the same, and the run ends there.
    let (secs, groups) = run("all");
    assert!(secs < 1.5, "long ran {secs:.2} s");
    assert_eq!(groups, 1);
    // The fio example itself parses.
    let ex = Path::new("/usr/share/doc/fio/examples/exitwhat.fio");
    if ex.exists() {
        let o = run_in(d.path(), &["job", ex.to_str().unwrap(), "--parse-only"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains("exit_what=stonewall") && stdout(&o).contains("exit_what=all"));
    }
}

/// The job files README names ship in examples/ and run, scaled down, as README shows.
#[test]
fn the_readmes_example_job_files_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let d = tmp();
    let dir = format!("directory={}", d.path().display());
    for (file, set) in [
        ("sgf_demo2.fio", vec!["size=1m"]),
        ("sas.fio", vec!["size=1m", "numjobs=2"]),
    ] {
        let path = root.join(file);
        let path = path.to_str().unwrap();
        let mut args = vec!["job", path, "--output-format=json", "--set", &dir];
        for s in &set {
            args.extend(["--set", s]);
        }
        let o = run_in(d.path(), &args);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", stderr(&o));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        let moved = bytes_moved(&r);
        match file {
            // readwrite over 1 MiB: every block once, read or written.
            "sgf_demo2.fio" => assert_eq!(moved, 1 << 20, "{file}"),
            // Two sessions write 1 MiB each, then read the same files back.
            _ => {
                let g = r["groups"].as_array().unwrap();
                assert_eq!(g.len(), 2, "{file}");
                assert_eq!(g[0]["total"]["write"]["bytes"], 2 << 20);
                assert_eq!(g[1]["total"]["read"]["bytes"], 2 << 20);
                let layout = g[1]["jobs"][0]["files"][0]["layout"].as_str().unwrap();
                assert!(
                    layout.starts_with("existing"),
                    "reads the written files: {layout}"
                );
            }
        }
        assert!(entries(d.path()).is_empty(), "{file}: removed");
    }
}

/// Parsing is bounded: 4,000 sections parse (each job once in the plan), and more jobs than
/// fio's limit of 4,096 (sections × numjobs) are refused with the reason, nothing created.
/// (That the time is linear is bench/'s to show, not a timed test's.)
#[test]
fn many_sections_parse_in_linear_time_and_the_job_cap_is_said() {
    let d = tmp();
    let mut text = String::from("[global]\nioengine=null\nsize=1m\n");
    for i in 0..4000 {
        text += &format!("[j{i}]\nrw=read\n");
    }
    let ok = write(d.path(), "ok.fio", &text);
    let out = ok_in(d.path(), &["job", ok.to_str().unwrap(), "--parse-only"]);
    assert_eq!(out.lines().filter(|l| l.starts_with("  j")).count(), 4000);
    text += "[more]\nnumjobs=100\n";
    let big = write(d.path(), "big.fio", &text);
    let o = run_in(d.path(), &["job", big.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("more than 4096 jobs"), "{}", stderr(&o));
    assert_eq!(entries(d.path()).len(), 2, "only the two job files");
}

/// `rw=read:-8k` (fio's backwards-read.fio, scaled down): the I/O log iogauge writes has the
/// offsets fio's own log has for the same job (the first read at 0, then from the end
/// backwards, wrapping as fio wraps), and the same count. Without fio, iogauge's offsets
/// against the sequence fio's rule gives.
#[test]
fn a_negative_gap_reads_backwards_as_fio_does() {
    let d = tmp();
    let job = [
        "--name=b",
        "--bs=4k",
        "--rw=read:-8k",
        "--filename=f",
        "--size=64k",
    ];
    let offsets = |log: &str| -> Vec<u64> {
        std::fs::read_to_string(d.path().join(log))
            .unwrap()
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.get(2) == Some(&"read")).then(|| f[3].parse().unwrap())
            })
            .collect()
    };
    let o = run_in(
        d.path(),
        &[
            &["fio"][..],
            &job,
            &["--write_iolog=ig.log", "--output=/dev/null"],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ours = offsets("ig.log");
    let k = 4096;
    let mut rule = vec![0];
    rule.extend((0..15).map(|i| 64 * 1024 - 2 * k - i * k));
    assert_eq!(ours, rule);
    std::fs::remove_file(d.path().join("f")).unwrap();
    let Ok(fio) = std::process::Command::new("fio")
        .current_dir(d.path())
        .args(job)
        .args(["--write_iolog=fio.log", "--output=/dev/null"])
        .output()
    else {
        skip!("fio is not installed: the offsets are checked against fio's rule only");
        return;
    };
    assert!(fio.status.success(), "{}", stderr(&fio));
    assert_eq!(ours, offsets("fio.log"));
}

/// fio's rate floors: a job held to 100 I/Os per second (rate_iops) with a floor of 200
/// (rate_iops_min) fails once fio's 2 s settle and one ratecycle have passed, naming the
/// floor, the direction and what it got; with a floor below its rate it runs its time out.
#[test]
fn a_rate_floor_not_met_fails_the_job_after_fios_settle() {
    let d = tmp();
    let job = |floor: &str| {
        let started = std::time::Instant::now();
        let o = run_in(
            d.path(),
            &[
                "run",
                "--ioengine=null",
                "--size=1g",
                "--rw=read",
                "--time_based",
                "--runtime=6",
                "--rate_iops=100",
                floor,
                "--output-format=json",
            ],
        );
        (o, started.elapsed())
    };
    let (o, took) = job("--rate_iops_min=200");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "--rate_iops_min=200: the read floor of 200 IOPS was not met: 100 IOPS over the last"
        ),
        "{}",
        stderr(&o)
    );
    assert!(
        took < std::time::Duration::from_secs(5),
        "stopped at the check: {took:?}"
    );
    let (o, took) = job("--ratemin=200k");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(took >= std::time::Duration::from_secs(6));
    // fio looks at its floors as an I/O completes (1mbs_clients.fio: 4 KiB at 1,250 B/s, one
    // I/O every 3.3 s, floor 1,024 B/s): the wait between two I/Os is not a second of 0 B/s.
    let o = run_in(
        d.path(),
        &[
            "run",
            "--ioengine=null",
            "--size=1m",
            "--bs=4k",
            "--rw=read",
            "--time_based",
            "--runtime=4",
            "--rate=1250",
            "--ratemin=1024",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// blockalign, as JESD219 uses it: I/Os of 512 B to 64 KiB at random offsets on 4 KiB
/// boundaries (checked in the I/O log iogauge writes, fio's format); refused with the random
/// map, which would repeat blocks.
#[test]
fn blockalign_puts_every_random_offset_on_its_boundary() {
    let d = tmp();
    let f = d.path().join("f");
    let log = d.path().join("log");
    let args = [
        "fio".to_string(),
        "--name=j".into(),
        format!("--filename={}", f.display()),
        "--size=4m".into(),
        "--rw=randrw".into(),
        "--bssplit=512/50:4k/30:64k/20".into(),
        "--blockalign=4k".into(),
        "--norandommap".into(),
        "--number_ios=2000".into(),
        format!("--write_iolog={}", log.display()),
    ];
    let o = iogauge(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&log).unwrap();
    let ios: Vec<(u64, u64)> = text
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 5 && (w[2] == "read" || w[2] == "write"))
                .then(|| (w[3].parse().unwrap(), w[4].parse().unwrap()))
        })
        .collect();
    assert!(ios.len() > 200, "{} I/Os", ios.len());
    assert!(
        ios.iter().all(|(off, _)| off % 4096 == 0),
        "unaligned offsets"
    );
    assert!(
        ios.iter().any(|&(_, len)| len == 512),
        "small I/Os kept their size"
    );
    let o = iogauge(&[
        "run",
        &args[2],
        "--size=4m",
        "--rw=randread",
        "--bs=512",
        "--blockalign=4k",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs norandommap"), "{}", stderr(&o));
}
