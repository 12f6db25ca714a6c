//! `clocksource`, as fio spells it: the clock that times every I/O, one for the whole run,
//! named in the report (the TSC with how it compared with CLOCK_MONOTONIC at the end);
//! jobs naming different clocks are refused before anything is created.

use super::*;

/// The report's clock line and warnings for a short read of a tmpfs file with `clocksource`.
fn clock_of(d: &Path, source: &str) -> (String, Vec<String>) {
    let f = format!("--filename={}", d.join("f").display());
    let cs = format!("--clocksource={source}");
    let r = run_json(
        &[
            &f,
            "--size=4m",
            "--rw=randread",
            "--bs=4k",
            "--runtime=200ms",
            "--time_based",
            &cs,
        ],
        0,
    );
    let warnings = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    (r["clock"].as_str().unwrap().to_string(), warnings)
}

fn kernel_uses_tsc() -> bool {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .is_ok_and(|s| s.trim() == "tsc")
}

#[test]
fn clocksource_picks_the_runs_clock_and_the_report_names_it() {
    let d = shm_tmp();
    for source in ["clock_gettime", "gettimeofday"] {
        let (clock, _) = clock_of(d.path(), source);
        assert_eq!(clock, "CLOCK_MONOTONIC", "{source}");
    }
    let (clock, warnings) = clock_of(d.path(), "cpu");
    if kernel_uses_tsc() {
        // Calibrated at the start, compared at the end.
        assert!(clock.starts_with("tsc ("), "{clock}");
        assert!(clock.contains("at the end within"), "{clock}");
    } else {
        skip!("the kernel's clock source is not the TSC: only the fallback is checked");
        assert_eq!(clock, "CLOCK_MONOTONIC");
        assert!(
            warnings.iter().any(|w| w.starts_with("clocksource=cpu:")),
            "{warnings:?}"
        );
    }
    assert!(entries(d.path()).is_empty());
}

#[test]
fn jobs_naming_different_clocks_are_refused() {
    let d = tmp();
    let job = d.path().join("c.fio");
    std::fs::write(
        &job,
        "[a]\nclocksource=cpu\nfilename=f\nsize=1m\n[b]\nclocksource=clock_gettime\nfilename=g\nsize=1m\n",
    )
    .unwrap();
    let o = run_in(d.path(), &["job", "c.fio"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("c.fio:6: clocksource=clock_gettime"), "{err}");
    assert!(
        err.contains("job b") && err.contains("job a (cpu)"),
        "{err}"
    );
    assert_eq!(entries(d.path()), vec![job]);
    // A bad value names what is accepted.
    let o = iogauge(&["run", "--filename=x", "--size=1m", "--clocksource=tsc"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--clocksource=tsc: expected one of cpu, clock_gettime, gettimeofday"),
        "{}",
        stderr(&o)
    );
}
