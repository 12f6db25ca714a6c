//! `iogauge report` (a saved report or a sweep's directory in another format) and `iogauge
//! compare`.

use std::process::ExitCode;

use crate::session::*;
use iogauge::files::named;
use iogauge::report::{self, Format};
use iogauge::{errln, out};

/// `iogauge report RUN.json`: the saved report in another format.
pub(crate) fn report_file(
    input: &std::path::Path,
    output: Option<&std::path::Path>,
    f: Format,
    replace: bool,
) -> ExitCode {
    if input.is_dir() {
        return sweep_report(input, output, f, replace);
    }
    let text = match named::read_input_text(input, MAX_REPORT_BYTES, REPORT_CAP_WHY) {
        Ok(t) => t,
        Err(e) => return usage_exit(&format!("{}: {e}", input.display())),
    };
    let run = match report::saved(&text) {
        Ok(r) => r,
        Err(e) => return usage_exit(&format!("{}: {e}", input.display())),
    };
    emit(&report::render(f, &run), output, replace)
}

/// A sweep's directory: its index, and the report of its first point that ran (for how it
/// was measured).
pub(crate) fn read_sweep(
    dir: &std::path::Path,
) -> Result<
    (
        iogauge::studies::sweep::Index,
        Option<iogauge::studies::Report>,
    ),
    Failure,
> {
    let path = dir.join("index.json");
    let text = named::read_input_text(&path, MAX_REPORT_BYTES, REPORT_CAP_WHY).map_err(|e| {
        Failure::Usage(format!(
            "{}: {e} (a sweep's directory holds index.json)",
            path.display()
        ))
    })?;
    let index: iogauge::studies::sweep::Index = serde_json::from_slice(text.as_bytes())
        .map_err(|e| Failure::Usage(format!("{}: not a sweep's index ({e})", path.display())))?;
    if index.schema != iogauge::studies::sweep::SCHEMA || index.axes.is_empty() {
        return Err(Failure::Usage(format!(
            "{}: not a sweep's index",
            path.display()
        )));
    }
    let first = first_point_report(dir, &index);
    Ok((index, first))
}

/// `iogauge report DIR`: a sweep's page (html), its table and answers (text), or its index
/// (csv, json).
pub(crate) fn sweep_report(
    dir: &std::path::Path,
    output: Option<&std::path::Path>,
    f: Format,
    replace: bool,
) -> ExitCode {
    let (mut index, first) = match read_sweep(dir) {
        Ok(x) => x,
        Err(e) => return ExitCode::from(e.reported()),
    };
    // The figures are the record; the answers are drawn from them by today's rules (an index
    // made before best and knee were tested against noise gets the tested answers).
    index.answer_again();
    let out = match f {
        Format::Html => report::sweep_html::render(&index, first.as_deref()),
        Format::Csv => index.csv(),
        Format::Json => match serde_json::to_string_pretty(&index) {
            Ok(s) => s + "\n",
            Err(e) => return usage_exit(&e.to_string()),
        },
        Format::Text => {
            let (row, col, metric) = index.saved_table();
            let mut t = index.table(&row, &col, metric).unwrap_or_default();
            for a in &index.answers {
                t.push_str(a);
                t.push('\n');
            }
            t
        }
    };
    emit(&out, output, replace)
}

/// `iogauge compare BASE NEW`: exit 1 on a regression when asked, 2 on unreadable input.
pub(crate) fn compare_files(
    base: &std::path::Path,
    new: &std::path::Path,
    threshold_pct: f64,
    fail_on_regression: bool,
) -> ExitCode {
    let load = |p: &std::path::Path| -> Result<serde_json::Value, String> {
        let text = named::read_input_text(p, MAX_REPORT_BYTES, REPORT_CAP_WHY)
            .map_err(|e| format!("{}: {e}", p.display()))?;
        let v =
            iogauge::studies::compare::load(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        drop(text);
        iogauge::studies::compare::check(&v, &p.display().to_string())
            .map_err(|e| e.to_string())?;
        Ok(v)
    };
    let (b, n) = match (load(base), load(new)) {
        (Ok(b), Ok(n)) => (b, n),
        (Err(e), _) | (_, Err(e)) => return usage_exit(&e),
    };
    let c = iogauge::studies::compare::compare(&b, &n, threshold_pct);
    out!("{}", c.text);
    if fail_on_regression && c.regressions > 0 {
        errln!(
            "iogauge: {} regression(s) beyond {threshold_pct}%",
            c.regressions
        );
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
