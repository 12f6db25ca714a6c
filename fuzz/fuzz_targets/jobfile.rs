//! Any bytes as a job file: the parser, the assembly of jobs and the resolver must answer with
//! sections or an error, never panic.
#![no_main]

use std::path::Path;

use iogauge::jobfile::{self, Env};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let var = |k: &str| (k.len() < 4).then(|| "/tmp".to_string());
    let env = Env {
        var: &var,
        ncpus: 2,
        mb_memory: 1024,
        pagesize: 4096,
    };
    // `include` reads files: keep it inside a directory that has none.
    if let Ok(f) = jobfile::parse_str(&text, Path::new("/nonexistent/fuzz.fio"), &env) {
        let jobs = f.jobs(&[], &[], &[]);
        let _ = iogauge::plan::resolve(&jobs, false);
    }
});
