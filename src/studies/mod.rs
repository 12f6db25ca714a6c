//! Studies: functions from runs and their results to an answer — a sweep's grid and its
//! directory (`sweep`), the spread of repeated runs (`repeat`), steady-state rounds
//! (`rounds`), verdicts against published guidance (`assess`), the merge of MPI ranks
//! (`scaleout`) and two reports compared (`compare`). They run nothing and print nothing.

pub mod assess;
pub mod compare;
pub mod predict;
pub mod repeat;
pub mod rounds;
pub mod scaleout;
pub mod sweep;

use serde::{Deserialize, Serialize};

use crate::result::RunReport;

/// The report a command writes: a run's RunReport and what the studies found in it. In JSON
/// the study parts sit beside the run's own keys, at the end (docs/json-schema.md).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    #[serde(flatten)]
    pub run: RunReport,
    /// `--repeat=N`: the spread of each job's figures over the runs (the rest of the report
    /// is the last run's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat: Option<repeat::RepeatReport>,
    /// `--until-steady`/`--precondition`: the rounds and the verdict (the rest of the report
    /// is the last round's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rounds: Option<rounds::RoundsReport>,
    /// `iogauge assess`: the verdicts against published guidance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assessment: Option<assess::Assessment>,
    /// A run over MPI ranks, merged on rank 0: per host, and each group's timing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaleout: Option<scaleout::ScaleOut>,
}

/// The study parts of a saved report, read on their own (the run's keys are skipped).
#[derive(Deserialize)]
struct Parts {
    #[serde(default)]
    repeat: Option<repeat::RepeatReport>,
    #[serde(default)]
    rounds: Option<rounds::RoundsReport>,
    #[serde(default)]
    assessment: Option<assess::Assessment>,
    #[serde(default)]
    scaleout: Option<scaleout::ScaleOut>,
}

impl Report {
    /// Read iogauge's JSON: the run and the study parts in two streaming passes over the text,
    /// so a large report is never held as a tree. Every JSON iogauge reads goes through
    /// `from_slice`: each type's reading code is in the binary once, not once per kind of
    /// input.
    pub fn from_json(text: &str) -> serde_json::Result<Report> {
        let run: RunReport = serde_json::from_slice(text.as_bytes())?;
        Ok(Report::of(run, serde_json::from_slice(text.as_bytes())?))
    }

    fn of(run: RunReport, p: Parts) -> Report {
        Report {
            run,
            repeat: p.repeat,
            rounds: p.rounds,
            assessment: p.assessment,
            scaleout: p.scaleout,
        }
    }
}

impl From<RunReport> for Report {
    fn from(run: RunReport) -> Report {
        Report {
            run,
            repeat: None,
            rounds: None,
            assessment: None,
            scaleout: None,
        }
    }
}

impl std::ops::Deref for Report {
    type Target = RunReport;
    fn deref(&self) -> &RunReport {
        &self.run
    }
}

impl std::ops::DerefMut for Report {
    fn deref_mut(&mut self) -> &mut RunReport {
        &mut self.run
    }
}
