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

/// Several documents as one JSON array (sqlio --batch), each as `render` writes it. Written by
/// the same serialiser as `render`, not through `serde_json::Value`: one copy of the report's
/// serialising code in the binary, not two.
pub fn render_all(reports: &[Report]) -> String {
    let docs: Vec<Document<'_>> = reports.iter().map(document).collect();
    serde_json::to_string_pretty(&docs).expect("the reports serialise")
}

fn document(report: &Report) -> Document<'_> {
    Document {
        fio: fio::doc(report),
        report,
    }
}
