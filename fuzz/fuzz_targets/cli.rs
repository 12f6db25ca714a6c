//! Any bytes as a command line: split at NUL bytes into arguments after `iogauge run` (or a
//! personality's name, or `fio`), they must give a request or a one-line error, never a panic. This
//! reaches every value parser behind the flags: sizes, durations, ranges, percentages,
//! bssplit, random distributions, per-direction lists, and the resolver's cross-option rules;
//! and the carrying of bytes that are not UTF-8 must give every byte back.
#![no_main]

use iogauge::cli::{self, Request};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Bytes carried through option text come back exactly (rawpath).
    if let Ok(carried) = iogauge::rawpath::from_bytes(data) {
        assert_eq!(iogauge::rawpath::to_bytes(&carried), data);
        let p = iogauge::rawpath::path(&carried);
        assert_eq!(iogauge::rawpath::path(&iogauge::rawpath::text(&p)), p);
    }
    let text = String::from_utf8_lossy(data);
    let mut args: Vec<String> = vec!["iogauge".into()];
    // The first byte picks the front end; paths point nowhere that exists.
    let front = match data.first().map(|b| b % 5) {
        Some(1) => "sasiotest",
        Some(2) => "sqlio",
        Some(3) => "iotest",
        Some(4) => "fio",
        _ => "run",
    };
    args.push(front.into());
    args.extend(
        text.get(1..)
            .unwrap_or("")
            .split('\0')
            .take(64)
            .map(str::to_string),
    );
    // Nothing may point at a real file: a personality's parser stats the paths it is given.
    if args
        .iter()
        .any(|a| a.contains('/') || a.contains("-F") || a.contains("batch"))
    {
        return;
    }
    match cli::parse(&args) {
        Ok(Request::Run { sections, .. }) => {
            let _ = iogauge::plan::resolve(&sections, false);
        }
        // fio's command line: its jobs resolve as a job file's would.
        Ok(Request::Fio(r)) => {
            let _ = iogauge::plan::resolve(&r.jobs, false);
        }
        _ => {}
    }
    for a in &args[2..] {
        let _ = iogauge::plan::value::parse_size(a);
        let _ = iogauge::plan::value::parse_pattern(a);
        let _ = iogauge::verify::Checksum::parse(a);
        if let Ok(axis) = iogauge::studies::sweep::parse_axis(a) {
            assert!(
                !axis.values.is_empty() && axis.values.len() <= iogauge::studies::sweep::MAX_AXIS_POINTS
            );
        }
        let _ = iogauge::plan::value::parse_duration(a, std::time::Duration::from_secs(1));
        let _ = iogauge::plan::value::parse_range(a, |s| {
            iogauge::plan::value::parse_int(s, 0, u64::MAX)
        });
        let _ = cli::for_terminal(a);
    }
});
