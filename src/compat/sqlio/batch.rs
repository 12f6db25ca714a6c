//! `sqlio --batch FILE`: a batch file of sqlio command lines (and `timeout /T N` pauses), read
//! and checked whole before the first test runs, then run test by test.

use crate::compat::LegacyError;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::{Sqlio, err, parse};

/// One test of a batch file, or a pause.
#[derive(Debug, Clone)]
pub enum BatchItem {
    Test { line: usize, args: Vec<String> },
    Pause(Duration),
}

/// `sqlio --batch FILE [--pause SECS]`: the file's tests (parsed, or `None` when a line needs
/// a file an earlier line creates) and pauses, in order, and the pause between tests.
#[derive(Debug)]
pub struct Batch {
    pub items: Vec<(BatchItem, Option<Sqlio>)>,
    pub pause: Duration,
}

/// Runs one batch test: (line, its arguments, the test) → exit code, or a usage error.
pub type BatchTest<'a> = dyn FnMut(usize, &[String], &Sqlio) -> Result<u8, String> + 'a;

/// How a batch ended.
#[derive(Debug, PartialEq, Eq)]
pub enum BatchEnd {
    /// Every test ran and passed.
    Done,
    /// Interrupted (Ctrl-C) before a test or during a pause.
    Interrupted,
    /// A line could not be parsed, or its test could not start: a usage error (exit 2).
    Usage { line: usize, message: String },
    /// A test failed with this exit code; the batch stopped there.
    Failed { line: usize, code: u8 },
}

impl Batch {
    /// Reads `--batch FILE [--pause SECS]`, found at `args[at]`.
    pub fn parse(args: &[String], at: usize) -> Result<Batch, LegacyError> {
        if at > 0 {
            return Err(err(format!(
                "{}: with --batch FILE the tests' options belong in the file",
                args[0]
            )));
        }
        let mut file = None;
        let mut pause = Duration::ZERO;
        let mut it = args.iter().skip(at);
        while let Some(a) = it.next() {
            let (key, inline) = match a.split_once('=') {
                Some((k, v)) => (k, Some(v.to_string())),
                None => (a.as_str(), None),
            };
            let mut value = || {
                inline
                    .clone()
                    .or_else(|| it.next().cloned())
                    .ok_or_else(|| err(format!("{key} needs a value")))
            };
            match key {
                "--batch" => file = Some(value()?),
                "--pause" => {
                    let v = value()?;
                    pause = v
                        .parse::<u64>()
                        .map(Duration::from_secs)
                        .map_err(|_| err(format!("--pause {v}: expected whole seconds")))?;
                }
                other => {
                    return Err(err(format!(
                        "{other}: with --batch FILE only --pause SECS may follow; the tests' \
                         options belong in the file"
                    )));
                }
            }
        }
        let file = file.expect("--batch seen");
        Ok(Batch {
            items: read_batch(&crate::rawpath::path(&file))?,
            pause,
        })
    }

    /// Runs the batch in order: each test through `test(line, args, sqlio)`, which measures
    /// it, shows it and returns its exit code (or a usage error); the file's pauses, and
    /// `pause` between tests, waited out unless `interrupt` is set. Stops at the first test
    /// that fails, and at an interrupt.
    pub fn run(self, interrupt: &AtomicBool, test: &mut BatchTest<'_>) -> BatchEnd {
        let wait = |d: Duration| {
            let end = std::time::Instant::now() + d;
            while std::time::Instant::now() < end && !interrupt.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
            }
        };
        let tests = self
            .items
            .iter()
            .filter(|(i, _)| matches!(i, BatchItem::Test { .. }))
            .count();
        let mut done = 0;
        for (item, parsed) in self.items {
            if interrupt.load(Ordering::Relaxed) {
                return BatchEnd::Interrupted;
            }
            let (line, args) = match item {
                BatchItem::Pause(d) => {
                    wait(d);
                    continue;
                }
                BatchItem::Test { line, args } => (line, args),
            };
            // A line that names a file an earlier line created is parsed when it is reached.
            let s = match parsed.map_or_else(|| parse(&args), Ok) {
                Ok(s) => s,
                Err(e) => {
                    return BatchEnd::Usage {
                        line,
                        message: e.to_string(),
                    };
                }
            };
            match test(line, &args, &s) {
                Err(e) => {
                    return BatchEnd::Usage {
                        line,
                        message: e.to_string(),
                    };
                }
                Ok(0) => {}
                Ok(code) => return BatchEnd::Failed { line, code },
            }
            done += 1;
            if done < tests && !self.pause.is_zero() {
                wait(self.pause);
            }
        }
        if interrupt.load(Ordering::Relaxed) {
            return BatchEnd::Interrupted;
        }
        BatchEnd::Done
    }
}

/// Reads a batch file of sqlio command lines. Every line is parsed here, so a mistake on line
/// 40 stops the batch before line 1 runs.
pub fn read_batch(path: &Path) -> Result<Vec<(BatchItem, Option<Sqlio>)>, LegacyError> {
    let text =
        crate::files::named::read_input_text(path, 16 << 20, "a batch file is lines of text")
            .map_err(|e| err(format!("--batch {}: {e}", crate::rawpath::display(path))))?;
    let mut items = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let lower = line.to_ascii_lowercase();
        if line.is_empty()
            || line.starts_with('#')
            || line.starts_with("::")
            || lower.starts_with("rem ")
            || lower == "rem"
            || lower.starts_with("@echo")
        {
            continue;
        }
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        let at = format!("{}:{}", crate::rawpath::display(path), i + 1);
        let first = words[0].to_ascii_lowercase();
        if first == "timeout" || first == "sleep" {
            let secs = words
                .iter()
                .skip(1)
                .find_map(|w| w.parse::<u64>().ok())
                .ok_or_else(|| err(format!("{at}: '{line}': expected a number of seconds")))?;
            items.push((BatchItem::Pause(Duration::from_secs(secs)), None));
            continue;
        }
        if !(first == "sqlio" || first == "sqlio.exe" || first.ends_with("/sqlio")) {
            return Err(err(format!(
                "{at}: '{line}': expected a sqlio command line, a 'timeout /T N' pause, or a \
                 comment"
            )));
        }
        let here = |e: LegacyError| LegacyError::At {
            at: at.clone(),
            error: Box::new(e),
        };
        let (args, _) = crate::compat::split_flags(&words[1..]).map_err(here)?;
        // A test file created by an earlier line of the batch does not exist yet: parse
        // later lines as if it did (the earlier line's size), so the whole batch is checked.
        let parsed = parse(&args).map_err(here);
        let parsed = match parsed {
            Ok(p) => p,
            Err(e) if e.to_string().contains("no such file") && created_earlier(&items, &args) => {
                items.push((
                    BatchItem::Test {
                        line: i + 1,
                        args: args.clone(),
                    },
                    None,
                ));
                continue;
            }
            Err(e) => return Err(e),
        };
        items.push((
            BatchItem::Test {
                line: i + 1,
                args: args.clone(),
            },
            Some(parsed),
        ));
    }
    Ok(items)
}

/// Whether an earlier test of the batch creates a file this line names.
fn created_earlier(items: &[(BatchItem, Option<Sqlio>)], args: &[String]) -> bool {
    items.iter().any(|(_, s)| {
        s.as_ref().is_some_and(|s| {
            s.targets.iter().any(|t| {
                t.size_mb.is_some()
                    && args.iter().any(|a| {
                        crate::rawpath::path(a) == t.path
                            || t.path.file_name() == Some(std::ffi::OsStr::new(a))
                    })
            })
        })
    })
}
