//! fill_device: writing until the file system is full on a small tmpfs of its own, fio's
//! surface-scan.fio run unchanged (the write phase fills, the verify phase reads and checks
//! exactly what was written, the same bytes as the real fio), ENOSPC ending jobs cleanly
//! rather than failing them, and a later job without a size reading what an earlier job
//! wrote, as fio sizes it when the job starts.

use super::*;

const SURFACE_SCAN: &str = "/usr/share/doc/fio/examples/surface-scan.fio";

/// The bytes of each direction of each job, by job name, from fio's JSON (either tool's).
fn fio_bytes(doc: &Value) -> Vec<(String, u64, u64)> {
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["write"]["io_bytes"].as_u64().unwrap(),
                j["read"]["io_bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// fio's JSON, after any lines fio prints before it.
fn json_of(out: &[u8]) -> Value {
    let text = String::from_utf8_lossy(out);
    let start = text.find('{').expect("a JSON document");
    serde_json::from_str(&text[start..]).expect("JSON")
}

#[test]
fn fios_surface_scan_fills_the_file_system_then_verifies_what_it_wrote() {
    let Ok(text) = std::fs::read_to_string(SURFACE_SCAN) else {
        skip!("{SURFACE_SCAN} is missing (scripts/test-deps.sh installs fio-examples)");
        return;
    };
    let Some(fs) = SmallFs::mount("4m") else {
        return;
    };
    let job = fs.path().join("surface-scan.fio");
    std::fs::write(&job, &text).unwrap();
    let o = run_in(
        fs.path(),
        &["job", "surface-scan.fio", "--output-format=json"],
    );
    if o.status.code() == Some(2) && stderr(&o).contains("does not support O_DIRECT") {
        skip!("this kernel's tmpfs has no O_DIRECT, which surface-scan.fio asks for");
        return;
    }
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ours = fio_bytes(&r);
    let (written, read) = (ours[0].1, ours[1].2);
    // Direct 64 KiB writes until the 4 MiB file system is full: whole I/Os only.
    assert!(written > 3 << 20 && written <= 4 << 20, "{written}");
    assert_eq!(written % 65536, 0);
    assert_eq!(
        read, written,
        "the verify phase reads what the filling wrote"
    );
    let verify = &r["groups"][1]["jobs"][0]["verify"];
    assert_eq!(verify["bytes"].as_u64(), Some(read), "{verify}");
    assert_eq!(verify["bad_blocks"].as_u64(), Some(0), "{verify}");
    // Everything iogauge created is gone; the job file stays.
    assert_eq!(entries(fs.path()), vec![job.clone()]);

    // The real fio, on the same file system: the same bytes written and read back.
    let Ok(f) = Command::new("fio")
        .current_dir(fs.path())
        .args(["surface-scan.fio", "--output-format=json"])
        .output()
    else {
        skip!("fio is not installed: the bytes are not compared with fio's");
        return;
    };
    assert!(f.status.success(), "{}", stderr(&f));
    let theirs = fio_bytes(&json_of(&f.stdout));
    assert_eq!(
        (theirs[0].1, theirs[1].2),
        (written, read),
        "fio: {theirs:?}"
    );
    let _ = std::fs::remove_file(fs.path().join("datafile.tmp"));
}

#[test]
fn jobs_filling_one_file_system_end_at_enospc_without_failing() {
    let Some(fs) = SmallFs::mount("4m") else {
        return;
    };
    let job = fs.path().join("two.fio");
    std::fs::write(
        &job,
        "[global]\nbs=64k\nrw=write\nfill_fs=1\n[a]\nfilename=fa\n[b]\nfilename=fb\n",
    )
    .unwrap();
    let o = run_in(fs.path(), &["job", "two.fio", "--output-format=json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let bytes = fio_bytes(&r);
    let total: u64 = bytes.iter().map(|b| b.1).sum();
    // Each sized to the whole free space: together they fill it. Each stops at ENOSPC, or —
    // when the scheduler ran one to its end before the other wrote — wrote the whole space
    // and the other met ENOSPC at once; neither fails.
    assert!(total > 3 << 20 && total <= 4 << 20, "{bytes:?}");
    let mut full = 0;
    for (i, j) in r["groups"][0]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let filled = j["filled"].as_str().unwrap_or("");
        if filled.contains("ENOSPC") {
            full += 1;
        } else {
            assert!(
                bytes[i].1 > 3 << 20,
                "job {i} neither filled nor wrote it all: {j}"
            );
        }
        assert!(j["error"].is_null(), "job {i}: {j}");
        assert_eq!(r["jobs"][i]["error"], 0);
    }
    assert!(full >= 1, "{r}");
    assert_eq!(entries(fs.path()), vec![job]);
}

#[test]
fn a_reading_fill_job_lays_its_file_out_until_the_file_system_is_full() {
    let Some(fs) = SmallFs::mount("4m") else {
        return;
    };
    let o = run_in(
        fs.path(),
        &[
            "run",
            "--name=r",
            "--filename=f",
            "--rw=read",
            "--bs=64k",
            "--fill_device=1",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let read = fio_bytes(&r)[0].2;
    assert!(read > 3 << 20 && read <= 4 << 20, "{read}");
    let layout = r["groups"][0]["jobs"][0]["files"][0]["layout"].to_string();
    assert!(layout.contains("laid out"), "{layout}");
    assert!(entries(fs.path()).is_empty());
}

#[test]
fn a_later_job_without_a_size_reads_what_an_earlier_job_wrote() {
    let d = tmp();
    std::fs::write(
        d.path().join("wr.fio"),
        "[w]\nfilename=f\nrw=write\nsize=3m\nbs=64k\n[r]\nstonewall\nfilename=f\nrw=read\nbs=4k\n",
    )
    .unwrap();
    let o = run_in(d.path(), &["job", "wr.fio", "--output-format=json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let bytes = fio_bytes(&serde_json::from_slice(&o.stdout).unwrap());
    assert_eq!((bytes[0].1, bytes[1].2), (3 << 20, 3 << 20), "{bytes:?}");
    assert_eq!(entries(d.path()), vec![d.path().join("wr.fio")]);
}
