//! JSON: exactly one document, a superset of fio's JSON: fio's top-level keys and `jobs[]`
//! first (see `fio`), then iogauge's own report (groups, targets, host, warnings…) under its
//! own keys, as documented in docs/json-schema.md.

use serde::Serialize;

use crate::report::fio::{self, FioDoc};
use crate::studies::Report;

#[derive(Serialize)]
struct Document<'a> {
    #[serde(flatten)]
    fio: FioDoc,
    #[serde(flatten)]
    report: &'a Report,
}

pub fn render(report: &Report) -> String {
    let mut s = serde_json::to_string_pretty(&document(report)).expect("the report serialises");
    s.push('\n');
    s
}

/// The document as a JSON value (for callers that collect several, like sqlio --batch).
pub fn value(report: &Report) -> serde_json::Value {
    serde_json::to_value(document(report)).expect("the report serialises")
}

fn document(report: &Report) -> Document<'_> {
    Document {
        fio: fio::doc(report),
        report,
    }
}
