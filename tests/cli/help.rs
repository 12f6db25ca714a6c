//! The first screens a new user reads: `run --help` grouped by topic with examples first,
//! wrapped to 100 columns, the options admins need (output, keep, repeat) on the first
//! screen; every other option still taken, and listed or explained by `iogauge options`.

use super::*;

/// The line (0-based) where `needle` first appears.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle} not in:\n{text}"))
}

#[test]
fn run_help_is_short_grouped_and_fits_100_columns() {
    let help = stdout(&iogauge(&["run", "--help"]));
    for l in help.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    let examples = line_of(&help, "Examples:");
    let topics: Vec<usize> = ["What to run:", "Where:", "How long:", "Output:", "Safety:"]
        .iter()
        .map(|t| line_of(&help, t))
        .collect();
    assert!(examples < topics[0], "examples come first");
    assert!(topics.windows(2).all(|w| w[0] < w[1]), "{topics:?}");
    // What an admin reaches for, on the first screen.
    for flag in [
        "--output-format",
        "--output <",
        "--keep",
        "--repeat",
        "--filename",
    ] {
        assert!(
            line_of(&help, flag) < 55,
            "{flag} past the first screen:\n{help}"
        );
    }
    assert!(help.lines().count() < 100, "{} lines", help.lines().count());
    // The rest of fio's options are left to `iogauge options`, and still taken.
    assert!(!help.contains("--rate "), "{help}");
    assert!(help.contains("iogauge options"), "{help}");
    let d = tmp();
    ok_in(
        d.path(),
        &[
            "run",
            "--ioengine=null",
            "--size=1m",
            "--rate=1g",
            "--bsrange=4k-16k",
            "--output=/dev/null",
        ],
    );
}

#[test]
fn options_lists_every_row_and_explains_the_ones_named() {
    let all = stdout(&iogauge(&["options"]));
    for l in all.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    let rows = all
        .lines()
        .filter(|l| l.trim_start().starts_with("type: "))
        .count();
    assert_eq!(rows, iogauge::plan::options::OPTIONS.len());
    let some = stdout(&iogauge(&["options", "read_iolog", "--bs"]));
    assert!(some.starts_with("  read_iolog\n"), "{some}");
    assert!(some.contains("  bs, blocksize\n"), "{some}");
    assert!(some.contains("Bytes per I/O"), "{some}");
    let o = iogauge(&["options", "thread"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("options thread: no workload option") && e.contains("fio option"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
}
