//! Scale-out across hosts, simulated on this machine: each host is a network namespace with
//! its own address on a bridge, its own hostname (a UTS namespace) and its own disk (a
//! directory bind-mounted, in a private mount namespace, where every host sees "the" disk),
//! and OpenMPI launches its daemons there through an rsh agent that enters them. Root only
//! (skipped with the reason otherwise); everything a test makes — namespaces, links, mounts,
//! processes — goes when it ends, failed or not. Built with `--features mpi`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{entries, stderr};

/// Simulated hosts, torn down on drop.
struct Hosts {
    /// Per-test prefix of every name made (namespaces, links).
    tag: String,
    names: Vec<String>,
    /// `root/NAME` is host NAME's disk, seen by it at `root/disk`.
    root: tempfile::TempDir,
    /// The bridge's subnet, `10.78.N` (OpenMPI is kept to it).
    net: String,
}

/// Runs `ip ARGS`, true when it succeeded.
fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl Hosts {
    /// `names` hosts on a bridge of their own; None (after saying why) where this machine
    /// cannot make them.
    fn new(names: &[&str]) -> Option<Hosts> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        if !rustix::process::geteuid().is_root() {
            skip!("simulated hosts need root (network and mount namespaces)");
            return None;
        }
        let ok = Command::new("mpirun")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            skip!("mpirun is not installed (scripts/test-deps.sh installs openmpi-bin)");
            return None;
        }
        let n = NEXT.fetch_add(1, Ordering::Relaxed) + std::process::id() % 200;
        let tag = format!("ig{}", n % 250);
        let net = format!("10.78.{}", n % 250);
        let hosts = Hosts {
            tag: tag.clone(),
            names: names.iter().map(|s| s.to_string()).collect(),
            root: tempfile::tempdir().unwrap(),
            net: net.clone(),
        };
        std::fs::create_dir(hosts.root.path().join("disk")).unwrap();
        let bridge = format!("{tag}br");
        let made = ip(&["link", "add", &bridge, "type", "bridge"])
            && ip(&["addr", "add", &format!("{net}.1/24"), "dev", &bridge])
            && ip(&["link", "set", &bridge, "up"]);
        if !made {
            skip!("cannot make a bridge here (ip link add type bridge failed)");
            return None;
        }
        for (i, h) in names.iter().enumerate() {
            std::fs::create_dir(hosts.root.path().join(h)).unwrap();
            let ns = hosts.ns(h);
            let outer = hosts.link(h);
            let made = ip(&["netns", "add", &ns])
                && ip(&[
                    "link", "add", &outer, "type", "veth", "peer", "name", "eth0", "netns", &ns,
                ])
                && ip(&["link", "set", &outer, "master", &bridge, "up"])
                && ip(&[
                    "-n",
                    &ns,
                    "addr",
                    "add",
                    &format!("{net}.{}/24", 11 + i),
                    "dev",
                    "eth0",
                ])
                && ip(&["-n", &ns, "link", "set", "eth0", "up"])
                && ip(&["-n", &ns, "link", "set", "lo", "up"]);
            if !made {
                skip!("cannot make network namespace {ns} here");
                return None;
            }
        }
        let agent = format!(
            "#!/bin/sh\n\
             # OpenMPI's rsh agent: \"agent [options] HOST COMMAND\" runs COMMAND on HOST.\n\
             while [ $# -gt 0 ]; do case \"$1\" in -*) shift;; *) break;; esac; done\n\
             h=$1; shift\n\
             exec ip netns exec \"{tag}-$h\" unshare --uts --mount --propagation private \
             sh -c 'hostname \"$0\" && mount --bind \"{root}/$0\" \"{root}/disk\" && exec sh -c \"$1\"' \
             \"$h\" \"$*\"\n",
            root = hosts.root.path().display()
        );
        let path = hosts.root.path().join("agent.sh");
        std::fs::write(&path, agent).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let list: String = names.iter().map(|h| format!("{h} slots=2\n")).collect();
        std::fs::write(hosts.root.path().join("hosts"), list).unwrap();
        Some(hosts)
    }

    fn ns(&self, host: &str) -> String {
        format!("{}-{host}", self.tag)
    }

    /// The host's link on the bridge (down: the host is cut off).
    fn link(&self, host: &str) -> String {
        format!("{}{host}", self.tag)
    }

    /// Where host `h`'s disk is, as seen from here.
    fn disk(&self, h: &str) -> PathBuf {
        self.root.path().join(h)
    }

    /// The disk's path as every host sees it.
    fn shared_path(&self) -> PathBuf {
        self.root.path().join("disk")
    }

    /// mpirun over the hosts, `n` ranks, 2 a host, running `iogauge ARGS`.
    fn mpirun(&self, n: usize, args: &[&str]) -> Command {
        let mut c = self.launcher(n);
        c.arg(super::bin().get_program()).args(args);
        c
    }

    /// mpirun over the hosts, `n` ranks, 2 a host, the program still to add.
    fn launcher(&self, n: usize) -> Command {
        let root = self.root.path();
        let net = format!("{}.0/24", self.net);
        let mut c = Command::new("mpirun");
        c.current_dir(root)
            .args(["--allow-run-as-root", "--oversubscribe", "--timeout", "120"])
            .args(["--mca", "plm_rsh_agent"])
            .arg(root.join("agent.sh"))
            .args(["--mca", "oob_tcp_if_include", &net])
            .args(["--mca", "btl", "self,tcp"])
            .args(["--mca", "btl_tcp_if_include", &net])
            .arg("--hostfile")
            .arg(root.join("hosts"))
            .args(["-n", &n.to_string()]);
        c
    }
}

impl Hosts {
    /// SIGKILL to every process on host `h` (its daemon and its ranks): a crashed host.
    fn kill_all(&self, h: &str) {
        if let Ok(o) = Command::new("ip")
            .args(["netns", "pids", &self.ns(h)])
            .output()
        {
            for pid in String::from_utf8_lossy(&o.stdout).split_whitespace() {
                let _ = Command::new("kill").args(["-KILL", pid]).status();
            }
        }
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for h in &self.names {
            let ns = self.ns(h);
            // Every process still in the namespace (a rank or a daemon) goes first.
            self.kill_all(h);
            ip(&["link", "del", &self.link(h)]);
            ip(&["netns", "del", &ns]);
        }
        ip(&["link", "del", &format!("{}br", self.tag)]);
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    entries(dir)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// The run's JSON report, or a panic with what mpirun said.
fn report(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(o)))
}

/// Host `k`'s row (`h`) in the first group is `bytes` over the host's span: its ranks' first
/// start to last end, from the report's per-rank windows.
fn host_row_is_bytes_over_its_span(r: &Value, k: usize, h: &str, bytes: u64) {
    let spans = r["scaleout"]["groups"][0]["ranks"].as_array().unwrap();
    let mine: Vec<&Value> = spans.iter().filter(|x| x["host"] == h).collect();
    let from = mine
        .iter()
        .map(|x| x["start_ms"].as_f64().unwrap())
        .fold(f64::MAX, f64::min);
    let to = mine
        .iter()
        .map(|x| x["end_ms"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let want = bytes as f64 / ((to - from) / 1e3) / 1e6;
    let row = r["scaleout"]["hosts"][k]["groups"][0]["mb_per_s"]
        .as_f64()
        .unwrap();
    assert!(
        (row - want).abs() <= want * 0.01,
        "{h}: row {row} MB/s, bytes over the host's span {want}"
    );
}

/// The first group's device lines are one per host, in `hosts`' order (None, after saying
/// so, where the temp dir has no block device below it).
fn one_device_line_per_host<'a>(r: &'a Value, hosts: &[&str]) -> Option<&'a Vec<Value>> {
    let devices = r["groups"][0]["devices"].as_array().unwrap();
    if devices.is_empty() {
        skip!("no block device below the temp dir: the device lines are not checked");
        return None;
    }
    let on: Vec<&str> = devices
        .iter()
        .map(|d| d["host"].as_str().unwrap())
        .collect();
    assert_eq!(on, hosts, "one line per host's device: {devices:?}");
    Some(devices)
}

/// Two hosts, two ranks each, writing into "the" disk: every rank's file lands on its own
/// host's disk and is removed; the host rows carry the hostnames, and each is its ranks'
/// bytes over its own span (recomputed here from the JSON's per-rank times); each host's
/// device is reported once, named with the host and its ranks, and fio's `disk_util` keeps
/// the hosts apart.
#[test]
fn two_hosts_each_with_its_own_rows_device_and_files() {
    let Some(hosts) = Hosts::new(&["hA", "hB"]) else {
        return;
    };
    let dir = format!("--directory={}", hosts.shared_path().display());
    let o = hosts
        .mpirun(
            4,
            &[
                "run",
                &dir,
                "--size=8m",
                "--bs=1m",
                "--rw=write",
                "--name=w",
                "--keep",
                "--output-format=json",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = report(&o);
    // Kept (--keep): each host's disk holds its own ranks' files, the other's none.
    for (h, ranks) in [("hA", [0, 1]), ("hB", [2, 3])] {
        let files = names(&hosts.disk(h));
        let want: Vec<String> = ranks.iter().map(|k| format!("w.r{k}.0.0")).collect();
        assert_eq!(files, want, "{h}'s disk");
    }
    let s = &r["scaleout"];
    assert_eq!(s["hosts"][0]["host"], "hA");
    assert_eq!(s["hosts"][1]["host"], "hB");
    assert_eq!(s["hosts"][1]["ranks"], serde_json::json!([2, 3]));
    // A host's row: its jobs' bytes over its own span, from the per-rank windows.
    let jobs = r["groups"][0]["jobs"].as_array().unwrap();
    for (k, h) in ["hA", "hB"].iter().enumerate() {
        let bytes: u64 = jobs
            .iter()
            .filter(|j| j["name"].as_str().unwrap().contains(&format!("@{h}#")))
            .map(|j| j["write"]["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(bytes, 16 << 20, "{h}: two ranks of 8 MiB");
        host_row_is_bytes_over_its_span(&r, k, h, bytes);
    }
    if let Some(devices) = one_device_line_per_host(&r, &["hA", "hB"]) {
        assert_eq!(devices[1]["ranks"], serde_json::json!([2, 3]));
        let disk = r["disk_util"].as_array().unwrap();
        assert_eq!(disk.len(), 2, "one disk_util row per host: {disk:?}");
    }
    for h in ["hA", "hB"] {
        for f in entries(&hosts.disk(h)) {
            std::fs::remove_file(f).unwrap();
        }
    }
}

/// Three hosts, two ranks each, with a row per host and job (`--rank-jobs=host`, as above
/// 256 ranks), the results going through each host's leader: each host's two ranks are one
/// job row `w@HOST` naming them, with both ranks' bytes; the host rows are still each host's bytes over its own span (from the per-rank
/// windows, which stay); one device line per host; every file removed on every host.
#[test]
fn three_hosts_with_a_row_per_host_and_job() {
    let Some(hosts) = Hosts::new(&["hA", "hB", "hC"]) else {
        return;
    };
    let dir = format!("--directory={}", hosts.shared_path().display());
    let o = hosts
        .mpirun(
            6,
            &[
                "run",
                &dir,
                "--size=4m",
                "--bs=1m",
                "--rw=write",
                "--name=w",
                "--rank-jobs=host",
                "--output-format=json",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = report(&o);
    let s = &r["scaleout"];
    assert_eq!(s["ranks"], 6);
    assert_eq!(s["jobs_per_host"], true);
    // Through a tree: hB's and hC's leaders sent rank 0 their hosts' merges.
    assert_eq!(s["merge"]["host_leaders"]["merges"], 2, "{s}");
    let jobs = r["groups"][0]["jobs"].as_array().unwrap();
    let rows: Vec<(String, Value, u64)> = jobs
        .iter()
        .map(|j| {
            (
                j["name"].as_str().unwrap().to_string(),
                j["ranks"].clone(),
                j["write"]["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, Value, u64)> = ["hA", "hB", "hC"]
        .iter()
        .enumerate()
        .map(|(k, h)| {
            (
                format!("w@{h}"),
                serde_json::json!([2 * k, 2 * k + 1]),
                8 << 20,
            )
        })
        .collect();
    assert_eq!(rows, want);
    let spans = s["groups"][0]["ranks"].as_array().unwrap();
    assert_eq!(spans.len(), 6, "every rank's window stays");
    for (k, h) in ["hA", "hB", "hC"].iter().enumerate() {
        assert_eq!(s["hosts"][k]["host"], *h);
        host_row_is_bytes_over_its_span(&r, k, h, 8 << 20);
    }
    one_device_line_per_host(&r, &["hA", "hB", "hC"]);
    for h in ["hA", "hB", "hC"] {
        assert!(entries(&hosts.disk(h)).is_empty(), "{h}'s files removed");
    }
}

/// What a run under a cut came to: mpirun's exit code (None: still waiting on the host it
/// lost, when the test gave up on it), its stdout and stderr so far, the partial reports
/// rank 0 wrote beside it, and how long from the cut until `done` held.
struct Cut {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
    partial: Vec<Value>,
    took: Duration,
}

impl Cut {
    /// The first partial report rank 0 wrote, and its errors as one string.
    fn partial_errors(&self) -> (&Value, String) {
        let r = self
            .partial
            .first()
            .unwrap_or_else(|| panic!("no partial report: {}", self.stderr));
        (r, r["errors"].to_string())
    }

    /// Within the deadlines (run, twice --rank-timeout, slack), and not a success.
    fn ended_in_time_and_failed(&self) {
        assert!(
            self.took < Duration::from_secs(45),
            "ended within the deadlines: {:?}; {}",
            self.took,
            self.stderr
        );
        assert_ne!(self.code, Some(0), "{}", self.stderr);
    }
}

/// Starts 4 ranks of a `secs` timed write on the two hosts with `--rank-timeout=5s` (and
/// `extra`), and
/// once every rank's file is there, does `cut` to host hB; then waits (at most 60 s) until
/// `done` holds for the disks and the partial reports, and stops mpirun if it still waits on
/// hB (OpenMPI's launcher, not iogauge, waits on a daemon it cannot reach).
fn with_hb_cut(
    hosts: &Hosts,
    secs: u32,
    extra: &[&str],
    cut: &dyn Fn(&Hosts),
    done: &dyn Fn(&Hosts, &[Value]) -> bool,
) -> Cut {
    let dir = format!("--directory={}", hosts.shared_path().display());
    let runtime = format!("--runtime={secs}");
    let out = hosts.root.path().join("stdout");
    let err = hosts.root.path().join("stderr");
    let mut args = vec![
        "run",
        &dir,
        "--size=4m",
        "--bs=64k",
        "--rw=randwrite",
        "--name=w",
        "--time_based",
        &runtime,
        "--rank-timeout=5s",
        "--output-format=json",
    ];
    args.extend_from_slice(extra);
    let mut child = hosts
        .mpirun(4, &args)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let all_there = || {
        ["hA", "hB"]
            .iter()
            .map(|h| names(&hosts.disk(h)).len())
            .sum::<usize>()
            == 4
    };
    while !all_there() {
        assert!(started.elapsed() < Duration::from_secs(60), "never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(700));
    let cut_at = Instant::now();
    cut(hosts);
    let partial = || -> Vec<Value> {
        names(hosts.root.path())
            .iter()
            .filter(|n| n.ends_with("-partial.json"))
            .filter_map(|n| {
                serde_json::from_slice(&std::fs::read(hosts.root.path().join(n)).ok()?).ok()
            })
            .collect()
    };
    let mut code = None;
    while cut_at.elapsed() < Duration::from_secs(60) {
        if code.is_none() {
            code = child.try_wait().unwrap().map(|s| s.code().unwrap_or(128));
        }
        if done(hosts, &partial()) && (code.is_some() || cut_at.elapsed() > Duration::from_secs(30))
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let took = cut_at.elapsed();
    if code.is_none() {
        let _ = child.kill();
    }
    let _ = child.wait();
    Cut {
        code,
        stdout: std::fs::read(&out).unwrap(),
        stderr: std::fs::read_to_string(&err).unwrap(),
        partial: partial(),
        took,
    }
}

/// hB's network link goes down mid-run (a switch port, a cable, a partition): nothing in
/// iogauge hangs. The ranks on hA finish, give hB up after --rank-timeout, and rank 0
/// reports what hA measured, naming hB's ranks, as a partial report (on stdout and in a
/// file of its own: mpirun may not live to forward it) with a non-zero code; hA's files are
/// removed. hB's ranks, cut off, remove their own files before they wait on anyone.
#[test]
fn a_host_cut_off_mid_run_is_named_and_nothing_hangs() {
    let Some(hosts) = Hosts::new(&["hA", "hB"]) else {
        return;
    };
    let c = with_hb_cut(
        &hosts,
        4,
        &[],
        &|h| assert!(ip(&["link", "set", &h.link("hB"), "down"])),
        &|h, partial| {
            !partial.is_empty()
                && names(&h.disk("hA")).is_empty()
                && names(&h.disk("hB")).is_empty()
        },
    );
    c.ended_in_time_and_failed();
    let (r, errors) = c.partial_errors();
    assert!(
        errors.contains("ranks 2,3 (hB)") && errors.contains("did not answer"),
        "{errors}"
    );
    let jobs = r["groups"][0]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "hA's two ranks reported");
    if let Ok(on_stdout) = serde_json::from_slice::<Value>(&c.stdout) {
        assert_eq!(on_stdout["errors"], r["errors"]);
    }
    assert!(names(&hosts.disk("hA")).is_empty(), "hA's files removed");
    assert!(names(&hosts.disk("hB")).is_empty(), "hB's files removed");
}

/// Every process on hB killed (SIGKILL: a crashed host, the OOM killer): hA's ranks remove
/// their files (at the end of their run, before any call that waits on another rank), and
/// the run ends non-zero within the deadlines. Rank 0's report is lost here: OpenMPI 4's
/// TCP transport aborts a process whose connection to a dead peer fails (its ob1 layer
/// calls abort), before iogauge's own wait can run out (see docs/scale-out.md, "Not yet").
#[test]
fn a_hosts_ranks_killed_leave_no_file_on_the_others() {
    let Some(hosts) = Hosts::new(&["hA", "hB"]) else {
        return;
    };
    let c = with_hb_cut(&hosts, 4, &[], &|h| h.kill_all("hB"), &|h, _| {
        names(&h.disk("hA")).is_empty()
    });
    c.ended_in_time_and_failed();
    assert!(names(&hosts.disk("hA")).is_empty(), "hA's files removed");
    // Where rank 0 did live to report, the report names the lost ranks.
    for r in &c.partial {
        assert!(r["errors"].to_string().contains("ranks 2,3 (hB)"), "{r}");
    }
}

/// One rank on hB stalls (SIGSTOP: a hung NFS client, a node swapping) while the rest of
/// both hosts run on: rank 0 gives it up after --rank-timeout and names it (rank 3 on hB)
/// in the partial report, which holds the other three ranks; every other rank's files are
/// removed on both hosts.
#[test]
fn a_stalled_rank_on_another_host_is_named() {
    let Some(hosts) = Hosts::new(&["hA", "hB"]) else {
        return;
    };
    let c = with_hb_cut(&hosts, 4, &[], &|h| stop_rank(h, 3), &|h, partial| {
        !partial.is_empty() && names(&h.disk("hA")).is_empty() && names(&h.disk("hB")).len() <= 1
    });
    c.ended_in_time_and_failed();
    let (r, errors) = c.partial_errors();
    assert!(
        errors.contains("rank 3 (hB)") && errors.contains("did not answer"),
        "{errors}"
    );
    assert_eq!(r["groups"][0]["jobs"].as_array().unwrap().len(), 3);
    assert!(names(&hosts.disk("hA")).is_empty(), "hA's files removed");
    // The stalled rank's own file stays only while it is stopped: the launcher, ending the
    // job, continues and terminates it, and it removes its file then.
    let left = names(&hosts.disk("hB"));
    assert!(left.iter().all(|f| f == "w.r3.0.0"), "{left:?}");
}

/// SIGSTOP to rank `k` (found by its command line, which names this test's own disk).
fn stop_rank(h: &Hosts, k: usize) {
    let marker = h.shared_path().display().to_string();
    let pid = super::scaleout::rank_pid(&marker, k).expect("the rank's process");
    let stopped = Command::new("kill")
        .args(["-STOP", &pid.to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
}

/// Rank `k` stalled (SIGSTOP) on hB mid-run, with a row per host and job (results through
/// each host's leader); done once rank 0's partial report is out, hA's files are removed
/// and hB keeps at most the stalled rank's.
fn stalled_with_host_rows(hosts: &Hosts, k: usize) -> Cut {
    with_hb_cut(
        hosts,
        4,
        &["--rank-jobs=host"],
        &|h| stop_rank(h, k),
        &|h, partial| {
            !partial.is_empty()
                && names(&h.disk("hA")).is_empty()
                && names(&h.disk("hB")).len() <= 1
        },
    )
}

/// With a row per host and job the results go through each host's leader (its lowest rank,
/// here 2 on hB), which sends rank 0 its host's merge: rank 3 stalled, hB's leader gives it
/// up within --rank-timeout and passes rank 2's result on; rank 0's partial report holds
/// hA's row and hB's (rank 2 alone), names rank 3 as not answering its leader, and says it
/// took one host's merge.
#[test]
fn a_stalled_rank_behind_its_host_leader_is_named() {
    let Some(hosts) = Hosts::new(&["hA", "hB"]) else {
        return;
    };
    let c = stalled_with_host_rows(&hosts, 3);
    c.ended_in_time_and_failed();
    let (r, errors) = c.partial_errors();
    assert!(
        errors.contains("rank 3 (hB): no result: it did not answer its host's leader (rank 2)"),
        "{errors}"
    );
    let rows: Vec<(&str, &Value)> = r["groups"][0]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["name"].as_str().unwrap(), &j["ranks"]))
        .collect();
    let (a, b) = (serde_json::json!([0, 1]), serde_json::json!([2]));
    assert_eq!(rows, [("w@hA", &a), ("w@hB", &b)]);
    assert_eq!(r["scaleout"]["merge"]["host_leaders"]["merges"], 1, "{r}");
    assert!(names(&hosts.disk("hA")).is_empty(), "hA's files removed");
    let left = names(&hosts.disk("hB"));
    assert!(left.iter().all(|f| f == "w.r3.0.0"), "{left:?}");
}

/// hB's leader (rank 2) stalled: its host's results never reach rank 0, which waits a little
/// longer than a leader would and then names both of hB's ranks as lost with their leader;
/// the report holds hA's row; rank 3, whose leader never took its result, has removed its
/// own file and gives up within twice --rank-timeout.
#[test]
fn a_stalled_host_leader_costs_its_host_and_is_named() {
    let Some(hosts) = Hosts::new(&["hA", "hB"]) else {
        return;
    };
    let c = stalled_with_host_rows(&hosts, 2);
    c.ended_in_time_and_failed();
    let (r, errors) = c.partial_errors();
    assert!(
        errors.contains("ranks 2,3 (hB): no result: its host's leader (rank 2) did not answer"),
        "{errors}"
    );
    let jobs = r["groups"][0]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(jobs[0]["name"], "w@hA");
    assert!(names(&hosts.disk("hA")).is_empty(), "hA's files removed");
    let left = names(&hosts.disk("hB"));
    assert!(left.iter().all(|f| f == "w.r2.0.0"), "{left:?}");
}

/// An MPMD launch across the hosts, writing on hA and reading on hB (appfile style), is
/// refused before any file is made on either host: exit 2 and one line naming the ranks on
/// the other plan and the difference; with --rank-mixed it runs, and the report names the
/// ranks that ran other options.
#[test]
fn different_plans_on_different_hosts_are_refused() {
    let Some(hosts) = Hosts::new(&["hA", "hB"]) else {
        return;
    };
    let file = format!("--filename={}/f", hosts.shared_path().display());
    let run = |extra: &[&str]| {
        let side = |rw: &str| {
            let mut a = vec![
                "run",
                file.as_str(),
                "--size=1m",
                rw,
                "--output-format=json",
            ];
            a.extend_from_slice(extra);
            a.into_iter().map(String::from).collect::<Vec<_>>()
        };
        let mut c = hosts.mpirun(
            2,
            &side("--rw=write")
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>(),
        );
        c.args([":", "-n", "2"])
            .arg(super::bin().get_program())
            .args(side("--rw=read"));
        c.output().unwrap()
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    let said: Vec<&str> = e.lines().filter(|l| l.starts_with("iogauge:")).collect();
    assert_eq!(said.len(), 1, "{e}");
    assert!(
        said[0].contains("rank(s) 2, 3 were given other options than rank 0")
            && said[0].contains("rw=read")
            && said[0].contains("--rank-mixed"),
        "{e}"
    );
    assert!(names(&hosts.disk("hA")).is_empty() && names(&hosts.disk("hB")).is_empty());
    let o = run(&["--rank-mixed"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = report(&o);
    assert!(
        r["warnings"]
            .to_string()
            .contains("rank(s) 2, 3 ran other options than rank 0"),
        "{r}"
    );
    assert!(names(&hosts.disk("hA")).is_empty() && names(&hosts.disk("hB")).is_empty());
}

/// The harness itself: a host's name, address and disk are its own.
#[test]
fn simulated_hosts_are_separate() {
    let Some(hosts) = Hosts::new(&["hA", "hB"]) else {
        return;
    };
    let probe: &Path = &hosts.shared_path();
    // Not iogauge: a shell per rank says where it is and marks its disk.
    let mut c2 = hosts.launcher(4);
    c2.args([
        "sh",
        "-c",
        &format!(
            "echo $(hostname) $OMPI_COMM_WORLD_RANK; touch {}/$OMPI_COMM_WORLD_RANK",
            probe.display()
        ),
    ]);
    let o = c2.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut said: Vec<String> = super::stdout(&o).lines().map(String::from).collect();
    said.sort();
    assert_eq!(said, ["hA 0", "hA 1", "hB 2", "hB 3"]);
    assert_eq!(names(&hosts.disk("hA")), ["0", "1"]);
}
