//! Reads the logs the plan's replaying jobs name (`read_iolog`) and attaches each to its job,
//! before the files are checked: the log decides which files the job touches, so the safety
//! rules see the log's writes as the job's. A log is an input file: read only when it is a
//! regular file (or standard input, `-`) of a bounded size, each one once however many clones
//! replay it.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::named::FileError;
use crate::plan::{Origin, Plan, SpecError};
use crate::trace::iolog::{self, Trace};

/// The largest log read: about 25 million I/Os of text, 32 bytes each once read.
const MAX_LOG_BYTES: u64 = 1 << 30;

/// Attaches every replaying job's log; returns what the logs and their replay say (fio's
/// skipped lines, ignored options) for the report.
pub fn load(plan: &mut Plan) -> Result<Vec<String>, SpecError> {
    let mut read: HashMap<PathBuf, Arc<Trace>> = HashMap::new();
    let mut notes = Vec::new();
    for job in plan.groups.iter_mut().flat_map(|g| &mut g.jobs) {
        let Some(log) = job.replay.as_ref().map(|r| r.log.clone()) else {
            continue;
        };
        let origin = job
            .origins
            .get("read_iolog")
            .cloned()
            .unwrap_or(Origin::Cli);
        let fail = |message: String| SpecError {
            option: "read_iolog".into(),
            value: Some(crate::rawpath::display(&log).to_string()),
            message,
            origin: origin.clone(),
        };
        let trace = match read.get(&log) {
            Some(t) => t.clone(),
            None => {
                let bytes = read_log(&log).map_err(|e| fail(e.to_string()))?;
                let t = Arc::new(iolog::parse(&bytes).map_err(|e| fail(e.to_string()))?);
                read.insert(log.clone(), t.clone());
                t
            }
        };
        for n in crate::plan::replay::attach(job, &trace).map_err(|e| fail(e.to_string()))? {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    }
    Ok(notes)
}

/// The log's bytes: a regular file, or standard input for `-`.
fn read_log(path: &Path) -> Result<Vec<u8>, FileError> {
    const WHY: &str = "split the log";
    if path != Path::new("-") {
        return super::named::read_input(path, MAX_LOG_BYTES, WHY);
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_LOG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(FileError::Unreadable)?;
    if bytes.len() as u64 > MAX_LOG_BYTES {
        return Err(FileError::TooLarge {
            max: MAX_LOG_BYTES,
            why: WHY.into(),
        });
    }
    Ok(bytes)
}
