//! `iogauge sweep`: a grid of points on tmpfs, each point's report and the index, a refused
//! corner recorded while the sweep goes on, the table in the seeds' shape, resume after
//! Ctrl-C, and the bad input that creates nothing.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use super::{bin, entries, iogauge, stderr, stdout, tmp};

fn index(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("index.json")).unwrap()).unwrap()
}

fn statuses(idx: &Value) -> Vec<String> {
    idx["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["status"].as_str().unwrap().to_string())
        .collect()
}

/// SGIO's BUFNO x BUFSIZE (seed 002) on a small file: a row per numpages, a column per bs,
/// every point's exact bytes in its own report; the corner whose transfer is larger than the
/// file is refused and recorded, and the others run.
#[test]
fn a_grid_runs_every_point_into_one_directory() {
    let d = tmp();
    // The data on tmpfs where there is one: every point then has the same warning.
    let shm = super::shm_tmpfs().map(|p| tempfile::tempdir_in(p).unwrap());
    let f = shm.as_ref().map_or(d.path(), |s| s.path()).join("data");
    let out = d.path().join("sweep");
    let o = iogauge(&[
        "sweep",
        &format!("--filename={}", f.display()),
        "--size=1m",
        "--rw=write",
        "--ioengine=pvsync",
        "--sweep",
        "bufno=1,4,32",
        "--sweep=bs=16k..64k:x2",
        "--dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a refused point: exit 1; {}",
        stderr(&o)
    );
    let idx = index(&out);
    assert_eq!(idx["schema"], "iogauge-sweep");
    let points = idx["points"].as_array().unwrap();
    assert_eq!(points.len(), 9);
    // 32 pages of 64k (2 MiB) do not fit a 1 MiB file: that point alone is refused.
    let want: Vec<&str> = vec!["ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "refused"];
    assert_eq!(statuses(&idx), want);
    assert!(
        points[8]["error"]
            .as_str()
            .unwrap()
            .contains("not a multiple of bs x numpages"),
        "{}",
        points[8]
    );
    assert!(points[8]["report"].is_null());
    for (k, p) in points.iter().enumerate().take(8) {
        assert_eq!(p["point"], k + 1);
        let report = out.join(p["report"].as_str().unwrap());
        let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        let j = &r["groups"][0]["jobs"][0];
        assert_eq!(
            j["write"]["bytes"],
            1 << 20,
            "point {}: the whole file",
            k + 1
        );
        let (pages, bs) = (&p["values"]["numpages"], &p["values"]["bs"]);
        let bs = match bs.as_str().unwrap() {
            "16k" => 16384,
            "32k" => 32768,
            _ => 65536,
        };
        let pages: u64 = pages.as_str().unwrap().parse().unwrap();
        assert_eq!(
            j["write"]["ios"],
            (1u64 << 20) / (bs * pages),
            "point {}",
            k + 1
        );
        // The report says how to run the point alone.
        let cmd: Vec<&str> = r["command_line"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(&cmd[..2], ["iogauge", "run"]);
        assert!(
            cmd.contains(&format!("--numpages={pages}").as_str()),
            "{cmd:?}"
        );
        assert!(p["figures"]["mb_per_s"].as_f64().unwrap() > 0.0);
    }
    // The CSV: a header and a row per point, each swept value a column.
    let csv = std::fs::read_to_string(out.join("index.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 10);
    assert!(lines[0].starts_with("point,numpages,bs,status,mb_per_s,mib_per_s,iops,p99_us,"));
    assert!(lines[0].contains(",kernel,cpu,targets,error"));
    assert!(lines[1].starts_with("1,1,16k,ok,"));
    assert!(lines[9].starts_with("9,32,64k,refused,"));
    // The table on stdout and in table.txt: rows numpages, columns bs, MB/s.
    let table = stdout(&o);
    assert_eq!(
        std::fs::read_to_string(out.join("table.txt")).unwrap(),
        table
    );
    let rows: Vec<&str> = table.lines().collect();
    assert!(rows[0].starts_with("numpages \\ bs"), "{table}");
    assert!(
        rows[0].ends_with("16k   32k   64k") || rows[0].contains("32k"),
        "{table}"
    );
    assert!(
        rows[3].starts_with("32 ") && rows[3].ends_with("(refused)"),
        "{table}"
    );
    assert_eq!(rows[4], "(MB/s per point)");
    // What the cells' marks mean, where there are any: on tmpfs every point's report has the
    // no-device warning, so every cell is marked.
    let notes = rows[5..].iter().take_while(|r| r.starts_with('(')).count();
    if shm.is_some() {
        assert!(
            rows[1..4].iter().all(|r| r.matches(" *").count() >= 2),
            "{table}"
        );
        assert!(
            rows[5].starts_with("(* this point's report has warnings"),
            "{table}"
        );
    }
    // Then the answers: the best point, and the knee of each numeric axis of 3 or more values
    // (numpages, per bs; bs with its 3 values, per numpages), also kept in the index.
    assert!(rows[5 + notes].starts_with("best: "), "{table}");
    if shm.is_some() {
        assert!(rows[5 + notes].starts_with("best: numpages="), "{table}");
    }
    let knees = |axis: &str| rows.iter().filter(|r| r.starts_with(axis)).count();
    assert_eq!(knees("knee of numpages (bs="), 3, "{table}");
    assert_eq!(knees("knee of bs (numpages="), 3, "{table}");
    // One run per point: the last line says best and knees were not tested against noise.
    assert_eq!(
        rows[12 + notes],
        "(one run per point: best and knees are not tested against noise; --repeat 3 gives \
         each point a 95% interval)"
    );
    assert_eq!(rows.len(), 13 + notes, "{table}");
    assert_eq!(index(&out)["answers"].as_array().unwrap().len(), 8);
    // Each warning once, not once per point; the test file is gone.
    if shm.is_some() {
        let warned = stderr(&o).matches("no block device below it").count();
        assert_eq!(warned, 1, "{}", stderr(&o));
    } else {
        skip!("/dev/shm is not a tmpfs: the warning printed once is not checked");
    }
    assert!(!f.exists());
    // The page: the table, the answers, a chart of each figure by each option (a line per
    // value of the other option), and the latency-IOPS curve.
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("<h2 id=\"table\">") && html.contains("<li>best: numpages="));
    assert_eq!(
        html.matches("<svg ").count(),
        7,
        "3 figures x 2 options + 1"
    );
    assert!(html.contains("bandwidth by numpages") && html.contains("IOPS by bs"));
    assert!(html.contains("<a href=\"points/0001.json\">"));
    // iogauge report DIR draws it again, and gives the table, the CSV and the index.
    let o = iogauge(&["report", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), html);
    let o = iogauge(&["report", out.to_str().unwrap(), "--output-format=text"]);
    assert_eq!(stdout(&o), table);
    let o = iogauge(&["report", out.to_str().unwrap(), "--output-format=csv"]);
    assert_eq!(stdout(&o), csv);
    let o = iogauge(&["report", d.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("a sweep's directory holds index.json"),
        "{}",
        stderr(&o)
    );
    // Another metric, two other axes as the table's: --table picks them.
    let out2 = d.path().join("sweep2");
    let o = iogauge(&[
        "sweep",
        &format!("--filename={}", f.display()),
        "--size=256k",
        "--rw=read",
        "--sweep=iodepth=1,2",
        "--sweep=bs=4k,8k",
        "--sweep=ioengine=psync,pvsync",
        "--table=ioengine,iodepth",
        "--metric=iops",
        &format!("--dir={}", out2.display()),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = stdout(&o);
    // One table per value of the axis left out.
    assert!(t.starts_with("bs=4k:\nioengine \\ iodepth"), "{t}");
    assert!(t.contains("\nbs=8k:\n"), "{t}");
    assert_eq!(t.matches("(IOPS per point)").count(), 2, "{t}");
}

/// Ctrl-C stops the point running, keeps the index, and exits 130; --resume runs only what
/// is left and leaves the finished points' reports as they were.
#[test]
fn resume_after_ctrl_c_runs_only_the_points_left() {
    let d = tmp();
    let f = d.path().join("data");
    let out = d.path().join("sweep");
    let args = |resume: bool| {
        let mut a = vec![
            "sweep".to_string(),
            format!("--filename={}", f.display()),
            "--size=1m".into(),
            "--rw=randread".into(),
            "--time_based".into(),
            "--runtime=1".into(),
            "--sweep=iodepth=1,2,4,8".into(),
            format!("--dir={}", out.display()),
        ];
        if resume {
            a.push("--resume".into());
        }
        a
    };
    let child = bin()
        .args(args(false))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Point 1 takes a second; stop the sweep during point 2.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        let idx = out.join("index.json");
        if idx.exists() && statuses(&index(&out)).first().map(String::as_str) == Some("ok") {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(400));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--resume runs the points left"),
        "{}",
        stderr(&o)
    );
    let idx = index(&out);
    assert_eq!(statuses(&idx), ["ok", "interrupted", "pending", "pending"]);
    assert!(!f.exists(), "the interrupted point removed its file");
    let first = out.join("points/0001.json");
    let before = std::fs::read(&first).unwrap();

    // Resuming with other options is refused, and changes nothing.
    let mut other = args(true);
    other[2] = "--size=2m".into();
    let o = bin().args(&other).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("holds a sweep of another workload"),
        "{}",
        stderr(&o)
    );
    // Without --resume, a sweep's directory is not reused.
    let o = bin().args(args(false)).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give --resume"), "{}", stderr(&o));

    let o = bin().args(args(true)).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("1 of 4 points already done"), "{err}");
    assert!(
        !err.contains("point 1/4"),
        "point 1 is not run again: {err}"
    );
    assert_eq!(err.matches("iogauge: sweep: point ").count(), 6, "{err}");
    assert_eq!(statuses(&index(&out)), ["ok", "ok", "ok", "ok"]);
    assert_eq!(std::fs::read(&first).unwrap(), before);
    assert_eq!(entries(&out.join("points")).len(), 4);
}

#[test]
fn bad_sweeps_are_one_line_exit_2_and_create_nothing() {
    let d = tmp();
    let f = d.path().join("data");
    let out = d.path().join("sweep");
    let fname = format!("--filename={}", f.display());
    let dir = format!("--dir={}", out.display());
    for (extra, want) in [
        (
            vec!["--sweep=nosuch=1,2"],
            "--sweep=nosuch=1,2: nosuch is not a workload option",
        ),
        (vec!["--sweep=bs=64k..4k"], "the range runs upwards"),
        (
            vec!["--sweep=bs=4k,8k", "--sweep=blocksize=16k"],
            "bs is swept twice",
        ),
        (
            vec!["--sweep=bs=4k,8k", "--table=iodepth,bs"],
            "--table: iodepth is not swept",
        ),
        (
            vec!["--sweep=bs=4k,8k", "--table=bs"],
            "--table=bs: expected ROW,COL",
        ),
        (
            vec!["--sweep=bs=4k", "--metric=speed"],
            "--metric=speed: expected mb/s",
        ),
        (
            vec!["--sweep=bs=4k", "--set=size=1m"],
            "--set: overrides a job file's options",
        ),
        // No point can run: the base is bad, not a corner of the grid.
        (
            vec!["--sweep=numpages=2,4"],
            "sweep: no point can run: --numpages=2: needs a vectored engine",
        ),
        (
            vec!["--sweep=iodepth=1,2", "--resume"],
            "no sweep to resume there",
        ),
        // Counted, not made: the true count.
        (
            vec!["--sweep=iodepth=1..100000"],
            "1..100000:+1 is 100000 values: at most 1000",
        ),
        // One value in two spellings would run one point twice.
        (vec!["--sweep=bs=4k,4096"], "4096 is 4k again"),
        (vec!["--sweep=iodepth=8,08"], "08 is 8 again"),
    ] {
        let mut args = vec![
            "sweep",
            fname.as_str(),
            "--size=1m",
            "--rw=read",
            dir.as_str(),
        ];
        args.extend(extra.iter());
        let o = iogauge(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{extra:?}: {}", stderr(&o));
        assert!(entries(d.path()).is_empty(), "{extra:?}: nothing created");
    }
    // --dir naming a regular file, or inside one: said, not a raw OS error.
    let file = d.path().join("afile");
    std::fs::write(&file, b"x").unwrap();
    for (dir, want) in [
        (
            format!("--dir={}", file.display()),
            "exists and is not a directory",
        ),
        (
            format!("--dir={}/sub", file.display()),
            "does not exist or is not a directory",
        ),
    ] {
        let o = iogauge(&["sweep", fname.as_str(), "--size=1m", "--sweep=bs=4k", &dir]);
        assert_eq!(o.status.code(), Some(2), "{dir}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{dir}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
}

/// `--repeat=N`: the plan runs N times; the report is the last run's, with each job row's
/// spread over the runs, in the fio-shaped rows too; compare of two repeated reports compares
/// means and their intervals; a sweep point's figures are the means.
#[test]
fn repeat_reports_the_spread_and_compare_uses_it() {
    let d = tmp();
    let f = d.path().join("data");
    let fname = format!("--filename={}", f.display());
    let base = ["run", fname.as_str(), "--size=2m", "--rw=read", "--bs=64k"];
    let json_of = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let o = iogauge(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(
            stderr(&o).matches("iogauge: repeat ").count(),
            3,
            "{}",
            stderr(&o)
        );
        o
    };
    let o = json_of(&["--repeat=3", "--output-format=json"]);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["repeat"]["requested"], 3);
    assert_eq!(r["repeat"]["completed"], 3);
    assert_eq!(
        r["groups"][0]["jobs"][0]["read"]["bytes"],
        2 << 20,
        "the last run, whole"
    );
    let s = &r["jobs"][0]["iogauge_repeat"]["read"]["mib_per_s"];
    assert_eq!(s["n"], 3);
    let (mean, lo, hi) = (
        s["mean"].as_f64().unwrap(),
        s["ci95"][0].as_f64().unwrap(),
        s["ci95"][1].as_f64().unwrap(),
    );
    assert!(lo <= mean && mean <= hi && mean > 0.0, "{s}");
    assert!(s["min"].as_f64().unwrap() <= mean && mean <= s["max"].as_f64().unwrap());
    assert!(
        r["jobs"][0]["iogauge_repeat"]["write"].is_null(),
        "no writes: no spread"
    );
    assert!(!f.exists());
    // The text report says it.
    let o = json_of(&["--repeat=3"]);
    let text = stdout(&o);
    assert!(text.contains("Repeated: 3 of 3 runs"), "{text}");
    assert!(text.contains("job (group 1) read: "), "{text}");
    // Two repeated reports compared: means with their intervals.
    let a = d.path().join("a.json");
    let b = d.path().join("b.json");
    for p in [&a, &b] {
        let out = format!("--output={}", p.display());
        json_of(&["--repeat=3", "--output-format=json", &out]);
    }
    let o = iogauge(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(stdout(&o).contains("means are compared"), "{}", stdout(&o));
    assert!(stdout(&o).contains("%/±"), "{}", stdout(&o));
}

/// A job file as the base: the points override its options (over what the file says), and
/// each point's report names the command that runs it alone.
#[test]
fn a_job_file_is_swept_with_its_own_options_under_the_points() {
    let d = tmp();
    let f = d.path().join("data");
    let job = d.path().join("db.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nsize=4m\nbs=64k\n\n[reader]\nrw=randread\nnumjobs=2\n\
             group_reporting\n",
            f.display()
        ),
    )
    .unwrap();
    let out = d.path().join("sweep");
    let o = iogauge(&[
        "sweep",
        "--job",
        job.to_str().unwrap(),
        "--set",
        "size=2m",
        "--sweep=bs=4k,16k",
        &format!("--dir={}", out.display()),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let idx = index(&out);
    assert_eq!(statuses(&idx), ["ok", "ok"]);
    for (p, bs) in idx["points"]
        .as_array()
        .unwrap()
        .iter()
        .zip([4096u64, 16384])
    {
        let r: Value = serde_json::from_slice(
            &std::fs::read(out.join(p["report"].as_str().unwrap())).unwrap(),
        )
        .unwrap();
        let g = &r["groups"][0];
        assert_eq!(g["jobs"].as_array().unwrap().len(), 2, "the file's numjobs");
        // --set size=2m over the file's 4m; the point's bs over the file's 64k.
        let read: u64 = g["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["read"]["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(read, 2 * (2 << 20));
        assert_eq!(g["jobs"][0]["options"]["bs"], bs.to_string());
        let cmd: Vec<&str> = r["command_line"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let want_bs = format!("bs={}", if bs == 4096 { "4k" } else { "16k" });
        assert_eq!(
            cmd,
            [
                "iogauge",
                "job",
                job.to_str().unwrap(),
                "--set",
                "size=2m",
                "--set",
                &want_bs
            ]
        );
    }
    assert!(!f.exists());
}

/// Every file under `dir` with its bytes (links as their target), to prove nothing changed.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut all = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                todo.push(p);
            } else if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                all.push((p, t.into_os_string().into_encoded_bytes()));
            } else {
                let b = std::fs::read(&p).unwrap();
                all.push((p, b));
            }
        }
    }
    all.sort();
    all
}

/// `--resume` takes back only its own directory: a different grid, an edited table, a
/// foreign point report or an index that is not iogauge's is refused (exit 2, one line, every
/// byte as it was); links planted where a sweep writes (at the old `NAME.tmp` names too) are
/// never followed; `--overwrite-output` replaces the user's edited table, never a link.
#[test]
fn resume_takes_back_only_its_own_directory() {
    let d = tmp();
    let out = d.path().join("sweep");
    let victim = d.path().join("victim");
    std::fs::write(&victim, b"root's file").unwrap();
    let args = |axis: &str, extra: &[&str]| {
        let mut a = vec![
            "sweep".to_string(),
            "--ioengine=null".into(),
            "--size=1m".into(),
            "--rw=read".into(),
            format!("--sweep=bs={axis}"),
            format!("--dir={}", out.display()),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let o = bin().args(args("4k,8k,16k", &[])).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Links at every name the sweep writes through, and at the names of the old temp files.
    for name in [
        "index.json.tmp",
        "index.csv.tmp",
        "points/0002.json.tmp",
        "table.txt.tmp",
    ] {
        std::os::unix::fs::symlink(&victim, out.join(name)).unwrap();
    }
    let refused = |a: Vec<String>, why: &str| {
        let before = snapshot(d.path());
        let o = bin().args(&a).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {err}");
        assert!(err.contains(why), "{a:?}: want {why:?} in {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(snapshot(d.path()), before, "{a:?} changed something");
    };
    refused(args("4k,8k", &["--resume"]), "another grid");
    refused(args("4k,8k,32k", &["--resume"]), "4k,8k,16k");
    // The same grid resumes, writing nothing through the links.
    let o = bin()
        .args(args("4k,8k,16k", &["--resume"]))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), b"root's file");
    assert!(
        std::fs::symlink_metadata(out.join("index.json.tmp"))
            .unwrap()
            .is_symlink()
    );

    // The user's edits are theirs.
    std::fs::write(out.join("table.txt"), b"my notes").unwrap();
    refused(args("4k,8k,16k", &["--resume"]), "table.txt");
    let o = bin()
        .args(args("4k,8k,16k", &["--resume", "--overwrite-output"]))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_ne!(std::fs::read(out.join("table.txt")).unwrap(), b"my notes");
    std::fs::write(out.join("points/0002.json"), b"{}").unwrap();
    refused(args("4k,8k,16k", &["--resume"]), "points/0002.json");
    std::fs::remove_file(out.join("points/0002.json")).unwrap();
    // A link in a report's place is refused even with --overwrite-output.
    std::os::unix::fs::symlink(&victim, out.join("index.html")).unwrap_or_else(|_| {
        std::fs::remove_file(out.join("index.html")).unwrap();
        std::os::unix::fs::symlink(&victim, out.join("index.html")).unwrap();
    });
    refused(
        args("4k,8k,16k", &["--resume", "--overwrite-output"]),
        "symbolic link",
    );
    std::fs::remove_file(out.join("index.html")).unwrap();
    // An index that is not iogauge's (edited) is no record to trust.
    let text = std::fs::read_to_string(out.join("index.json")).unwrap();
    std::fs::write(
        out.join("index.json"),
        text.replace("\"ok\"", "\"pending\""),
    )
    .unwrap();
    refused(args("4k,8k,16k", &["--resume"]), "index.json");
    assert_eq!(std::fs::read(&victim).unwrap(), b"root's file");
}

/// The soak: a sweep of 50 points with repeats, stopped at a random moment by Ctrl-C,
/// SIGHUP or its reader going away, again and again (IOGAUGE_SOAK_ROUNDS, 6 by default; 30
/// on demand): every time no panic, the user's file untouched, no test file left, the index
/// whole with each point ok, interrupted or pending (complete when the exit is 0), and
/// `--resume` finishes what is left.
#[test]
fn a_sweep_stopped_at_random_moments_never_loses_or_leaves_anything() {
    use std::io::Read;
    let rounds: u64 = std::env::var("IOGAUGE_SOAK_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(6);
    let d = tmp();
    let shm = super::shm_tmpfs().map(|p| tempfile::tempdir_in(p).unwrap());
    let data_dir = shm.as_ref().map_or(d.path(), |s| s.path());
    let data = data_dir.join("data");
    let users = data_dir.join("users-file");
    std::fs::write(&users, b"the user's").unwrap();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..rounds {
        let out = d.path().join(format!("sweep{round}"));
        let args = vec![
            "sweep".to_string(),
            format!("--filename={}", data.display()),
            "--size=256k".into(),
            "--rw=randrw".into(),
            "--sweep=bs=4k,8k,16k,32k,64k".into(),
            "--sweep=iodepth=1..10".into(),
            "--ioengine=io_uring".into(),
            "--repeat=2".into(),
            format!("--dir={}", out.display()),
        ];
        let mut child = bin()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let how = round % 3;
        std::thread::sleep(Duration::from_millis(200 + next() % 2500));
        let (mut out_pipe, mut err_pipe) = (child.stdout.take(), child.stderr.take());
        match how {
            0 => unsafe { libc::kill(child.id() as i32, libc::SIGINT) },
            1 => unsafe { libc::kill(child.id() as i32, libc::SIGHUP) },
            _ => {
                // The reader goes away: both pipes closed.
                drop(out_pipe.take());
                drop(err_pipe.take());
                0
            }
        };
        let mut said = String::new();
        for p in [
            out_pipe.as_mut().map(|p| p as &mut dyn Read),
            err_pipe.as_mut().map(|p| p as &mut dyn Read),
        ]
        .into_iter()
        .flatten()
        {
            let _ = p.read_to_string(&mut said);
        }
        let code = child.wait().unwrap().code();
        let what = format!(
            "round {round} (stopped by {})",
            ["SIGINT", "SIGHUP", "a closed pipe"][how as usize]
        );
        assert!(!said.contains("panicked"), "{what}: {said}");
        assert!(
            matches!(code, Some(0 | 130 | 129 | 141)),
            "{what}: exit {code:?}: {said}"
        );
        assert_eq!(std::fs::read(&users).unwrap(), b"the user's", "{what}");
        assert!(!data.exists(), "{what}: the test file is left");
        if !out.join("index.json").exists() {
            // Stopped before the first point: nothing was made.
            assert_ne!(code, Some(0), "{what}");
            continue;
        }
        let st = statuses(&index(&out));
        assert_eq!(st.len(), 50, "{what}");
        assert!(
            st.iter()
                .all(|s| ["ok", "interrupted", "pending"].contains(&s.as_str())),
            "{what}: {st:?}"
        );
        if code == Some(0) {
            assert!(st.iter().all(|s| s == "ok"), "{what}: {st:?}");
            assert!(out.join("table.txt").is_file() && out.join("index.html").is_file());
            continue;
        }
        // Every finished point's report is whole.
        for (i, s) in st.iter().enumerate() {
            if s == "ok" {
                let r = out.join(format!("points/{:04}.json", i + 1));
                let v: Value = serde_json::from_slice(&std::fs::read(&r).unwrap()).unwrap();
                assert!(v["groups"].is_array(), "{what}: {}", r.display());
            }
        }
        if round % 2 == 0 {
            let mut resume = args.clone();
            resume.push("--resume".into());
            let o = bin().args(&resume).output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{what}, resumed: {}", stderr(&o));
            assert!(statuses(&index(&out)).iter().all(|s| s == "ok"));
            assert!(!data.exists());
        }
    }
}

/// A buffered read served by the page cache next to a direct one: every output of the sweep
/// marks the cached cell (table.txt's †, index.csv's cached column and warnings, index.json,
/// index.html's badge), and the cached cell is never named best, however fast.
#[test]
fn cached_cells_are_marked_everywhere_and_never_best() {
    let Some(fs) = super::LoopFs::new(96) else {
        return;
    };
    let d = tmp();
    let out = d.path().join("sweep");
    let o = iogauge(&[
        "sweep",
        &format!("--filename={}", fs.path().join("data").display()),
        "--size=16m",
        "--rw=read",
        "--bs=64k",
        "--invalidate=0",
        "--sweep=direct=0,1",
        "--dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let idx = index(&out);
    let points = idx["points"].as_array().unwrap();
    let cached: Vec<bool> = points
        .iter()
        .map(|p| p["figures"]["cached"].as_bool().unwrap())
        .collect();
    assert_eq!(cached, [true, false], "{points:?}");
    assert!(
        points[0]["figures"]["warnings"]
            .to_string()
            .contains("came from the page cache"),
        "{}",
        points[0]
    );
    let best = idx["answers"][0].as_str().unwrap();
    assert!(best.starts_with("best: direct=1"), "{best}");
    assert!(
        best.contains("1 point(s) the page cache may have served left out"),
        "{best}"
    );
    let table = std::fs::read_to_string(out.join("table.txt")).unwrap();
    assert!(
        table.contains(" †") && table.contains("† the page cache"),
        "{table}"
    );
    let csv = std::fs::read_to_string(out.join("index.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let head = rows.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|c| c == n).unwrap();
    let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(&rows[0][col("cached")], "1");
    assert_eq!(&rows[1][col("cached")], "0");
    assert!(rows[0][col("warnings")].contains("page cache"));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("page cache: not best"),
        "no badge in the HTML"
    );
}

/// A noisy sweep: Poisson arrivals at 40 IOPS over half a second, randomly seeded, three runs
/// a point. Block size does not change the rate, so the two points differ by noise alone: the
/// answers say "no clear best" (and why) in every output, the cells carry their intervals,
/// and the charts draw an error bar per repeated point.
#[test]
fn a_sweep_within_noise_has_no_clear_best() {
    let d = tmp();
    let out = d.path().join("sweep");
    let o = iogauge(&[
        "sweep",
        &format!("--filename={}", d.path().join("data").display()),
        "--size=1m",
        "--rw=read",
        "--runtime=500ms",
        "--time_based",
        "--rate_iops=40",
        "--rate_process=poisson",
        "--randrepeat=0",
        "--repeat=3",
        "--metric=iops",
        "--sweep=bs=4k,8k",
        "--dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let idx = index(&out);
    for p in idx["points"].as_array().unwrap() {
        let f = &p["figures"];
        assert_eq!(f["runs"], 3, "{p}");
        assert!(f["iops_ci95_pct"].as_f64().unwrap() > 0.0, "{p}");
    }
    let best = idx["answers"][0].as_str().unwrap();
    assert!(
        best.starts_with("no clear best: bs=")
            && best.contains("95% interval overlaps 1 other point(s)")
            && best.contains("within noise"),
        "{best}"
    );
    let table = std::fs::read_to_string(out.join("table.txt")).unwrap();
    assert!(table.contains(&format!("{best}\n")), "{table}");
    assert!(
        table.contains("(IOPS per point: the mean of 3 runs ± its 95% confidence interval)"),
        "{table}"
    );
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with("4k") || l.starts_with("8k"))
        .collect();
    assert!(
        rows.len() == 2 && rows.iter().all(|r| r.contains('±')),
        "{table}"
    );
    assert!(stdout(&o).contains("no clear best: bs="), "{}", stdout(&o));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("<li>no clear best: bs="),
        "no answer in the HTML"
    );
    // Bandwidth and IOPS by bs: one bar per point each (p99 repeated too: its runs' spread).
    assert!(
        html.matches("class=\"errbar\"").count() >= 4,
        "no error bars in the HTML"
    );
    assert!(html.contains("95% confidence interval (overlapping bars"));
}

/// `iogauge report DIR` answers again from the recorded figures: seed 002's committed index,
/// made before best and knee were tested against noise, now reads "no clear best" (13 cells'
/// intervals reach the leader's), and the index itself is left as it was.
#[test]
fn report_answers_a_saved_sweep_again_by_todays_rules() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sweeps/seed002");
    let before = std::fs::read(dir.join("index.json")).unwrap();
    let o = iogauge(&["report", dir.to_str().unwrap(), "--output-format=text"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(
            "no clear best: numpages=20 bs=64k leads (565 MB/s ±16%, p99 4.32 ms) but its 95% \
             interval overlaps 13 other point(s)"
        ),
        "{text}"
    );
    assert!(
        text.contains("knee of numpages (bs=64k): 3 — no later value gains 10% beyond noise"),
        "{text}"
    );
    assert_eq!(std::fs::read(dir.join("index.json")).unwrap(), before);
    assert_eq!(
        std::fs::read_to_string(dir.join("table.txt")).unwrap(),
        text,
        "the committed table.txt is the report's text"
    );
}
