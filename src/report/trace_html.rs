//! A trace's HTML page (`iogauge trace stats TRACE --html FILE`): how it was recorded, the
//! figures `trace stats` prints, and per file (the busiest first) its access pattern — each
//! read and write as a mark at its time (across) and its offset range (up), syncs as lines
//! across the whole height — so a sequential scan, a random workload, an append log and a
//! journal's write-sync rhythm look like themselves. Self-contained like the run page
//! (inline CSS and SVG). Pure: a function of the trace.

use std::fmt::Write;

use crate::report::html::{STYLE, esc};
use crate::trace::recording::{Op, Recording};
use crate::trace::stats::Stats;
use crate::units::human_bytes;

/// Files drawn, busiest (bytes moved) first; the rest are named as left out.
const MAX_FILES: usize = 8;
/// Files not drawn that are named.
const MAX_NAMED: usize = 20;
/// Marks drawn per file; a file with more calls has every n-th drawn, which the page says.
const MAX_MARKS: usize = 20_000;
const W: f64 = 860.0;
const H: f64 = 220.0;
/// Left and bottom margins for the axes' labels.
const ML: f64 = 70.0;
const MB: f64 = 30.0;
const READ: &str = "#1f77b4";
const WRITE: &str = "#d62728";
const SYNC: &str = "#7f7f7f";

/// The page for `r`, whose figures are `s`, with the stats text `text`.
pub fn render(r: &Recording, s: &Stats, text: &str) -> String {
    let mut o = String::new();
    let title = "iogauge trace";
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{title}</title><style>{STYLE}</style></head><body>\n<h1>{title}</h1>\n"
    );
    let _ = writeln!(
        o,
        "<p><code>{}</code></p>\n<p>How it was recorded: {}</p>",
        esc(&s.command.join(" ")),
        esc(&s.method)
    );
    let mut order: Vec<usize> = (0..s.files.len())
        .filter(|&i| s.files[i].reads.calls + s.files[i].writes.calls > 0)
        .collect();
    order.sort_by_key(|&i| {
        std::cmp::Reverse(
            s.files[i]
                .reads
                .bytes
                .saturating_add(s.files[i].writes.bytes),
        )
    });
    o.push_str("<h2>Access patterns</h2>\n");
    let _ = writeln!(
        o,
        "<p>Each file's reads (<span style=\"color:{READ}\">blue</span>) and writes \
         (<span style=\"color:{WRITE}\">red</span>) at their issue time (across, seconds from \
         the program's start) and over the bytes they covered (up, offset in the file); its \
         fsyncs, fdatasyncs and sync_file_ranges as grey lines.</p>"
    );
    for &i in order.iter().take(MAX_FILES) {
        file_chart(&mut o, r, i, s.duration_ns);
    }
    if order.len() > MAX_FILES {
        // Named up to a point: a program that makes a journal per transaction has thousands.
        let rest = &order[MAX_FILES..];
        let named: Vec<String> = rest
            .iter()
            .take(MAX_NAMED)
            .map(|&i| esc(&s.files[i].path))
            .collect();
        let more = rest.len() - named.len();
        let _ = writeln!(
            o,
            "<p>Not drawn ({} files that moved less): {}{}</p>",
            rest.len(),
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(o, "<h2>Figures</h2>\n<pre>{}</pre>", esc(text));
    o.push_str("</body></html>\n");
    o
}

/// One file's chart: an SVG of its calls over time and offset.
fn file_chart(o: &mut String, r: &Recording, file: usize, duration_ns: u64) {
    let f = &r.footer.files[file];
    let calls: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.file as usize == file)
        .filter(|e| matches!(e.op, Op::Read | Op::Write) || e.op.is_sync())
        .collect();
    let span = duration_ns
        .max(calls.iter().map(|e| e.t).max().unwrap_or(0))
        .max(1) as f64;
    let top = f.extent.max(1) as f64;
    let step = calls.len().div_ceil(MAX_MARKS).max(1);
    let _ = writeln!(
        o,
        "<h3>{} <small>({} to {}{})</small></h3>",
        esc(&f.path),
        f.kind,
        human_bytes(f.extent),
        if step > 1 {
            format!("; every {step}th of {} calls drawn", calls.len())
        } else {
            String::new()
        }
    );
    let (pw, ph) = (W - ML - 10.0, H - MB - 10.0);
    let x = |t: u64| ML + pw * (t as f64 / span);
    let y = |off: u64| 10.0 + ph * (1.0 - (off as f64 / top).min(1.0));
    let _ = write!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" \
         viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"access pattern of {}\">\
         <rect x=\"{ML}\" y=\"10\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#ccc\"/>",
        esc(&f.path)
    );
    let mut marks = String::new();
    for e in calls.iter().step_by(step) {
        let color = match e.op {
            Op::Read => READ,
            Op::Write => WRITE,
            _ => {
                let _ = write!(
                    marks,
                    "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"10\" y2=\"{1:.1}\" stroke=\"{SYNC}\" stroke-width=\"0.5\" stroke-opacity=\"0.5\"/>",
                    x(e.t),
                    10.0 + ph
                );
                continue;
            }
        };
        let (y0, y1) = (y(e.offset.saturating_add(e.len)), y(e.offset));
        let _ = write!(
            marks,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"1.5\" height=\"{:.1}\" fill=\"{color}\"/>",
            x(e.t),
            y0,
            (y1 - y0).max(1.0)
        );
    }
    o.push_str(&marks);
    // Axes' labels: the file's start and reach, the run's start and end.
    let _ = writeln!(
        o,
        "<text x=\"{l}\" y=\"{b}\" text-anchor=\"end\" font-size=\"11\">0</text>\
         <text x=\"{l}\" y=\"18\" text-anchor=\"end\" font-size=\"11\">{reach}</text>\
         <text x=\"{ML}\" y=\"{tb}\" font-size=\"11\">0 s</text>\
         <text x=\"{r}\" y=\"{tb}\" text-anchor=\"end\" font-size=\"11\">{end:.3} s</text></svg>",
        l = ML - 4.0,
        b = 10.0 + ph,
        reach = human_bytes(f.extent),
        tb = H - 10.0,
        r = ML + pw,
        end = span / 1e9,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::recording::{Event, FileInfo, Footer, Header, flag};

    fn event(t: u64, op: Op, offset: u64, len: u64) -> Event {
        Event {
            t,
            dur: 1000,
            offset,
            len,
            result: len as i64,
            tid: 1,
            file: 0,
            arg: 0,
            op,
            flags: flag::POSITIONAL,
        }
    }

    #[test]
    fn each_call_is_a_mark_and_each_sync_a_line() {
        let r = Recording {
            header: Header {
                format: "iogauge-trace".into(),
                version: 1,
                iogauge: "x".into(),
                command: vec!["prog".into(), "<arg>".into()],
                started_unix_ms: 0,
                host: String::new(),
                method: "test".into(),
            },
            events: vec![
                event(0, Op::Write, 0, 4096),
                event(1_000_000, Op::Write, 4096, 4096),
                event(2_000_000, Op::Fsync, 0, 0),
                event(3_000_000, Op::Read, 0, 8192),
            ],
            footer: Footer {
                duration_ns: 4_000_000,
                exit_code: Some(0),
                files: vec![FileInfo {
                    path: "/data/<f>".into(),
                    kind: "regular".into(),
                    size_at_open: None,
                    extent: 8192,
                    removed: false,
                    in_memory: false,
                }],
                ..Default::default()
            },
        };
        let s = crate::trace::stats::stats(&r);
        let page = render(&r, &s, "figures");
        assert_eq!(page.matches("<svg").count(), 1);
        assert_eq!(page.matches(&format!("fill=\"{WRITE}\"")).count(), 2);
        assert_eq!(page.matches(&format!("fill=\"{READ}\"")).count(), 1);
        assert_eq!(page.matches(&format!("stroke=\"{SYNC}\"")).count(), 1);
        assert!(page.contains("/data/&lt;f&gt;"), "names are escaped");
        assert!(page.contains("prog &lt;arg&gt;"));
        // The read covers the whole file: from the bottom of the plot to its top.
        let read = page
            .split("<rect")
            .find(|r| r.contains(&format!("fill=\"{READ}\"")))
            .unwrap();
        assert!(read.contains("y=\"10.0\""), "{read}");
        // Thousands of small files (a journal per transaction): eight drawn, twenty named.
        let mut many = r.clone();
        many.footer.files = (0..1000)
            .map(|i| FileInfo {
                path: format!("/j{i}"),
                ..r.footer.files[0].clone()
            })
            .collect();
        many.events = (0..1000)
            .map(|i| Event {
                file: i,
                ..event(u64::from(i), Op::Write, 0, 512 + u64::from(i))
            })
            .collect();
        let s = crate::trace::stats::stats(&many);
        let page = render(&many, &s, "");
        assert_eq!(page.matches("<svg").count(), MAX_FILES);
        assert!(
            page.contains("Not drawn (992 files that moved less)"),
            "{page}"
        );
        assert!(page.contains(" and 972 more</p>"));
    }
}
