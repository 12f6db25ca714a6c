//! The one spec every front end speaks: fio-style `key=value` sections (from the command line,
//! job files, profiles and the legacy personalities) resolved into a validated [`Plan`].
//! Nothing here touches the file system or runs I/O; `files` and `runner` do that.

pub mod absent;
mod blockmap;
mod data;
pub mod errors;
pub mod job;
mod logs;
pub mod options;
mod pacing;
pub mod prio;
pub mod replay;
pub mod resolve;
mod rw;
mod seeds;
pub(crate) mod summary;
pub mod value;
pub mod workload;

pub use job::{
    ClockSource, DataMode, DataShape, EngineKind, ExitWhat, Fadvise, FlowSpec, Group, JobSpec,
    LogSpec, OnFailure, Plan, ReadFrom, RwMode, SteadyCriterion, SteadyState, SyncMode, TargetSpec,
    Verify,
};
pub use resolve::resolve;

use std::fmt;
use std::path::PathBuf;

/// Where an option came from, so errors can point at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Cli,
    File {
        path: PathBuf,
        line: usize,
    },
    Profile(&'static str),
    /// A legacy tool's flag (`sqlio -o8` became iodepth=8).
    Flag {
        tool: &'static str,
        flag: &'static str,
    },
}

impl Origin {
    /// How the user named `option` where it came from: `--bs` on the command line,
    /// `job.fio:12: bs` in a job file (`job.fio: bs` with no line), `sqlio -b` for a legacy
    /// tool's flag, `profile quick: bs` for a profile.
    pub fn label(&self, option: &str) -> String {
        match self {
            Origin::Cli => format!("--{option}"),
            Origin::File { path, line: 0 } => format!("{}: {option}", path.display()),
            Origin::File { path, line } => format!("{}:{line}: {option}", path.display()),
            Origin::Profile(p) => format!("profile {p}: {option}"),
            Origin::Flag { tool, flag } => format!("{tool} {flag}"),
        }
    }

    /// `option=value` as the user wrote it: `--filename=f`, `job.fio:3: filename=f`; a legacy
    /// tool's file argument as `sqlio f`, another flag as `sqlio -b (bs=65536)` (the tool's
    /// own value may be in other units).
    pub fn label_with(&self, option: &str, value: &str) -> String {
        match self {
            Origin::Flag { tool, flag: "FILE" } => format!("{tool} {value}"),
            Origin::Flag { .. } => format!("{} ({option}={value})", self.label(option)),
            _ => format!("{}={value}", self.label(option)),
        }
    }
}

/// One `key=value` (or bare `key`) as the user wrote it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub key: String,
    pub value: Option<String>,
    pub origin: Origin,
}

/// A job section: its name and its options, in order (later entries win).
#[derive(Debug, Clone, Default)]
pub struct Section {
    pub name: String,
    pub entries: Vec<Entry>,
}

impl Section {
    pub fn new(name: impl Into<String>) -> Self {
        Section {
            name: name.into(),
            entries: Vec::new(),
        }
    }

    /// Adds `key=value` from `origin`.
    pub fn set(&mut self, key: &str, value: &str, origin: Origin) -> &mut Self {
        self.entries.push(Entry {
            key: key.into(),
            value: Some(value.into()),
            origin,
        });
        self
    }
}

/// A configuration error the user can fix: the option, the value, what is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub option: String,
    pub value: Option<String>,
    pub message: String,
    pub origin: Origin,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin.label(&self.option))?;
        if let Some(v) = &self.value {
            write!(f, "={v}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for SpecError {}
