//! What fio sets on a job's thread, and per I/O: the job's own I/O priority
//! (`prio`/`prioclass`, which the kernel then reports for that thread), its CPUs
//! (`cpus_allowed`, `cpumask`, `cpus_allowed_policy`, `numa_cpu_nodes`), memory policy
//! (`numa_mem_policy`) and nice value, and fio's per-command
//! priorities (`cmdprio_percentage`, `cmdprio_bssplit`: a priority in each io_uring
//! submission, the latencies reported per priority in fio's `prios` arrays, and each I/O's
//! priority in the per-I/O logs).

use super::*;

/// Per-I/O log lines: (ddir, bs, priority column).
fn prio_log(path: &Path) -> Vec<(u64, u64, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Vec<&str> = l.split(',').map(str::trim).collect();
            (
                v[2].parse().unwrap(),
                v[3].parse().unwrap(),
                v[v.len() - 1].to_string(),
            )
        })
        .collect()
}

fn fio_json(dir: &Path, name: &str) -> Value {
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn cmdprio_percentage_splits_the_ios_and_each_is_logged_with_its_priority() {
    let d = tmp();
    ok_in(
        d.path(),
        &[
            "fio",
            "--name=p",
            "--filename=data",
            "--size=2m",
            "--bs=4k",
            "--rw=randread",
            "--ioengine=io_uring",
            "--iodepth=4",
            "--cmdprio_percentage=50",
            "--cmdprio_class=3",
            "--cmdprio=4",
            "--write_lat_log=p",
            "--log_prio=1",
            "--output-format=json+",
            "--output=out.json",
        ],
    );
    let j = &fio_json(d.path(), "out.json")["jobs"][0];
    let read = &j["read"];
    assert_eq!(read["total_ios"], 512);
    let prios = read["prios"].as_array().expect("a prios array for reads");
    let key = |p: &Value| {
        (
            p["prioclass"].as_u64().unwrap(),
            p["prio"].as_u64().unwrap(),
        )
    };
    assert_eq!(
        prios.iter().map(key).collect::<Vec<_>>(),
        vec![(0, 0), (3, 4)],
        "the job's own priority first, then the per-command one"
    );
    let n = |p: &Value| p["clat_ns"]["N"].as_u64().unwrap();
    assert_eq!(prios.iter().map(n).sum::<u64>(), 512);
    // A fair coin over 512 I/Os: far outside 4 standard deviations only by a bug.
    assert!(
        (256 - 45..=256 + 45).contains(&n(&prios[1])),
        "{}",
        n(&prios[1])
    );
    let min = prios
        .iter()
        .map(|p| p["clat_ns"]["min"].as_u64().unwrap())
        .min();
    assert_eq!(min, read["clat_ns"]["min"].as_u64());
    let bins: u64 = prios
        .iter()
        .flat_map(|p| p["clat_ns"]["bins"].as_object().unwrap().values())
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(bins, 512, "json+ bins per priority");
    assert!(j["write"].get("prios").is_none(), "no writes, no prios");
    // The log says which I/O went with which priority: as many as the report counts.
    let log = prio_log(&d.path().join("p_clat.1.log"));
    assert_eq!(log.len(), 512);
    let idle = log.iter().filter(|(_, _, p)| p == "0x6004").count() as u64;
    let none = log.iter().filter(|(_, _, p)| p == "0x0000").count() as u64;
    assert_eq!((none, idle), (n(&prios[0]), n(&prios[1])));
}

#[test]
fn cmdprio_bssplit_gives_each_size_its_priority() {
    let d = tmp();
    ok_in(
        d.path(),
        &[
            "fio",
            "--name=b",
            "--filename=data",
            "--size=4m",
            "--rw=randwrite",
            "--bssplit=4k/50:64k/50",
            "--ioengine=libaio",
            "--iodepth=8",
            "--cmdprio_bssplit=64k/100/2/7:4k/0",
            "--write_lat_log=b",
            "--log_prio=1",
            "--output-format=json",
            "--output=out.json",
        ],
    );
    let log = prio_log(&d.path().join("b_lat.1.log"));
    assert!(log.len() > 20, "{}", log.len());
    for (ddir, bs, prio) in &log {
        assert_eq!(*ddir, 1);
        let want = if *bs == 65536 { "0x4007" } else { "0x0000" };
        assert_eq!(prio, want, "a {bs}-byte write");
    }
    let w = &fio_json(d.path(), "out.json")["jobs"][0]["write"];
    let big = log.iter().filter(|(_, bs, _)| *bs == 65536).count() as u64;
    let prios = w["prios"].as_array().unwrap();
    assert_eq!(prios[1]["prioclass"], 2);
    assert_eq!(prios[1]["prio"], 7);
    assert_eq!(prios[1]["clat_ns"]["N"].as_u64(), Some(big));
    assert!(prios[1]["clat_ns"]["percentile"].is_object());
    // Without log_prio, the column says only whether the I/O was real-time.
    let d2 = tmp();
    ok_in(
        d2.path(),
        &[
            "fio",
            "--name=r",
            "--filename=data",
            "--size=1m",
            "--rw=randread",
            "--ioengine=io_uring",
            "--cmdprio_percentage=100",
            "--write_lat_log=r",
            "--output=out.txt",
        ],
    );
    let log = prio_log(&d2.path().join("r_lat.1.log"));
    assert_eq!(log.len(), 256);
    assert!(
        log.iter().all(|(_, _, p)| p == "1"),
        "cmdprio_class=1 is real-time"
    );
}

#[test]
fn no_cmdprio_no_prios_and_lat_percentiles_reports_total_latency_per_priority() {
    let d = tmp();
    let common = [
        "fio",
        "--name=n",
        "--filename=data",
        "--size=1m",
        "--rw=randread",
        "--ioengine=io_uring",
        "--output-format=json",
    ];
    let plain = ok_in(d.path(), &common);
    let v: Value = serde_json::from_str(&plain).unwrap();
    assert!(v["jobs"][0]["read"].get("prios").is_none());
    let mut args = common.to_vec();
    args.extend(["--cmdprio_percentage=40", "--lat_percentiles=1"]);
    let v: Value = serde_json::from_str(&ok_in(d.path(), &args)).unwrap();
    let p = &v["jobs"][0]["read"]["prios"][0];
    assert!(
        p.get("lat_ns").is_some() && p.get("clat_ns").is_none(),
        "{p}"
    );
    // iogauge's own report says which latency its per-priority figures are.
    let own = &v["iogauge"]["groups"][0]["jobs"][0]["read"]["prios"];
    assert_eq!(own[0]["of"], "lat");
    assert_eq!(own[1]["class"], 1);
}

#[test]
fn cmdprio_needs_a_queued_engine_and_one_way_of_splitting() {
    let d = tmp();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--ioengine=psync", "--cmdprio_percentage=50"],
            "cmdprio_percentage",
        ),
        (
            &[
                "--ioengine=io_uring",
                "--cmdprio_percentage=50",
                "--cmdprio_bssplit=4k/50",
            ],
            "cmdprio_bssplit",
        ),
        (
            &[
                "--ioengine=io_uring",
                "--cmdprio_bssplit=4k/60/1/0:4k/60/2/0",
            ],
            "add up to 120",
        ),
        (&["--ioengine=psync", "--prioclass=4"], "prioclass"),
    ];
    for (extra, says) in cases {
        let mut args = vec!["fio", "--name=x", "--filename=data", "--size=1m"];
        args.extend_from_slice(extra);
        let o = run_in(d.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(says), "{extra:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(
            entries(d.path()).is_empty(),
            "nothing created for {extra:?}"
        );
    }
}

#[test]
fn prioclass_is_set_on_the_job_thread_as_the_kernel_reports_it() {
    if Command::new("ionice").arg("-V").output().is_err() {
        eprintln!("skipped: ionice (util-linux) is not installed");
        return;
    }
    let d = tmp();
    let child = bin()
        .current_dir(d.path())
        .args([
            "run",
            "--filename=data",
            "--size=1m",
            "--rw=read",
            "--ioengine=psync",
            "--prioclass=3",
            "--prio=5",
            "--time_based",
            "--runtime=4",
            "--output-format=json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let tasks = format!("/proc/{}/task", child.id());
    let mut classes = Vec::new();
    for _ in 0..60 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        classes = std::fs::read_dir(&tasks)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| {
                        let o = Command::new("ionice")
                            .args(["-p", &e.file_name().to_string_lossy()])
                            .output()
                            .unwrap();
                        String::from_utf8_lossy(&o.stdout).trim().to_string()
                    })
                    .collect()
            })
            .unwrap_or_default();
        if classes.iter().any(|c| c == "idle") {
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(
        classes.iter().any(|c| c == "idle"),
        "one thread (the job's) in the idle class: {classes:?}"
    );
    assert!(
        classes.iter().any(|c| c != "idle"),
        "the main thread keeps its own: {classes:?}"
    );
}

/// Each thread of process `pid`: (its allowed CPUs as /proc lists them, its nice value).
fn threads_of(pid: u32) -> Vec<(String, i64)> {
    let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok())
        .filter_map(|e| {
            let status = std::fs::read_to_string(e.path().join("status")).ok()?;
            let cpus = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?
                .trim()
                .to_string();
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // Fields after the command's closing parenthesis; nice is the 19th field.
            let rest = &stat[stat.rfind(')')? + 2..];
            let nice = rest.split(' ').nth(16)?.parse().ok()?;
            Some((cpus, nice))
        })
        .collect()
}

/// Runs iogauge with `args` for a few seconds and returns its threads as seen while it ran,
/// once `done` says enough were seen.
fn watch(args: &[&str], done: impl Fn(&[(String, i64)]) -> bool) -> Vec<(String, i64)> {
    let d = tmp();
    let child = bin()
        .current_dir(d.path())
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut seen = Vec::new();
    for _ in 0..60 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        seen = threads_of(child.id());
        if done(&seen) {
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{args:?}");
    seen
}

#[test]
fn cpus_allowed_and_nice_are_set_on_the_job_threads() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("skipped: needs 2 CPUs");
        return;
    }
    let common = [
        "run",
        "--filename=data",
        "--size=1m",
        "--rw=read",
        "--time_based",
        "--runtime=3",
    ];
    let mut one = common.to_vec();
    one.extend(["--cpus_allowed=1", "--nice=7"]);
    let seen = watch(&one, |t| t.iter().any(|(c, n)| c == "1" && *n == 7));
    assert!(
        seen.iter().any(|(c, n)| c == "1" && *n == 7),
        "the job's thread on CPU 1 at nice 7: {seen:?}"
    );
    assert!(
        seen.iter().any(|(c, _)| c != "1"),
        "the main thread unpinned"
    );
    // split: each of the two clones takes one CPU of the set.
    let mut split = common.to_vec();
    split.extend([
        "--cpumask=0x3",
        "--cpus_allowed_policy=split",
        "--numjobs=2",
    ]);
    let both =
        |t: &[(String, i64)]| t.iter().any(|(c, _)| c == "0") && t.iter().any(|(c, _)| c == "1");
    let seen = watch(&split, both);
    assert!(both(&seen), "one clone on CPU 0, one on CPU 1: {seen:?}");
}

/// fio's NUMA placement (numa.fio): numa_cpu_nodes=0 with cpus_allowed=1 runs the job's
/// thread on CPU 1 (node 0's CPUs that cpus_allowed names), and numa_mem_policy=bind:0 is
/// the thread's memory policy, which the kernel shows in the thread's numa_maps; the main
/// thread keeps the default.
#[test]
fn numa_nodes_and_memory_policy_are_set_on_the_job_thread() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("skipped: needs 2 CPUs");
        return;
    }
    let d = tmp();
    let child = bin()
        .current_dir(d.path())
        .args([
            "run",
            "--filename=data",
            "--size=1m",
            "--rw=read",
            "--time_based",
        ])
        .args(["--runtime=3", "--numa_cpu_nodes=0", "--cpus_allowed=1"])
        .arg("--numa_mem_policy=bind:0")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut policies = Vec::new();
    for _ in 0..60 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let Ok(rd) = std::fs::read_dir(format!("/proc/{}/task", child.id())) else {
            continue;
        };
        policies = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let maps = std::fs::read_to_string(e.path().join("numa_maps")).ok()?;
                let status = std::fs::read_to_string(e.path().join("status")).ok()?;
                let cpus = status
                    .lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?
                    .trim()
                    .to_string();
                let bound = maps.lines().any(|l| l.split(' ').nth(1) == Some("bind:0"));
                Some((cpus, bound))
            })
            .collect();
        if policies.iter().any(|(c, b)| c == "1" && *b) {
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        policies.iter().any(|(c, b)| c == "1" && *b),
        "the job's thread on CPU 1, its memory bound to node 0: {policies:?}"
    );
    assert!(
        policies.iter().any(|(_, b)| !b),
        "the main thread keeps the default"
    );
}

#[test]
fn a_cpu_the_host_lacks_or_a_nice_out_of_range_is_refused() {
    let d = tmp();
    for (opt, says) in [
        ("--cpus_allowed=0,4096", "names CPU 4096"),
        ("--cpumask=0", "cpumask"),
        ("--nice=20", "from -20 to 19"),
        ("--cpus_allowed_policy=spread", "cpus_allowed_policy"),
        ("--verify_async_cpus=4096", "names CPU 4096"),
        (
            "--numa_cpu_nodes=999",
            "names NUMA node 999, but this machine has node(s) 0",
        ),
        ("--numa_mem_policy=spread:0", "interleave:NODES"),
        ("--numa_mem_policy=bind:999", "names NUMA node 999"),
    ] {
        let o = run_in(
            d.path(),
            &["fio", "--name=x", "--filename=data", "--size=1m", opt],
        );
        assert_eq!(o.status.code(), Some(2), "{opt}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{opt}: {}", stderr(&o));
        assert!(entries(d.path()).is_empty(), "{opt}: nothing created");
    }
}

#[test]
fn verify_async_cpus_runs_the_check_on_those_cpus() {
    let d = tmp();
    let o = run_in(
        d.path(),
        &[
            "fio",
            "--name=v",
            "--filename=data",
            "--size=4m",
            "--rw=write",
            "--verify=crc32c",
            "--verify_async=2",
            "--verify_async_cpus=0",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let check = &v["iogauge"]["groups"][0]["jobs"][0]["verify"];
    assert_eq!(check["blocks"], 1024);
    assert_eq!(check["threads"], 2);
}
