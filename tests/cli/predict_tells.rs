//! `iogauge predict` of a program whose helper is told to exit by another of its tasks: the
//! helper's end follows the task that told it — through the wake-up that ended its sleep, or
//! the signal that reached it while it ran — not its recorded timer.

use serde_json::Value;

use super::predict::{
    most_reads_gone_on_tmpfs, python, recorded_beside_a_file_on_the_device, sees_wake_ups,
};

#[test]
fn a_helper_that_flushes_on_a_timer_until_told_to_exit_ends_when_told_there() {
    // A helper writes a file every 30 ms until the shell tells it to exit; the shell tells it
    // when dd's direct reads of the disk end. Recorded on the disk (the helper flushed on its
    // timer during the reads) and predicted for tmpfs, where the reads take microseconds: the
    // helper is told sooner, before its later flushes, and the program ends then — not at its
    // recorded flushes, nor its recorded tail after the last of them.
    // Each step runs in the background and is waited for with `wait`, which the signal
    // interrupts: told while its dd ran in the foreground, the helper would take the signal
    // only after dd's exit had woken it, and that wake-up (its child's) would be its last.
    let script = "( trap 'kill $d $s 2>/dev/null; exit 0' TERM; \
        while :; do dd if=/dev/zero of=h bs=4k count=1 conv=notrunc status=none & d=$!; \
        wait $d; sleep 0.03 & s=$!; wait $s; done ) & \
        h=$!; dd if=in of=/dev/null bs=4k count=2048 iflag=direct status=none; \
        kill $h; wait";
    let Some((work, stats)) = recorded_beside_a_file_on_the_device(2048, script) else {
        return;
    };
    let w = work.path();
    if !sees_wake_ups(&stats) {
        return;
    }
    let flushes = stats["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("/h"))
        .map_or(0, |f| f["writes"]["calls"].as_u64().unwrap());
    if flushes < 3 {
        skip!("the reads took less than the helper's three turns ({flushes} flushes)");
        return;
    }
    // A capture that dropped records (its buffer full, on a loaded machine) may have dropped
    // the wake-up that told the helper to exit.
    if stats["lost"].as_u64().unwrap() > 0 {
        skip!("the capture dropped {} records", stats["lost"]);
        return;
    }
    // Most of the reads' time is gone from the prediction: it would all be there if the
    // helper's end waited for its flushes at their recorded times.
    let about = format!("{flushes} flushes; the trace: {stats}");
    let Some(p) = most_reads_gone_on_tmpfs(w, &about) else {
        return;
    };
    // Nor does a child of the helper decide the end: the trap kills the dd or sleep it runs
    // when told, as it did when recorded. (Until 2026-12-06 the sleep running when the helper
    // was told here — one that had slept its 30 ms to the end when recorded, the tell coming
    // later there — ran to that end, and the program was predicted at about 40 ms where it
    // runs in 6.)
    decided_by_the_shell_or_its_child(&stats, &p, &about);
}

/// Asserts that the prediction `p` of a trace (its `stats`) was decided by the shell that
/// is the program or a child of it, not by a child of its helper; `about` in the message.
fn decided_by_the_shell_or_its_child(stats: &Value, p: &Value, about: &str) {
    let threads = stats["threads"].as_array().unwrap();
    let parent_of = |tid: &Value| {
        threads
            .iter()
            .find(|t| &t["tid"] == tid)
            .map_or(Value::Null, |t| t["parent"].clone())
    };
    let shell = threads.iter().find(|t| t["parent"].is_null()).unwrap();
    let critical = &p["critical_tid"];
    assert!(
        critical == &shell["tid"] || parent_of(critical) == shell["tid"],
        "the end was decided by {critical}, a grandchild of the shell: {p}; {about}"
    );
}

/// A helper that computes without sleeping (a 20 ms spin between writes of `h`) until a
/// SIGTERM ends it at once.
const SPINNER: &str = "
import os, signal, time
signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
fd = os.open('h', os.O_WRONLY | os.O_CREAT, 0o644)
while True:
    t = time.monotonic()
    while time.monotonic() - t < 0.02:
        pass
    os.pwrite(fd, b'x' * 4096, 0)
";

#[test]
fn a_helper_signalled_while_it_computes_ends_when_told_there() {
    // The helper never sleeps, so the shell's `kill` when dd's direct reads of the disk end
    // wakes nothing: only the signal says it was told. Predicted for tmpfs, where the reads
    // take microseconds, the helper is told sooner and the program ends then, not at its
    // recorded end.
    let script = format!(
        "{} -c \"{SPINNER}\" & h=$!; \
         dd if=in of=/dev/null bs=4k count=4096 iflag=direct status=none; kill $h; wait",
        python()
    );
    let Some((work, stats)) = recorded_beside_a_file_on_the_device(4096, &script) else {
        return;
    };
    if !sees_wake_ups(&stats) {
        return;
    }
    // The trace holds the one signal, to the helper: the shell's child that is not the
    // reader (the thread with the most time in calls).
    let threads = stats["threads"].as_array().unwrap();
    let signalled: Vec<&Value> = threads
        .iter()
        .filter(|t| t["signalled"].as_u64().unwrap() > 0)
        .collect();
    assert_eq!(signalled.len(), 1, "{stats}");
    assert_eq!(signalled[0]["signalled"], 1, "{stats}");
    let shell = threads.iter().find(|t| t["parent"].is_null()).unwrap();
    let reader = threads
        .iter()
        .max_by_key(|t| t["busy_ns"].as_u64().unwrap())
        .unwrap();
    assert_eq!(signalled[0]["parent"], shell["tid"], "{stats}");
    assert_ne!(signalled[0]["tid"], reader["tid"], "{stats}");
    if stats["lost"].as_u64().unwrap() > 0 {
        skip!("the capture dropped {} records", stats["lost"]);
        return;
    }
    most_reads_gone_on_tmpfs(work.path(), &format!("the trace: {stats}"));
}

#[test]
fn a_monitor_ended_by_the_scripts_kill_0_ends_when_the_script_does_there() {
    // A monitor (a subshell) appends to a file every 30 ms in the background; the script
    // reads the disk directly and, on its exit, its trap signals its whole process group
    // (`kill 0`): the monitor, the sleep it runs, and iogauge too — which goes on recording.
    // Predicted for tmpfs, where the reads take microseconds, the program ends when the script
    // does, not at the monitor's recorded turns nor at the end of the sleep it runs then: the
    // trace holds the group's signal as a tell to each of its processes.
    // (The trap ignores SIGTERM first: the script's own exit code is what record passes on.)
    let script = "( while :; do echo x >> h; sleep 0.03; done ) & \
        trap \"trap '' TERM; kill 0\" EXIT; \
        dd if=in of=/dev/null bs=4k count=2048 iflag=direct status=none";
    let Some((work, stats)) = recorded_beside_a_file_on_the_device(2048, script) else {
        return;
    };
    if !sees_wake_ups(&stats) {
        return;
    }
    let threads = stats["threads"].as_array().unwrap();
    let signalled: u64 = threads
        .iter()
        .map(|t| t["signalled"].as_u64().unwrap())
        .sum();
    assert!(signalled >= 1, "the group's signal is a tell: {stats}");
    if stats["lost"].as_u64().unwrap() > 0 {
        skip!("the capture dropped {} records", stats["lost"]);
        return;
    }
    let about = format!("the trace: {stats}");
    let Some(p) = most_reads_gone_on_tmpfs(work.path(), &about) else {
        return;
    };
    decided_by_the_shell_or_its_child(&stats, &p, &about);
}
