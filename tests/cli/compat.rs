//! The legacy personalities run the command lines printed in the seed documents (sizes scaled
//! down to this machine; the shapes, page sizes, page counts and option spellings kept,
//! including the typeset en dashes of the PDFs) and print output of the documented shape with
//! exact byte, page and iteration counts; the bad inputs the seeds warn about fail the
//! documented way; a second writer is refused while readers share a file.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{LoopFs, bin, entries, ok_in, run_in, stderr, stdout, tmp};

fn sas(dir: &Path, line: &str) -> String {
    let mut args = vec!["sasiotest"];
    args.extend(line.split_whitespace());
    ok_in(dir, &args)
}

/// The legacy part of the output (above iogauge's additions).
fn legacy(out: &str) -> &str {
    out.split("---- iogauge:").next().unwrap()
}

/// The number after `prefix` on its line.
fn number_after(out: &str, prefix: &str) -> f64 {
    let line = out
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting {prefix:?} in\n{out}"));
    line[prefix.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("{line}"))
}

/// SASIOTEST's throughput (six decimals, MB = 2^20) agrees with the bytes and elapsed time.
fn check_throughput(out: &str, label: &str, bytes: u64) {
    let l = legacy(out);
    let line = l
        .lines()
        .find(|x| x.starts_with(&format!("{label} Throughput: ")))
        .unwrap_or_else(|| panic!("no {label} Throughput in\n{l}"));
    assert!(line.ends_with(" MB/Sec."), "{line}");
    let mbs = number_after(l, &format!("{label} Throughput: "));
    let secs_line = l.lines().find(|x| x.starts_with("Elapsed time: ")).unwrap();
    assert!(secs_line.ends_with(" Secs"), "{secs_line}");
    let secs = number_after(l, "Elapsed time: ");
    let decimals = secs_line
        .split('.')
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    assert_eq!(decimals.len(), 6, "{secs_line}");
    let expect = bytes as f64 / 1048576.0 / secs;
    assert!(
        (mbs - expect).abs() <= expect * 0.01 + 0.01,
        "{mbs} MB/s vs {bytes} bytes in {secs} s"
    );
}

#[test]
fn sasiotest_runs_the_seeds_command_lines() {
    let d = tmp();
    let p = d.path();

    // No arguments: the usage, as a usage error (stderr, exit 2); likewise sqlio and iotest.
    for (tool, want) in [
        ("sasiotest", "MUST be the first argument"),
        ("sqlio", "outstanding I/Os per thread"),
        ("iotest", "-t"),
    ] {
        let o = run_in(p, &[tool]);
        assert_eq!(o.status.code(), Some(2), "{tool}");
        assert!(stdout(&o).is_empty(), "{tool}");
        assert!(stderr(&o).contains(want), "{tool}: {}", stderr(&o));
    }

    // "sasiotest test.out –w": defaults, with both warnings.
    let o = sas(p, "test.out \u{2013}w");
    let l = legacy(&o);
    assert!(l.contains("WARNING: Filesize option not specified. Defaulting to 1 MB file size."));
    assert!(l.contains("WARNING: Pagesize option not specified. Defaulting to 8K page size."));
    assert!(
        l.contains("Sequentially writing 1048576 bytes to file: test.out with an 8192 page size."),
        "{l}"
    );
    check_throughput(&o, "Write", 1 << 20);
    assert_eq!(
        std::fs::metadata(p.join("test.out")).unwrap().len(),
        1 << 20
    );

    // "-w -pagesize 64k -filesize 512K" into another directory.
    std::fs::create_dir(p.join("d")).unwrap();
    let o = sas(p, "d/test.out -w -pagesize 64k -filesize 512K");
    assert!(
        o.contains("Sequentially writing 524288 bytes to file: d/test.out with a 65536 page size.")
    );
    check_throughput(&o, "Write", 524288);

    // "-r": reads the default 1 MB of the file.
    let o = sas(p, "test.out -r");
    assert!(o.contains(
        "Sequentially reading 1048576 bytes from file: test.out with an 8192 page size."
    ));
    check_throughput(&o, "Read", 1 << 20);

    // The write-then-evict-then-read runbook (12G scaled to 12M), and -r of a larger file
    // reads only -filesize.
    sas(p, "test.out -w -pagesize 64k -filesize 12M");
    sas(p, "junk.out -w -pagesize 64k -filesize 12M");
    let o = sas(p, "test.out -r -pagesize 64k -filesize 4M");
    assert!(o.contains("Sequentially reading 4194304 bytes"));
    check_throughput(&o, "Read", 4 << 20);
    let o = sas(p, "junk.out -r -pagesize 64k -filesize 12M");
    check_throughput(&o, "Read", 12 << 20);

    // "-r -ran -pagesize 64k -filesize 1M": 16 random pages.
    let o = sas(p, "test.out -r -ran -pagesize 64k -filesize 1M");
    assert!(
        o.contains("Random Reads: Reading 16 pages from file: test.out with a 65536 page size.")
    );
    check_throughput(&o, "Read", 1 << 20);

    // "-rw -pagesize 8k -filesize 1M": 128 pages read and written back.
    let o = sas(p, "test.out -rw -pagesize 8k -filesize 1M");
    assert!(o.contains(
        "Random Reads and Writes: Reading and Writing 128 pages to file: test.out with an 8192 page size."
    ));
    check_throughput(&o, "Read/Write", 1 << 20);
    sas(p, "test.out -rw -pagesize 64k -filesize 5M");

    // SGIO writes and reads: page sizes at 256 pages, then page counts above IOV_MAX.
    let o = sas(
        p,
        "test.out -w -sgio -pagesize 4k -filesize 8M -numpages 256",
    );
    assert!(
        o.contains(
            "Gather Writing 256 pages - 8 iterations to file: test.out with a 4096 page size."
        ),
        "{o}"
    );
    check_throughput(&o, "Write", 8 << 20);
    assert!(o.contains("O_WRONLY|O_DIRECT"), "{o}");
    for ps in ["8k", "16k", "32k", "64k", "128k", "256k"] {
        sas(
            p,
            &format!("test.out -w -sgio -pagesize {ps} -filesize 64M -numpages 256"),
        );
    }
    sas(
        p,
        "test.out -w -sgio -pagesize 512k -filesize 128M -numpages 256",
    );
    let o = sas(
        p,
        "test.out -r -sgio -pagesize 4k -filesize 64M -numpages 256",
    );
    assert!(o.contains(
        "Scatter Reading 256 pages - 64 iterations from file: test.out with a 4096 page size."
    ));
    check_throughput(&o, "Read", 64 << 20);
    for ps in ["8k", "16k", "32k", "64k", "128k", "512k"] {
        sas(
            p,
            &format!("test.out -r -sgio -pagesize {ps} -filesize 128M -numpages 256"),
        );
    }
    for n in [512, 1024, 2048, 4096, 8192] {
        let o = sas(
            p,
            &format!("test.out -r -sgio -pagesize 4k -filesize 128M -numpages {n}"),
        );
        assert!(o.contains(&format!(
            "Scatter Reading {n} pages - {} iterations",
            32768 / n
        )));
        if n > 1024 {
            assert!(o.contains(&format!("{} calls per I/O", n / 1024)), "{o}");
        }
    }

    // Unbuffered, read with history, writethru.
    let o = sas(p, "test.out -r -pagesize 8k -filesize 4M -unbuffered");
    assert!(o.contains("Sequentially reading 4194304 bytes") && o.contains("O_RDONLY|O_DIRECT"));
    let o = sas(p, "test.out -w -pagesize 8k -filesize 4M -unbuffered");
    assert!(o.contains("O_WRONLY|O_DIRECT"), "{o}");
    let o = sas(p, "test.out -r -ran -pagesize 8k -filesize 4M -unbuffered");
    assert!(o.contains(
        "Read with History: Reading 512 pages from file: test.out with an 8192 page size."
    ));
    assert!(
        !o.contains("O_DIRECT"),
        "read with history is buffered: {o}"
    );
    let o = sas(
        p,
        "test.out -w -pagesize 64k -filesize 2M \u{2013}writethru",
    );
    assert!(o.contains("O_WRONLY|O_DSYNC"), "{o}");
    check_throughput(&o, "Write", 2 << 20);

    // Written files stay; nothing else is left behind.
    let names: Vec<String> = entries(p)
        .iter()
        .map(|e| e.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["d", "junk.out", "test.out"]);
}

#[test]
fn sasiotest_json_is_the_full_report() {
    let d = tmp();
    let o = ok_in(
        d.path(),
        &[
            "sasiotest",
            "t.out",
            "-w",
            "-pagesize",
            "4k",
            "-filesize",
            "64k",
            "--json",
        ],
    );
    let r: Value = serde_json::from_str(&o).expect("one JSON document");
    let j = &r["groups"][0]["jobs"][0];
    assert_eq!(j["write"]["bytes"], 65536);
    assert_eq!(j["write"]["ios"], 16);
    assert_eq!(r["command_line"][1], "sasiotest");
}

#[test]
fn sasiotest_refuses_what_the_seed_refuses() {
    let d = tmp();
    let p = d.path();
    std::fs::write(p.join("small"), vec![7u8; 4096]).unwrap();
    for (line, want) in [
        (
            "small -r -pagesize 8k -filesize 8k",
            "too small for one page",
        ),
        (
            "small -r -pagesize 4k -filesize 1M",
            "smaller than -filesize",
        ),
        ("missing -r", "cannot read missing"),
        (
            "t.out -w -sgio -pagesize 4k -filesize 1M",
            "-sgio requires -numpages",
        ),
        (
            "t.out -w -sgio -pagesize 4k -filesize 1M -numpages 3",
            "not a multiple of -pagesize x -numpages",
        ),
        (
            "t.out -w -pagesize 8k -filesize 12k",
            "not a multiple of -pagesize",
        ),
        ("-w t.out", "must be the first argument"),
        ("t.out -w -pagesize", "needs a value"),
        ("t.out -w -bogus", "unknown option"),
        (
            "t.out -w -sgio -numpages 2 -ran -pagesize 4k",
            "cannot be combined",
        ),
    ] {
        let mut args = vec!["sasiotest"];
        args.extend(line.split_whitespace());
        let o = run_in(p, &args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{line}: {e}");
        assert!(
            e.contains(want) && e.trim().lines().count() == 1,
            "{line}: {e}"
        );
    }
    // A file iogauge did not create is not written without --allow-overwrite.
    let o = run_in(
        p,
        &[
            "sasiotest",
            "small",
            "-w",
            "-pagesize",
            "4k",
            "-filesize",
            "4k",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--allow-overwrite"));
    assert_eq!(std::fs::read(p.join("small")).unwrap(), vec![7u8; 4096]);
    let names: Vec<_> = entries(p);
    assert_eq!(names.len(), 1, "nothing created: {names:?}");
}

fn spawn_in(dir: &Path, args: &[&str]) -> Child {
    bin()
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iogauge starts")
}

#[test]
fn sasiotest_one_writer_per_file_many_readers() {
    let d = tmp();
    let p = d.path();
    // Three writers to distinct files at once, then three readers of one file at once.
    let all_at_once = |lines: Vec<String>, want: &str| {
        let children: Vec<Child> = lines
            .iter()
            .map(|l| spawn_in(p, &l.split_whitespace().collect::<Vec<_>>()))
            .collect();
        for c in children {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success(), "{}", stderr(&o));
            assert!(stdout(&o).contains(want), "{}", stdout(&o));
        }
    };
    all_at_once(
        (1..=3)
            .map(|i| format!("sasiotest output_file{i} -w -pagesize 256k -filesize 3M"))
            .collect(),
        "Sequentially writing 3145728 bytes",
    );
    all_at_once(
        vec!["sasiotest output_file1 -r -pagesize 256k -filesize 3M".to_string(); 3],
        "Sequentially reading 3145728 bytes",
    );

    // A long write-through writer holds the file; a second writer is refused, a reader is not.
    let mut first = spawn_in(
        p,
        &[
            "sasiotest",
            "output_file1",
            "-w",
            "-pagesize",
            "4k",
            "-filesize",
            "1G",
            "-writethru",
        ],
    );
    std::thread::sleep(Duration::from_millis(700));
    let second = run_in(
        p,
        &[
            "sasiotest",
            "output_file1",
            "-w",
            "-pagesize",
            "4k",
            "-filesize",
            "1M",
        ],
    );
    let reader = run_in(
        p,
        &[
            "sasiotest",
            "output_file1",
            "-r",
            "-pagesize",
            "4k",
            "-filesize",
            "1M",
        ],
    );
    // SAFETY: sending SIGINT to the child we started.
    unsafe { libc::kill(first.id() as i32, libc::SIGINT) };
    let t0 = Instant::now();
    let status = first.wait().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(10));
    if status.code() == Some(0) {
        skip!("writer lock: the first writer finished before the second started");
        return;
    }
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    assert!(
        stderr(&second).contains("another process is writing"),
        "{}",
        stderr(&second)
    );
    assert!(reader.status.success(), "{}", stderr(&reader));
}

#[test]
fn sqlio_runs_the_articles_commands_and_batch() {
    let d = tmp();
    let p = d.path();
    let file = p.join("testfile.dat");
    std::fs::write(
        p.join("param.txt"),
        format!("{} 2 0x0 8\n#d:\\testfile.dat 2 0x0 100\n", file.display()),
    )
    .unwrap();
    // "sqlio -kW -s10 -fsequential -o8 -b64 -Fparam.txt" (10 s scaled to 1 s, 100 MB to 8).
    let o = ok_in(
        p,
        &[
            "sqlio",
            "-kW",
            "-s1",
            "-fsequential",
            "-o8",
            "-b64",
            "-Fparam.txt",
        ],
    );
    let l = legacy(&o);
    for want in [
        "parameter file used: param.txt",
        "with 2 threads (0-1) using mask 0x0 (0)",
        "2 threads writing for 1 secs to file",
        "\tusing 64KB sequential IOs",
        "\tenabling multiple I/Os per thread with 8 outstanding",
        "size of file",
        "needs to be: 8388608 bytes",
        "current file size:\t0 bytes",
        "need to expand by:\t8388608 bytes",
        "... done.",
        "using specified size: 8 MB for file:",
        "initialization done",
        "CUMULATIVE DATA:",
        "throughput metrics:",
    ] {
        assert!(l.contains(want), "missing {want:?} in\n{l}");
    }
    let iops = number_after(l, "IOs/sec:");
    let mbs = number_after(l, "MBs/sec:");
    assert!(
        iops > 0.0 && (mbs - iops * 64.0 / 1024.0).abs() < 0.02 * mbs + 0.02,
        "{l}"
    );
    assert!(
        o.contains("O_WRONLY|O_DIRECT|O_DSYNC"),
        "-BN is O_DIRECT + O_DSYNC: {o}"
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().len(),
        8 << 20,
        "kept, expanded"
    );

    // The article's eight tests as a batch file, with a pause line.
    let mut batch = String::from("@echo off\nrem sqlio tests\n");
    for (k, f) in [
        ("R", "random"),
        ("W", "random"),
        ("R", "sequential"),
        ("W", "sequential"),
    ] {
        for t in [1, 2] {
            batch += &format!(
                "sqlio -k{k} -s1 -f{f} -o4 -b64 -t{t} -LS -BH -d{} testfile.dat\n",
                p.display()
            );
        }
        batch += "timeout /T 0\n";
    }
    std::fs::write(p.join("sqlio_commands.bat"), batch).unwrap();
    let o = ok_in(p, &["sqlio", "--batch", "sqlio_commands.bat"]);
    let tests: Vec<&str> = o.split("[batch line ").skip(1).collect();
    assert_eq!(tests.len(), 8, "{o}");
    for t in tests {
        let l = legacy(t);
        assert!(l.contains("buffering set to use hardware disk cache (but not file cache)"));
        assert!(l.contains("using system counter for latency timings"));
        for k in ["Min_Latency(ms):", "Avg_Latency(ms):", "Max_Latency(ms):"] {
            number_after(l, k);
        }
        let ms = l.lines().find(|x| x.starts_with("ms:")).unwrap();
        let cols: Vec<&str> = ms.split_whitespace().skip(1).collect();
        assert_eq!(cols.len(), 25);
        assert_eq!((cols[0], cols[23], cols[24]), ("0", "23", "24+"));
        let pct: Vec<u64> = l
            .lines()
            .find(|x| x.starts_with("%:"))
            .unwrap()
            .split_whitespace()
            .skip(1)
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(pct.len(), 25);
        // Each bucket is rounded to a whole percent, so the 25 sum to 100 give or take half a
        // percent each (a wide spread of latencies — many buckets under 0.5% shown as 0 — sums
        // to 96 or less).
        let sum: u64 = pct.iter().sum();
        assert!(sum.abs_diff(100) * 2 <= 25, "percentages sum to {sum}: {l}");
        // No I/O shown faster than the fastest or slower than the slowest.
        let (min, max) = (
            number_after(l, "Min_Latency(ms):") as usize,
            (number_after(l, "Max_Latency(ms):") as usize).min(24),
        );
        let shown: Vec<usize> = (0..25).filter(|&b| pct[b] > 0).collect();
        assert!(
            shown.iter().all(|&b| (min..=max).contains(&b)) && !shown.is_empty(),
            "buckets {shown:?} outside {min}..={max} ms: {l}"
        );
        assert!(t.contains("O_DIRECT") && !t.contains("O_DSYNC"), "-BH: {t}");
    }
    // The batch ends with a table of its tests: each line's IOs/sec and MBs/sec as its
    // CUMULATIVE DATA printed them.
    let (_, summary) = o
        .split_once("SUMMARY of the batch (8 test(s)")
        .expect("a summary");
    let rows: Vec<Vec<&str>> = summary
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() > 4)
        .collect();
    assert_eq!(rows.len(), 8, "{summary}");
    for (row, t) in rows.iter().zip(o.split("[batch line ").skip(1)) {
        let l = legacy(t);
        let n = row.len();
        assert_eq!(
            row[n - 3],
            format!("{:.2}", number_after(l, "IOs/sec:")),
            "{summary}"
        );
        assert_eq!(
            row[n - 2],
            format!("{:.2}", number_after(l, "MBs/sec:")),
            "{summary}"
        );
        assert_eq!(t.split(']').next().unwrap().split(':').next(), Some(row[0]));
    }
    // Only the test file and the inputs remain.
    assert_eq!(entries(p).len(), 3);
}

#[test]
fn sqlio_bad_input_is_one_line() {
    let d = tmp();
    let p = d.path();
    for (args, want) in [
        (vec!["sqlio", "-kX"], "-kX"),
        (vec!["sqlio", "-t300", "x"], "-t300"),
        (vec!["sqlio", "-kR", "missing.dat"], "no such file"),
        (vec!["sqlio", "-dEFG", "testfile.dat"], "not a directory"),
        (vec!["sqlio", "-Fnope.txt"], "cannot read"),
        // The article's Windows paths say what they mean here, on the command line and in a
        // parameter file, and nothing named after them is created.
        (
            vec!["sqlio", "-kR", "E:\\testfile.dat"],
            "the test file E:\\testfile.dat is a Windows path",
        ),
        (
            vec!["sqlio", "-kW", "-Fwin.txt"],
            "win.txt:1: c:\\t.dat is a Windows path",
        ),
    ] {
        std::fs::write(p.join("win.txt"), "c:\\t.dat 2 0x0 10\n").unwrap();
        let o = run_in(p, &args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(
            e.contains(want) && e.trim().lines().count() == 1,
            "{args:?}: {e}"
        );
    }
    let made: Vec<_> = entries(p)
        .into_iter()
        .filter(|f| !f.ends_with("win.txt"))
        .collect();
    assert!(made.is_empty(), "{made:?}");
    std::fs::write(p.join("testfile.dat"), vec![1u8; 1 << 20]).unwrap();
    std::fs::write(
        p.join("bad.bat"),
        "sqlio -kR -s1 -b64 testfile.dat\nsqlio -kQ\n",
    )
    .unwrap();
    let o = run_in(p, &["sqlio", "--batch", "bad.bat"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bad.bat:2") && stderr(&o).contains("-kQ"),
        "a bad line stops the batch before any test runs: {}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty(), "line 1 did not run: {}", stdout(&o));
}

#[test]
fn iotest_writes_reads_reports_and_cleans_up() {
    let d = tmp();
    let p = d.path();
    let target = p.join("saswork");
    std::fs::create_dir(&target).unwrap();
    // "iotest.sh –i 5 –t /saswork –b 8404992 –s 64", scaled to 2 x 32 MiB.
    let o = ok_in(
        p,
        &[
            "iotest",
            "\u{2013}i",
            "2",
            "\u{2013}t",
            target.to_str().unwrap(),
            "\u{2013}b",
            "512",
            "\u{2013}s",
            "64",
        ],
    );
    for k in [1, 2] {
        assert!(
            o.contains(&format!("iotest.sh-readtest.out.{k}:Real ")),
            "{o}"
        );
        assert!(
            o.contains(&format!("iotest.sh-writetest.out.{k}:Real ")),
            "{o}"
        );
    }
    let results = std::fs::read_to_string(p.join("iotest.sh.results.2")).unwrap();
    for want in [
        "RESULTS",
        &format!(
            "INVOCATION : iotest.sh -i 2 -t {} -b 512 -s 64",
            target.display()
        ),
        "TARGET DETAILS",
        &format!("directory : {}", target.display()),
        "df : ",
        "mount point : ",
        " type ",
        "filesize : 33554432 bytes or 32.00 megabytes",
        "STATISTICS",
        "average read time in seconds : ",
        "average read throughput rate : ",
        "average write time in seconds : ",
        "average write throughput rate : ",
        "megabytes per second",
        "per core",
        "CPU (user + system) per stream is",
        "smaller than RAM",
    ] {
        assert!(results.contains(want), "missing {want:?} in\n{results}");
    }
    let rt = number_after(&results, "average read time in seconds : ");
    let rr = number_after(&results, "average read throughput rate : ");
    // Throughput = 32 MB / average time; the time is printed to 0.01 s.
    assert!(
        rr > 0.0 && (rr * rt - 32.0).abs() <= rr * 0.0051 + 0.01,
        "{results}"
    );
    // One quantity, one number: the verdict's per-stream rate is iotest.sh's average rate,
    // and its CPU share per stream is the one iogauge's own lines give per thread.
    for dir in ["read", "write"] {
        let avg = number_after(&results, &format!("average {dir} throughput rate : "));
        let per_stream = number_after(&results, &format!("{dir}: "));
        assert_eq!(format!("{avg:.2}"), format!("{per_stream:.2}"), "{results}");
    }
    let verdict_cpu: Vec<String> = results
        .lines()
        .filter_map(|l| {
            l.split_once("per stream is ")?
                .1
                .split('%')
                .next()
                .map(String::from)
        })
        .collect();
    let own_cpu: Vec<String> = o
        .lines()
        .filter_map(|l| {
            l.split_once("s, ")?
                .1
                .split_once("% of each thread")?
                .0
                .rsplit(' ')
                .next()
                .map(String::from)
        })
        .collect();
    assert_eq!(verdict_cpu.len(), 2, "{results}");
    // iogauge's lines come group by group (write, read), the verdict likewise.
    assert_eq!(verdict_cpu, own_cpu, "{o}");
    assert!(entries(&target).is_empty(), "test files removed");

    // Bad input: one line, exit 2.
    for (args, want) in [
        (
            vec!["iotest", "-i", "2", "-b", "4", "-s", "64"],
            "-t DIR is required",
        ),
        (
            vec!["iotest", "-i", "0", "-t", ".", "-b", "4", "-s", "64"],
            "-i 0",
        ),
        (
            vec!["iotest", "-t", "/nonexistent", "-b", "4", "-s", "64"],
            "no such directory",
        ),
    ] {
        let o = run_in(p, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn page_cache_and_unflushed_writes_are_flagged() {
    // On a loop device of its own: the root disk's counters also see the other tests.
    let Some(fs) = LoopFs::new(96) else {
        skip!("page-cache check: no loop-mounted ext4 here");
        return;
    };
    let p = fs.path();
    // A buffered write without a flush, then a read of the cached file.
    let w = ok_in(
        p,
        &[
            "sasiotest",
            "c.out",
            "-w",
            "-pagesize",
            "64k",
            "-filesize",
            "32M",
            "--json",
        ],
    );
    let w: Value = serde_json::from_str(&w).unwrap();
    let r = ok_in(
        p,
        &[
            "sasiotest",
            "c.out",
            "-r",
            "-pagesize",
            "64k",
            "-filesize",
            "32M",
            "--json",
        ],
    );
    let r: Value = serde_json::from_str(&r).unwrap();
    // Found after the run, the verdict reaches stderr too, whatever the report's format.
    let o = run_in(
        p,
        &[
            "run",
            "--filename=c.out",
            "--rw=read",
            "--bs=64k",
            "--size=32m",
            "--invalidate=0",
            "--output-format=json",
        ],
    );
    assert!(
        stderr(&o).contains("iogauge: warning: group 1 (job): iogauge read 32.00 MiB"),
        "{}",
        stderr(&o)
    );
    let devices = r["groups"][0]["devices"].as_array().unwrap();
    let loop_name = fs.dev.0.trim_start_matches("/dev/");
    assert!(
        devices.iter().any(|d| d["name"] == loop_name),
        "the loop device {loop_name} is the one counted: {devices:?}"
    );
    let warn = |v: &Value| v["warnings"].to_string();
    assert!(
        warn(&r).contains("came from the page cache"),
        "{}",
        warn(&r)
    );
    // SASIOTEST's users are told SASIOTEST's flags, not fio's options; `run` keeps fio's.
    assert!(
        warn(&r).contains("(-unbuffered, or a -filesize larger than RAM, measures the device)"),
        "{}",
        warn(&r)
    );
    assert!(!warn(&r).contains("direct=1"), "{}", warn(&r));
    // Into one file (2>&1), each warning once: the report carries it, stderr does not repeat it.
    let both = p.join("both.txt");
    let f = std::fs::File::create(&both).unwrap();
    let st = Command::new(assert_cmd::cargo::cargo_bin!("iogauge"))
        .current_dir(p)
        .args([
            "sasiotest",
            "c.out",
            "-r",
            "-pagesize",
            "64k",
            "-filesize",
            "32M",
        ])
        .stdout(f.try_clone().unwrap())
        .stderr(f)
        .status()
        .unwrap();
    assert!(st.success());
    let said = std::fs::read_to_string(&both).unwrap();
    assert_eq!(
        said.matches("came from the page cache").count(),
        1,
        "{said}"
    );
    std::fs::remove_file(&both).unwrap();
    assert!(
        stderr(&o).contains("(direct=1, or a file larger than RAM"),
        "{}",
        stderr(&o)
    );
    let wrote = w["groups"][0]["devices"][0]["write_bytes"]
        .as_u64()
        .unwrap();
    if wrote < 16 << 20 {
        assert!(warn(&w).contains("still in the page cache"), "{}", warn(&w));
        assert!(
            warn(&w).contains("(-writethru or -unbuffered time the device)"),
            "{}",
            warn(&w)
        );
    }
    // The tmpfs case: no device to check.
    if let Some(shm) = super::shm_tmpfs() {
        let f = shm.join(format!("iogauge-test-{}", std::process::id()));
        let o = Command::new(assert_cmd::cargo::cargo_bin!("iogauge"))
            .args([
                "sasiotest",
                f.to_str().unwrap(),
                "-w",
                "-pagesize",
                "4k",
                "-filesize",
                "64k",
            ])
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&f);
        assert!(
            stdout(&o).contains("no block device below it"),
            "{}",
            stdout(&o)
        );
    } else {
        skip!("tmpfs check: /dev/shm is not a tmpfs mount here");
    }
}

#[test]
fn files_iogauge_kept_may_be_rewritten_others_not() {
    let d = tmp();
    let p = d.path();
    let f = p.join("kept");
    let fname = format!("--filename={}", f.display());
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            fname.as_str(),
            "--rw=write",
            "--size=64k",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        run_in(p, &a)
    };
    assert!(run(&["--keep"]).status.success());
    let again = run(&[]);
    assert!(again.status.success(), "{}", stderr(&again));
    let foreign = p.join("foreign");
    std::fs::write(&foreign, b"precious").unwrap();
    let o = run_in(
        p,
        &[
            "run",
            &format!("--filename={}", foreign.display()),
            "--rw=write",
            "--size=4k",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(&foreign).unwrap(), b"precious");

    // rw=read:GAP skips GAP bytes after each I/O, and the pass ends where the next would not
    // fit, as fio's (its t0007): 0, 8k, ..., 56k (the offsets: workload unit test).
    let o = run_in(
        p,
        &[
            "run",
            fname.as_str(),
            "--rw=read:4k",
            "--bs=4k",
            "--size=64k",
            "--output-format=json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let j = &r["groups"][0]["jobs"][0];
    assert_eq!(
        (j["read"]["ios"].as_u64(), j["read"]["bytes"].as_u64()),
        (Some(8), Some(32768))
    );
}

#[test]
fn sqlio_batch_json_is_one_array() {
    let d = tmp();
    let p = d.path();
    std::fs::write(p.join("param.txt"), "t.dat 1 0x0 4\n").unwrap();
    std::fs::write(
        p.join("b.bat"),
        "sqlio -kW -s1 -fsequential -b64 -BH -Fparam.txt\nsqlio -kR -s1 -frandom -o2 -b8 -BY t.dat\n",
    )
    .unwrap();
    let o = ok_in(p, &["sqlio", "--batch", "b.bat", "--json"]);
    let v: Value = serde_json::from_str(&o).expect("one JSON document");
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 2);
    assert!(a[0]["groups"][0]["total"]["write"]["ios"].as_u64().unwrap() > 0);
    assert!(a[1]["groups"][0]["total"]["read"]["ios"].as_u64().unwrap() > 0);
}
