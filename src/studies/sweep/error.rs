//! Why a sweep cannot be set up, resumed or tabled: one line each, as the user sees it.

use std::path::PathBuf;

use super::{MAX_AXIS_POINTS, MAX_POINTS};
use crate::files::writer::Refusal;
use crate::plan::value::ValueError;

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// `--sweep=ARG` itself.
    #[error("--sweep={arg}: {problem}")]
    Axis { arg: String, problem: AxisError },
    /// The axes together: their sizes multiplied.
    #[error("--sweep: {sizes} = {total} points: at most {MAX_POINTS}")]
    TooManyPoints { sizes: String, total: u128 },
    #[error("--table: {name} is not swept (swept: {swept})")]
    NotSwept { name: String, swept: String },
    /// The directory a new sweep goes in (`--dir`, as the user wrote it).
    #[error("--dir={shown}: {problem}")]
    Dir { shown: String, problem: DirError },
    #[error("--dir={shown}: {} does not exist or is not a directory", crate::rawpath::display(.parent))]
    NoParent { shown: String, parent: PathBuf },
    /// A file of the sweep's directory that may not be written (`DIR/NAME`).
    #[error("{file}: {refusal}")]
    Output { file: String, refusal: Refusal },
    #[error("{file}: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    /// `--resume`: what in the directory does not let the sweep go on.
    #[error("--resume: {0}")]
    Resume(ResumeError),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AxisError {
    #[error("expected NAME=V1,V2,… or NAME=FROM..TO:x2 (bs=4k..1m:x2)")]
    Syntax,
    #[error("{0} is not a workload option (iogauge options lists them)")]
    NotAnOption(String),
    #[error("no values")]
    Empty,
    #[error("{0} values: at most {MAX_AXIS_POINTS} per option")]
    TooMany(usize),
    #[error("{0} is given twice")]
    Twice(String),
    #[error("{value} is {first} again: each point would run twice")]
    Same { value: String, first: String },
    #[error("{text}: expected {accepted}")]
    Size { text: String, accepted: ValueError },
    #[error("{0}: a range needs whole numbers (or sizes)")]
    NotWhole(String),
    #[error("a range needs a size or whole-number option; list the values instead")]
    NotRangeable,
    #[error("{from}..{to}: the range runs upwards")]
    Downwards { from: String, to: String },
    #[error(":{0}: expected a whole factor of at least 2 (:x2)")]
    Factor(String),
    #[error("{from}..{to}:{step}: a product range cannot start at 0")]
    ProductFromZero {
        from: String,
        to: String,
        step: String,
    },
    #[error(":{0}: expected a step (:+8) or a factor (:x2)")]
    Step(String),
    #[error("{from}..{to}:{step} is {count} values: at most {MAX_AXIS_POINTS} per option")]
    RangeTooLong {
        from: String,
        to: String,
        step: String,
        count: u64,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum DirError {
    #[error(
        "exists and is not empty: give --resume to continue the sweep in it, or a new directory"
    )]
    NotEmpty,
    #[error("exists and is not a directory")]
    NotDirectory,
    #[error("is a symbolic link to something that is not a directory")]
    LinkToNonDirectory,
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error("{shown}: {source}: no sweep to resume there")]
    NoDir {
        shown: String,
        source: std::io::Error,
    },
    #[error("{shown}/index.json: {source}: no sweep to resume there")]
    NoIndex {
        shown: String,
        source: std::io::Error,
    },
    #[error("{shown}/index.json: not a sweep's index{}", .why.as_ref().map_or(String::new(), |e| format!(" ({e})")))]
    NotIndex {
        shown: String,
        why: Option<serde_json::Error>,
    },
    #[error("{shown}/index.json: {refusal} (the sweep's record of what ran cannot be trusted)")]
    Untrusted { shown: String, refusal: Refusal },
    #[error(
        "{shown} holds a sweep of another workload ({base}); give the same options, or another \
         --dir"
    )]
    OtherWorkload { shown: String, base: String },
    #[error(
        "{shown} holds a sweep of another grid: {why}; give the same --sweep axes, or another \
         --dir"
    )]
    OtherGrid { shown: String, why: String },
    #[error(
        "{shown}/index.json: point {point} names the report {report:?}, not one a sweep writes"
    )]
    ForeignReport {
        shown: String,
        point: usize,
        report: String,
    },
    #[error("{shown}/{report}: {refusal}")]
    Report {
        shown: String,
        report: String,
        refusal: Refusal,
    },
}
