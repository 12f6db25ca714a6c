//! Reporters: each output format is a pure function of a [`RunReport`] returning text. They do
//! no I/O and never look at the file system; the CLI writes what they return.

pub mod csv;
pub mod extras;
pub mod fio;
pub mod fio_mode;
pub mod from_fio;
pub mod html;
pub mod json;
pub mod log;
pub mod predict;
pub mod studies_text;
pub mod summary;
pub mod sweep_html;
pub mod text;
pub mod trace;
pub mod trace_html;

pub use fio_mode::FioFormat;

use crate::studies::Report;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Csv,
    Html,
}

impl Format {
    /// The file name extension for this format.
    pub fn ext(self) -> &'static str {
        match self {
            Format::Text => "txt",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Html => "html",
        }
    }

    /// A comma list (`text,json`), each format once, in the order given.
    pub fn parse_list(s: &str) -> Result<Vec<Format>, UnknownFormat> {
        let mut v = Vec::new();
        for word in s.split(',').map(str::trim) {
            let f = word.parse::<Format>().map_err(|e| UnknownFormat {
                list: s.contains(',').then(|| s.to_string()),
                ..e
            })?;
            if !v.contains(&f) {
                v.push(f);
            }
        }
        Ok(v)
    }
}

/// A word `--output-format` does not know, and the list it came in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--output-format={}{word}: unknown format; accepted: text (alias normal), json, csv, html, \
     or a comma list of them",
    .list.as_ref().map_or(String::new(), |l| format!("{l}: "))
)]
pub struct UnknownFormat {
    pub word: String,
    pub list: Option<String>,
}

impl std::str::FromStr for Format {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Self, UnknownFormat> {
        match s {
            "text" | "normal" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            "html" => Ok(Format::Html),
            other => Err(UnknownFormat {
                word: other.to_string(),
                list: None,
            }),
        }
    }
}

/// Why a saved report cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SavedError {
    #[error("not a JSON report ({0})")]
    NotJson(serde_json::Error),
    #[error(transparent)]
    Fio(#[from] from_fio::FioJsonError),
    #[error("not an iogauge JSON report ({0}); iogauge reads its own JSON and fio's")]
    NotIogauge(serde_json::Error),
}

/// A saved report: iogauge's JSON, or fio's (read as far as fio's JSON goes).
pub fn saved(text: &str) -> Result<Report, SavedError> {
    // iogauge's own, read straight into its type: a large report is never held as a tree.
    let text = crate::result::json_start(text);
    let own = match Report::from_json(text) {
        Ok(r) => return Ok(r),
        Err(e) => e,
    };
    let doc: serde_json::Value =
        serde_json::from_slice(text.as_bytes()).map_err(SavedError::NotJson)?;
    if from_fio::is_fio(&doc) {
        return Ok(from_fio::run_report(&doc)?.into());
    }
    Err(SavedError::NotIogauge(own))
}

pub fn render(format: Format, report: &Report) -> String {
    match format {
        Format::Text => text::render(report),
        Format::Json => json::render(report),
        Format::Csv => csv::render(report),
        Format::Html => html::render(report),
    }
}

/// A latency unit chosen once per table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatUnit {
    Ns,
    Us,
    Ms,
}

impl LatUnit {
    /// The unit that shows `typical_ns` with 1 to 4 integer digits.
    pub fn for_ns(typical_ns: f64) -> Self {
        if typical_ns < 1_000.0 {
            LatUnit::Ns
        } else if typical_ns < 10_000_000.0 {
            LatUnit::Us
        } else {
            LatUnit::Ms
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            LatUnit::Ns => "ns",
            LatUnit::Us => "µs",
            LatUnit::Ms => "ms",
        }
    }
    /// Nanoseconds in one of this unit.
    pub fn ns(self) -> f64 {
        match self {
            LatUnit::Ns => 1.0,
            LatUnit::Us => 1e3,
            LatUnit::Ms => 1e6,
        }
    }
    pub fn fmt(self, ns: f64) -> String {
        let v = ns / self.ns();
        match self {
            LatUnit::Ns => format!("{v:.0}"),
            LatUnit::Us => format!("{v:.2}"),
            LatUnit::Ms => format!("{v:.3}"),
        }
    }
}

/// What a bad block is, after where it is: the fault, its first differing byte, and the header
/// found there (which write, of which run and job, when). Text and HTML both say it so.
pub fn bad_block_details(b: &crate::stats::BadBlock) -> String {
    let f = &b.fault;
    let mut s = f.to_string();
    if let Some(at) = f.first_bad_byte {
        s += &format!("; first differing byte {at} of the block");
    }
    if let Some(h) = &f.found {
        s += &format!(
            "; its header: write #{} (block generation {}) of run {:016x}, job {}, at offset {}, \
             written {}",
            h.seq,
            h.generation,
            h.run_id,
            h.job,
            h.offset,
            crate::units::ctime_utc(h.written_unix_ns / 1_000_000_000)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_labelled() {
        assert_eq!(LatUnit::for_ns(80_000.0).label(), "µs");
        assert_eq!(LatUnit::Us.fmt(80_123.0), "80.12");
        assert!(
            "xml"
                .parse::<Format>()
                .unwrap_err()
                .to_string()
                .contains("accepted: text")
        );
        assert_eq!(
            Format::parse_list("text, json,text").unwrap(),
            vec![Format::Text, Format::Json]
        );
        let e = Format::parse_list("text,xml").unwrap_err().to_string();
        assert!(
            e.starts_with("--output-format=text,xml: xml: unknown"),
            "{e}"
        );
    }
}
