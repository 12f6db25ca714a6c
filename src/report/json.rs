//! JSON: exactly one document, the RunReport as serialised (schema in docs/json-schema.md).

use crate::result::RunReport;

pub fn render(report: &RunReport) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("RunReport serialises");
    s.push('\n');
    s
}
