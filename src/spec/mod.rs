//! The one spec every front end speaks: fio-style `key=value` sections (from the command line,
//! job files, profiles and the legacy personalities) resolved into a validated [`Plan`].
//! Nothing here touches the file system or runs I/O; `target` and `runner` do that.

pub mod job;
pub mod options;
pub mod resolve;
pub mod value;
pub mod workload;

pub use job::{
    DataMode, EngineKind, Fadvise, Group, JobSpec, LogSpec, Plan, RwMode, SyncMode, TargetSpec,
};
pub use resolve::resolve;

use std::fmt;
use std::path::PathBuf;

/// Where an option came from, so errors can point at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Cli,
    File { path: PathBuf, line: usize },
    Profile(&'static str),
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
        match &self.origin {
            Origin::Cli => write!(f, "--{}", self.option)?,
            Origin::File { path, line } => {
                write!(f, "{}:{}: {}", path.display(), line, self.option)?
            }
            Origin::Profile(p) => write!(f, "profile {p}: {}", self.option)?,
        }
        if let Some(v) = &self.value {
            write!(f, "={v}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for SpecError {}
