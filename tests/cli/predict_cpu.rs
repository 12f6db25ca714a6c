//! `iogauge replay` and `predict` say how long their threads waited for a CPU beside the
//! recorded program's waits, and a prediction made on a machine busier than the recording's
//! says so: here the replay runs in a cgroup held to a tenth of a CPU.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::predict::python;
use super::*;

/// A program that computes for 150 ms of its CPU time between two calls, then makes a file.
const SPIN: &str = "
import os, time
t = time.process_time()
while time.process_time() - t < 0.15:
    pass
os.close(os.open('f', os.O_WRONLY | os.O_CREAT, 0o644))
";

/// A cgroup that holds its processes to a tenth of a CPU (cgroup v2's `cpu.max`, or v1's CFS
/// quota), removed when dropped; None, having said why, where none can be made here.
struct Throttle {
    dir: PathBuf,
}

impl Throttle {
    fn new() -> Option<Throttle> {
        let name = format!("iogauge-test-{}", std::process::id());
        let v2 = Path::new("/sys/fs/cgroup");
        let v2_cpu = std::fs::read_to_string(v2.join("cgroup.subtree_control"))
            .is_ok_and(|s| s.split_whitespace().any(|c| c == "cpu"));
        let (dir, limits): (PathBuf, &[(&str, &str)]) = if v2_cpu {
            (v2.join(&name), &[("cpu.max", "10000 100000")])
        } else {
            (
                v2.join("cpu").join(&name),
                &[
                    ("cpu.cfs_period_us", "100000"),
                    ("cpu.cfs_quota_us", "10000"),
                ],
            )
        };
        if let Err(e) = std::fs::create_dir(&dir) {
            skip!(
                "no cgroup with the cpu controller to make ({}: {e})",
                dir.display()
            );
            return None;
        }
        let t = Throttle { dir };
        for (file, value) in limits {
            if let Err(e) = std::fs::write(t.dir.join(file), value) {
                skip!("cannot limit the cgroup's CPU ({file}: {e})");
                return None;
            }
        }
        Some(t)
    }

    /// `iogauge args` in `dir`, inside the cgroup.
    fn run(&self, dir: &Path, args: &[&str]) -> std::process::Output {
        Command::new("sh")
            .current_dir(dir)
            .arg("-c")
            .arg("echo $$ > \"$1\" && shift && exec \"$@\"")
            .arg("sh")
            .arg(self.dir.join("cgroup.procs"))
            .arg(assert_cmd::cargo::cargo_bin!("iogauge"))
            .args(args)
            .output()
            .expect("sh runs")
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn json(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

#[test]
fn a_replay_that_waited_for_a_cpu_more_than_the_recording_says_the_machine_was_busier() {
    let work = tmp();
    let w = work.path();
    let o = run_in(
        w,
        &["record", "-o", "t.iogtrace", "--", python(), "-c", SPIN],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let stats = trace_stats(w, "t.iogtrace");
    let Some(recorded) = stats["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["off_cpu"]["think_preempted_ns"].as_u64())
        .sum::<Option<u64>>()
    else {
        skip!("the capture did not see the scheduler: {}", stats["method"]);
        return;
    };
    // A replay says its threads' waits beside the recorded threads' (their sum, exactly).
    let target = tmp();
    let d = target.path().to_str().unwrap();
    let r = json(&run_in(
        w,
        &[
            "replay",
            "t.iogtrace",
            "--directory",
            d,
            "--output-format",
            "json",
        ],
    ));
    if std::fs::read_to_string("/proc/thread-self/schedstat").is_err() {
        skip!("this kernel keeps no run delay per thread (/proc/thread-self/schedstat)");
        return;
    }
    assert_eq!(r["cpu_wait"]["recorded_ns"], recorded, "{r}");
    assert!(r["cpu_wait"]["replayed_ns"].is_u64(), "{r}");
    // Held to a tenth of a CPU, the replay's 150 ms of computation waits for one most of the
    // time: the prediction holds those waits, and says so.
    let Some(throttle) = Throttle::new() else {
        return;
    };
    let p = json(&throttle.run(
        w,
        &[
            "predict",
            "t.iogtrace",
            "--directory",
            d,
            "--repeat",
            "1",
            "--json",
        ],
    ));
    let waited = p["replays"][0]["cpu_wait"]["replayed_ns"].as_u64().unwrap();
    assert!(waited > 500_000_000, "waited {waited} ns: {p}");
    let said = p["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|w| w.contains("this machine was busier than when the program was recorded"));
    assert!(said.is_some(), "{p}");
    assert!(entries(target.path()).is_empty());
}
