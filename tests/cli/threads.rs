//! Job threads: a job's files live in its thread's own descriptor table while it runs (see
//! src/runner/fdtable.rs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::{bin, tmp};

/// Each task of `pid` and its descriptor table: number → what it names (a thread that shares
/// the process's table shows the process's).
fn tables(pid: u32) -> BTreeMap<u32, BTreeMap<u32, PathBuf>> {
    let mut out = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        let tid: u32 = t.file_name().to_string_lossy().parse().unwrap_or(0);
        let Ok(fds) = std::fs::read_dir(t.path().join("fd")) else {
            continue;
        };
        let table = fds
            .flatten()
            .filter_map(|fd| {
                let n = fd.file_name().to_string_lossy().parse().ok()?;
                Some((n, std::fs::read_link(fd.path()).ok()?))
            })
            .collect();
        out.insert(tid, table);
    }
    out
}

/// The tasks whose table is not the process's, if the one such task holds `file` in a table
/// of its own: the standard streams and `file` only, under numbers the process's table does
/// not give `file`.
fn own_table(pid: u32, file: &Path) -> Option<u32> {
    let all = tables(pid);
    let main = all.get(&pid)?;
    let others: Vec<(&u32, &BTreeMap<u32, PathBuf>)> =
        all.iter().filter(|(_, t)| *t != main).collect();
    let [(tid, table)] = others[..] else {
        return None;
    };
    let ok = table
        .iter()
        .all(|(n, p)| *n < 3 || (p == file && main.get(n).is_none_or(|q| q != file)))
        && table.values().any(|p| p == file);
    ok.then_some(*tid)
}

#[test]
fn a_job_thread_holds_its_files_in_a_table_of_its_own() {
    let dir = tmp();
    std::fs::write(dir.path().join("data"), vec![0u8; 1 << 20]).expect("written");
    let file: PathBuf = dir.path().join("data").canonicalize().expect("a path");
    let mut child = bin()
        .args([
            "run",
            "--name=t",
            &format!("--filename={}", file.display()),
            "--rw=randread",
            "--bs=4k",
            "--rate_iops=20",
            "--time_based",
            "--runtime=3",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iogauge runs");
    let pid = child.id();
    // The runner opens the file before the job's thread exists, and closes its copy once the
    // thread has taken its own: wait for that (it is over within milliseconds), or for the
    // run's end.
    let until = Instant::now() + Duration::from_secs(3);
    let mut found = None;
    while found.is_none() && Instant::now() < until {
        found = own_table(pid, &file);
        std::thread::sleep(Duration::from_millis(20));
    }
    let last = tables(pid);
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        found.is_some(),
        "no job thread with a table of its own: {last:#?}"
    );
}
