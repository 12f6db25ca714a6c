//! fio's continue_on_error and ignore_error on a real full file system: the job goes past
//! the failed writes it is told to, counts them as fio does (compared with fio itself where it
//! is installed), and stops on any other error.

use super::*;

/// A fio-mode run of 8 MiB of 64 KiB writes into a 4 MiB tmpfs, the free-space check off so
/// the writes meet ENOSPC half way; the exit code and fio's job JSON.
fn fill(tool: &str, fs: &Path, extra: &[&str]) -> (Option<i32>, Value) {
    let file = format!("--filename={}", fs.join("f").display());
    let mut args = vec![
        "--name=e",
        file.as_str(),
        "--size=8m",
        "--rw=write",
        "--bs=64k",
        "--fallocate=none",
        "--output-format=json",
    ];
    args.extend_from_slice(extra);
    let o = match tool {
        "fio" => Command::new("fio").args(&args).output().unwrap(),
        _ => {
            let mut all = vec!["fio", "--skip-space-check"];
            all.extend_from_slice(&args);
            iogauge(&all)
        }
    };
    let _ = std::fs::remove_file(fs.join("f"));
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{tool}: {e}: {}\n{}", stdout(&o), stderr(&o)));
    (o.status.code(), v["jobs"][0].clone())
}

fn summary(j: &Value) -> (i64, Option<i64>, Option<i64>, u64, u64) {
    (
        j["error"].as_i64().unwrap(),
        j["total_err"].as_i64(),
        j["first_error"].as_i64(),
        j["write"]["io_bytes"].as_u64().unwrap(),
        j["write"]["total_ios"].as_u64().unwrap(),
    )
}

#[test]
fn continue_on_error_goes_past_a_full_file_system_as_fio_does() {
    let Some(fs) = SmallFs::mount("4m") else {
        return;
    };
    let past = ["--continue_on_error=write", "--ignore_error=,ENOSPC"];
    let (code, j) = fill("iogauge", fs.path(), &past);
    // 64 writes of 64 KiB fit, the other 64 fail with ENOSPC and are counted: fio's error
    // field is the first of them, total_ios counts all 128 issued, the job succeeds.
    assert_eq!(code, Some(0), "{j}");
    assert_eq!(summary(&j), (28, Some(64), Some(28), 4 << 20, 128), "{j}");
    if Command::new("fio").arg("--version").output().is_ok() {
        let (code, f) = fill("fio", fs.path(), &past);
        assert_eq!(code, Some(0), "{f}");
        assert_eq!(summary(&f), summary(&j), "fio: {f}");
    } else {
        skip!("fio is not installed: compared with the numbers fio 3.33 gave");
    }
    // Without ignore_error, write errors continue only past EIO and EILSEQ: ENOSPC stops.
    let (code, j) = fill("iogauge", fs.path(), &["--continue_on_error=write"]);
    assert_eq!(code, Some(1), "{j}");
    assert_eq!(j["error"], 28);
    assert_eq!(j["total_err"], 0, "{j}");
    // continue_on_error=read does not cover writes.
    let (code, _) = fill("iogauge", fs.path(), &["--continue_on_error=read"]);
    assert_eq!(code, Some(1));
}

#[test]
fn continue_on_error_refusals_are_one_line_and_create_nothing() {
    let d = tmp();
    let file = format!("--filename={}", d.path().join("f").display());
    for (extra, says) in [
        (
            &["--continue_on_error=all", "--verify=crc32c"][..],
            "going past verify failures is not done",
        ),
        (&["--ignore_error=EBOGUS"][..], "errno names (ENOSPC, EIO"),
        (&["--ignore_error=a,b,c,d"][..], "up to three lists"),
        (
            &["--continue_on_error=sometimes"][..],
            "one of none, read, write",
        ),
    ] {
        let mut args = vec!["run", file.as_str(), "--size=1m", "--rw=write"];
        args.extend_from_slice(extra);
        let o = iogauge(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{extra:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(entries(d.path()).is_empty());
    }
}
